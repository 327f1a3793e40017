
By0JVD¿ÂIÇ

By0JÈA
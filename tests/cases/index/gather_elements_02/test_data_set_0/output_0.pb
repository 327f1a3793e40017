
By0JIBW7Œ4.F
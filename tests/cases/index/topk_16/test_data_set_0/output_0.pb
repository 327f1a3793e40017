
By0JhFGG0C[Ä9@
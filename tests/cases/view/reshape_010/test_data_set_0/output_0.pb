
By0JÀE
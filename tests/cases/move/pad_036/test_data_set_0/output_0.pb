
By0J
‡H‡H‡H‡H‡H

By0J0S»S»S»S»S»S»S»S»S»S»qBS»S»qBS»S»S»S»qBS»S»S»S»S»
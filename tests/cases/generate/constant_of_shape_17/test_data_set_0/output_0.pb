
By0JID
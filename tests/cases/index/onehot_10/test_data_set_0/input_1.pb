
BvJS»qB
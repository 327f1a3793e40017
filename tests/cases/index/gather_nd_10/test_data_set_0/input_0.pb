
BxJÈA
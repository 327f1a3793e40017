
BxJ‡H
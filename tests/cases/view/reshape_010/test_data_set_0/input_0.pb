
BxJÀE
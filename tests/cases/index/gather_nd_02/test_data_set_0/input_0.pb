
BxJl²–D/5

BsJf.

BbiasJ:º¼D»Ž´&ª@·
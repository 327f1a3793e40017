
BvalueJ€F
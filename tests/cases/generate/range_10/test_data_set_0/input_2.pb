
BdJÍ4
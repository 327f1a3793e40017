
BbetaJ3j8ˆ9å9a0C8

BxJY=‰C=øH
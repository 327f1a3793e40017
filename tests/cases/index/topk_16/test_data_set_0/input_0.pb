
BxJhFC[ÄGG09@
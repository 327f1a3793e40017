
BxJVDIÇ¿Â
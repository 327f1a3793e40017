
BxJ`H@I
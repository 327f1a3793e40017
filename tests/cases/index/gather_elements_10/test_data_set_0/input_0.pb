
BxJQ¸	ÀEš>VÅr½€±l@
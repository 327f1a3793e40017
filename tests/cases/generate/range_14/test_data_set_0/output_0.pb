
By0J('JA¢ôBA7Â;AÌ4A`]-Aõ*&AŠøAÆA´“AHa	A

By0J`08å3ÍÈeÈFH¨Ä;FÍDìÄc=ÙÈˆL;Hþ¿ÒHVEPKãEe0Ø¿»ÊØE¿½=ÅœHAþGP;¡E“Äë,™ÂóC­ÊÇ8	Æ€<dI³MBHŽÊs6óC£ÀÈGäÆ
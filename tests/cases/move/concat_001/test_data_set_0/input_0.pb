Bx0JêXK$REI01d-BS
ZD9d?-7bZJYN^52'4<(CW3]b LUY\#*O;R?<O1*	[ObH_=CD=)"SF`"G=VS\!O/,3:(L)H&,,*YaK`LZ"AFP7^['?
Bk_scaleJp
?
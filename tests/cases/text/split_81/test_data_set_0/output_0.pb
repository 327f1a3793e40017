2Ⱥx2Ünïcödé2b2x.y   ΣΣΣ  b2ǅ2
a  straße2MONDAY2worldBy0
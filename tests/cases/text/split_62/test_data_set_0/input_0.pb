2baabétéaabΣΣΣab2MONDAYab2Ⱥxabǅ2
ΣΣΣabǅBx
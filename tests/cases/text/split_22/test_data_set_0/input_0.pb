2ΣΣΣ--MONDAY--hello--a2Σσς2MONDAY-Mon--world-İ2MONDAY-x-ⱥ-b-a,b2
Ⱥx--été2ǅ-Ünïcödé--a-x-straßeBx
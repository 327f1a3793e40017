2Σσς2a,b-x-a2b-a2ǅ2world-straße2
Ⱥx-x-x.y-By0
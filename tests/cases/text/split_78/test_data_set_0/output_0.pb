2ⱥ Σσς  Mon2a,b MONDAY x.y2
Ⱥx  world2b  Mon   İBy0
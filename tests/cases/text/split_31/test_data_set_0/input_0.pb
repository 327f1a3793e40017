2#Mon:::Ünïcödé:::straße::Σσς2world::::été:::2Ünïcödé:::ΣΣΣ:::b2straße:::monday2
Ⱥx:::🙂2a:::Ⱥx:::MONDAY::ǅBx
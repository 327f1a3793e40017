2ΣΣΣ,,Σσς,x.y,,🙂2hello2
,🙂,🙂2world,İ,hello,Σσς2Mon2日本語,hello,ÜnïcödéBy0
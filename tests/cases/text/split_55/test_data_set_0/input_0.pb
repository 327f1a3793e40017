2İééb2ⱥ2 Ünïcödéé日本語ééMONDAY2	Ⱥxéaéa2
x.yééa,b2 a,bééΣσςéÜnïcödéé🙂Bx
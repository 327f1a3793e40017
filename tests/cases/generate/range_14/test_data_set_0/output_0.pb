By0JDÃÂ‰@öõ¬@*)Ð@]\ó@ÈGAbáAüz.A•@A.®QAÈGcAbátA~=ƒAK
ŒA×”Aä£A±p¦A~=¯A
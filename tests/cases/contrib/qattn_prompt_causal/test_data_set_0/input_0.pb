BinputJP0OΥ"•B²ΒKrƒ©Ν4#η²ΥΒEiΔ&8ςDΪ/v
¬g)Οιt‚e7=HMςQUzSδίS/LΊΓn\Τ%DC¬νGXΓtª„|
ώE
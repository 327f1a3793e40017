
Bpresent_stateJ$浗<:[0ダ0荷= d0Q𢟷炒x.\街捆6Z�
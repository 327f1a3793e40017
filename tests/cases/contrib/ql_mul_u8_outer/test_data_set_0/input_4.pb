BB_scaleJAº
=
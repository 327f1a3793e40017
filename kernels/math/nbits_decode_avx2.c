/* nbits_decode_avx2.c — nbits_decode.c built in 8-lane vectors for AVX2 and FMA
 * (om_nbits_decode8): GCC keeps the 16-lane vectors of the generic build on the stack where
 * the CPU has no 16-lane registers (a decoder's step 3.8 -> 3.0 ms on a Zen 3 in 8 lanes). */
#include "nbits.h"

#if OM_NBITS_DECODE8
#pragma GCC target("avx2,fma")
#define ND_LANES 8
#include "nbits_decode.c"
#endif

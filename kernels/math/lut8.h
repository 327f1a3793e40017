/* lut8.h — bytes mapped through a 256-entry table (ONNX Runtime's 8-bit table ops). */
#ifndef OM_LUT8_H
#define OM_LUT8_H

#include <stdint.h>

/** y[i] = table[x[i]] for i < n (x and y may be the same bytes): 64 at a time with two
 *  two-table byte permutes where the CPU has AVX-512 VBMI, one by one elsewhere. */
void om_lut8(const uint8_t table[256], const uint8_t *x, uint8_t *y, int64_t n);

#endif

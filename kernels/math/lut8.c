/* lut8.c — om_lut8 (lut8.h): a byte's table entry by AVX-512 VBMI's permutes (vpermi2b picks
 * from 128 entries by a byte's low 7 bits; its top bit picks the half), else by a load. */
#include <stdbool.h>
#include <string.h>

#include "lut8.h"

static void lut8_bytes(const uint8_t *table, const uint8_t *x, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = table[x[i]];
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
typedef uint8_t lut8_v __attribute__((vector_size(64)));

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static int64_t
lut8_vbmi(const uint8_t *table, const uint8_t *x, uint8_t *y, int64_t n)
{
	lut8_v t[4];
	memcpy(t, table, sizeof t);
	int64_t i = 0;
	for (; i + 64 <= n; i += 64) {
		lut8_v v;
		memcpy(&v, x + i, sizeof v);
		const lut8_v lo = __builtin_shuffle(t[0], t[1], v); /* index mod 128 */
		const lut8_v hi = __builtin_shuffle(t[2], t[3], v);
		const lut8_v top = -(v >> 7); /* 0xff where the byte is 128 or more */
		const lut8_v r = (hi & top) | (lo & ~top);
		memcpy(y + i, &r, sizeof r);
	}
	return i;
}

static bool lut8_has_vbmi(void)
{
	return __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
}
#else
static int64_t lut8_vbmi(const uint8_t *table, const uint8_t *x, uint8_t *y, int64_t n)
{
	(void)table, (void)x, (void)y, (void)n;
	return 0;
}

static bool lut8_has_vbmi(void)
{
	return false;
}
#endif

void om_lut8(const uint8_t table[256], const uint8_t *x, uint8_t *y, int64_t n)
{
	const int64_t done = n >= 64 && lut8_has_vbmi() ? lut8_vbmi(table, x, y, n) : 0;
	lut8_bytes(table, x + done, y + done, n - done);
}

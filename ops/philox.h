/* philox.h — the random ops' generator: Philox4x32-10 (Salmon et al., "Parallel random numbers:
 * as easy as 1, 2, 3", SC 2011), a counter-based generator. Element i of an output is drawn from
 * block i (the counter), under a key: the node's `seed` when it has one, else a fresh key the
 * session gives each run of the step (om_random_key). Integer operations only, so a seeded
 * node gives the same bits on every instruction set, thread count and mode, and any split of
 * the elements among threads draws the same numbers. */
#ifndef OM_PHILOX_H
#define OM_PHILOX_H

#include <stdint.h>
#include <string.h>

typedef struct om_philox_key {
	uint32_t k[2];
} om_philox_key;

/* the four 32-bit words of block `ctr` (counter words 0-1) of stream `sub` (words 2-3) */
static inline void om_philox4x32(om_philox_key key, uint64_t ctr, uint64_t sub, uint32_t out[4])
{
	uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32), c2 = (uint32_t)sub;
	uint32_t c3 = (uint32_t)(sub >> 32);
	uint32_t k0 = key.k[0], k1 = key.k[1];
	for (int r = 0; r < 10; r++) {
		const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
		const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
		c1 = (uint32_t)p1;
		c3 = (uint32_t)p0;
		c0 = n0;
		c2 = n2;
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
	out[3] = c3;
}

/* SplitMix64's finalizer: spreads a 64-bit value's bits over the key */
static inline om_philox_key om_philox_key_of(uint64_t z)
{
	z += 0x9E3779B97F4A7C15u;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	z ^= z >> 31;
	return (om_philox_key){{(uint32_t)z, (uint32_t)(z >> 32)}};
}

/* the key of a `seed` attribute (a float in the Random ops, an int in Dropout): its value as
 * a double's bits, so that seed=3.0 and seed=3 name the same stream */
static inline om_philox_key om_philox_key_of_seed(double seed)
{
	uint64_t b;
	if (seed == 0)
		seed = 0; /* -0.0 is 0 */
	memcpy(&b, &seed, sizeof b);
	return om_philox_key_of(b);
}

/* a double in [0, 1) from two words (53 bits) */
static inline double om_philox_unit(uint32_t hi, uint32_t lo)
{
	return (double)(((uint64_t)hi << 21) ^ (lo >> 11)) * 0x1p-53;
}

/* a double in (0, 1] from two words (Box-Muller's logarithm needs u > 0) */
static inline double om_philox_unit_open0(uint32_t hi, uint32_t lo)
{
	return (double)((((uint64_t)hi << 21) ^ (lo >> 11)) + 1) * 0x1p-53;
}

#endif

/* digest.c — XXH64 (Yann Collet's xxHash, 64-bit, seed 0), streamed: 32-byte stripes into four
 * lanes, the tail and the length mixed in at the end. */
#include <string.h>

#include "digest.h"

static const uint64_t P1 = 11400714785074694791ull, P2 = 14029467366897019727ull,
		      P3 = 1609587929392839161ull, P4 = 9650029242287828579ull,
		      P5 = 2870177450012600261ull;

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static uint64_t read64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static uint64_t read32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static uint64_t round64(uint64_t acc, uint64_t lane)
{
	return rotl(acc + lane * P2, 31) * P1;
}

static void stripe(uint64_t acc[4], const unsigned char *p)
{
	for (int i = 0; i < 4; i++)
		acc[i] = round64(acc[i], read64(p + 8 * i));
}

void om_digest_init(om_digest *d)
{
	*d = (om_digest){.acc = {P1 + P2, P2, 0, -P1}};
}

void om_digest_add(om_digest *d, const void *data, size_t n)
{
	const unsigned char *p = data;
	d->total += n;
	if (d->nbuf) {
		size_t k = 32 - d->nbuf < n ? 32 - d->nbuf : n;
		memcpy(d->buf + d->nbuf, p, k);
		d->nbuf += k, p += k, n -= k;
		if (d->nbuf < 32)
			return;
		stripe(d->acc, d->buf);
		d->nbuf = 0;
	}
	for (; n >= 32; p += 32, n -= 32)
		stripe(d->acc, p);
	memcpy(d->buf, p, n);
	d->nbuf = n;
}

void om_digest_add_hole(om_digest *d, uint64_t offset, uint64_t length)
{
	unsigned char rec[24] = "om-hole";
	for (int i = 0; i < 8; i++) {
		rec[8 + i] = (unsigned char)(offset >> (8 * i));
		rec[16 + i] = (unsigned char)(length >> (8 * i));
	}
	om_digest_add(d, rec, sizeof rec);
}

uint64_t om_digest_value(const om_digest *d)
{
	const uint64_t *a = d->acc;
	uint64_t h;
	if (d->total >= 32) {
		h = rotl(a[0], 1) + rotl(a[1], 7) + rotl(a[2], 12) + rotl(a[3], 18);
		for (int i = 0; i < 4; i++)
			h = (h ^ round64(0, a[i])) * P1 + P4;
	} else {
		h = P5;
	}
	h += d->total;
	const unsigned char *p = d->buf;
	size_t n = d->nbuf;
	for (; n >= 8; p += 8, n -= 8)
		h = rotl(h ^ round64(0, read64(p)), 27) * P1 + P4;
	if (n >= 4) {
		h = rotl(h ^ (read32(p) * P1), 23) * P2 + P3;
		p += 4, n -= 4;
	}
	for (; n; p++, n--)
		h = rotl(h ^ (*p * P5), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	return h ^ (h >> 32);
}

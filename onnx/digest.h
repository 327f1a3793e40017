/* digest.h — XXH64 (seed 0) over a stream of bytes: the content name of an external-data file
 * (onnx/save.c). Not a cryptographic hash. */
#ifndef OM_DIGEST_H
#define OM_DIGEST_H

#include <stddef.h>
#include <stdint.h>

typedef struct om_digest {
	uint64_t acc[4];
	unsigned char buf[32]; /* bytes not yet in acc */
	size_t nbuf;
	uint64_t total;
} om_digest;

void om_digest_init(om_digest *d);
void om_digest_add(om_digest *d, const void *data, size_t n);
/** Adds a hole of a sparse file in place of its zero bytes: the 24 bytes "om-hole\0", then
 *  offset and length (the hole's place in the file being digested) as little-endian 64-bit
 *  words. A file written with holes is so named by its data and where its holes are, without
 *  reading them; a file without holes by its bytes alone (XXH64 of the file). */
void om_digest_add_hole(om_digest *d, uint64_t offset, uint64_t length);
/** The XXH64 of every byte added so far (d is left as it was). */
uint64_t om_digest_value(const om_digest *d);

#endif

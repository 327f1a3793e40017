/* image.h — the decoders ImageDecoder calls: one per library, the same contract. */
#ifndef OM_IMAGE_H
#define OM_IMAGE_H

#include <stdint.h>

#include "op.h"

/* The largest image decoded: width and height at most 2^16 (JPEG's own limit), pixels at most
 * 2^26 (a 192 MiB RGB output). Larger ones are InvalidInput, refused from their header before
 * any pixel buffer is made. */
#define OM_IMAGE_MAX_SIDE (INT64_C(1) << 16)
#define OM_IMAGE_MAX_PIXELS (INT64_C(1) << 26)

/* A decoder reads the n encoded bytes at p. It sets *h and *w from the header (checked with
 * om_image_check_size before it allocates anything of their size), then, when rgb is not NULL,
 * writes the h * w * 3 bytes of the image (8-bit RGB, row-major, alpha dropped, gray
 * replicated) to rgb. Malformed or truncated bytes: InvalidInput; valid forms the library
 * does not decode: Unsupported. Never a crash, never a message on stderr. */
typedef om_kind (*om_image_decode_fn)(om_ctx *c, const uint8_t *p, size_t n, int64_t *h,
				      int64_t *w, uint8_t *rgb);

om_kind om_image_jpeg(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb);
om_kind om_image_png(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb);
om_kind om_image_webp(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb);
om_kind om_image_tiff(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb);
om_kind om_image_jp2(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb);
om_kind om_image_stb(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb);

/** InvalidInput unless 1 <= h, w <= OM_IMAGE_MAX_SIDE and h * w <= OM_IMAGE_MAX_PIXELS. */
om_kind om_image_check_size(om_ctx *c, int64_t h, int64_t w);

#endif

/* image_webp.c — WebP through libwebp: RGB, alpha dropped; animated files are refused by
 * WebPGetInfo (InvalidInput). */
#include <webp/decode.h>

#include "image.h"

om_kind om_image_webp(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb)
{
	int iw = 0, ih = 0;
	if (!WebPGetInfo(p, n, &iw, &ih))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "WebP: malformed header");
	*h = ih;
	*w = iw;
	om_kind rc = om_image_check_size(c, *h, *w);
	if (rc || !rgb)
		return rc;
	const size_t size = (size_t)*h * (size_t)*w * 3;
	if (!WebPDecodeRGBInto(p, n, rgb, size, iw * 3))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "WebP: malformed data");
	return OM_OK;
}

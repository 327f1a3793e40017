/* image_stb.c — BMP and PNM (binary PGM and PPM, P5 and P6) through stb_image (Debian's
 * libstb): RGB, alpha dropped, 16-bit samples scaled to 8. */
#include <limits.h>
#include <string.h>

#include <stb_image.h>

#include "image.h"

om_kind om_image_stb(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb)
{
	if (n > INT_MAX)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "image of %zu bytes", n);
	int iw = 0, ih = 0, comp = 0;
	if (!stbi_info_from_memory(p, (int)n, &iw, &ih, &comp))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "BMP/PNM: %s",
				stbi_failure_reason() ? stbi_failure_reason() : "malformed");
	*h = ih;
	*w = iw;
	om_kind rc = om_image_check_size(c, *h, *w);
	if (rc || !rgb)
		return rc;
	int dw = 0, dh = 0;
	stbi_uc *px = stbi_load_from_memory(p, (int)n, &dw, &dh, &comp, 3);
	if (!px)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "BMP/PNM: %s",
				stbi_failure_reason() ? stbi_failure_reason() : "malformed");
	if (dw != iw || dh != ih) {
		stbi_image_free(px);
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "BMP/PNM: size changed");
	}
	memcpy(rgb, px, (size_t)dw * (size_t)dh * 3);
	stbi_image_free(px);
	return OM_OK;
}

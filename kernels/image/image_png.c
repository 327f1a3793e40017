/* image_png.c — PNG through libpng: palette and gray expanded to RGB, 16-bit samples cut to
 * their high byte, alpha dropped (not composited: PIL's convert("RGB")), interlace undone.
 * libpng's errors come back through longjmp as InvalidInput; warnings are silent. */
#include <setjmp.h>
#include <string.h>

#include <png.h>

#include "image.h"

typedef struct png_src {
	const uint8_t *p;
	size_t n, at;
	char msg[128];
} png_src;

static void on_read(png_structp png, png_bytep out, size_t len)
{
	png_src *s = png_get_io_ptr(png);
	if (len > s->n - s->at)
		png_error(png, "truncated");
	memcpy(out, s->p + s->at, len);
	s->at += len;
}

static void on_error(png_structp png, png_const_charp msg)
{
	png_src *s = png_get_error_ptr(png);
	snprintf(s->msg, sizeof s->msg, "%s", msg);
	png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
	(void)png, (void)msg;
}

om_kind om_image_png(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb)
{
	png_src s = {p, n, 0, ""};
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, on_error, on_warning);
	if (!png)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	png_infop info = png_create_info_struct(png);
	if (!info) {
		png_destroy_read_struct(&png, NULL, NULL);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_read_struct(&png, &info, NULL);
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "PNG: %s", s.msg);
	}
	png_set_read_fn(png, &s, on_read);
	/* the size check below comes first; libpng's own limit is only a backstop */
	png_set_user_limits(png, (png_uint_32)OM_IMAGE_MAX_SIDE, (png_uint_32)OM_IMAGE_MAX_SIDE);
	png_read_info(png, info);
	*h = png_get_image_height(png, info);
	*w = png_get_image_width(png, info);
	om_kind rc = om_image_check_size(c, *h, *w);
	if (rc || !rgb) {
		png_destroy_read_struct(&png, &info, NULL);
		return rc;
	}
	const int type = png_get_color_type(png, info);
	if (type == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(png);
	if (type == PNG_COLOR_TYPE_GRAY || type == PNG_COLOR_TYPE_GRAY_ALPHA) {
		png_set_expand_gray_1_2_4_to_8(png);
		png_set_gray_to_rgb(png);
	}
	png_set_strip_16(png);
	png_set_strip_alpha(png);
	png_set_interlace_handling(png);
	png_read_update_info(png, info);
	if (png_get_rowbytes(png, info) != (size_t)*w * 3) {
		png_destroy_read_struct(&png, &info, NULL);
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "PNG: rows are not RGB");
	}
	const int passes = png_set_interlace_handling(png);
	for (int pass = 0; pass < passes; pass++)
		for (int64_t y = 0; y < *h; y++)
			png_read_row(png, rgb + (size_t)y * (size_t)*w * 3, NULL);
	png_destroy_read_struct(&png, &info, NULL);
	return OM_OK;
}

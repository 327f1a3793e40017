/* ops_image_decoder.c — ImageDecoder (opset 20): the encoded bytes of one image (uint8 [N]:
 * JPEG, PNG, WebP, TIFF, JPEG 2000, BMP or binary PNM, told apart by their signatures) to
 * uint8 [H, W, 3] in RGB or BGR, or [H, W, 1] for pixel_format Grayscale (PIL's "L" of the
 * RGB image: (19595 R + 38470 G + 7471 B + 2^15) >> 16, which keeps a gray image's values).
 * Each format through a Debian library (image.h); bytes that no decoder takes or that one
 * finds malformed: InvalidInput. Output extent depends on the bytes: data dependent. */
#include <stdlib.h>
#include <string.h>

#include "image.h"

enum { PIX_RGB, PIX_BGR, PIX_GRAY };

om_kind om_image_check_size(om_ctx *c, int64_t h, int64_t w)
{
	if (h < 1 || w < 1 || h > OM_IMAGE_MAX_SIDE || w > OM_IMAGE_MAX_SIDE ||
	    h * w > OM_IMAGE_MAX_PIXELS)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"image of %lld x %lld pixels (at most %lld on a side, %lld in all)",
				(long long)w, (long long)h, (long long)OM_IMAGE_MAX_SIDE,
				(long long)OM_IMAGE_MAX_PIXELS);
	return OM_OK;
}

static bool starts(const uint8_t *p, size_t n, const char *sig, size_t len)
{
	return n >= len && memcmp(p, sig, len) == 0;
}

/* The decoder for the bytes' signature, or NULL. */
static om_image_decode_fn pick(const uint8_t *p, size_t n)
{
	if (starts(p, n, "\xff\xd8\xff", 3))
		return om_image_jpeg;
	if (starts(p, n, "\x89PNG\r\n\x1a\n", 8))
		return om_image_png;
	if (n >= 12 && starts(p, n, "RIFF", 4) && !memcmp(p + 8, "WEBP", 4))
		return om_image_webp;
	if (starts(p, n, "II*\0", 4) || starts(p, n, "MM\0*", 4))
		return om_image_tiff;
	if (starts(p, n, "\0\0\0\x0cjP  \r\n\x87\n", 12) || starts(p, n, "\xff\x4f\xff\x51", 4))
		return om_image_jp2;
	if (starts(p, n, "BM", 2) || starts(p, n, "P5", 2) || starts(p, n, "P6", 2))
		return om_image_stb;
	return NULL;
}

static om_kind setup(om_ctx *c, int *fmt, om_image_decode_fn *fn)
{
	static const char *const formats[] = {"RGB", "BGR", "Grayscale", NULL};
	const om_tensor *x = c->in[0];
	*fmt = om_attr_choice(c->node, "pixel_format", formats, PIX_RGB);
	if (*fmt < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"pixel_format is not RGB, BGR or Grayscale");
	if (x->dtype != OM_UINT8 || x->rank != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"encoded_stream is not uint8 [N]");
	if (!fn)
		return OM_OK;
	*fn = pick(x->data, (size_t)x->dims[0]);
	if (!*fn)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "the bytes are no JPEG, PNG, "
				"WebP, TIFF, JPEG 2000, BMP nor binary PNM image");
	return OM_OK;
}

static om_kind decoder_infer(om_ctx *c)
{
	int fmt;
	om_image_decode_fn fn;
	om_kind rc = setup(c, &fmt, NULL);
	if (rc)
		return rc;
	const int64_t ch = fmt == PIX_GRAY ? 1 : 3;
	if (!om_has_value(c->in[0])) {
		const int64_t dims[3] = {-1, -1, ch};
		om_set_shape(c->out[0], OM_UINT8, 3, dims);
		return OM_NEED_VALUE;
	}
	rc = setup(c, &fmt, &fn);
	int64_t h = 0, w = 0;
	if (!rc)
		rc = fn(c, c->in[0]->data, (size_t)c->in[0]->dims[0], &h, &w, NULL);
	if (rc)
		return rc;
	const int64_t dims[3] = {h, w, ch};
	om_set_shape(c->out[0], OM_UINT8, 3, dims);
	return OM_OK;
}

static om_kind decoder_kernel(om_ctx *c)
{
	int fmt;
	om_image_decode_fn fn;
	om_kind rc = setup(c, &fmt, &fn);
	if (rc)
		return rc;
	const uint8_t *p = c->in[0]->data;
	const size_t n = (size_t)c->in[0]->dims[0];
	om_tensor *y = c->out[0];
	int64_t h = 0, w = 0;
	rc = fn(c, p, n, &h, &w, NULL);
	if (rc)
		return rc;
	if (y->rank != 3 || y->dims[0] != h || y->dims[1] != w ||
	    y->dims[2] != (fmt == PIX_GRAY ? 1 : 3))
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "the output is not the image's");
	const size_t px = (size_t)h * (size_t)w;
	uint8_t *rgb = y->data;
	if (fmt == PIX_GRAY) {
		rc = om_ctx_reserve(c, px * 3, "ImageDecoder RGB");
		if (rc)
			return rc;
		if (!(rgb = malloc(px * 3)))
			return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	rc = fn(c, p, n, &h, &w, rgb);
	uint8_t *o = y->data;
	for (size_t i = 0; !rc && fmt == PIX_BGR && i < px; i++) {
		const uint8_t r = o[3 * i];
		o[3 * i] = o[3 * i + 2];
		o[3 * i + 2] = r;
	}
	for (size_t i = 0; !rc && fmt == PIX_GRAY && i < px; i++)
		o[i] = (uint8_t)((19595u * rgb[3 * i] + 38470u * rgb[3 * i + 1] +
				  7471u * rgb[3 * i + 2] + 0x8000u) >> 16);
	if (fmt == PIX_GRAY)
		free(rgb);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ImageDecoder_20[] = {{"pixel_format", OM_ATTR_STRING, 0},
	{NULL, 0, 0}};
/* ImageDecoder-20: encoded_stream -> image */
static const om_sig sig_ImageDecoder_20 = {20, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ImageDecoder_20, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"ImageDecoder", "", 20, decoder_infer, decoder_kernel, OM_OP_EXACT | OM_OP_DATA_DEPENDENT,
	 &sig_ImageDecoder_20, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_image_decoder = OM_TABLE(rows);

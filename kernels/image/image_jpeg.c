/* image_jpeg.c — JPEG through libjpeg-turbo with its default decoding (the accurate integer
 * IDCT, fancy upsampling), as PIL decodes: the node tests' expected pixels. Fatal libjpeg
 * errors come back through longjmp as InvalidInput; warnings (a truncated scan is filled in)
 * are silent, as in PIL. */
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>

#include "image.h"

typedef struct jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	char msg[JMSG_LENGTH_MAX];
} jerr;

static void on_error(j_common_ptr ci)
{
	jerr *e = (jerr *)ci->err;
	ci->err->format_message(ci, e->msg);
	longjmp(e->jump, 1);
}

static void on_message(j_common_ptr ci, int level)
{
	(void)ci, (void)level; /* never printed */
}

om_kind om_image_jpeg(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb)
{
	struct jpeg_decompress_struct ci;
	jerr e;
	if (n > (size_t)ULONG_MAX) /* jpeg_mem_src takes an unsigned long */
		n = (size_t)ULONG_MAX;
	memset(&ci, 0, sizeof ci);
	ci.err = jpeg_std_error(&e.pub);
	e.pub.error_exit = on_error;
	e.pub.emit_message = on_message;
	e.msg[0] = 0;
	if (setjmp(e.jump)) {
		jpeg_destroy_decompress(&ci);
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "JPEG: %s", e.msg);
	}
	jpeg_create_decompress(&ci);
	jpeg_mem_src(&ci, p, (unsigned long)n);
	jpeg_read_header(&ci, TRUE);
	*h = ci.image_height;
	*w = ci.image_width;
	om_kind rc = om_image_check_size(c, *h, *w);
	if (rc || !rgb) {
		jpeg_destroy_decompress(&ci);
		return rc;
	}
	ci.out_color_space = JCS_RGB; /* gray replicated, YCbCr and CMYK/YCCK converted... */
	if (ci.jpeg_color_space == JCS_CMYK || ci.jpeg_color_space == JCS_YCCK) {
		jpeg_destroy_decompress(&ci);
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "JPEG: CMYK images");
	}
	jpeg_start_decompress(&ci);
	if (ci.output_width != (JDIMENSION)*w || ci.output_height != (JDIMENSION)*h ||
	    ci.output_components != 3) {
		jpeg_destroy_decompress(&ci);
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "JPEG: output is not %lldx%lld RGB",
				(long long)*w, (long long)*h);
	}
	while (ci.output_scanline < ci.output_height) {
		JSAMPROW row = rgb + (size_t)ci.output_scanline * (size_t)*w * 3;
		jpeg_read_scanlines(&ci, &row, 1);
	}
	jpeg_finish_decompress(&ci);
	jpeg_destroy_decompress(&ci);
	return OM_OK;
}

/* image_tiff.c — TIFF through libtiff, read from memory: the first directory as RGBA
 * (TIFFReadRGBAImageOriented, top-left), alpha dropped. Errors and warnings go to this
 * file's handlers (libtiff's per-open handlers, never its process-wide ones). */
#include <stdio.h>
#include <string.h>

#include <tiffio.h>

#include "image.h"

typedef struct tif_src {
	const uint8_t *p;
	toff_t n, at;
	char msg[160];
} tif_src;

static tmsize_t t_read(thandle_t h, void *buf, tmsize_t len)
{
	tif_src *s = h;
	if (len < 0)
		return -1;
	toff_t k = (toff_t)len;
	if (s->at >= s->n)
		return 0;
	if (k > s->n - s->at)
		k = s->n - s->at;
	memcpy(buf, s->p + s->at, (size_t)k);
	s->at += k;
	return (tmsize_t)k;
}

static tmsize_t t_write(thandle_t h, void *buf, tmsize_t len)
{
	(void)h, (void)buf, (void)len;
	return -1;
}

static toff_t t_seek(thandle_t h, toff_t off, int whence)
{
	tif_src *s = h;
	toff_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? s->at : s->n;
	if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)
		return (toff_t)-1;
	/* off is unsigned: a negative offset arrives wrapped, and so does the sum */
	const toff_t to = base + off;
	if (to > s->n)
		return (toff_t)-1;
	s->at = to;
	return to;
}

static int t_close(thandle_t h)
{
	(void)h;
	return 0;
}

static toff_t t_size(thandle_t h)
{
	return ((tif_src *)h)->n;
}

static int t_map(thandle_t h, void **base, toff_t *size)
{
	(void)h, (void)base, (void)size;
	return 0;
}

static void t_unmap(thandle_t h, void *base, toff_t size)
{
	(void)h, (void)base, (void)size;
}

static int on_error(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
	(void)t, (void)module;
	tif_src *s = user;
	if (!s->msg[0])
		vsnprintf(s->msg, sizeof s->msg, fmt, ap);
	return 1;
}

static int on_warning(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
	(void)t, (void)user, (void)module, (void)fmt, (void)ap;
	return 1;
}

om_kind om_image_tiff(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb)
{
	tif_src s = {p, (toff_t)n, 0, ""};
	TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
	if (!o)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	TIFFOpenOptionsSetErrorHandlerExtR(o, on_error, &s);
	TIFFOpenOptionsSetWarningHandlerExtR(o, on_warning, &s);
	/* no single allocation of libtiff's past the largest RGBA image */
	TIFFOpenOptionsSetMaxSingleMemAlloc(o, (tmsize_t)(OM_IMAGE_MAX_PIXELS * 4 + 4096));
	TIFF *t = TIFFClientOpenExt("memory", "rm", &s, t_read, t_write, t_seek, t_close, t_size,
				    t_map, t_unmap, o);
	TIFFOpenOptionsFree(o);
	if (!t)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "TIFF: %s",
				s.msg[0] ? s.msg : "malformed");
	uint32_t tw = 0, th = 0;
	if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &tw) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &th)) {
		TIFFClose(t);
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "TIFF: no image size");
	}
	*h = th;
	*w = tw;
	om_kind rc = om_image_check_size(c, *h, *w);
	if (rc || !rgb) {
		TIFFClose(t);
		return rc;
	}
	char emsg[1024] = "";
	if (!TIFFRGBAImageOK(t, emsg)) {
		TIFFClose(t);
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "TIFF: %s", emsg);
	}
	const size_t px = (size_t)tw * th;
	rc = om_ctx_reserve(c, px * 4, "TIFF RGBA");
	uint32_t *rgba = rc ? NULL : _TIFFmalloc((tmsize_t)(px * 4));
	if (!rc && !rgba)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	if (!rc && !TIFFReadRGBAImageOriented(t, tw, th, rgba, ORIENTATION_TOPLEFT, 0))
		rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "TIFF: %s",
			      s.msg[0] ? s.msg : "malformed data");
	for (size_t i = 0; !rc && i < px; i++) {
		rgb[3 * i] = (uint8_t)TIFFGetR(rgba[i]);
		rgb[3 * i + 1] = (uint8_t)TIFFGetG(rgba[i]);
		rgb[3 * i + 2] = (uint8_t)TIFFGetB(rgba[i]);
	}
	if (rgba)
		_TIFFfree(rgba);
	TIFFClose(t);
	return rc;
}

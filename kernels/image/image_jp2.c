/* image_jp2.c — JPEG 2000 (JP2 files and J2K codestreams) through OpenJPEG, read from
 * memory: 1 component (gray, replicated) or 3 or more (the first three as RGB; OpenJPEG
 * undoes the codestream's colour transform), samples of other precisions scaled to 8 bits.
 * Subsampled components (a chroma plane smaller than the image): Unsupported. Errors and
 * warnings go to this file's handlers. */
#include <stdio.h>
#include <string.h>

#include <openjpeg.h>

#include "image.h"

typedef struct jp_src {
	const uint8_t *p;
	OPJ_UINT64 n, at;
	char msg[160];
} jp_src;

static OPJ_SIZE_T j_read(void *buf, OPJ_SIZE_T len, void *user)
{
	jp_src *s = user;
	if (s->at >= s->n)
		return (OPJ_SIZE_T)-1;
	OPJ_UINT64 k = len;
	if (k > s->n - s->at)
		k = s->n - s->at;
	memcpy(buf, s->p + s->at, (size_t)k);
	s->at += k;
	return (OPJ_SIZE_T)k;
}

static OPJ_OFF_T j_skip(OPJ_OFF_T off, void *user)
{
	jp_src *s = user;
	if (off < 0 ? (OPJ_UINT64)-off > s->at : (OPJ_UINT64)off > s->n - s->at)
		return -1;
	s->at += (OPJ_UINT64)off;
	return off;
}

static OPJ_BOOL j_seek(OPJ_OFF_T off, void *user)
{
	jp_src *s = user;
	if (off < 0 || (OPJ_UINT64)off > s->n)
		return OPJ_FALSE;
	s->at = (OPJ_UINT64)off;
	return OPJ_TRUE;
}

static void on_error(const char *msg, void *user)
{
	jp_src *s = user;
	if (!s->msg[0]) {
		snprintf(s->msg, sizeof s->msg, "%s", msg);
		const size_t l = strlen(s->msg);
		if (l && s->msg[l - 1] == '\n')
			s->msg[l - 1] = 0;
	}
}

static void on_quiet(const char *msg, void *user)
{
	(void)msg, (void)user;
}

static uint8_t to8(OPJ_INT32 v, const opj_image_comp_t *cp)
{
	if (cp->sgnd)
		v += 1 << (cp->prec - 1);
	if (v < 0)
		v = 0;
	const int64_t max = (INT64_C(1) << cp->prec) - 1;
	if (v > max)
		v = (OPJ_INT32)max;
	if (cp->prec == 8)
		return (uint8_t)v;
	return (uint8_t)(((int64_t)v * 255 + max / 2) / max);
}

om_kind om_image_jp2(om_ctx *c, const uint8_t *p, size_t n, int64_t *h, int64_t *w, uint8_t *rgb)
{
	static const uint8_t j2k[4] = {0xff, 0x4f, 0xff, 0x51};
	jp_src s = {p, n, 0, ""};
	opj_codec_t *codec = opj_create_decompress(n >= 4 && !memcmp(p, j2k, 4) ? OPJ_CODEC_J2K
										 : OPJ_CODEC_JP2);
	opj_stream_t *st = opj_stream_create(64 * 1024, OPJ_TRUE);
	opj_image_t *img = NULL;
	om_kind rc = OM_OK;
	if (!codec || !st) {
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		goto done;
	}
	opj_set_error_handler(codec, on_error, &s);
	opj_set_warning_handler(codec, on_quiet, &s);
	opj_set_info_handler(codec, on_quiet, &s);
	opj_stream_set_user_data(st, &s, NULL);
	opj_stream_set_user_data_length(st, n);
	opj_stream_set_read_function(st, j_read);
	opj_stream_set_skip_function(st, j_skip);
	opj_stream_set_seek_function(st, j_seek);
	opj_dparameters_t par;
	opj_set_default_decoder_parameters(&par);
	if (!opj_setup_decoder(codec, &par) || !opj_read_header(st, codec, &img) || !img) {
		rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "JPEG 2000: %s",
			      s.msg[0] ? s.msg : "malformed header");
		goto done;
	}
	*w = (int64_t)img->x1 - img->x0;
	*h = (int64_t)img->y1 - img->y0;
	rc = om_image_check_size(c, *h, *w);
	if (rc || !rgb)
		goto done;
	if (img->numcomps != 1 && img->numcomps < 3) {
		rc = om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "JPEG 2000: %u components",
			      img->numcomps);
		goto done;
	}
	if (!opj_decode(codec, st, img) || !opj_end_decompress(codec, st)) {
		rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "JPEG 2000: %s",
			      s.msg[0] ? s.msg : "malformed data");
		goto done;
	}
	const int nc = img->numcomps == 1 ? 1 : 3;
	for (int k = 0; k < nc; k++) {
		const opj_image_comp_t *cp = &img->comps[k];
		if (!cp->data || cp->w != (OPJ_UINT32)*w || cp->h != (OPJ_UINT32)*h ||
		    cp->prec < 1 || cp->prec > 31) {
			rc = om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				      "JPEG 2000: subsampled or %u-bit components", cp->prec);
			goto done;
		}
	}
	const size_t px = (size_t)*w * (size_t)*h;
	for (size_t i = 0; i < px; i++)
		for (int k = 0; k < 3; k++) {
			const opj_image_comp_t *cp = &img->comps[nc == 1 ? 0 : k];
			rgb[3 * i + (size_t)k] = to8(cp->data[i], cp);
		}
done:
	if (img)
		opj_image_destroy(img);
	if (st)
		opj_stream_destroy(st);
	if (codec)
		opj_destroy_codec(codec);
	return rc;
}

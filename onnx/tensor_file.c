/* tensor_file.c — om_tensor_read_file / om_tensor_write_file: ONNX TensorProto (.pb) and
 * NumPy .npy (versions 1–3, little-endian, C order). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx_io.h"

static const struct {
	const char *descr;
	int32_t dtype;
} npy_types[] = {
	{"f4", OM_FLOAT}, {"f8", OM_DOUBLE}, {"f2", OM_FLOAT16}, {"b1", OM_BOOL},
	{"i1", OM_INT8}, {"u1", OM_UINT8}, {"i2", OM_INT16}, {"u2", OM_UINT16},
	{"i4", OM_INT32}, {"u4", OM_UINT32}, {"i8", OM_INT64}, {"u8", OM_UINT64},
	{"c8", OM_COMPLEX64}, {"c16", OM_COMPLEX128},
};

om_kind om_onnx_read_file(const char *path, unsigned char **data, size_t *size, om_status *st)
{
	int fd;
	om_kind k = om_file_open_regular(path, "tensor file", &fd, NULL, st);
	if (k)
		return k;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return om_error(st, OM_ERR_IO, NULL, "cannot read '%s': %s", path, strerror(errno));
	}
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		unsigned char *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
		if (!bigger) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = bigger;
		cap *= 2;
	}
	bool err = ferror(f);
	fclose(f);
	if (!buf)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory reading '%s'", path);
	if (err) {
		free(buf);
		return om_error(st, OM_ERR_IO, NULL, "cannot read '%s'", path);
	}
	*data = buf;
	*size = n;
	return OM_OK;
}

/* ---- .npy -------------------------------------------------------------------------------- */

/* The header is a Python dict literal with exactly the keys 'descr', 'fortran_order' and
 * 'shape', each once, as numpy's read_array_header requires: a repeated or unknown key, a
 * missing one, a value of the wrong kind or text after the dict is refused, so that a file
 * is never read other than as numpy reads it. */
enum { NPY_DESCR, NPY_FORTRAN, NPY_SHAPE, NPY_KEYS };
static const char *const npy_keys[NPY_KEYS] = {"descr", "fortran_order", "shape"};

static const char *npy_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* A quoted string without escapes at *p into buf (cap bytes with the NUL); false when *p holds
 * none or it does not fit. */
static bool npy_string(const char **p, char *buf, size_t cap)
{
	const char q = **p;
	if (q != '\'' && q != '"')
		return false;
	const char *s = *p + 1;
	const size_t n = strcspn(s, q == '\'' ? "'\\" : "\"\\");
	if (s[n] != q || n >= cap)
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	*p = s + n + 1;
	return true;
}

/* A tuple of non-negative integers ("()", "(3,)", "(2, 3)"; "(3)" is an int, not a tuple). */
static bool npy_shape(const char **pp, om_tensor *t, bool *too_long)
{
	const char *p = *pp;
	if (*p++ != '(')
		return false;
	t->rank = 0;
	bool comma = false;
	for (p = npy_ws(p); *p != ')'; p = npy_ws(p)) {
		if (*p < '0' || *p > '9')
			return false;
		if (t->rank == OM_MAX_RANK) {
			*too_long = true;
			return false;
		}
		char *end;
		errno = 0;
		const long long v = strtoll(p, &end, 10);
		if (errno)
			return false;
		t->dims[t->rank++] = v;
		p = end + (*end == 'L'); /* written by Python 2 */
		p = npy_ws(p);
		comma = *p == ',';
		if (comma)
			p++;
		else if (*p != ')')
			return false;
	}
	*pp = p + 1;
	return t->rank != 1 || comma;
}

static om_kind npy_bad(const char *path, const char *what, const char *key, om_status *st)
{
	return om_error(st, OM_ERR_INVALID_INPUT, NULL, "'%s': bad .npy header: %s%s%s%s", path,
			what, key ? " '" : "", key ? key : "", key ? "'" : "");
}

/* The element type of descr ('<f4', '|u1', ...). */
static om_kind npy_dtype(const char *descr, om_tensor *t, const char *path, om_status *st)
{
	const char order = descr[0];
	const char *code = descr + 1;
	t->dtype = OM_UNDEFINED;
	for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
		if (!strcmp(code, npy_types[i].descr))
			t->dtype = npy_types[i].dtype;
	if ((order != '<' && order != '|' && order != '=') || !t->dtype ||
	    (order == '|' && om_dtype_size(t->dtype) != 1))
		return om_error(st, OM_ERR_UNSUPPORTED, NULL, "'%s': element type '%s'", path,
				descr);
	return OM_OK;
}

static om_kind npy_parse_header(const char *h, om_tensor *t, const char *path, om_status *st)
{
	const char *p = npy_ws(h);
	if (*p++ != '{')
		return npy_bad(path, "not a dict", NULL, st);
	char descr[16] = "", key[32];
	bool fortran = false, too_long = false;
	unsigned seen = 0;
	for (p = npy_ws(p); *p != '}'; p = npy_ws(p)) {
		if (!npy_string(&p, key, sizeof key))
			return npy_bad(path, "a key that is not a short string", NULL, st);
		int i = 0;
		while (i < NPY_KEYS && strcmp(key, npy_keys[i]))
			i++;
		if (i == NPY_KEYS)
			return npy_bad(path, "unknown key", key, st);
		if (seen & 1u << i)
			return npy_bad(path, "repeated key", key, st);
		seen |= 1u << i;
		p = npy_ws(p);
		if (*p++ != ':')
			return npy_bad(path, "no ':' after", key, st);
		p = npy_ws(p);
		bool ok = true;
		if (i == NPY_DESCR) {
			ok = npy_string(&p, descr, sizeof descr) && descr[0];
			if (!ok && *p == '[')
				return om_error(st, OM_ERR_UNSUPPORTED, NULL,
						"'%s': structured element type", path);
		} else if (i == NPY_FORTRAN) {
			fortran = !strncmp(p, "True", 4);
			ok = fortran || !strncmp(p, "False", 5);
			p += fortran ? 4 : ok ? 5 : 0;
		} else {
			ok = npy_shape(&p, t, &too_long);
			if (too_long)
				return om_error(st, OM_ERR_UNSUPPORTED, NULL,
						"'%s': bad or too long shape", path);
		}
		if (!ok)
			return npy_bad(path, "bad value of", key, st);
		p = npy_ws(p);
		if (*p == ',')
			p++;
		else if (*p != '}')
			return npy_bad(path, "no ',' or '}' after", key, st);
	}
	if (*npy_ws(p + 1))
		return npy_bad(path, "text after the dict", NULL, st);
	for (int i = 0; i < NPY_KEYS; i++)
		if (!(seen & 1u << i))
			return npy_bad(path, "missing key", npy_keys[i], st);
	if (fortran)
		return om_error(st, OM_ERR_UNSUPPORTED, NULL, "'%s': Fortran order", path);
	return npy_dtype(descr, t, path, st);
}

static om_kind npy_read(const char *path, const unsigned char *b, size_t n, om_tensor *out,
			om_status *st)
{
	if (n < 10 || b[6] < 1 || b[6] > 3)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "'%s': bad .npy preamble", path);
	size_t hl, off;
	if (b[6] == 1) {
		hl = (size_t)b[8] | (size_t)b[9] << 8;
		off = 10;
	} else {
		if (n < 12)
			return om_error(st, OM_ERR_INVALID_INPUT, NULL, "'%s': truncated", path);
		hl = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
		off = 12;
	}
	if (hl > n - off)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "'%s': truncated header", path);
	if (memchr(b + off, 0, hl))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "'%s': NUL in the .npy header",
				path);
	char *h = strndup((const char *)b + off, hl);
	if (!h)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	om_tensor t = {0};
	om_kind k = npy_parse_header(h, &t, path, st);
	free(h);
	if (k)
		return k;
	off += hl;
	size_t need = om_tensor_bytes_for(t.dtype, t.rank, t.dims);
	if (om_shape_bytes(t.dtype, t.rank, t.dims) < 0)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "'%s': shape too large", path);
	if (n - off != need)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"'%s': %zu data bytes, shape needs %zu", path, n - off, need);
	k = om_tensor_alloc(out, t.dtype, t.rank, t.dims, st);
	if (!k && need)
		memcpy(out->data, b + off, need);
	return k;
}

static const char *npy_descr(int32_t dtype)
{
	for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
		if (npy_types[i].dtype == dtype)
			return npy_types[i].descr;
	return NULL;
}

static om_kind npy_write(FILE *f, const om_tensor *t, om_status *st)
{
	const char *code = npy_descr(t->dtype);
	if (!code)
		return om_error(st, OM_ERR_UNSUPPORTED, NULL, "no .npy type for %s",
				om_dtype_name(t->dtype));
	char h[1024];
	int n = snprintf(h, sizeof h, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
			 om_dtype_size(t->dtype) == 1 ? '|' : '<', code);
	for (int32_t i = 0; i < t->rank; i++)
		n += snprintf(h + n, sizeof h - (size_t)n, "%s%lld", i ? ", " : "",
			      (long long)t->dims[i]);
	n += snprintf(h + n, sizeof h - (size_t)n, "%s), }", t->rank == 1 ? "," : "");
	int total = 10 + n + 1;
	int pad = (64 - total % 64) % 64;
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
				 (unsigned char)((n + pad + 1) & 0xff),
				 (unsigned char)((n + pad + 1) >> 8)};
	bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, (size_t)n, f) == (size_t)n;
	for (int i = 0; ok && i < pad; i++)
		ok = fputc(' ', f) != EOF;
	ok = ok && fputc('\n', f) != EOF;
	ok = ok && fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
	return ok ? OM_OK : om_error(st, OM_ERR_IO, NULL, "cannot write .npy data");
}

/* ---- .pb --------------------------------------------------------------------------------- */

static om_kind pb_read(const char *path, const unsigned char *b, size_t n, om_tensor *out,
		       om_status *st)
{
	om_kind k = om_onnx_wire_check(&onnx__tensor_proto__descriptor, b, n, st);
	if (k)
		return k;
	Onnx__TensorProto *tp = (Onnx__TensorProto *)protobuf_c_message_unpack(
		&onnx__tensor_proto__descriptor, NULL, n, b);
	if (!tp)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "'%s' is not a TensorProto", path);
	om_model *m = om_model_new();
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
	om_mapping *maps = NULL;
	om_tensor *t = NULL;
	if (!m || !dir) {
		k = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	} else {
		om_tensor_ctx c = {.m = m, .dir = dir, .maps = &maps};
		k = om_onnx_tensor_from_proto(&c, tp, &t, st);
		if (!k && !t)
			k = om_error(st, OM_ERR_UNSUPPORTED, NULL,
				     "'%s': rank, element type or segments not supported", path);
		if (!k)
			k = om_tensor_alloc(out, t->dtype, t->rank, t->dims, st);
		if (!k)
			k = om_tensor_copy_data(out, t, st);
	}
	om_onnx_mappings_free(maps);
	om_model_free(m);
	free(dir);
	protobuf_c_message_free_unpacked(&tp->base, NULL);
	return k;
}

static om_kind pb_write(FILE *f, const om_tensor *t, const char *name, om_status *st)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	tp.name = (char *)(name ? name : "");
	tp.n_dims = (size_t)t->rank;
	tp.dims = (int64_t *)t->dims;
	tp.has_data_type = 1;
	tp.data_type = t->dtype;
	ProtobufCBinaryData *strs = NULL;
	if (t->dtype == OM_STRING) {
		int64_t n = om_tensor_numel(t);
		strs = calloc((size_t)(n > 0 ? n : 1), sizeof *strs);
		if (!strs)
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		const om_str *s = t->data;
		for (int64_t i = 0; i < n; i++)
			strs[i] = (ProtobufCBinaryData){(size_t)s[i].len, (uint8_t *)s[i].ptr};
		tp.n_string_data = (size_t)n;
		tp.string_data = strs;
	} else {
		tp.has_raw_data = 1;
		tp.raw_data = (ProtobufCBinaryData){t->nbytes, t->data};
	}
	const om_kind k = om_pack_to_file(&tp.base, f)
				  ? OM_OK
				  : om_error(st, OM_ERR_IO, NULL, "cannot write the TensorProto");
	free(strs);
	return k;
}

/* ---- entry points ------------------------------------------------------------------------ */

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

om_kind om_tensor_read_file(const char *path, om_tensor *t, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	memset(t, 0, sizeof *t);
	unsigned char *b = NULL;
	size_t n = 0;
	om_kind k = om_onnx_read_file(path, &b, &n, st);
	if (k)
		return k;
	const bool npy = n >= 6 && !memcmp(b, "\x93NUMPY", 6);
	if (npy)
		k = npy_read(path, b, n, t, st);
	else if (has_suffix(path, ".npy"))
		k = om_error(st, OM_ERR_INVALID_INPUT, NULL,
			     "'%s' is not a NumPy .npy file (no \\x93NUMPY magic)", path);
	else
		k = pb_read(path, b, n, t, st);
	free(b);
	if (k && !npy && st && st->kind == OM_ERR_INVALID_MODEL) {
		/* a tensor file is an input, not a model: name the file and what was tried */
		char why[sizeof st->msg];
		snprintf(why, sizeof why, "%s", st->msg);
		k = om_error(st, OM_ERR_INVALID_INPUT, NULL,
			     "'%s' is neither a NumPy .npy file nor an ONNX TensorProto (%.300s)",
			     path, why);
	}
	return k;
}

om_kind om_tensor_write_file(const char *path, const om_tensor *t, const char *name,
			     om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	if (t->rank < 0 || t->rank > OM_MAX_RANK || om_tensor_numel(t) < 0 ||
	    (t->dtype != OM_STRING &&
	     t->nbytes < om_tensor_bytes_for(t->dtype, t->rank, t->dims)))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "inconsistent tensor");
	om_out_file o;
	om_kind k = om_out_open(&o, path, st);
	if (k)
		return k;
	om_tensor v = *t;
	if (v.dtype != OM_STRING)
		v.nbytes = om_tensor_bytes_for(t->dtype, t->rank, t->dims);
	k = has_suffix(path, ".npy") ? npy_write(o.f, &v, st) : pb_write(o.f, &v, name, st);
	if (!k)
		k = om_out_commit(&o, st);
	om_out_discard(&o);
	return k;
}

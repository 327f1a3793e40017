/* save.c — om_model_save: the IR → protobuf-c messages (reusing the loaded ones for what the IR
 * does not model and for unchanged tensors) → a file written atomically, weights optionally in
 * an external-data file beside it, named by its content and published before the model. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "onnx_io.h"

typedef struct wctx {
	const om_model *m;
	om_arena *a;
	const om_io_resources *res; /* NULL for a model not made by the loader */
	bool ext;                   /* weights >= ext_min go to the external file */
	size_t ext_min;
	bool by_content; /* ext_name is om_onnx_data_name's, its digest filled in once written */
	char *ext_name;  /* every location entry points at it */
	char ext_path[PATH_MAX];
	om_out_file xf; /* the weights file being written (xf.f NULL until the first) */
	om_digest dg;   /* of xf's bytes */
	int placed;     /* -2, or the weights file is at ext_path: its om_cleanup_add slot */
	uint64_t ext_off;
	bool no_value_info; /* measuring without shape metadata (value_info, output types) */
	om_status *st;
	om_kind err;
} wctx;

#define NEW(c, T, INIT) ((T *)new_msg((c), &(T)INIT, sizeof(T)))

static void *fail(wctx *c, om_kind k, const char *what)
{
	if (!c->err)
		c->err = om_error(c->st, k, NULL, "%s", what);
	return NULL;
}

static void *new_msg(wctx *c, const void *init, size_t size)
{
	void *p = om_arena_alloc(c->a, size);
	if (!p)
		return fail(c, OM_ERR_NOMEM, "out of memory building messages");
	memcpy(p, init, size);
	return p;
}

static void *array(wctx *c, size_t n, size_t size)
{
	void *p = om_arena_alloc(c->a, (n ? n : 1) * size);
	return p ? p : fail(c, OM_ERR_NOMEM, "out of memory building messages");
}

/* NULL for "" so that empty optional strings stay absent. */
static char *opt_str(const char *s)
{
	return s && *s ? (char *)s : NULL;
}

static Onnx__StringStringEntryProto **w_kvs(wctx *c, const om_kv *kv, int32_t n, size_t *count)
{
	*count = 0;
	if (n <= 0)
		return NULL;
	Onnx__StringStringEntryProto **e = array(c, (size_t)n, sizeof *e);
	for (int32_t i = 0; e && i < n; i++) {
		e[i] = NEW(c, Onnx__StringStringEntryProto, ONNX__STRING_STRING_ENTRY_PROTO__INIT);
		if (!e[i])
			return NULL;
		e[i]->key = (char *)kv[i].key;
		e[i]->value = (char *)kv[i].value;
	}
	*count = (size_t)n;
	return e;
}

/* ---- types ------------------------------------------------------------------------------- */

static bool type_matches(const om_type *t, const Onnx__TypeProto *tp)
{
	if (tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
		return t->kind == OM_TYPE_UNKNOWN;
	if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return t->kind == OM_TYPE_OTHER;
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	if (t->kind != OM_TYPE_TENSOR || t->elem != (tt->has_elem_type ? tt->elem_type : 0))
		return false;
	if (!tt->shape)
		return t->rank < 0;
	if (t->rank < 0 || (size_t)t->rank != tt->shape->n_dim)
		return false;
	for (int32_t i = 0; i < t->rank; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
		om_dim o = {-1, NULL};
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    d->dim_value >= 0)
			o.value = d->dim_value;
		else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			 d->dim_param && *d->dim_param)
			o.param = d->dim_param;
		if (o.value != t->dims[i].value || !o.param != !t->dims[i].param ||
		    (o.param && strcmp(o.param, t->dims[i].param)))
			return false;
	}
	return true;
}

static Onnx__TypeProto *w_type(wctx *c, const om_type *t)
{
	const Onnx__TypeProto *orig = t->proto;
	if (orig && type_matches(t, orig))
		return (Onnx__TypeProto *)orig;
	if (t->kind != OM_TYPE_TENSOR)
		return t->kind == OM_TYPE_OTHER ? (Onnx__TypeProto *)orig : NULL;
	Onnx__TypeProto *tp = NEW(c, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
	Onnx__TypeProto__Tensor *tt = NEW(c, Onnx__TypeProto__Tensor,
					  ONNX__TYPE_PROTO__TENSOR__INIT);
	if (!tp || !tt)
		return NULL;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = t->elem;
	if (t->rank < 0)
		return tp;
	tt->shape = NEW(c, Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
	if (!tt->shape)
		return NULL;
	tt->shape->n_dim = (size_t)t->rank;
	tt->shape->dim = array(c, (size_t)t->rank, sizeof *tt->shape->dim);
	for (int32_t i = 0; tt->shape->dim && i < t->rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = NEW(c, Onnx__TensorShapeProto__Dimension,
			ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
		if (!d)
			return NULL;
		if (t->dims[i].value >= 0) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = t->dims[i].value;
		} else if (t->dims[i].param) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = (char *)t->dims[i].param;
		}
		tt->shape->dim[i] = d;
	}
	return tp;
}

/* ---- tensors ----------------------------------------------------------------------------- */

static bool is_external(const Onnx__TensorProto *tp)
{
	return tp->has_data_location &&
	       tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* The loader's resources of m, or of the model m was cloned from (om_model_clone): the files
 * a clone's weights may live in are its original's. NULL for a model built in memory. */
static const om_io_resources *loader_resources(const om_model *m)
{
	while (m && !m->release)
		m = m->base;
	return m ? m->resources : NULL;
}

/* t is the tensor the loader made from orig and nobody replaced its shape or data since. */
static bool unchanged(const wctx *c, const om_tensor *t, const Onnx__TensorProto *orig)
{
	const om_loaded *e = NULL;
	if (!c->res)
		return false;
	HASH_FIND_PTR(c->res->loaded, &t, e);
	if (!e || e->proto != orig)
		return false;
	const om_tensor *s = &e->snap;
	return s->dtype == t->dtype && s->rank == t->rank && s->data == t->data &&
	       s->nbytes == t->nbytes &&
	       !memcmp(s->dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
}

/* Refuses to replace a file the saved model was loaded from: any folder entry on the way to
 * its external data, or (for the weights file) the model file itself. The model file may be
 * replaced by the new model: the rename leaves the loaded copy intact. */
static om_kind check_deps(const wctx *c, const char *path, bool weights)
{
	struct stat sb;
	if (!c->res || lstat(path, &sb) != 0)
		return OM_OK;
	const om_file_id id = {sb.st_dev, sb.st_ino};
	for (const om_mapping *mp = c->res->maps; mp; mp = mp->next)
		for (int32_t i = 0; i < mp->nids; i++)
			if (om_file_id_eq(mp->ids[i], id))
				return om_error(c->st, OM_ERR_IO, NULL,
						"'%s' holds external data the model being saved "
						"was loaded from: replacing it would break that "
						"model; save under another name", path);
	for (int32_t i = 0; weights && i < c->res->nfile; i++)
		if (om_file_id_eq(c->res->file[i], id))
			return om_error(c->st, OM_ERR_IO, NULL,
					"'%s' is the model file being saved from: its weights "
					"would replace it; save under another name", path);
	return OM_OK;
}

/* The weights file's temporary file. A name given by the caller is checked now; a content
 * name is taken only when free (place_weights). */
static om_kind ext_open(wctx *c)
{
	om_digest_init(&c->dg);
	if (c->by_content)
		return om_out_create(&c->xf, c->ext_path, c->st);
	om_kind k = check_deps(c, c->ext_path, true);
	return k ? k : om_out_open(&c->xf, c->ext_path, c->st);
}

/* value NULL: the weights file's name (c->ext_name, shared: its digest is filled in later) */
static Onnx__StringStringEntryProto *entry(wctx *c, const char *key, const char *value)
{
	Onnx__StringStringEntryProto *e = NEW(c, Onnx__StringStringEntryProto,
					      ONNX__STRING_STRING_ENTRY_PROTO__INIT);
	if (e) {
		e->key = (char *)key;
		e->value = value ? om_arena_strdup(c->a, value) : c->ext_name;
		if (!e->value)
			return fail(c, OM_ERR_NOMEM, "out of memory");
	}
	return e;
}

static void write_failed(wctx *c, const char *path)
{
	if (!c->err)
		c->err = om_error(c->st, OM_ERR_IO, NULL, "cannot write '%s': %s", path,
				  strerror(errno ? errno : EIO));
}

/* The loader's mapping of an external-data file that holds t's bytes, or NULL. */
static const om_mapping *mapping_of(const wctx *c, const om_tensor *t)
{
	const unsigned char *p = t->data;
	for (const om_mapping *mp = c->res ? c->res->maps : NULL; mp; mp = mp->next) {
		const unsigned char *base = mp->ptr;
		if (base && p >= base && (size_t)(p - base) <= mp->size &&
		    t->nbytes <= mp->size - (size_t)(p - base))
			return mp;
	}
	return NULL;
}

/* t's bytes at c->ext_off: from the file they are mapped from, hole-aware, when it has holes
 * there (a sparse terabyte costs its data, not its size); else the bytes as they are. */
static void w_payload(wctx *c, const om_tensor *t)
{
	const om_mapping *mp = mapping_of(c, t);
	bool copied = false;
	if (mp && (c->err = om_out_copy_holes(&c->xf, c->ext_off, mp,
					      (uint64_t)((const unsigned char *)t->data -
							 (const unsigned char *)mp->ptr),
					      t->nbytes, &c->dg, &copied, c->st)))
		return;
	if (copied)
		return;
	errno = 0;
	if (fwrite(t->data, 1, t->nbytes, c->xf.f) != t->nbytes)
		write_failed(c, c->ext_path);
	else
		om_digest_add(&c->dg, t->data, t->nbytes);
}

/* Appends t's bytes (64-byte aligned) to the external file and points tp at them. */
static void w_external(wctx *c, const om_tensor *t, Onnx__TensorProto *tp)
{
	static const unsigned char zeros[64];
	if (!c->xf.f && (c->err = ext_open(c)))
		return;
	size_t pad = (size_t)((64 - c->ext_off % 64) % 64);
	errno = 0;
	if (fwrite(zeros, 1, pad, c->xf.f) != pad) {
		write_failed(c, c->ext_path);
		return;
	}
	om_digest_add(&c->dg, zeros, pad);
	c->ext_off += pad;
	w_payload(c, t);
	if (c->err)
		return;
	char off[32], len[32];
	snprintf(off, sizeof off, "%llu", (unsigned long long)c->ext_off);
	snprintf(len, sizeof len, "%zu", t->nbytes);
	c->ext_off += t->nbytes;
	tp->external_data = array(c, 3, sizeof *tp->external_data);
	if (!tp->external_data)
		return;
	tp->external_data[0] = entry(c, "location", NULL);
	tp->external_data[1] = entry(c, "offset", off);
	tp->external_data[2] = entry(c, "length", len);
	tp->n_external_data = 3;
	tp->has_data_location = 1;
	tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* `name` NULL: keep orig's name. may_ext: an initializer (attribute tensors stay inline). */
static Onnx__TensorProto *w_tensor(wctx *c, const om_tensor *t, const Onnx__TensorProto *orig,
				   const char *name, bool may_ext)
{
	if (!t)
		return (Onnx__TensorProto *)orig;
	if (t->rank < 0 || t->rank > OM_MAX_RANK || om_tensor_numel(t) < 0 ||
	    (t->dtype != OM_STRING && t->nbytes != om_tensor_bytes_for(t->dtype, t->rank, t->dims)))
		return fail(c, OM_ERR_INTERNAL, "a tensor's byte count does not match its shape");
	bool ext = may_ext && c->ext && t->dtype != OM_STRING && t->nbytes >= c->ext_min;
	const char *oname = orig && orig->name ? orig->name : "";
	if (orig && !ext && !is_external(orig) && (!name || !strcmp(name, oname)) &&
	    unchanged(c, t, orig))
		return (Onnx__TensorProto *)orig;
	Onnx__TensorProto *tp = NEW(c, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
	if (!tp)
		return NULL;
	tp->name = opt_str(name ? name : oname);
	if (orig) {
		tp->doc_string = orig->doc_string;
		tp->n_metadata_props = orig->n_metadata_props;
		tp->metadata_props = orig->metadata_props;
	}
	tp->n_dims = (size_t)t->rank;
	tp->dims = (int64_t *)t->dims;
	tp->has_data_type = 1;
	tp->data_type = t->dtype;
	if (t->dtype == OM_STRING) {
		int64_t n = om_tensor_numel(t);
		const om_str *s = t->data;
		tp->string_data = array(c, (size_t)n, sizeof *tp->string_data);
		for (int64_t i = 0; tp->string_data && i < n; i++)
			tp->string_data[i] = (ProtobufCBinaryData){(size_t)s[i].len,
								   (uint8_t *)s[i].ptr};
		tp->n_string_data = tp->string_data ? (size_t)n : 0;
	} else if (ext) {
		w_external(c, t, tp);
	} else {
		tp->has_raw_data = 1;
		tp->raw_data = (ProtobufCBinaryData){t->nbytes, t->data};
	}
	return tp;
}

/* ---- attributes, nodes, graphs ----------------------------------------------------------- */

static Onnx__GraphProto *w_graph(wctx *c, const om_graph *g);

static bool modelled(int32_t type)
{
	return type >= OM_ATTR_FLOAT && type <= OM_ATTR_GRAPHS;
}

static Onnx__AttributeProto *w_attr(wctx *c, const om_attr *a)
{
	const Onnx__AttributeProto *ap = a->proto;
	if (ap && (!modelled(a->type) || a->ref_attr_name))
		return (Onnx__AttributeProto *)ap;
	Onnx__AttributeProto *at = NEW(c, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
	if (!at)
		return NULL;
	at->name = (char *)a->name;
	at->doc_string = opt_str(a->doc);
	at->ref_attr_name = opt_str(a->ref_attr_name);
	at->has_type = 1;
	at->type = (Onnx__AttributeProto__AttributeType)a->type;
	if (a->ref_attr_name)
		return at;
	size_t n = a->n > 0 ? (size_t)a->n : 0;
	switch (a->type) {
	case OM_ATTR_FLOAT: at->has_f = 1, at->f = a->f; break;
	case OM_ATTR_INT: at->has_i = 1, at->i = a->i; break;
	case OM_ATTR_STRING:
		at->has_s = 1;
		at->s = (ProtobufCBinaryData){(size_t)a->s.len, (uint8_t *)a->s.ptr};
		break;
	case OM_ATTR_TENSOR: at->t = w_tensor(c, a->t, ap ? ap->t : NULL, NULL, false); break;
	case OM_ATTR_GRAPH: at->g = a->g ? w_graph(c, a->g) : NULL; break;
	case OM_ATTR_FLOATS: at->n_floats = n, at->floats = a->floats; break;
	case OM_ATTR_INTS: at->n_ints = n, at->ints = a->ints; break;
	case OM_ATTR_STRINGS:
		at->strings = array(c, n, sizeof *at->strings);
		for (size_t i = 0; at->strings && i < n; i++)
			at->strings[i] = (ProtobufCBinaryData){(size_t)a->strings[i].len,
							       (uint8_t *)a->strings[i].ptr};
		at->n_strings = at->strings ? n : 0;
		break;
	case OM_ATTR_TENSORS:
		at->tensors = array(c, n, sizeof *at->tensors);
		for (size_t i = 0; at->tensors && i < n; i++) {
			const Onnx__TensorProto *o = NULL;
			if (ap && i < ap->n_tensors)
				o = ap->tensors[i];
			at->tensors[i] = w_tensor(c, a->tensors[i], o, NULL, false);
			if (!at->tensors[i])
				return fail(c, OM_ERR_INTERNAL, "attribute tensor missing");
		}
		at->n_tensors = at->tensors ? n : 0;
		break;
	case OM_ATTR_GRAPHS:
		at->graphs = array(c, n, sizeof *at->graphs);
		for (size_t i = 0; at->graphs && i < n; i++)
			if (!(at->graphs[i] = a->graphs[i] ? w_graph(c, a->graphs[i]) : NULL))
				return fail(c, OM_ERR_INTERNAL, "attribute graph missing");
		at->n_graphs = at->graphs ? n : 0;
		break;
	}
	return at;
}

static char **w_names(wctx *c, om_value *const *vs, int32_t n, size_t *count)
{
	char **s = array(c, (size_t)n, sizeof *s);
	for (int32_t i = 0; s && i < n; i++)
		s[i] = (char *)(vs[i] ? vs[i]->name : "");
	*count = s ? (size_t)n : 0;
	return s;
}

static Onnx__NodeProto *w_node(wctx *c, const om_node *n)
{
	const Onnx__NodeProto *orig = n->proto;
	Onnx__NodeProto *np = NEW(c, Onnx__NodeProto, ONNX__NODE_PROTO__INIT);
	if (!np)
		return NULL;
	np->input = w_names(c, n->in, n->nin, &np->n_input);
	np->output = w_names(c, n->out, n->nout, &np->n_output);
	np->name = opt_str(n->name);
	np->op_type = (char *)n->op;
	np->domain = opt_str(n->domain);
	np->overload = opt_str(n->overload);
	np->doc_string = opt_str(n->doc);
	np->attribute = array(c, (size_t)n->nattr, sizeof *np->attribute);
	for (int32_t i = 0; np->attribute && i < n->nattr; i++)
		if (!(np->attribute[np->n_attribute++] = w_attr(c, &n->attrs[i])))
			return NULL;
	np->metadata_props = w_kvs(c, n->meta, n->nmeta, &np->n_metadata_props);
	if (orig) {
		np->n_device_configurations = orig->n_device_configurations;
		np->device_configurations = orig->device_configurations;
	}
	return np;
}

/* metadata_props of the value_info `name` had in the loaded graph (not in the IR). */
static void vi_meta(const Onnx__GraphProto *gp, const char *name, Onnx__ValueInfoProto *vi)
{
	Onnx__ValueInfoProto **lists[3] = {gp->input, gp->output, gp->value_info};
	size_t counts[3] = {gp->n_input, gp->n_output, gp->n_value_info};
	for (int l = 0; l < 3; l++)
		for (size_t i = 0; i < counts[l]; i++) {
			const Onnx__ValueInfoProto *o = lists[l][i];
			if (o->n_metadata_props && o->name && !strcmp(o->name, name)) {
				vi->n_metadata_props = o->n_metadata_props;
				vi->metadata_props = o->metadata_props;
				return;
			}
		}
}

static bool any_vi_meta(const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_input; i++)
		if (gp->input[i]->n_metadata_props)
			return true;
	for (size_t i = 0; i < gp->n_output; i++)
		if (gp->output[i]->n_metadata_props)
			return true;
	for (size_t i = 0; i < gp->n_value_info; i++)
		if (gp->value_info[i]->n_metadata_props)
			return true;
	return false;
}

/* typed: with each value's type (measuring the size rule's size leaves graph outputs' out) */
static Onnx__ValueInfoProto **w_vis(wctx *c, const om_graph *g, om_value *const *vs, int32_t n,
				    bool typed, size_t *count)
{
	const Onnx__GraphProto *gp = g->proto;
	bool meta = gp && any_vi_meta(gp);
	Onnx__ValueInfoProto **out = array(c, (size_t)n, sizeof *out);
	*count = 0;
	for (int32_t i = 0; out && i < n; i++) {
		Onnx__ValueInfoProto *vi = NEW(c, Onnx__ValueInfoProto,
					       ONNX__VALUE_INFO_PROTO__INIT);
		if (!vi)
			return NULL;
		vi->name = (char *)vs[i]->name;
		vi->type = typed ? w_type(c, &vs[i]->type) : NULL;
		vi->doc_string = opt_str(vs[i]->doc);
		if (meta)
			vi_meta(gp, vs[i]->name, vi);
		out[(*count)++] = vi;
	}
	return out;
}

static Onnx__GraphProto *w_graph(wctx *c, const om_graph *g)
{
	const Onnx__GraphProto *orig = g->proto;
	Onnx__GraphProto *gp = NEW(c, Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT);
	if (!gp)
		return NULL;
	gp->name = opt_str(g->name);
	gp->doc_string = opt_str(g->doc);
	gp->node = array(c, (size_t)g->nnodes, sizeof *gp->node);
	for (int32_t i = 0; gp->node && i < g->nnodes; i++)
		if (!(g->nodes[i]->flags & OM_NODE_DEAD) &&
		    !(gp->node[gp->n_node++] = w_node(c, g->nodes[i])))
			return NULL;
	gp->initializer = array(c, (size_t)g->ninits, sizeof *gp->initializer);
	for (int32_t i = 0; gp->initializer && i < g->ninits; i++) {
		const om_value *v = g->inits[i];
		Onnx__TensorProto *tp = w_tensor(c, v->init, v->init_proto, v->name, true);
		if (tp)
			gp->initializer[gp->n_initializer++] = tp;
	}
	gp->input = w_vis(c, g, g->inputs, g->ninputs, true, &gp->n_input);
	/* shape metadata (value_info, the types of graph outputs) is not what the size rule
	 * counts: simplify writes what inference knows into both */
	gp->output = w_vis(c, g, g->outputs, g->noutputs, !c->no_value_info, &gp->n_output);
	if (!c->no_value_info)
		gp->value_info = w_vis(c, g, g->infos, g->ninfos, true, &gp->n_value_info);
	gp->metadata_props = w_kvs(c, g->meta, g->nmeta, &gp->n_metadata_props);
	if (orig) {
		gp->n_sparse_initializer = orig->n_sparse_initializer;
		gp->sparse_initializer = orig->sparse_initializer;
		gp->n_quantization_annotation = orig->n_quantization_annotation;
		gp->quantization_annotation = orig->quantization_annotation;
	}
	return gp;
}

static Onnx__ModelProto *w_model(wctx *c)
{
	const om_model *m = c->m;
	const Onnx__ModelProto *orig = m->proto;
	Onnx__ModelProto *mp = NEW(c, Onnx__ModelProto, ONNX__MODEL_PROTO__INIT);
	if (!mp)
		return NULL;
	mp->has_ir_version = 1;
	mp->ir_version = m->ir_version;
	mp->opset_import = array(c, (size_t)m->nopsets, sizeof *mp->opset_import);
	for (int32_t i = 0; mp->opset_import && i < m->nopsets; i++) {
		Onnx__OperatorSetIdProto *o = NEW(c, Onnx__OperatorSetIdProto,
						  ONNX__OPERATOR_SET_ID_PROTO__INIT);
		if (!o)
			return NULL;
		o->domain = opt_str(m->opsets[i].domain); /* "" (ai.onnx) left out, as exporters do */
		o->has_version = 1;
		o->version = m->opsets[i].version;
		mp->opset_import[mp->n_opset_import++] = o;
	}
	mp->producer_name = opt_str(m->producer_name);
	mp->producer_version = opt_str(m->producer_version);
	mp->domain = opt_str(m->domain);
	mp->has_model_version = m->model_version != 0;
	mp->model_version = m->model_version;
	mp->doc_string = opt_str(m->doc);
	mp->metadata_props = w_kvs(c, m->meta, m->nmeta, &mp->n_metadata_props);
	if (orig) {
		mp->n_training_info = orig->n_training_info;
		mp->training_info = orig->training_info;
		mp->n_configuration = orig->n_configuration;
		mp->configuration = orig->configuration;
	}
	mp->n_functions = m->nfunctions > 0 ? (size_t)m->nfunctions : 0;
	mp->functions = (Onnx__FunctionProto **)m->functions;
	if (m->graph && !(mp->graph = w_graph(c, m->graph)))
		return NULL;
	return c->err ? NULL : mp;
}

/* ---- files ------------------------------------------------------------------------------- */

/* A weights file named by the caller: renamed into place, then the model; when the model's
 * rename fails, what was at the weights file's name before is put back (or the new one
 * removed). Two such saves at once to one name may leave one's model with the other's
 * weights: content names (place_weights) are the default for that reason. */
static om_kind commit_named(wctx *c, om_out_file *mo)
{
	char bak[PATH_MAX + 1] = "";
	struct stat sb;
	bool existed = lstat(c->xf.path, &sb) == 0;
	if (existed && (snprintf(bak, sizeof bak, "%s~", c->xf.tmp) >= (int)sizeof bak ||
			link(c->xf.path, bak) != 0))
		bak[0] = 0; /* no second name for it: it cannot be put back */
	om_kind k = om_out_rename(&c->xf, c->st);
	if (k) {
		om_out_discard(mo);
	} else if ((k = om_onnx_publish_model(mo, c->ext_name, c->st))) {
		if (bak[0] && rename(bak, c->xf.path) == 0)
			bak[0] = 0;
		else if (!existed)
			unlink(c->xf.path);
	}
	if (bak[0])
		unlink(bak);
	return k;
}

/* The variant-th name of the weights file: 0 the XXH64 of its bytes (holes copied from a
 * sparse source as records: om_digest_add_hole), then digests of that
 * and the variant's number; in the location entries and the paths. */
static void name_weights(wctx *c, uint64_t variant)
{
	uint64_t h = om_digest_value(&c->dg);
	if (variant) {
		om_digest d;
		om_digest_init(&d);
		const uint64_t words[2] = {h, variant};
		om_digest_add(&d, words, sizeof words);
		h = om_digest_value(&d);
	}
	char hex[17];
	snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
	/* the names end in ".<16 hex>.data" */
	memcpy(c->ext_name + strlen(c->ext_name) - 21, hex, 16);
	memcpy(c->ext_path + strlen(c->ext_path) - 21, hex, 16);
	memcpy(c->xf.path, c->ext_path, sizeof c->xf.path);
}

/* The finished weights file, named by its content, placed under the first of its names that
 * nothing has: no other model names it, so that the model replaced later may take it with it
 * (om_onnx_publish_model) while other saves to that path run. Listed for om_save_cleanup
 * until the model that names it is in place (c->placed). */
static om_kind place_weights(wctx *c)
{
	enum { VARIANTS = 64 };
	for (uint64_t v = 0; v < VARIANTS; v++) {
		name_weights(c, v);
		bool taken;
		om_kind k = om_out_rename_new(&c->xf, &taken, c->st);
		if (k || !taken) {
			c->placed = k ? -2 : om_cleanup_add(c->ext_path);
			return k;
		}
	}
	return om_error(c->st, OM_ERR_IO, NULL, "'%s' and %d more names like it are taken",
			c->ext_path, VARIANTS - 1);
}

/* The model file, once its weights file (if any) is placed: published; om_save_cleanup
 * leaves the weights file from just before (held) on (wctx_reset removes it on failure). */
static om_kind publish(wctx *c, om_out_file *mo)
{
	if (c->placed == -2)
		return om_onnx_publish_model(mo, NULL, c->st);
	if (!om_cleanup_hold(c->placed))
		return om_error(c->st, OM_ERR_IO, NULL, "'%s' was removed while saving",
				c->ext_path);
	om_kind k = om_onnx_publish_model(mo, c->ext_name, c->st);
	if (k)
		om_cleanup_release(c->placed);
	return k;
}

static om_kind write_model(wctx *c, const Onnx__ModelProto *mp, const char *path)
{
	om_kind k = OM_OK;
	if (c->xf.tmp[0])
		k = om_out_finish(&c->xf, c->st);
	if (!k && c->xf.tmp[0] && c->by_content)
		k = place_weights(c);
	om_out_file mo = {.slot = -1};
	if (!k)
		k = om_out_open(&mo, path, c->st);
	if (!k) {
		errno = 0;
		if (!om_pack_to_file(&mp->base, mo.f))
			write_failed(c, path), k = c->err;
	}
	if (!k)
		k = om_out_finish(&mo, c->st);
	if (!k)
		k = c->xf.tmp[0] ? commit_named(c, &mo) : publish(c, &mo);
	om_out_discard(&mo);
	return k;
}

static void wctx_reset(wctx *c, bool saved)
{
	om_out_discard(&c->xf);
	if (c->placed != -2 && !saved)
		unlink(c->ext_path);
	if (c->placed != -2)
		om_cleanup_drop(c->placed);
	c->placed = -2;
	c->ext_off = 0;
	om_arena_free(c->a);
	c->a = NULL;
}

om_kind om_onnx_save(const om_model *m, const char *path, const om_save_options *opt,
		     size_t limit, om_status *st)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char ext_name[NAME_MAX + 1];
	const bool named = opt && opt->external_name && *opt->external_name;
	if (!named)
		om_onnx_data_name(base, 0, ext_name); /* the digest is filled in once written */
	else if (snprintf(ext_name, sizeof ext_name, "%s", opt->external_name) >=
			 (int)sizeof ext_name ||
		 strchr(ext_name, '/') || !strcmp(ext_name, "..") || !strcmp(ext_name, ".") ||
		 !strcmp(ext_name, base))
		return om_error(st, OM_ERR_IO, NULL, "bad external data name '%s'",
				opt->external_name);
	wctx c = {.m = m, .res = loader_resources(m), .by_content = !named, .ext_name = ext_name,
		  .placed = -2, .st = st};
	if (snprintf(c.ext_path, sizeof c.ext_path, "%.*s%s", slash ? (int)(slash - path) + 1 : 0,
		     path, ext_name) >= (int)sizeof c.ext_path)
		return om_error(st, OM_ERR_IO, NULL, "path too long: '%.200s...'", path);
	/* nothing is written when the destination cannot be written or is what the model reads */
	om_kind k0 = om_out_check_dest(path, st);
	if (k0 || (k0 = check_deps(&c, path, false)))
		return k0;
	c.ext = opt && opt->external_data;
	c.ext_min = opt && opt->external_min_bytes ? opt->external_min_bytes : 1024;
	for (int attempt = 0;; attempt++) {
		if (!(c.a = om_arena_new()))
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		c.err = OM_OK;
		const Onnx__ModelProto *mp = w_model(&c);
		om_kind k = c.err ? c.err : !mp ? OM_ERR_INTERNAL : OM_OK;
		if (!k && protobuf_c_message_get_packed_size(&mp->base) > limit) {
			if (!c.ext && attempt == 0) { /* over protobuf's 2 GB: weights go outside */
				wctx_reset(&c, false);
				c.ext = true;
				continue;
			}
			k = om_error(st, OM_ERR_UNSUPPORTED, NULL,
				     "the model is over 2 GB even with external data");
		}
		if (!k)
			k = write_model(&c, mp, path);
		else if (k == OM_ERR_INTERNAL && !c.err)
			om_error(st, k, NULL, "could not build the model message");
		wctx_reset(&c, k == OM_OK);
		return k;
	}
}

om_kind om_model_save(const om_model *m, const char *path, const om_save_options *opt,
		      om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	return om_onnx_save(m, path, opt, INT32_MAX, st);
}

static om_kind measure(const om_model *m, bool no_value_info, size_t *bytes, om_status *st)
{
	char none[1] = "";
	wctx c = {.m = m, .res = loader_resources(m), .ext_name = none,
		  .no_value_info = no_value_info, .placed = -2, .st = st};
	*bytes = 0;
	if (!(c.a = om_arena_new()))
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	const Onnx__ModelProto *mp = w_model(&c);
	om_kind k = c.err;
	if (!k && !mp)
		k = om_error(st, OM_ERR_INTERNAL, NULL, "could not build the model message");
	if (!k)
		*bytes = protobuf_c_message_get_packed_size(&mp->base);
	wctx_reset(&c, false);
	return k;
}

om_kind om_model_saved_size(const om_model *m, size_t *bytes, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	return measure(m, false, bytes, st);
}

om_kind om_model_saved_size_without_value_info(const om_model *m, size_t *bytes, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	return measure(m, true, bytes, st);
}

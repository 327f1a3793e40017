/* lower.c — an unpacked ModelProto → the IR (graphs, nodes, values, attributes, types). */
#include <stdlib.h>
#include <string.h>

#include "onnx_io.h"

typedef struct lctx {
	om_model *m;
	om_tensor_ctx tc;
	om_status *st;
	bool oom;
} lctx;

#define IS(tp, what) ((tp)->value_case == ONNX__TYPE_PROTO__VALUE_##what)

static const char *dup(lctx *c, const char *s)
{
	char *d = om_arena_strdup(c->m->arena, s ? s : "");
	if (!d)
		c->oom = true;
	return d ? d : "";
}

static void *alloc(lctx *c, size_t n, size_t size)
{
	void *p = om_arena_alloc(c->m->arena, (n ? n : 1) * size);
	if (!p)
		c->oom = true;
	return p;
}

static om_kv *kvs(lctx *c, Onnx__StringStringEntryProto *const *e, size_t n)
{
	om_kv *kv = alloc(c, n, sizeof *kv);
	for (size_t i = 0; kv && i < n; i++) {
		kv[i].key = dup(c, e[i]->key);
		kv[i].value = dup(c, e[i]->value);
	}
	return kv;
}

static void lower_type(lctx *c, om_type *ty, const Onnx__TypeProto *tp)
{
	ty->proto = tp;
	ty->rank = -1;
	ty->dims = NULL;
	if (IS(tp, _NOT_SET)) {
		ty->kind = OM_TYPE_UNKNOWN;
		return;
	}
	if (!IS(tp, TENSOR_TYPE)) {
		ty->kind = OM_TYPE_OTHER;
		return;
	}
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	ty->kind = OM_TYPE_TENSOR;
	ty->elem = tt->has_elem_type ? tt->elem_type : OM_UNDEFINED;
	if (!tt->shape)
		return;
	size_t r = tt->shape->n_dim;
	ty->dims = alloc(c, r, sizeof *ty->dims);
	if (!ty->dims)
		return;
	ty->rank = (int32_t)r;
	for (size_t i = 0; i < r; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
		ty->dims[i] = (om_dim){-1, NULL};
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    d->dim_value >= 0)
			ty->dims[i].value = d->dim_value;
		else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			 d->dim_param && *d->dim_param)
			ty->dims[i].param = dup(c, d->dim_param);
	}
}

static om_value *lower_vi(lctx *c, om_graph *g, const Onnx__ValueInfoProto *vi, uint32_t flag)
{
	om_value *v = om_graph_value(g, vi->name ? vi->name : "");
	if (!v) {
		c->oom = true;
		return NULL;
	}
	v->flags |= flag;
	if (v->type.kind == OM_TYPE_UNKNOWN && !v->type.proto && vi->type)
		lower_type(c, &v->type, vi->type);
	if (vi->doc_string && !v->doc)
		v->doc = dup(c, vi->doc_string);
	return v;
}

static om_value **lower_vis(lctx *c, om_graph *g, Onnx__ValueInfoProto *const *vis, size_t n,
			    uint32_t flag)
{
	om_value **out = alloc(c, n, sizeof *out);
	for (size_t i = 0; out && i < n; i++)
		if (!(out[i] = lower_vi(c, g, vis[i], flag)))
			return NULL;
	return out;
}

static om_kind lower_graph(lctx *c, om_graph *g, const Onnx__GraphProto *gp, int depth);
static void release(om_model *m);

static om_kind lower_sub(lctx *c, om_graph *parent, om_graph **slot,
			 const Onnx__GraphProto *gp, int depth)
{
	if (depth >= OM_ONNX_MAX_DEPTH)
		return om_error(c->st, OM_ERR_INVALID_MODEL, NULL,
				"subgraphs nested deeper than %d", OM_ONNX_MAX_DEPTH);
	if (!(*slot = om_graph_new(c->m, parent)))
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	return lower_graph(c, *slot, gp, depth + 1);
}

static int32_t infer_attr_type(const Onnx__AttributeProto *ap)
{
	return ap->has_f ? OM_ATTR_FLOAT : ap->has_i ? OM_ATTR_INT : ap->has_s ? OM_ATTR_STRING
	     : ap->t ? OM_ATTR_TENSOR : ap->g ? OM_ATTR_GRAPH
	     : ap->sparse_tensor ? OM_ATTR_SPARSE_TENSOR : ap->tp ? OM_ATTR_TYPE_PROTO
	     : ap->n_floats ? OM_ATTR_FLOATS : ap->n_ints ? OM_ATTR_INTS
	     : ap->n_strings ? OM_ATTR_STRINGS : ap->n_tensors ? OM_ATTR_TENSORS
	     : ap->n_graphs ? OM_ATTR_GRAPHS : ap->n_sparse_tensors ? OM_ATTR_SPARSE_TENSORS
	     : ap->n_type_protos ? OM_ATTR_TYPE_PROTOS : OM_ATTR_UNDEFINED;
}

static om_str str(lctx *c, ProtobufCBinaryData b)
{
	char *p = om_arena_strndup(c->m->arena, (const char *)b.data, b.len);
	if (!p)
		c->oom = true;
	return (om_str){p ? p : "", p ? (int64_t)b.len : 0};
}

static om_kind lower_attr(lctx *c, om_node *n, om_attr *a, const Onnx__AttributeProto *ap,
			  int depth)
{
	a->name = dup(c, ap->name);
	a->proto = ap;
	a->type = ap->has_type ? (int32_t)ap->type : infer_attr_type(ap);
	a->ref_attr_name = ap->ref_attr_name ? dup(c, ap->ref_attr_name) : NULL;
	a->doc = ap->doc_string ? dup(c, ap->doc_string) : NULL;
	om_kind k = OM_OK;
	switch (a->type) {
	case OM_ATTR_FLOAT: a->f = ap->f; break;
	case OM_ATTR_INT: a->i = ap->i; break;
	case OM_ATTR_STRING: a->s = str(c, ap->s); break;
	case OM_ATTR_TENSOR:
		if (ap->t)
			k = om_onnx_tensor_from_proto(&c->tc, ap->t, &a->t, c->st);
		break;
	case OM_ATTR_GRAPH:
		if (ap->g)
			k = lower_sub(c, n->graph, &a->g, ap->g, depth);
		break;
	case OM_ATTR_FLOATS:
		a->floats = alloc(c, ap->n_floats, sizeof *a->floats);
		if (a->floats && ap->n_floats)
			memcpy(a->floats, ap->floats, ap->n_floats * sizeof *a->floats);
		a->n = (int64_t)ap->n_floats;
		break;
	case OM_ATTR_INTS:
		a->ints = alloc(c, ap->n_ints, sizeof *a->ints);
		if (a->ints && ap->n_ints)
			memcpy(a->ints, ap->ints, ap->n_ints * sizeof *a->ints);
		a->n = (int64_t)ap->n_ints;
		break;
	case OM_ATTR_STRINGS:
		a->strings = alloc(c, ap->n_strings, sizeof *a->strings);
		for (size_t i = 0; a->strings && i < ap->n_strings; i++)
			a->strings[i] = str(c, ap->strings[i]);
		a->n = (int64_t)ap->n_strings;
		break;
	case OM_ATTR_TENSORS:
		a->tensors = alloc(c, ap->n_tensors, sizeof *a->tensors);
		a->n = (int64_t)ap->n_tensors;
		for (size_t i = 0; !k && a->tensors && i < ap->n_tensors; i++)
			k = om_onnx_tensor_from_proto(&c->tc, ap->tensors[i], &a->tensors[i],
						      c->st);
		break;
	case OM_ATTR_GRAPHS:
		a->graphs = alloc(c, ap->n_graphs, sizeof *a->graphs);
		if (!a->graphs)
			break;
		a->n = (int64_t)ap->n_graphs;
		for (size_t i = 0; !k && i < ap->n_graphs; i++)
			k = lower_sub(c, n->graph, &a->graphs[i], ap->graphs[i], depth);
		break;
	case OM_ATTR_SPARSE_TENSORS: a->n = (int64_t)ap->n_sparse_tensors; break;
	case OM_ATTR_TYPE_PROTOS: a->n = (int64_t)ap->n_type_protos; break;
	default: break; /* sparse tensor, type proto, unknown kinds: kept as the proto */
	}
	if (k && c->st && !c->st->node[0]) {
		char msg[sizeof c->st->msg];
		memcpy(msg, c->st->msg, sizeof msg);
		om_error(c->st, k, n, "attribute '%s': %s", a->name, msg);
	}
	return k;
}

static om_kind lower_node(lctx *c, om_graph *g, const Onnx__NodeProto *np, int depth)
{
	if (np->n_input > INT32_MAX / 2 || np->n_output > INT32_MAX / 2 ||
	    np->n_attribute > INT32_MAX / 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, NULL, "node with too many fields");
	om_node *n = om_graph_add_node(g, np->op_type ? np->op_type : "", np->domain,
				       np->name, (int32_t)np->n_input, (int32_t)np->n_output);
	if (!n)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	n->proto = np;
	n->overload = dup(c, np->overload);
	n->doc = dup(c, np->doc_string);
	n->meta = kvs(c, np->metadata_props, np->n_metadata_props);
	n->nmeta = (int32_t)np->n_metadata_props;
	for (size_t i = 0; i < np->n_input; i++) {
		const char *s = np->input[i];
		if (s && *s && !(n->in[i] = om_graph_value(g, s)))
			return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	for (size_t i = 0; i < np->n_output; i++) {
		const char *s = np->output[i];
		if (!s || !*s)
			continue;
		om_value *v = om_graph_value(g, s);
		if (!v)
			return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
		if (v->producer)
			return om_error(c->st, OM_ERR_INVALID_MODEL, n,
					"value '%s' is produced by two nodes", s);
		om_node_set_output(n, (int32_t)i, v);
	}
	n->attrs = alloc(c, np->n_attribute, sizeof *n->attrs);
	if (!n->attrs)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	n->nattr = (int32_t)np->n_attribute;
	for (size_t i = 0; i < np->n_attribute; i++) {
		om_kind k = lower_attr(c, n, &n->attrs[i], np->attribute[i], depth);
		if (k)
			return k;
	}
	return OM_OK;
}

/* A type for an initializer without a value_info: its dims, any rank. */
static void type_of_tensor(lctx *c, om_type *ty, const Onnx__TensorProto *tp)
{
	ty->kind = OM_TYPE_TENSOR;
	ty->elem = tp->has_data_type ? tp->data_type : OM_UNDEFINED;
	ty->dims = alloc(c, tp->n_dims, sizeof *ty->dims);
	ty->rank = ty->dims ? (int32_t)tp->n_dims : -1;
	for (int32_t i = 0; i < ty->rank; i++)
		ty->dims[i] = (om_dim){tp->dims[i] >= 0 ? tp->dims[i] : -1, NULL};
}

/* Names a subgraph uses but does not define refer to an enclosing graph. */
static void mark_outer(om_graph *g)
{
	const uint32_t defined = OM_VALUE_GRAPH_INPUT | OM_VALUE_INITIALIZER;
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t k = 0; k < g->nodes[i]->nin; k++) {
			om_value *v = g->nodes[i]->in[k];
			if (v && !v->producer && !(v->flags & defined))
				v->flags |= OM_VALUE_OUTER;
		}
	for (int32_t i = 0; i < g->noutputs; i++) {
		om_value *v = g->outputs[i];
		if (!v->producer && !(v->flags & defined))
			v->flags |= OM_VALUE_OUTER;
	}
}

static bool mark_passing(om_graph *g, const om_graph *sub);

/* A nested subgraph's outer reference that g does not define passes through g: g gets an
 * outer value of that name too, so that om_graph_resolve can walk the chain up. */
static bool mark_passing_all(om_graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t a = 0; a < n->nattr; a++) {
			if (n->attrs[a].g && !mark_passing(g, n->attrs[a].g))
				return false;
			om_graph *const *gs = n->attrs[a].graphs;
			for (int64_t k = 0; gs && k < n->attrs[a].n; k++)
				if (gs[k] && !mark_passing(g, gs[k]))
					return false;
		}
	}
	return true;
}

static bool mark_passing(om_graph *g, const om_graph *sub)
{
	const om_value *sv, *tmp;
	HASH_ITER(hh, sub->values, sv, tmp) {
		if (!(sv->flags & OM_VALUE_OUTER))
			continue;
		om_value *v = om_graph_value(g, sv->name);
		if (!v)
			return false;
		if (!v->producer && !(v->flags & (OM_VALUE_GRAPH_INPUT | OM_VALUE_INITIALIZER)))
			v->flags |= OM_VALUE_OUTER;
	}
	return true;
}

static om_kind lower_graph(lctx *c, om_graph *g, const Onnx__GraphProto *gp, int depth)
{
	g->proto = gp;
	g->name = dup(c, gp->name);
	g->doc = dup(c, gp->doc_string);
	g->meta = kvs(c, gp->metadata_props, gp->n_metadata_props);
	g->nmeta = (int32_t)gp->n_metadata_props;
	if (gp->n_input > INT32_MAX / 2 || gp->n_output > INT32_MAX / 2 ||
	    gp->n_initializer > INT32_MAX / 2 || gp->n_value_info > INT32_MAX / 2 ||
	    gp->n_node > INT32_MAX / 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, NULL, "graph too large");
	/* value types first: an initializer's own dims are only the fallback */
	g->inputs = lower_vis(c, g, gp->input, gp->n_input, OM_VALUE_GRAPH_INPUT);
	g->ninputs = g->inputs ? (int32_t)gp->n_input : 0;
	g->outputs = lower_vis(c, g, gp->output, gp->n_output, OM_VALUE_GRAPH_OUTPUT);
	g->noutputs = g->outputs ? (int32_t)gp->n_output : 0;
	g->infos = lower_vis(c, g, gp->value_info, gp->n_value_info, OM_VALUE_INFO);
	g->ninfos = g->infos ? (int32_t)gp->n_value_info : 0;
	g->inits = alloc(c, gp->n_initializer, sizeof *g->inits);
	for (size_t i = 0; g->inits && i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		om_value *v = om_graph_value(g, tp->name ? tp->name : "");
		if (!v)
			return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
		g->inits[g->ninits++] = v;
		v->flags |= OM_VALUE_INITIALIZER;
		v->init_proto = tp;
		om_tensor_ctx tc = c->tc;
		tc.in_place = true; /* om_model_align_payloads copies what must be aligned */
		om_kind k = om_onnx_tensor_from_proto(&tc, tp, &v->init, c->st);
		if (k)
			return k;
		if (v->type.kind == OM_TYPE_UNKNOWN)
			type_of_tensor(c, &v->type, tp);
	}
	for (size_t i = 0; i < gp->n_node; i++) {
		om_kind k = lower_node(c, g, gp->node[i], depth);
		if (k)
			return k;
	}
	if (c->oom)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	if (g->parent) {
		mark_outer(g);
		if (!mark_passing_all(g))
			return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	return OM_OK;
}

om_kind om_onnx_lower_node(om_model *m, om_graph *g, const Onnx__NodeProto *np, om_status *st)
{
	om_io_resources *res = m->release == release ? m->resources : NULL;
	lctx c = {.m = m, .st = st,
		  .tc = {.m = m, .dir = m->dir, .maps = res ? &res->maps : NULL,
			 .loaded = res ? &res->loaded : NULL}};
	int depth = 0;
	for (const om_graph *p = g->parent; p; p = p->parent)
		depth++;
	om_kind k = lower_node(&c, g, np, depth);
	if (!k && c.oom)
		k = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (!k && g->parent && !mark_passing_all(g))
		k = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	return k;
}

static void clear_values(om_graph *g)
{
	if (!g)
		return;
	HASH_CLEAR(hh, g->values);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t a = 0; n && a < n->nattr; a++) {
			clear_values(n->attrs[a].g);
			for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n; k++)
				clear_values(n->attrs[a].graphs[k]);
		}
	}
}

static void release(om_model *m)
{
	om_io_resources *res = m->resources;
	clear_values(m->graph);
	if (res) {
		HASH_CLEAR(hh, res->loaded);
		if (res->proto)
			protobuf_c_message_free_unpacked(&res->proto->base,
							 res->src ? &res->src->alloc : NULL);
		om_onnx_source_free(res->src); /* after the proto: it points into the mapping */
		om_onnx_mappings_free(res->maps);
		free(res);
	}
	m->resources = NULL;
	m->proto = NULL;
}

/* m->drop_payload: v's payload came from its TensorProto's raw_data (borrowed or copied) */
static void drop_payload(om_model *m, om_value *v)
{
	om_io_resources *res = m->release == release ? m->resources : NULL;
	Onnx__TensorProto *tp = (Onnx__TensorProto *)v->init_proto;
	if (!res || !res->src || !tp || !v->init || !v->init->data ||
	    v->init->data != (void *)tp->raw_data.data)
		return;
	om_onnx_payload_drop(res->src, tp);
	if (!tp->raw_data.data)
		v->init->data = NULL; /* freed */
}

bool om_onnx_init_misaligned(const om_value *v)
{
	const om_tensor *t = v->init;
	if (!t || !t->data || !t->nbytes || t->dtype == OM_STRING)
		return false;
	size_t align = om_dtype_size(t->dtype);
	align = align > 8 ? 8 : align ? align : 1;
	return (uintptr_t)t->data % align != 0;
}

om_kind om_onnx_align_init(om_model *m, om_value *v, om_status *st)
{
	om_io_resources *res = m->release == release ? m->resources : NULL;
	Onnx__TensorProto *tp = (Onnx__TensorProto *)v->init_proto;
	if (!om_onnx_init_misaligned(v))
		return OM_OK;
	if (!res || !res->src || !tp || v->init->data != (void *)tp->raw_data.data)
		return om_error(st, OM_ERR_INTERNAL, NULL, "initializer '%s' is misaligned",
				v->name);
	uint8_t *copy = om_onnx_payload_align(res->src, tp);
	if (!copy)
		return om_error(st, OM_ERR_NOMEM, NULL, "initializer '%s': out of memory for an "
				"aligned copy of its %zu bytes", v->name, v->init->nbytes);
	om_loaded *e = NULL;
	const om_tensor *key = v->init;
	HASH_FIND_PTR(res->loaded, &key, e);
	if (e && e->snap.data == v->init->data)
		e->snap.data = copy; /* still as loaded: the writer may reuse the proto */
	v->init->data = copy;
	return OM_OK;
}

/* m->file_pages: the model file's mapping and the external-data files' */
static bool file_pages(const om_model *m, const void *p, size_t n, bool give_back)
{
	const om_io_resources *res = m->release == release ? m->resources : NULL;
	if (!res)
		return false;
	if (res->src && om_onnx_pages_in(res->src->base, res->src->size, p, n, give_back))
		return true;
	for (const om_mapping *mp = res->maps; mp; mp = mp->next)
		if (om_onnx_pages_in(mp->ptr, mp->size, p, n, give_back))
			return true;
	return false;
}

/* m->file_read: reads from the model file or an external-data file kept open */
static bool file_read(const om_model *m, const void *p, size_t n, void *dst)
{
	const om_io_resources *res = m->release == release ? m->resources : NULL;
	if (!res)
		return false;
	if (res->src && om_onnx_read_in(res->src->base, res->src->size, res->src->fd, p, n, dst))
		return true;
	for (const om_mapping *mp = res->maps; mp; mp = mp->next)
		if (om_onnx_read_in(mp->ptr, mp->size, mp->fd, p, n, dst))
			return true;
	return false;
}

om_kind om_onnx_lower_model(om_model *m, Onnx__ModelProto *mp, om_source *src, om_status *st)
{
	om_io_resources *res = calloc(1, sizeof *res);
	if (!res) {
		protobuf_c_message_free_unpacked(&mp->base, src ? &src->alloc : NULL);
		om_onnx_source_free(src);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	res->proto = mp;
	res->src = src;
	m->proto = mp;
	m->resources = res;
	m->release = release;
	m->drop_payload = drop_payload;
	m->file_pages = file_pages;
	m->file_read = file_read;
	lctx c = {.m = m, .st = st,
		  .tc = {.m = m, .dir = m->dir, .maps = &res->maps, .loaded = &res->loaded}};
	m->ir_version = mp->has_ir_version ? mp->ir_version : 0;
	if (mp->n_opset_import > INT32_MAX / 2 || mp->n_metadata_props > INT32_MAX / 2 ||
	    mp->n_functions > INT32_MAX / 2)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"too many opsets, properties or functions");
	m->opsets = alloc(&c, mp->n_opset_import, sizeof *m->opsets);
	for (size_t i = 0; m->opsets && i < mp->n_opset_import; i++) {
		m->opsets[i].domain = dup(&c, mp->opset_import[i]->domain);
		m->opsets[i].version = mp->opset_import[i]->version;
		m->nopsets++;
	}
	m->producer_name = dup(&c, mp->producer_name);
	m->producer_version = dup(&c, mp->producer_version);
	m->domain = dup(&c, mp->domain);
	m->doc = dup(&c, mp->doc_string);
	m->model_version = mp->model_version;
	m->meta = kvs(&c, mp->metadata_props, mp->n_metadata_props);
	m->functions = (const void **)mp->functions;
	m->nfunctions = (int32_t)mp->n_functions;
	m->nmeta = m->meta ? (int32_t)mp->n_metadata_props : 0;
	if (c.oom)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (!mp->graph)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL, "the model has no graph");
	if (!(m->graph = om_graph_new(m, NULL)))
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	return lower_graph(&c, m->graph, mp->graph, 0);
}

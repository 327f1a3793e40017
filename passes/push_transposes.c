/* push_transposes.c — the push_transposes pass: a Transpose feeding a layout-agnostic node moves
 * to the node's output (ONNX Runtime's transpose optimizer, pushing down), where
 * fuse_transposes composes it with the inverse Transpose that NHWC exports put there. A Split
 * gets the Transpose on each output; a Squeeze or Unsqueeze gets the permutation restricted to
 * the axes kept or extended to the axes inserted. */
#include <string.h>

#include "infer.h"
#include "match.h"
#include "registry.h"
#include "uses.h"

/* A constant another input of the pushed node reads is transposed into a copy; a shared one
 * only up to this size (the original stays for its other readers). */
enum { SHARED_CONST_MAX = 4096, MAX_READERS = 64, MAX_OUTS = 16 };

/* A permutation: out[i] = in[p[i]]. */
typedef struct perm {
	int32_t r;
	int64_t p[OM_MAX_RANK];
} perm;

/* The live Transpose node of g producing v, with its permutation over an input of known rank. */
static om_node *transpose_of(om_pass_ctx *c, const om_graph *g, const om_value *v, perm *out)
{
	om_node *t = v ? v->producer : NULL;
	if (!t || t->graph != g || (t->flags & OM_NODE_DEAD) || t->nin < 1 || !t->in[0] ||
	    om_node_code(g->model, t) != OM_OPC_TRANSPOSE || !om_node_default_domain(t))
		return NULL;
	const om_vinfo *vi = om_vinfo_get(c, g, t->in[0]);
	if (!om_vi_ranked(vi))
		return NULL;
	const int32_t r = vi->type.rank;
	int64_t k;
	const int64_t *p = om_attr_ints(t, "perm", &k);
	if (p && k != r)
		return NULL;
	bool seen[OM_MAX_RANK] = {0};
	out->r = r;
	for (int32_t i = 0; i < r; i++) {
		out->p[i] = p ? p[i] : r - 1 - i;
		if (out->p[i] < 0 || out->p[i] >= r || seen[out->p[i]])
			return NULL;
		seen[out->p[i]] = true;
	}
	return t;
}

static bool perm_equal(const perm *a, const perm *b)
{
	return a->r == b->r && !memcmp(a->p, b->p, sizeof(int64_t) * (size_t)a->r);
}

static bool perm_identity(const perm *a)
{
	for (int32_t i = 0; i < a->r; i++)
		if (a->p[i] != i)
			return false;
	return true;
}

static perm perm_inverse(const perm *a)
{
	perm q = {.r = a->r};
	for (int32_t i = 0; i < a->r; i++)
		q.p[a->p[i]] = i;
	return q;
}

/* ---- what the pushed node is --------------------------------------------------------- */

enum kind {
	K_NONE, K_ELEMENTWISE, K_AXIS, K_REDUCE, K_PAD, K_QDQ, K_SLICE, K_SPLIT, K_SQUEEZE,
	K_UNSQUEEZE, K_RESIZE
};

/* True when the node's signature at the model's opset knows attribute `name`. */
static bool sig_knows(const om_model *m, const om_op *op, const om_node *n, const char *name)
{
	const om_sig *s = om_op_sig_at(op, om_model_opset(m, n->domain));
	for (const om_sig_attr *a = s ? s->attrs : NULL; a && a->name; a++)
		if (!strcmp(a->name, name))
			return true;
	return false;
}

static enum kind kind_of(const om_model *m, const om_node *n)
{
	const om_op *op = om_node_default_domain(n) ? om_node_op(m, n) : NULL;
	if (!op || n->nout < 1 || om_node_has_subgraph(n))
		return K_NONE;
	if (op->code == OM_OPC_SPLIT)
		return n->nout <= MAX_OUTS ? K_SPLIT : K_NONE;
	if (n->nout != 1 || !n->out[0])
		return K_NONE;
	if (op->flags & OM_OP_ELEMENTWISE) {
		/* before opset 7 Add & co. broadcast by `axis`/`broadcast` attributes */
		if (om_model_opset(m, "") < 7 || om_node_attr(n, "axis") ||
		    om_node_attr(n, "broadcast"))
			return K_NONE;
		return K_ELEMENTWISE;
	}
	if (op->flags & OM_OP_PERM_AXIS)
		return K_AXIS;
	if (op->flags & OM_OP_PERM_REDUCE)
		return K_REDUCE;
	if (op->code == OM_OPC_PAD)
		return K_PAD;
	if (op->code == OM_OPC_QUANTIZE_LINEAR || op->code == OM_OPC_DEQUANTIZE_LINEAR)
		return K_QDQ;
	if (op->code == OM_OPC_SLICE)
		return K_SLICE;
	if (op->code == OM_OPC_SQUEEZE)
		return K_SQUEEZE;
	if (op->code == OM_OPC_UNSQUEEZE)
		return K_UNSQUEEZE;
	if (op->code == OM_OPC_RESIZE)
		return K_RESIZE;
	return K_NONE;
}

/* ---- the plan of one push ------------------------------------------------------------ */

enum in_action { IN_KEEP, IN_UNWRAP, IN_CONST, IN_WRAP };

typedef struct push {
	om_node *n;
	enum kind kind;
	perm p;           /* the Transpose moved: n read it on its inputs, its output gets it */
	perm out_p;       /* each output's Transpose (reduced axes dropped, inserted ones added);
			     identity: none */
	int32_t nin;      /* inputs the push rewrites: n->nin, or 1 (Reduce: data only) */
	int32_t nout;     /* outputs that get out_p: n->nout (Split), else 1 */
	enum in_action act[16];
	int64_t axis;     /* K_AXIS, K_SPLIT: the new axis; K_REDUCE with `axis`: the new one */
	int32_t naxes;    /* K_REDUCE, K_SQUEEZE: the new axes (-1: left as they are) */
	int64_t axes[OM_MAX_RANK]; /* K_SLICE, K_PAD with axes: the new axes, in the node's
				      order; K_REDUCE, K_SQUEEZE: sorted */
	bool axis_attr;   /* K_REDUCE: an ArgMax-like `axis` attribute rather than `axes` */
	bool axes_input;  /* K_REDUCE: axes from input 1 */
	int64_t pads[2 * OM_MAX_RANK]; /* K_PAD: the new pads */
	bool pads_input;  /* K_PAD: pads from input 1 (opset 11), else the `pads` attribute */
	bool pad_axes;    /* K_PAD: Pad-18's axes input is remapped (axes), the pads stay */
	const om_tensor *rs[3]; /* K_RESIZE: constant roi, scales, sizes to permute (or NULL) */
	int cost;         /* Transposes after minus before */
} push;

/* How many times n reads v. */
static int32_t reads_of(const om_node *n, const om_value *v)
{
	int32_t k = 0;
	for (int32_t i = 0; i < n->nin; i++)
		k += n->in[i] == v;
	return k;
}

static bool all_ones(const om_vinfo *vi)
{
	for (int32_t d = 0; d < vi->type.rank; d++)
		if (vi->type.dims[d].value != 1)
			return false;
	return true;
}

/* Fixed-size elements a constant may be permuted with (no strings, no sub-byte). */
static bool movable_const(const om_tensor *t, int32_t r)
{
	const int64_t bytes = om_numel_bytes(t->dtype, om_tensor_numel(t));
	const int64_t n = om_tensor_numel(t);
	return t->rank <= r && n >= 0 && t->dtype != OM_STRING && bytes >= 0 && t->data &&
	       (n == 0 || bytes == n * (int64_t)om_dtype_size(t->dtype)) &&
	       (size_t)bytes <= t->nbytes;
}

static bool plan_input(om_pass_ctx *c, const om_graph *g, push *s, int32_t i)
{
	om_value *v = s->n->in[i];
	perm q;
	if (!v) {
		s->act[i] = IN_KEEP;
		return true;
	}
	om_node *t = transpose_of(c, g, v, &q);
	if (t && perm_equal(&q, &s->p)) {
		s->act[i] = IN_UNWRAP;
		/* the Transpose goes when n is all that reads it (the first of n's reads counts) */
		for (int32_t j = 0; j < i; j++)
			if (s->n->in[j] == v)
				return true;
		if (v->nuses == reads_of(s->n, v) && !om_value_used_by_subgraph(c, g, v))
			s->cost--;
		return true;
	}
	const om_vinfo *vi = om_vinfo_get(c, g, v);
	if (!om_vi_ranked(vi) || vi->type.rank > s->p.r)
		return false;
	if (s->kind == K_ELEMENTWISE && all_ones(vi)) {
		s->act[i] = IN_KEEP; /* broadcasts the same way in either layout */
		return true;
	}
	const om_tensor *k = om_value_const(g, v);
	if (k && movable_const(k, s->p.r) &&
	    (v->nuses == reads_of(s->n, v) || k->nbytes <= SHARED_CONST_MAX)) {
		s->act[i] = IN_CONST;
		return true;
	}
	if (vi->type.rank != s->p.r)
		return false;
	s->act[i] = IN_WRAP;
	s->cost++;
	return true;
}

/* K_REDUCE: the reduced axes (in n's input layout) into *axes; -1 all, -2 not known. */
static int32_t reduced_axes(const om_graph *g, const push *s, int64_t *axes)
{
	const om_node *n = s->n;
	const int32_t r = s->p.r;
	if (s->axis_attr) {
		int64_t a = om_attr_int(n, "axis", 0);
		a = a < 0 ? a + r : a;
		if (a < 0 || a >= r)
			return -2;
		axes[0] = a;
		return 1;
	}
	if (!s->axes_input && !om_node_attr(n, "axes"))
		return -1;
	if (s->axes_input && (n->nin < 2 || !n->in[1]))
		return om_attr_int(n, "noop_with_empty_axes", 0) ? -2 : -1;
	const int32_t k = om_node_axes(g, n, s->axes_input ? 0 : INT64_MAX, 1, r, axes);
	if (k == 0 && om_attr_int(n, "noop_with_empty_axes", 0))
		return -2;
	return k < 0 ? -2 : k == 0 ? -1 : k;
}

/* The output's permutation when the axes red_old of n's input (red_new of x) are dropped:
 * y[i'] is the input's kept axis i, x's p[i]; y' keeps x's axes in order. */
static void kept_perm(push *s, const bool *red_old, const bool *red_new)
{
	const int32_t r = s->p.r;
	s->out_p.r = 0;
	for (int32_t i = 0; i < r; i++) {
		if (red_old[i])
			continue;
		int64_t rank = 0;
		for (int32_t a = 0; a < s->p.p[i]; a++)
			rank += !red_new[a];
		s->out_p.p[s->out_p.r++] = rank;
	}
}

/* The new axes / axis and the output's permutation of a reduction; false when unsure. */
static bool plan_reduce(const om_graph *g, push *s)
{
	const int32_t r = s->p.r;
	int64_t old[OM_MAX_RANK * 2];
	const int32_t k = reduced_axes(g, s, old);
	if (k == -2 || k > r)
		return false;
	bool red_new[OM_MAX_RANK] = {0}, red_old[OM_MAX_RANK] = {0};
	for (int32_t i = 0; i < (k < 0 ? r : k); i++) {
		const int64_t a = k < 0 ? i : old[i];
		red_old[a] = true;
		red_new[s->p.p[a]] = true;
	}
	s->naxes = 0;
	for (int32_t a = 0; k >= 0 && a < r; a++)
		if (red_new[a])
			s->axes[s->naxes++] = a;
	if (k < 0)
		s->naxes = -1;
	if (s->axis_attr)
		s->axis = s->axes[0];
	if (om_attr_int(s->n, "keepdims", 1)) {
		s->out_p = s->p;
		return true;
	}
	kept_perm(s, red_old, red_new);
	return true;
}

/* K_SQUEEZE: the axes given (attribute, or input 1 from opset 13) become p[axes], sorted; none
 * given, the extents known to be 1 are squeezed (every extent must be a number) and the node
 * stays as it is. The output's permutation is the reduction's without keepdims. */
static bool plan_squeeze(om_pass_ctx *c, const om_graph *g, push *s, const om_op *op)
{
	const om_node *n = s->n;
	const int32_t r = s->p.r;
	s->axes_input = !sig_knows(g->model, op, n, "axes");
	const bool given = s->axes_input ? n->nin > 1 && n->in[1] : om_node_attr(n, "axes") != NULL;
	int64_t old[OM_MAX_RANK * 2];
	int32_t k = 0;
	if (given) {
		k = om_node_axes(g, n, s->axes_input ? 0 : INT64_MAX, 1, r, old);
		if (k < 1 || k > r)
			return false; /* unknown, or empty (every extent 1, by ONNX Runtime) */
	} else {
		const om_vinfo *vt = om_vinfo_get(c, g, n->in[0]);
		if (!om_vi_ranked(vt) || vt->type.rank != r)
			return false;
		for (int32_t i = 0; i < r; i++) {
			if (!om_dim_known(vt->type.dims[i]))
				return false;
			if (vt->type.dims[i].value == 1)
				old[k++] = i;
		}
	}
	bool red_new[OM_MAX_RANK] = {0}, red_old[OM_MAX_RANK] = {0};
	for (int32_t i = 0; i < k; i++) {
		red_old[old[i]] = true;
		red_new[s->p.p[old[i]]] = true;
	}
	s->naxes = 0;
	for (int32_t a = 0; given && a < r; a++)
		if (red_new[a])
			s->axes[s->naxes++] = a;
	if (!given)
		s->naxes = -1;
	kept_perm(s, red_old, red_new);
	return true;
}

/* K_UNSQUEEZE: the axes stay (positions in the output); the output's permutation keeps each
 * inserted axis in place and maps the other positions as p does: y[j_i] is the input's axis
 * i, x's p[i], which y' holds at j_p[i] (j_0 < j_1 < ... the positions not inserted). */
static bool plan_unsqueeze(const om_graph *g, push *s, const om_op *op)
{
	const om_node *n = s->n;
	const int32_t r = s->p.r;
	s->axes_input = !sig_knows(g->model, op, n, "axes");
	int64_t ax[OM_MAX_RANK * 2];
	/* the count first (normalized against a rank no axis reaches), then the axes */
	const int32_t k = om_node_axes(g, n, s->axes_input ? 0 : INT64_MAX, 1, 1 << 20, ax);
	if (k < 1 || r + k > OM_MAX_RANK ||
	    om_node_axes(g, n, s->axes_input ? 0 : INT64_MAX, 1, r + k, ax) != k)
		return false;
	bool inserted[OM_MAX_RANK] = {0};
	for (int32_t i = 0; i < k; i++)
		inserted[ax[i]] = true;
	int64_t kept[OM_MAX_RANK];
	int32_t nk = 0;
	for (int32_t j = 0; j < r + k; j++)
		if (!inserted[j])
			kept[nk++] = j;
	if (nk != r)
		return false;
	s->out_p.r = r + k;
	for (int32_t j = 0; j < r + k; j++)
		s->out_p.p[j] = j;
	for (int32_t i = 0; i < r; i++)
		s->out_p.p[kept[i]] = kept[s->p.p[i]];
	s->naxes = -1;
	return true;
}

/* True when constant t of Resize's input `slot` (1 roi, 2 scales, 3 sizes) may be permuted:
 * 2r entries for the roi, r for the others, fixed-size elements. */
static bool resize_vec_ok(const om_tensor *t, int32_t slot, int32_t r)
{
	return t && t->rank == 1 && movable_const(t, 1) &&
	       om_tensor_numel(t) == (slot == 1 ? 2 * r : r);
}

/* True when Resize scales axis i of its input (a scale other than 1, or a size other than
 * the known extent). */
static bool resize_scales_axis(const push *s, const om_vinfo *vt, int32_t i)
{
	const om_tensor *sc = s->rs[1], *sz = s->rs[2];
	if (sc && sc->dtype == OM_FLOAT)
		return ((const float *)sc->data)[i] != 1.0f;
	if (sz && sz->dtype == OM_INT64)
		return !om_vi_ranked(vt) || vt->type.rank != s->p.r ||
		       !om_dim_known(vt->type.dims[i]) ||
		       ((const int64_t *)sz->data)[i] != vt->type.dims[i].value;
	return true;
}

/* K_RESIZE (opset 11 on, no `axes` attribute, no antialias, the stretch policy): the roi,
 * scales and sizes given are constants and get permuted, entry i to p[i]. Nearest at any
 * rank; linear at rank 4 when the axes scaled after the push leave axis 0 and axis 1 or 3
 * alone (the NCHW and NHWC forms ONNX Runtime runs). */
static bool plan_resize(om_pass_ctx *c, const om_graph *g, push *s, const om_op *op)
{
	const om_node *n = s->n;
	const int32_t r = s->p.r;
	if (!sig_knows(g->model, op, n, "coordinate_transformation_mode") ||
	    om_node_attr(n, "axes") || om_attr_int(n, "antialias", 0) ||
	    strcmp(om_attr_string(n, "keep_aspect_ratio_policy", "stretch"), "stretch"))
		return false;
	const char *mode = om_attr_string(n, "mode", "nearest");
	const bool linear = !strcmp(mode, "linear");
	if (!linear && strcmp(mode, "nearest"))
		return false;
	for (int32_t slot = 1; slot <= 3; slot++) {
		om_value *v = slot < n->nin ? n->in[slot] : NULL;
		const om_tensor *t = v ? om_value_const(g, v) : NULL;
		if (v && !t)
			return false;
		if (!t || om_tensor_numel(t) == 0)
			continue;
		if (!resize_vec_ok(t, slot, r))
			return false;
		s->rs[slot - 1] = t;
	}
	if (!linear)
		return true;
	if (r != 4)
		return false;
	const om_vinfo *vt = om_vinfo_get(c, g, n->in[0]);
	bool scaled[OM_MAX_RANK] = {0};
	for (int32_t i = 0; i < r; i++)
		scaled[s->p.p[i]] = resize_scales_axis(s, vt, i);
	return !scaled[0] && (!scaled[1] || !scaled[3]);
}

/* True when r is a Transpose of y by `inv` whose output may be replaced (no subgraph reads
 * it; a graph output is written by the pushed node instead): it cancels the Transpose the
 * push puts on y. */
static bool cancels(om_pass_ctx *c, const om_graph *g, const om_node *r, const om_value *y,
		    const perm *inv)
{
	if (r->nin < 1 || r->in[0] != y || r->nout != 1 || !r->out[0] ||
	    om_node_code(g->model, r) != OM_OPC_TRANSPOSE || !om_node_default_domain(r) ||
	    om_value_used_by_subgraph(c, g, r->out[0]))
		return false;
	int64_t k;
	const int64_t *pp = om_attr_ints(r, "perm", &k);
	return pp && k == inv->r && !memcmp(pp, inv->p, sizeof(int64_t) * (size_t)k);
}

/* The readers of n's output o that cancel its Transpose (at most MAX_READERS), one whose
 * output is a graph output at most, and last; -1 when the readers are not known. */
static int32_t cancelling(om_pass_ctx *c, const om_graph *g, const push *s, int32_t o,
			  om_node **out)
{
	const om_value *y = s->n->out[o];
	om_node *rd[MAX_READERS];
	const int32_t nr = om_uses_readers(c, g, y, rd, MAX_READERS);
	if (nr < 0 || nr > MAX_READERS)
		return -1;
	const perm inv = perm_inverse(&s->out_p);
	int32_t k = 0;
	om_node *gout = NULL;
	for (int32_t i = 0; i < nr; i++) {
		bool dup = rd[i] == gout;
		for (int32_t j = 0; j < k; j++)
			dup |= out[j] == rd[i];
		if (dup || !cancels(c, g, rd[i], y, &inv))
			continue;
		if (!(rd[i]->out[0]->flags & OM_VALUE_GRAPH_OUTPUT))
			out[k++] = rd[i];
		else if (!gout)
			gout = rd[i];
	}
	if (gout)
		out[k++] = gout;
	return k;
}

/* K_PAD: pads [b_0 .. b_r-1, e_0 .. e_r-1] of z's axes become x's (axis i of z is p[i] of
 * x); with Pad-18's `axes` input (a constant) the axes become p[axes] and the pads stay.
 * Pad-1's `paddings` is left alone. */
static bool plan_pad(const om_graph *g, push *s)
{
	const om_node *n = s->n;
	const int32_t r = s->p.r;
	int64_t old[2 * OM_MAX_RANK];
	int64_t k;
	const int64_t *a = om_attr_ints(n, "pads", &k);
	if (om_node_attr(n, "paddings"))
		return false;
	if (n->nin > 3 && n->in[3]) {
		const om_tensor *t = om_value_const(g, n->in[3]);
		const int64_t na = t && t->rank == 1 && t->data &&
					   (t->dtype == OM_INT64 || t->dtype == OM_INT32)
				       ? om_tensor_numel(t) : -1;
		if (na < 1 || na > r)
			return false;
		for (int64_t i = 0; i < na; i++) {
			int64_t ax = t->dtype == OM_INT64 ? ((const int64_t *)t->data)[i]
							  : ((const int32_t *)t->data)[i];
			ax = ax < 0 ? ax + r : ax;
			if (ax < 0 || ax >= r)
				return false;
			s->axes[i] = s->p.p[ax];
		}
		s->naxes = (int32_t)na;
		s->pad_axes = true;
		return true;
	}
	if (a) {
		if (k != 2 * r)
			return false;
		memcpy(old, a, sizeof(int64_t) * (size_t)k);
	} else {
		const om_tensor *t = n->nin > 1 && n->in[1] ? om_value_const(g, n->in[1]) : NULL;
		if (!t || t->dtype != OM_INT64 || om_tensor_numel(t) != 2 * r ||
		    t->nbytes < sizeof(int64_t) * 2 * (size_t)r)
			return false;
		memcpy(old, t->data, sizeof(int64_t) * 2 * (size_t)r);
		s->pads_input = true;
	}
	for (int32_t i = 0; i < r; i++) {
		s->pads[s->p.p[i]] = old[i];
		s->pads[r + s->p.p[i]] = old[r + i];
	}
	return true;
}

/* K_SLICE: axes (attribute before opset 10, else constant input 3; absent: 0 .. k-1 for k
 * starts) become p[axes], in their order. */
static bool plan_slice(om_pass_ctx *c, const om_graph *g, push *s)
{
	const om_node *n = s->n;
	const int32_t r = s->p.r;
	int64_t old[OM_MAX_RANK];
	int64_t k = -1;
	if (om_node_attr(n, "starts")) {
		const int64_t *a = om_attr_ints(n, "axes", &k);
		if (a && k <= r)
			memcpy(old, a, sizeof(int64_t) * (size_t)k);
		else if (!a)
			om_attr_ints(n, "starts", &k);
		s->axes_input = false;
		for (int64_t i = 0; !a && i < k && k <= r; i++)
			old[i] = i;
	} else if (n->nin > 3 && n->in[3]) {
		const om_tensor *t = om_value_const(g, n->in[3]);
		k = t && (t->dtype == OM_INT64 || t->dtype == OM_INT32) && t->rank == 1
			? om_tensor_numel(t) : -1;
		for (int64_t i = 0; i < k && k <= r; i++)
			old[i] = t->dtype == OM_INT64 ? ((const int64_t *)t->data)[i]
						     : ((const int32_t *)t->data)[i];
		s->axes_input = true;
	} else {
		const om_vinfo *vs = n->nin > 1 ? om_vinfo_get(c, g, n->in[1]) : NULL;
		k = om_vi_ranked(vs) && vs->type.rank == 1 ? vs->type.dims[0].value : -1;
		for (int64_t i = 0; i < k && k <= r; i++)
			old[i] = i;
		s->axes_input = true;
	}
	if (k < 0 || k > r)
		return false;
	for (int64_t i = 0; i < k; i++) {
		const int64_t a = old[i] < 0 ? old[i] + r : old[i];
		if (a < 0 || a >= r)
			return false;
		s->axes[i] = s->p.p[a];
	}
	s->naxes = (int32_t)k;
	return true;
}

/* K_QDQ: per tensor (a scalar scale) nothing changes; per axis (a 1-D scale) the `axis`
 * (default 1) becomes p[axis]; blocked quantization is left alone. */
static bool plan_qdq(om_pass_ctx *c, const om_graph *g, push *s, bool has_axis)
{
	const om_node *n = s->n;
	const om_vinfo *vs = n->nin > 1 ? om_vinfo_get(c, g, n->in[1]) : NULL;
	if (!om_vi_ranked(vs) || vs->type.rank > 1 || om_attr_int(n, "block_size", 0) != 0)
		return false;
	s->axis = -1;
	if (vs->type.rank == 0)
		return true;
	if (!has_axis)
		return false;
	int64_t a = om_attr_int(n, "axis", 1);
	a = a < 0 ? a + s->p.r : a;
	if (a < 0 || a >= s->p.r)
		return false;
	s->axis = s->p.p[a];
	return true;
}

/* What n's outputs cost: each one's Transpose (+1) unless every reader is the inverse
 * Transpose; each of those goes (-1). */
static int output_cost(om_pass_ctx *c, const om_graph *g, const push *s)
{
	if (perm_identity(&s->out_p))
		return 0;
	int cost = 0;
	for (int32_t o = 0; o < s->nout; o++) {
		if (!s->n->out[o])
			continue;
		om_node *rd[MAX_READERS];
		const int32_t k = cancelling(c, g, s, o, rd);
		cost += k < 0 ? 1 : (k < s->n->out[o]->nuses ? 1 : 0) - k;
	}
	return cost;
}

static bool plan(om_pass_ctx *c, const om_graph *g, om_node *n, enum kind kind, push *s)
{
	const bool all_inputs = kind == K_ELEMENTWISE || kind == K_AXIS;
	*s = (push){.n = n, .kind = kind, .nin = all_inputs ? n->nin : 1,
		    .nout = kind == K_SPLIT ? n->nout : 1};
	if (s->nin > 16 || n->nin < 1)
		return false;
	/* the first input read through a Transpose sets the permutation */
	bool found = false;
	for (int32_t i = 0; i < s->nin && !found; i++)
		found = transpose_of(c, g, n->in[i], &s->p) != NULL;
	if (!found || s->p.r < 1)
		return false;
	s->out_p = s->p;
	const om_op *op = om_node_op(g->model, n);
	if (kind == K_AXIS || kind == K_SPLIT) {
		/* defaults differ: Split 0, a one-input row (Softmax-13 and its family) -1, Concat
		 * none (required from opset 4, 1 before: not pushed) */
		const om_attr *at = om_node_attr(n, "axis");
		const om_sig *sg = om_op_sig_at(op, om_model_opset(g->model, n->domain));
		const int64_t dflt = kind == K_SPLIT ? 0 : sg && sg->max_in == 1 ? -1 : -1000;
		int64_t a = !at ? dflt : at->type == OM_ATTR_INT ? at->i : -1000;
		a = a < 0 ? a + s->p.r : a;
		if (a < 0 || a >= s->p.r)
			return false;
		s->axis = s->p.p[a];
	}
	if (kind == K_REDUCE) {
		s->axis_attr = sig_knows(g->model, op, n, "axis");
		s->axes_input = !s->axis_attr && !sig_knows(g->model, op, n, "axes");
		if (!plan_reduce(g, s))
			return false;
	}
	if (kind == K_PAD && !plan_pad(g, s))
		return false;
	if (kind == K_SLICE && !plan_slice(c, g, s))
		return false;
	if (kind == K_QDQ && !plan_qdq(c, g, s, sig_knows(g->model, op, n, "axis")))
		return false;
	if (kind == K_SQUEEZE && !plan_squeeze(c, g, s, op))
		return false;
	if (kind == K_UNSQUEEZE && !plan_unsqueeze(g, s, op))
		return false;
	if (kind == K_RESIZE && !plan_resize(c, g, s, op))
		return false;
	for (int32_t i = 0; i < s->nin; i++)
		if (!plan_input(c, g, s, i))
			return false;
	s->cost += output_cost(c, g, s);
	return s->cost <= 0;
}

/* ---- the rewrite --------------------------------------------------------------------- */

/* Records v's inferred type: dims[i] = src's dims[p[i]] (a permuted copy). */
static bool type_permuted(om_pass_ctx *c, const om_graph *g, om_value *dst, om_value *src,
			  const perm *p)
{
	const om_vinfo *vs = om_vinfo_get(c, g, src);
	om_vinfo *vd = om_vinfo_make(c, dst);
	if (!vd)
		return false;
	if (!om_vi_ranked(vs) || vs->type.rank != p->r)
		return true; /* unknown: inference fills it next round */
	om_dim *d = om_arena_alloc(c->scratch, sizeof(om_dim) * (size_t)(p->r + 1));
	if (!d)
		return false;
	for (int32_t i = 0; i < p->r; i++)
		d[i] = vs->type.dims[p->p[i]];
	vd->type = vs->type;
	vd->type.dims = d;
	return true;
}

static om_node *new_transpose(om_pass_ctx *c, om_graph *g, om_value *x, om_value *y,
			      const perm *p)
{
	om_node *t = om_graph_add_node(g, "Transpose", "", y->name, 1, 1);
	om_attr *a = t ? om_node_set_attr(t, "perm", OM_ATTR_INTS) : NULL;
	int64_t *ints = a ? om_arena_memdup(g->model->arena, p->p, sizeof(int64_t) * OM_MAX_RANK)
			  : NULL;
	if (!ints)
		return NULL;
	a->n = p->r;
	a->ints = ints;
	t->in[0] = x;
	om_node_set_output(t, 0, y);
	x->nuses++;
	om_uses_add_node(c, t);
	return t;
}

/* k (rank <= r) with leading 1 dims to rank r, permuted by q: out[i] = k'[q[i]]. */
static om_tensor *permuted_const(om_model *m, const om_tensor *k, const perm *q)
{
	int64_t dims[OM_MAX_RANK], full[OM_MAX_RANK], stride[OM_MAX_RANK];
	const int32_t r = q->r, lead = r - k->rank;
	for (int32_t i = 0; i < r; i++)
		full[i] = i < lead ? 1 : k->dims[i - lead];
	int64_t s = 1;
	for (int32_t i = r - 1; i >= 0; i--) {
		stride[i] = s;
		s *= full[i];
	}
	for (int32_t i = 0; i < r; i++)
		dims[i] = full[q->p[i]];
	om_tensor *t = om_model_tensor(m, k->dtype, r, dims);
	if (!t)
		return NULL;
	const size_t es = om_dtype_size(k->dtype);
	const int64_t n = om_tensor_numel(t);
	int64_t idx[OM_MAX_RANK] = {0};
	for (int64_t e = 0; e < n; e++) {
		int64_t src = 0;
		for (int32_t i = 0; i < r; i++)
			src += idx[i] * stride[q->p[i]];
		memcpy((char *)t->data + (size_t)e * es, (const char *)k->data + (size_t)src * es,
		       es);
		for (int32_t i = r - 1; i >= 0 && ++idx[i] == dims[i]; i--)
			idx[i] = 0;
	}
	return t;
}

/* A 1-D constant of `blocks` runs of r entries with entry i of each run moved to p[i]. */
static om_tensor *permuted_vec(om_model *m, const om_tensor *k, const perm *p, int32_t blocks)
{
	om_tensor *t = om_model_tensor(m, k->dtype, 1, k->dims);
	if (!t)
		return NULL;
	const size_t es = om_dtype_size(k->dtype);
	for (int32_t b = 0; b < blocks; b++)
		for (int32_t i = 0; i < p->r; i++)
			memcpy((char *)t->data + (size_t)(b * p->r + p->p[i]) * es,
			       (const char *)k->data + (size_t)(b * p->r + i) * es, es);
	return t;
}

static void set_input(om_pass_ctx *c, om_node *n, int32_t i, om_value *v)
{
	om_value *old = n->in[i];
	if (old)
		old->nuses--;
	om_uses_set_input(c, n, i, v);
	v->nuses++;
	/* a Transpose nothing reads any more goes now, so that later costs see it gone */
	om_node *t = old ? old->producer : NULL;
	if (old && old->nuses == 0 && t && !(t->flags & OM_NODE_DEAD) && t->nout == 1 &&
	    om_node_code(n->graph->model, t) == OM_OPC_TRANSPOSE && t->graph == n->graph &&
	    !(old->flags & OM_VALUE_GRAPH_OUTPUT)) {
		if (t->in[0])
			t->in[0]->nuses--;
		om_node_kill(c, t);
	}
}

/* s's new axes as n's `axes` attribute */
static bool axes_attr(om_graph *g, om_node *n, const push *s)
{
	om_attr *a = om_node_set_attr(n, "axes", OM_ATTR_INTS);
	int64_t *ints = a ? om_arena_memdup(g->model->arena, s->axes, sizeof s->axes) : NULL;
	if (!ints)
		return false;
	a->n = s->naxes;
	a->ints = ints;
	return true;
}

/* s's new axes as a new int64 initializer; NULL when out of memory */
static om_value *axes_const(om_pass_ctx *c, om_graph *g, const push *s)
{
	om_tensor *t = om_model_tensor(g->model, OM_INT64, 1, (int64_t[]){s->naxes});
	if (!t)
		return NULL;
	memcpy(t->data, s->axes, sizeof(int64_t) * (size_t)s->naxes);
	return om_new_constant(c, g, "axes", t);
}

static bool set_axes(om_pass_ctx *c, om_graph *g, push *s)
{
	om_node *n = s->n;
	if (s->naxes < 0)
		return true;
	if (!s->axes_input)
		return axes_attr(g, n, s);
	om_value *v = axes_const(c, g, s);
	if (!v)
		return false;
	set_input(c, n, 1, v);
	return true;
}

/* K_SLICE: the new axes as the attribute, or as input 3 (the node grows to 4 inputs) */
static bool set_slice_axes(om_pass_ctx *c, om_graph *g, push *s)
{
	om_node *n = s->n;
	if (!s->axes_input)
		return axes_attr(g, n, s);
	om_value *v = axes_const(c, g, s);
	if (!v)
		return false;
	if (n->nin < 4) {
		om_value **in = om_arena_alloc(g->model->arena, sizeof *in * 4);
		if (!in)
			return false;
		memcpy(in, n->in, sizeof *in * (size_t)n->nin);
		for (int32_t i = n->nin; i < 4; i++)
			in[i] = NULL;
		n->in = in;
		n->nin = 4;
		om_uses_set_input(c, n, 3, v);
		v->nuses++;
		return true;
	}
	set_input(c, n, 3, v);
	return true;
}

static bool set_pads(om_pass_ctx *c, om_graph *g, push *s)
{
	const int32_t k = 2 * s->p.r;
	if (s->pad_axes) {
		om_value *v = axes_const(c, g, s);
		if (!v)
			return false;
		set_input(c, s->n, 3, v);
		return true;
	}
	if (s->pads_input) {
		om_tensor *t = om_model_tensor(g->model, OM_INT64, 1, (int64_t[]){k});
		if (!t)
			return false;
		memcpy(t->data, s->pads, sizeof(int64_t) * (size_t)k);
		om_value *v = om_new_constant(c, g, "pads", t);
		if (!v)
			return false;
		set_input(c, s->n, 1, v);
		return true;
	}
	om_attr *a = om_node_set_attr(s->n, "pads", OM_ATTR_INTS);
	int64_t *ints = a ? om_arena_memdup(g->model->arena, s->pads, sizeof s->pads) : NULL;
	if (!ints)
		return false;
	a->n = k;
	a->ints = ints;
	return true;
}

/* K_RESIZE: the roi, scales and sizes planned, permuted into new constants */
static bool set_resize_inputs(om_pass_ctx *c, om_graph *g, push *s)
{
	for (int32_t slot = 1; slot <= 3; slot++) {
		const om_tensor *k = s->rs[slot - 1];
		if (!k)
			continue;
		om_tensor *t = permuted_vec(g->model, k, &s->p, slot == 1 ? 2 : 1);
		om_value *v = t ? om_new_constant(c, g, s->n->in[slot]->name, t) : NULL;
		if (!v)
			return false;
		set_input(c, s->n, slot, v);
	}
	return true;
}

static om_kind move_output(om_pass_ctx *c, om_graph *g, push *s, int32_t o);

static om_kind apply(om_pass_ctx *c, om_graph *g, push *s)
{
	om_node *n = s->n;
	const perm inv = perm_inverse(&s->p);
#define nomem om_error(c->st, OM_ERR_NOMEM, n, "out of memory pushing a Transpose")
	for (int32_t i = 0; i < s->nin; i++) {
		om_value *v = n->in[i];
		if (s->act[i] == IN_UNWRAP) {
			set_input(c, n, i, v->producer->in[0]);
		} else if (s->act[i] == IN_CONST) {
			om_tensor *t = permuted_const(g->model, om_value_const(g, v), &inv);
			om_value *k = t ? om_new_constant(c, g, v->name, t) : NULL;
			if (!k)
				return nomem;
			set_input(c, n, i, k);
		} else if (s->act[i] == IN_WRAP) {
			om_value *w = om_graph_fresh_value(g, v->name);
			if (!w || !new_transpose(c, g, v, w, &inv) ||
			    !type_permuted(c, g, w, v, &inv))
				return nomem;
			set_input(c, n, i, w);
		}
	}
	if (s->kind == K_AXIS || s->kind == K_SPLIT || (s->kind == K_REDUCE && s->axis_attr) ||
	    (s->kind == K_QDQ && s->axis >= 0)) {
		om_attr *a = om_node_set_attr(n, "axis", OM_ATTR_INT);
		if (!a)
			return nomem;
		a->i = s->axis;
	} else if ((s->kind == K_REDUCE || s->kind == K_SQUEEZE) && !set_axes(c, g, s)) {
		return nomem;
	} else if (s->kind == K_PAD && !set_pads(c, g, s)) {
		return nomem;
	} else if (s->kind == K_SLICE && !set_slice_axes(c, g, s)) {
		return nomem;
	} else if (s->kind == K_RESIZE && !set_resize_inputs(c, g, s)) {
		return nomem;
	}
	if (perm_identity(&s->out_p))
		return OM_OK;
	om_kind rc = OM_OK;
	for (int32_t o = 0; o < s->nout && !rc; o++)
		if (n->out[o])
			rc = move_output(c, g, s, o);
	return rc;
#undef nomem
}

/* n writes y' in x's layout; the inverse Transposes reading y read y' instead, and a
 * Transpose writes y (its name, other readers and type stay) when something still reads it */
static om_kind move_output(om_pass_ctx *c, om_graph *g, push *s, int32_t o)
{
	om_node *n = s->n;
#define nomem om_error(c->st, OM_ERR_NOMEM, n, "out of memory pushing a Transpose")
	om_value *y = n->out[o];
	om_node *rd[MAX_READERS];
	const int32_t k = cancelling(c, g, s, o, rd);
	om_value *y2 = om_graph_fresh_value(g, y->name);
	if (!y2)
		return nomem;
	om_node_set_output(n, o, y2);
	const perm out_inv = perm_inverse(&s->out_p);
	if (!type_permuted(c, g, y2, y, &out_inv))
		return nomem;
	om_node *gout = NULL;
	for (int32_t i = 0; i < k; i++) {
		om_value *ro = rd[i]->out[0];
		y->nuses--;
		if (ro->flags & OM_VALUE_GRAPH_OUTPUT) {
			gout = rd[i]; /* the last one */
			break;
		}
		om_uses_replace(c, g, ro, y2);
		y2->nuses += ro->nuses;
		ro->nuses = 0;
		om_node_kill(c, rd[i]);
	}
	if (y->nuses > 0 && !new_transpose(c, g, y2, y, &s->out_p))
		return nomem;
	if (gout) {
		/* n writes the graph output's name; what read y' reads it */
		om_value *go = gout->out[0];
		const int32_t uses = y2->nuses;
		if (om_bypass_node(c, g, gout, y2)) {
			go->nuses += uses;
			y2->nuses = 0;
		} else {
			y->nuses++;
			if (y->nuses == 1 && !new_transpose(c, g, y2, y, &s->out_p))
				return nomem;
		}
	}
	return OM_OK;
#undef nomem
}

om_kind om_pass_push_transposes(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_graph_count_uses(g);
	om_uses_open(c, g);
	om_kind rc = OM_OK;
	const int32_t n0 = g->nnodes;
	int pushed = 0;
	for (int32_t i = 0; i < n0 && !rc; i++) {
		om_node *n = g->nodes[i];
		if (n->flags & OM_NODE_DEAD)
			continue;
		const enum kind k = kind_of(g->model, n);
		push s;
		if (k == K_NONE || !plan(c, g, n, k, &s))
			continue;
		rc = apply(c, g, &s);
		pushed++;
	}
	om_uses_close(c);
	om_graph_compact(g);
	if (!rc && pushed)
		rc = om_graph_toposort(g, c->st);
	*changes += pushed;
	return rc;
}

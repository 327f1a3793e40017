/* test_diff_nodes.c — differential harness (a), issue 9: for every ai.onnx op row with an
 * infer and a kernel, random nodes (inputs, types, ranks 0-6 with extents 0 and 1, attributes
 * drawn from the ONNX schema in diff_schema.h) whose inference is compared with what the kernel
 * produces:
 *   - the row's infer at plan time (data inputs without values, parameter inputs such as shape,
 *     axes, pads with values) against om_eval_node: same dtypes and shapes when both succeed;
 *     a plan-time error for a node that runs, or a plan-time type for a node the kernel calls
 *     invalid, is a finding;
 *   - the passes' inference (om_annotate_types on the node as a one-node model): every dtype,
 *     rank and numeric dim it states must be the kernel's;
 *   - a session (exact mode) of the node as a one-node model gives om_eval_node's bytes;
 *   - the kernel writes every byte of its outputs: run twice over buffers filled with 0x00 and
 *     0xff, the results are equal.
 *
 *   test_diff_nodes [--seed N] [--count N] [--case ID] [-v]
 * --count is the number of nodes per row; a case id is "Op@since:0x<seed>". */
#include <inttypes.h>

#include "diffutil.h"
#include "nodetest.h"
#include "pass.h"
#include "diff_schema.h"

/* Cases that fail on main for reasons other tasks own; remove a line when it passes. */
static const dt_known known_failures[] = {
	{NULL, NULL},
};

static dt_opts opts;

enum { MAXIN = 8, MAXOUT = 8 };

/* ---- random nodes --------------------------------------------------------------------- */

static const int32_t supported[] = {OM_FLOAT, OM_DOUBLE, OM_FLOAT16, OM_INT32, OM_INT64,
				    OM_INT8, OM_UINT8, OM_BOOL};

typedef struct ncase {
	nt_rng r;
	int32_t rank;
	int64_t dims[OM_MAX_RANK];
	int64_t k;                       /* entries of Slice-like parameter vectors */
	om_tensor t[MAXIN];
	bool param[MAXIN];               /* a parameter input: has its value at plan time */
	unsigned char buf[MAXIN][8192];  /* the inputs' bytes */
} ncase;

static int64_t rnd(ncase *c, int64_t lo, int64_t hi) { return nt_rand(&c->r, lo, hi); }
static bool chance(ncase *c, int percent) { return rnd(c, 0, 99) < percent; }

static bool is_param(const char *name)
{
	static const char *const names[] = {"shape", "axes", "starts", "ends", "steps", "repeats",
					    "pads", "split", "sizes", "K", "k", "axis", "roi",
					    "scales", "perm", "output_shape", NULL};
	for (const char *const *n = names; *n; n++)
		if (!strcmp(*n, name))
			return true;
	return false;
}

/** A dtype from mask (bits: DataType), float half of the time when allowed; 0 when none. */
static int32_t pick_type(ncase *c, uint32_t mask)
{
	if ((mask & (1u << OM_FLOAT)) && chance(c, 50))
		return OM_FLOAT;
	int32_t cand[8], k = 0;
	for (size_t i = 0; i < sizeof supported / sizeof supported[0]; i++)
		if (mask & (1u << supported[i]))
			cand[k++] = supported[i];
	return k ? cand[rnd(c, 0, k - 1)] : 0;
}

static int64_t rand_extent(ncase *c)
{
	const int64_t u = rnd(c, 0, 99);
	return u < 8 ? 0 : u < 35 ? 1 : rnd(c, 2, 4);
}

/** Fills t's elements: small values of its dtype (float ones multiples of 0.25). */
static void fill(ncase *c, om_tensor *t, int64_t lo, int64_t hi)
{
	const int64_t n = om_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		const int64_t v = rnd(c, lo, hi);
		switch (t->dtype) {
		case OM_FLOAT: ((float *)t->data)[i] = (float)v * 0.25f; break;
		case OM_DOUBLE: ((double *)t->data)[i] = (double)v * 0.25; break;
		case OM_FLOAT16: ((uint16_t *)t->data)[i] = (uint16_t)(0x3c00 + v * 0x100); break;
		case OM_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
		case OM_INT64: ((int64_t *)t->data)[i] = v; break;
		case OM_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
		case OM_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)(v & 0xff); break;
		case OM_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(v & 1); break;
		default: break;
		}
	}
}

/** A shape that fits the case's buffers (at most 4 extents of 4 beyond rank 2... clamped). */
static void set_shape(om_tensor *t, int32_t dtype, int32_t rank, const int64_t *dims)
{
	t->dtype = dtype;
	t->rank = rank;
	for (int32_t i = 0; i < rank; i++)
		t->dims[i] = dims[i];
}

/** Input i of the node: a parameter vector when its name says so and its type is an int, else
 *  a data tensor of the case's shape or a broadcastable variant of it. */
static void make_input(ncase *c, int i, const char *name, int32_t dtype, const char *op)
{
	om_tensor *t = &c->t[i];
	t->data = c->buf[i];
	const int32_t r = c->rank;
	int64_t v[2 * OM_MAX_RANK];
	int64_t n = 0;
	c->param[i] = is_param(name) && (dtype == OM_INT64 || dtype == OM_INT32 ||
					 !strcmp(name, "scales") || !strcmp(name, "roi"));
	if (c->param[i]) {
		if (!strcmp(name, "shape") || !strcmp(name, "sizes") ||
		    !strcmp(name, "output_shape")) {
			const int64_t how = rnd(c, 0, 4);
			if (how == 0) { /* the same shape with one entry -1 or 0 */
				for (n = 0; n < r; n++)
					v[n] = c->dims[n];
				if (r)
					v[rnd(c, 0, r - 1)] = rnd(c, -1, 0);
			} else if (how == 1) { /* all in one */
				v[n++] = om_shape_numel(r, c->dims);
			} else if (how == 2) {
				v[n++] = -1;
			} else { /* anything small, rank 0-4 */
				for (int64_t e = rnd(c, 0, 4); n < e; n++)
					v[n] = rnd(c, how == 3 ? -1 : 1, 4);
			}
		} else if (!strcmp(name, "axes") || !strcmp(name, "perm")) {
			const int64_t e = !strcmp(op, "Unsqueeze") ? rnd(c, 0, 2) : rnd(c, 0, r);
			for (n = 0; n < e; n++)
				v[n] = rnd(c, -r - (e > 0), r + (e > 0) - 1);
		} else if (!strcmp(name, "starts") || !strcmp(name, "ends")) {
			for (n = 0; n < c->k; n++)
				v[n] = chance(c, 10) ? (name[0] == 'e' ? INT64_MAX : INT64_MIN)
						     : rnd(c, -5, 5);
		} else if (!strcmp(name, "steps")) {
			for (n = 0; n < c->k; n++)
				v[n] = rnd(c, 0, 3) ? (rnd(c, 0, 1) ? 1 : -1) : rnd(c, -2, 2);
		} else if (!strcmp(name, "pads")) {
			for (n = 0; n < 2 * r; n++)
				v[n] = rnd(c, -1, 2) < 0 && chance(c, 30) ? -1 : rnd(c, 0, 2);
		} else if (!strcmp(name, "repeats")) {
			for (n = 0; n < r; n++)
				v[n] = rnd(c, 0, 2);
		} else if (!strcmp(name, "split")) {
			for (n = 0; n < rnd(c, 1, 3); n++)
				v[n] = rnd(c, 0, 3);
		} else if (!strcmp(name, "scales") || !strcmp(name, "roi")) {
			for (n = 0; n < (name[0] == 'r' ? 2 * r : r); n++)
				v[n] = rnd(c, 1, 4); /* in quarters: 0.25 .. 1 */
		} else { /* K, k, axis: one number */
			v[n++] = rnd(c, -1, r > 0 ? r : 2);
		}
		const bool scalar = n == 1 && (!strcmp(name, "axis") || chance(c, 10));
		set_shape(t, dtype, scalar ? 0 : 1, &n);
		for (int64_t e = 0; e < n; e++) {
			if (dtype == OM_INT64)
				((int64_t *)t->data)[e] = v[e];
			else if (dtype == OM_INT32)
				((int32_t *)t->data)[e] = (int32_t)(v[e] > INT32_MAX	 ? INT32_MAX
								    : v[e] < INT32_MIN ? INT32_MIN
										       : v[e]);
			else if (dtype == OM_FLOAT)
				((float *)t->data)[e] = (float)v[e] * 0.25f;
			else if (dtype == OM_DOUBLE)
				((double *)t->data)[e] = (double)v[e] * 0.25;
			else
				memset(t->data, 0, 8);
		}
		t->nbytes = om_tensor_bytes_for(t->dtype, t->rank, t->dims);
		return;
	}
	int64_t d[OM_MAX_RANK];
	int32_t rk = r;
	for (int32_t j = 0; j < r; j++)
		d[j] = c->dims[j];
	const int64_t how = rnd(c, 0, 9);
	if (how < 2 && rk > 0) { /* broadcast: fewer leading dims, some extents 1 */
		rk = (int32_t)rnd(c, 0, rk);
		for (int32_t j = 0; j < rk; j++)
			d[j] = chance(c, 30) ? 1 : c->dims[r - rk + j];
	} else if (how == 2) { /* something else */
		rk = (int32_t)rnd(c, 0, 3);
		for (int32_t j = 0; j < rk; j++)
			d[j] = rand_extent(c);
	}
	if (!strcmp(name, "indices") || !strcmp(name, "B") || !strcmp(name, "W")) {
		if (chance(c, 50)) { /* small, other shape */
			rk = (int32_t)rnd(c, 0, 2);
			for (int32_t j = 0; j < rk; j++)
				d[j] = rnd(c, 0, 3);
		}
	}
	set_shape(t, dtype, rk, d);
	t->nbytes = om_tensor_bytes_for(dtype, rk, d);
	fill(c, t, !strcmp(name, "indices") ? -2 : -8, !strcmp(name, "indices") ? 2 : 8);
}

static const char *const strings_mode[] = {"constant", "reflect", "edge", "nearest", "linear",
					   "cubic", "wrap", "bilinear"};

/** Sets attribute a on n with a random value in (or near) its valid range; false: unset. */
static bool make_attr(ncase *c, om_node *n, const ds_attr *a)
{
	const int32_t r = c->rank;
	int64_t v[2 * OM_MAX_RANK];
	int64_t cnt = 0;
	switch (a->type) {
	case OM_ATTR_INT: {
		int64_t x = rnd(c, -1, 3);
		if (!strcmp(a->name, "axis"))
			x = rnd(c, -r - 1, r);
		else if (!strcmp(a->name, "to") || !strcmp(a->name, "dtype"))
			x = supported[rnd(c, 0, 7)];
		else if (strstr(a->name, "keepdims") || strstr(a->name, "allowzero") ||
			 !strncmp(a->name, "trans", 5) || !strcmp(a->name, "exclusive") ||
			 !strcmp(a->name, "reverse") || !strcmp(a->name, "upper") ||
			 !strcmp(a->name, "largest") || !strcmp(a->name, "sorted"))
			x = rnd(c, 0, 1);
		nt_int(n, a->name, x);
		return true;
	}
	case OM_ATTR_INTS:
		if (!strcmp(a->name, "perm")) {
			for (cnt = 0; cnt < r; cnt++)
				v[cnt] = cnt;
			for (int64_t i = cnt - 1; i > 0; i--) {
				const int64_t j = rnd(c, 0, i), s = v[i];
				v[i] = v[j], v[j] = s;
			}
			if (chance(c, 10) && r)
				v[0] = rnd(c, -1, r);
		} else if (!strcmp(a->name, "axes")) {
			for (const int64_t e = rnd(c, 0, r); cnt < e; cnt++)
				v[cnt] = rnd(c, -r, r);
		} else if (!strcmp(a->name, "pads")) {
			for (; cnt < 2 * (r > 2 ? r - 2 : r); cnt++)
				v[cnt] = rnd(c, 0, 2);
		} else if (!strcmp(a->name, "kernel_shape") || !strcmp(a->name, "strides") ||
			   !strcmp(a->name, "dilations")) {
			for (; cnt < (r > 2 ? r - 2 : 1); cnt++)
				v[cnt] = rnd(c, 1, 3);
		} else {
			for (const int64_t e = rnd(c, 0, r); cnt < e; cnt++)
				v[cnt] = rnd(c, -1, 3);
		}
		nt_ints(n, a->name, v, cnt);
		return true;
	case OM_ATTR_FLOAT:
		nt_float(n, a->name, (float)rnd(c, 0, 8) * 0.125f);
		return true;
	case OM_ATTR_FLOATS: {
		float f[OM_MAX_RANK];
		for (; cnt < r; cnt++)
			f[cnt] = (float)rnd(c, 1, 8) * 0.5f;
		nt_floats(n, a->name, f, cnt);
		return true;
	}
	case OM_ATTR_STRING:
		if (!strcmp(a->name, "mode") || !strcmp(a->name, "coordinate_transformation_mode")) {
			nt_str(n, a->name, strings_mode[rnd(c, 0, 7)]);
			return true;
		}
		if (!strcmp(a->name, "auto_pad")) {
			static const char *const ap[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
			nt_str(n, a->name, ap[rnd(c, 0, 3)]);
			return true;
		}
		return false;
	case OM_ATTR_TENSOR: {
		om_attr *at = om_node_set_attr(n, a->name, OM_ATTR_TENSOR);
		at->t = om_model_tensor(n->graph->model, OM_FLOAT, 1, (int64_t[]){1});
		((float *)at->t->data)[0] = 1.5f;
		return true;
	}
	default:
		return false;
	}
}

/** The schema of op at opset: highest since <= opset. */
static const ds_schema *schema_for(const char *op, int64_t opset)
{
	const ds_schema *best = NULL;
	for (size_t i = 0; i < sizeof ds_schemas / sizeof ds_schemas[0]; i++)
		if (!strcmp(ds_schemas[i].op, op) && ds_schemas[i].since <= opset &&
		    (!best || ds_schemas[i].since > best->since))
			best = &ds_schemas[i];
	return best;
}

/* Rows newer than the schemas of ONNX 1.12 borrow the inputs and attributes of an older op
 * of the same form (types: 0 for the alias's own, else a DataType bit mask). */
#define INTS ((1u << OM_INT8) | (1u << OM_INT16) | (1u << OM_INT32) | (1u << OM_INT64) | \
	      (1u << OM_UINT8) | (1u << OM_UINT16) | (1u << OM_UINT32) | (1u << OM_UINT64))
static const struct {
	const char *op, *alias;
	int32_t since;
	uint32_t types;
} aliases[] = {
	{"BitwiseAnd", "And", 7, INTS}, {"BitwiseOr", "Or", 7, INTS},
	{"BitwiseXor", "Xor", 7, INTS}, {"BitwiseNot", "Not", 1, INTS},
	{"Gelu", "Relu", 14, 0},        {"Mish", "Relu", 14, 0},
	{"Swish", "Relu", 14, 0},       {"CumProd", "CumSum", 14, 0},
	{"RMSNormalization", "LayerNormalization", 17, 0},
	{"LayerNormalization", "LayerNormalization", 17, 0},
	{"CenterCropPad", "Expand", 13, 0},
};

/** The schema random nodes of row op at opset are drawn from (*types: a type mask that
 *  replaces the schema's, or 0); NULL when there is none. */
static const ds_schema *row_schema(const om_op *op, int64_t opset, uint32_t *types)
{
	*types = 0;
	const ds_schema *s = schema_for(op->name, opset);
	for (size_t i = 0; !s && i < sizeof aliases / sizeof aliases[0]; i++)
		if (!strcmp(aliases[i].op, op->name)) {
			*types = aliases[i].types;
			s = schema_for(aliases[i].alias, aliases[i].since);
		}
	return s;
}

/** Builds node `op` (model *m) from schema s; false when it needs what we cannot make. */
static bool make_node(ncase *c, const char *op, const ds_schema *s, uint32_t types, om_model **m,
		      om_node **out)
{
	c->rank = (int32_t)(chance(c, 60) ? rnd(c, 0, 4) : rnd(c, 0, 6));
	for (int32_t i = 0; i < c->rank; i++)
		c->dims[i] = rand_extent(c);
	while (om_shape_numel(c->rank, c->dims) > 256) /* keep the bytes in the buffers */
		c->dims[rnd(c, 0, c->rank - 1)] = 1;
	c->k = rnd(c, 1, c->rank > 0 ? c->rank : 1);
	int32_t tc_type[16] = {0};
	int32_t nin = 0;
	const char *names[MAXIN];
	int32_t itypes[MAXIN];
	bool present[MAXIN];
	for (int32_t i = 0; i < s->nin && nin < MAXIN; i++) {
		const ds_input *p = &s->in[i];
		int32_t copies = p->option == 2 ? (int32_t)rnd(c, 1, 3) : 1;
		for (; copies > 0 && nin < MAXIN; copies--) {
			int32_t ty;
			if (p->tc >= 0 && p->tc < 16 && tc_type[p->tc])
				ty = tc_type[p->tc];
			else if (!(ty = pick_type(c, types ? types : p->types)))
				return false;
			if (p->tc >= 0 && p->tc < 16)
				tc_type[p->tc] = ty;
			names[nin] = p->name, itypes[nin] = ty;
			present[nin++] = p->option != 1 || chance(c, 60);
		}
	}
	while (nin > 0 && !present[nin - 1])
		nin--;
	int32_t nout = s->nout;
	if (nout > MAXOUT || s->nout == 0)
		return false;
	om_node *n = nt_node(m, op, nin, nout);
	for (int32_t i = 0; i < nin; i++) {
		if (!present[i]) {
			n->in[i] = NULL;
			continue;
		}
		make_input(c, i, names[i], itypes[i], op);
	}
	for (int32_t o = s->min_out; o < nout; o++)
		if (chance(c, 30))
			n->out[o] = NULL;
	for (int32_t a = 0; a < s->nattr; a++)
		if (s->attrs[a].required || chance(c, 35))
			if (!make_attr(c, n, &s->attrs[a]) && s->attrs[a].required)
				return false;
	*out = n;
	return true;
}

/* ---- the checks ----------------------------------------------------------------------- */

static void shape_str(const om_tensor *t, char *buf, size_t size)
{
	int k = snprintf(buf, size, "%s[", om_dtype_name(t->dtype));
	for (int32_t i = 0; i < t->rank && k < (int)size; i++)
		k += snprintf(buf + k, size - (size_t)k, "%s%lld", i ? "," : "", (long long)t->dims[i]);
	if (k < (int)size)
		snprintf(buf + k, size - (size_t)k, "]");
}

static bool same_shape(const om_tensor *a, const om_tensor *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int32_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

/** The kernel of op on in[] with outputs prefilled with `fillb`; as nt_run_mode. */
static om_kind run_prefilled(const om_node *n, const om_op *op, int64_t opset,
			     const om_tensor *const *in, om_tensor *out, int fillb, om_status *st)
{
	om_kind rc = om_infer_node(n, opset, in, out, st);
	if (rc)
		return rc;
	om_tensor *outp[MAXOUT] = {0};
	for (int32_t i = 0; i < n->nout; i++) {
		if (!n->out[i])
			continue;
		om_tensor shape = out[i];
		if ((rc = om_tensor_alloc(&out[i], shape.dtype, shape.rank, shape.dims, st)))
			break;
		if (out[i].dtype != OM_STRING)
			memset(out[i].data, fillb, out[i].nbytes);
		outp[i] = &out[i];
	}
	if (!rc) {
		om_ctx ctx = {.node = n, .op = op, .opset = opset, .nin = n->nin,
			      .nout = n->nout, .in = in, .out = outp, .st = st, .exact = 1,
			      .threads = 1};
		rc = op->kernel(&ctx);
	}
	if (rc)
		for (int32_t i = 0; i < n->nout; i++)
			om_tensor_free(&out[i]);
	return rc;
}

/** n as a one-node model: parameter inputs as initializers, the others as graph inputs
 *  x<i>, outputs y<o> without types. Attributes are borrowed from n's model (keep it). */
static om_model *one_node_model(const ncase *c, const om_node *n, int64_t opset)
{
	om_model *m = tu_model(opset);
	om_node *k = om_graph_add_node(m->graph, n->op, "", "n0", n->nin, n->nout);
	for (int32_t i = 0; i < n->nin; i++) {
		if (!n->in[i])
			continue;
		char name[16];
		snprintf(name, sizeof name, "x%d", i);
		if (c->param[i])
			k->in[i] = dt_init(m, name, &c->t[i]);
		else
			k->in[i] = dt_input(m, name, c->t[i].dtype, c->t[i].rank, c->t[i].dims, NULL);
	}
	for (int32_t o = 0; o < n->nout; o++) {
		if (!n->out[o])
			continue;
		char name[16];
		snprintf(name, sizeof name, "y%d", o);
		om_node_set_output(k, o, om_graph_value(m->graph, name));
		dt_output(m, k->out[o]);
	}
	k->attrs = n->attrs;
	k->nattr = n->nattr;
	return m;
}

/** The passes' inference of n (om_annotate_types on its one-node model): types[o] gets
 *  output o's type (kind 0: none). */
static void passes_types(const ncase *c, const om_node *n, int64_t opset, om_type *types,
			 om_model **keep)
{
	om_model *m = one_node_model(c, n, opset);
	om_status st = {0};
	om_annotate_types(m, &st);
	const om_node *k = m->graph->nodes[0];
	for (int32_t o = 0; o < n->nout; o++)
		types[o] = k->out[o] ? k->out[o]->type : (om_type){0};
	*keep = m;
}

/** n's one-node model run by a session (exact mode) against om_eval_node's outputs ko;
 *  NULL when they agree (or the session cannot run the op in exact mode). */
static const char *session_differs(const ncase *c, const om_node *n, int64_t opset,
				   const om_tensor *ko, bool values, char *msg, size_t size)
{
	om_model *m = one_node_model(c, n, opset);
	om_session *s = NULL;
	om_status st = {0};
	const char *finding = NULL;
	om_kind rc = om_session_create(m, &(om_session_options){.exact = 1}, &s, &st);
	if (rc && rc != OM_ERR_UNSUPPORTED) {
		snprintf(msg, size, "om_eval_node runs, the session does not plan: %s: %s",
			 om_kind_name(rc), st.msg);
		finding = msg;
	}
	if (rc)
		goto done;
	om_tensor in[MAXIN], out[MAXOUT];
	const int nin = om_session_input_count(s), nout = om_session_output_count(s);
	for (int i = 0; i < nin && i < MAXIN; i++)
		in[i] = c->t[atoi(om_session_input_name(s, i) + 1)];
	memset(out, 0, sizeof out);
	rc = om_session_run(s, in, nin, out, nout, &st);
	if (rc && rc != OM_ERR_UNSUPPORTED) {
		snprintf(msg, size, "om_eval_node runs, the session fails: %s: %s",
			 om_kind_name(rc), st.msg);
		finding = msg;
	}
	char what[128];
	for (int o = 0; values && !rc && o < nout && !finding; o++) {
		const int k = atoi(om_session_output_name(s, o) + 1);
		if (dt_diff_exact(&out[o], &ko[k], what, sizeof what)) {
			snprintf(msg, size, "output %d: session and om_eval_node differ: %s", k, what);
			finding = msg;
		}
	}
	for (int o = 0; !rc && o < nout; o++)
		om_tensor_free(&out[o]);
done:
	om_session_free(s);
	nt_free(m);
	return finding;
}

/** Checks one random node of row op; NULL when it agrees, else the finding in msg. */
static const char *check_node(const om_op *op, int64_t opset_hi, uint64_t seed, dt_tally *t,
			      char *msg, size_t size, bool *invalid)
{
	static ncase c; /* 64 KiB of buffers: not on the stack */
	memset(&c, 0, sizeof c);
	c.r.s = seed;
	*invalid = false;
	/* the row's since-version half of the time, else an opset it covers */
	const int64_t opset = chance(&c, 50) ? op->since : rnd(&c, op->since, opset_hi);
	uint32_t types;
	const ds_schema *s = row_schema(op, opset, &types);
	om_model *m = NULL, *pm = NULL;
	om_node *n = NULL;
	const char *finding = NULL;
	if (!s || !make_node(&c, op->name, s, types, &m, &n)) {
		*invalid = true;
		if (m)
			nt_free(m);
		return NULL;
	}
	const om_tensor *in[MAXIN] = {0}, *pin[MAXIN] = {0};
	om_tensor stripped[MAXIN];
	for (int32_t i = 0; i < n->nin; i++) {
		if (!n->in[i])
			continue;
		in[i] = &c.t[i];
		stripped[i] = c.t[i];
		if (!c.param[i])
			stripped[i].data = NULL;
		pin[i] = &stripped[i];
	}
	om_tensor ko[MAXOUT], po[MAXOUT];
	om_status kst = {0}, pst = {0};
	const om_kind krc = om_eval_node(n, opset, in, ko, &kst);
	const om_kind prc = om_infer_node(n, opset, pin, po, &pst);
	char a[96], b[96];
	t->runs++;
	if (krc == OM_ERR_INTERNAL || (krc && krc != OM_ERR_INVALID_MODEL &&
				       krc != OM_ERR_INVALID_INPUT && krc != OM_ERR_UNSUPPORTED)) {
		snprintf(msg, size, "kernel: %s: %s", om_kind_name(krc), kst.msg);
		finding = msg;
	} else if (prc == OM_OK && krc == OM_OK) {
		for (int32_t o = 0; o < n->nout && !finding; o++)
			if (n->out[o] && !same_shape(&po[o], &ko[o])) {
				shape_str(&po[o], a, sizeof a), shape_str(&ko[o], b, sizeof b);
				snprintf(msg, size, "output %d: plan-time infer %s, kernel %s", o, a, b);
				finding = msg;
			}
	} else if (prc == OM_OK && krc == OM_ERR_INVALID_MODEL) {
		snprintf(msg, size, "plan-time infer accepts, kernel refuses: %s", kst.msg);
		finding = msg;
	} else if (prc && prc != OM_NEED_VALUE && krc == OM_OK) {
		snprintf(msg, size, "plan-time infer refuses (%s: %s), kernel runs",
			 om_kind_name(prc), pst.msg);
		finding = msg;
	}
	if (krc == OM_OK && !finding) {
		om_type types[MAXOUT];
		passes_types(&c, n, opset, types, &pm);
		for (int32_t o = 0; o < n->nout && !finding; o++) {
			const om_type *ty = &types[o];
			if (!n->out[o] || ty->kind != OM_TYPE_TENSOR)
				continue;
			bool bad = ty->elem != OM_UNDEFINED && ty->elem != ko[o].dtype;
			bad |= ty->rank >= 0 && ty->rank != ko[o].rank;
			for (int32_t d = 0; !bad && d < ty->rank; d++)
				bad = ty->dims[d].value >= 0 && ty->dims[d].value != ko[o].dims[d];
			if (bad) {
				om_tensor shown = {.dtype = ty->elem, .rank = ty->rank};
				for (int32_t d = 0; d < ty->rank; d++)
					shown.dims[d] = ty->dims[d].value;
				shape_str(&shown, a, sizeof a), shape_str(&ko[o], b, sizeof b);
				snprintf(msg, size, "output %d: passes' inference %s, kernel %s", o, a, b);
				finding = msg;
			}
		}
	}
	/* a random row's values are the same from run to run only when the node is seeded */
	const bool values = !(op->flags & OM_OP_RANDOM) || om_node_attr(n, "seed");
	if (krc == OM_OK && !finding)
		finding = session_differs(&c, n, opset, ko, values, msg, size);
	if (krc == OM_OK && !finding && values && op->kernel && !(op->flags & OM_OP_VIEW)) {
		om_tensor x0[MAXOUT], x1[MAXOUT];
		om_status st = {0};
		const om_kind r0 = run_prefilled(n, op, opset, in, x0, 0x00, &st);
		const om_kind r1 = run_prefilled(n, op, opset, in, x1, 0xff, &st);
		for (int32_t o = 0; !r0 && !r1 && o < n->nout && !finding; o++)
			if (n->out[o] && x0[o].dtype != OM_STRING &&
			    dt_diff_exact(&x0[o], &x1[o], a, sizeof a)) {
				snprintf(msg, size, "output %d: kernel leaves bytes unwritten (%s)", o, a);
				finding = msg;
			}
		for (int32_t o = 0; o < n->nout; o++) {
			if (!r0)
				om_tensor_free(&x0[o]);
			if (!r1)
				om_tensor_free(&x1[o]);
		}
	}
	if (krc == OM_OK)
		for (int32_t o = 0; o < n->nout; o++)
			om_tensor_free(&ko[o]);
	*invalid = !finding && krc != OM_OK;
	if (finding && dt_findings_dir())
		printf("  node: %s rank %d\n", op->name, c.rank);
	if (pm)
		nt_free(pm);
	nt_free(m);
	return finding;
}

typedef struct rows_arg {
	const om_op *rows[1024];
	int n;
} rows_arg;

static void collect(const om_op *op, void *arg)
{
	rows_arg *ra = arg;
	if (op->domain[0] || !op->infer || (!op->kernel && !(op->flags & OM_OP_VIEW)) ||
	    (op->flags & OM_OP_CONTROL) || ra->n == 1024)
		return;
	ra->rows[ra->n++] = op;
}

static void random_nodes_infer_as_they_run(void **state)
{
	(void)state;
	static rows_arg ra;
	ra.n = 0;
	om_op_each(collect, &ra);
	dt_tally t = {0};
	int no_schema = 0;
	for (int r = 0; r < ra.n; r++) {
		const om_op *op = ra.rows[r];
		uint32_t types;
		int64_t hi = op->since > 21 ? op->since : 21; /* the opsets the row covers */
		for (int q = 0; q < ra.n; q++)
			if (!strcmp(ra.rows[q]->name, op->name) && ra.rows[q]->since > op->since &&
			    ra.rows[q]->since - 1 < hi)
				hi = ra.rows[q]->since - 1;
		if (!row_schema(op, op->since, &types)) {
			no_schema++;
			if (opts.verbose)
				printf("no schema: %s@%d\n", op->name, op->since);
			continue;
		}
		for (int64_t i = 0; i < opts.count; i++) {
			const uint64_t seed = dt_case_seed(opts.seed ^ (uint64_t)r << 32, i);
			char id[96];
			snprintf(id, sizeof id, "%s@%d:0x%016" PRIx64, op->name, op->since, seed);
			uint64_t s = seed;
			if (opts.only) {
				const char *colon = strrchr(opts.only, ':');
				if (!colon || strncmp(opts.only, id, (size_t)(colon - opts.only) + 1))
					break;
				s = strtoull(colon + 1, NULL, 0);
				snprintf(id, sizeof id, "%s", opts.only);
			}
			if (opts.verbose) {
				printf("case %s\n", id);
				fflush(stdout);
			}
			char msg[768];
			bool invalid;
			const char *f = check_node(op, hi, s, &t, msg, sizeof msg, &invalid);
			if (invalid && !f && dt_known_find(known_failures, id) < 0)
				t.cases++, t.invalid++;
			else
				dt_record(&t, known_failures, id, f);
			if (opts.only)
				break;
		}
	}
	printf("%d ai.onnx rows with infer and kernel, %d without an ONNX 1.12 schema or alias "
	       "(not drawn)\n", ra.n, no_schema);
	dt_end(&t, known_failures, "random nodes");
}

int main(int argc, char **argv)
{
	if (dt_parse(argc, argv, &opts, 0x5eed000a, 100, 15))
		return 2;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_nodes_infer_as_they_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

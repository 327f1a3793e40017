/* test_ops_sequence.c — sequence and optional values in sessions (ir/value.h): the Sequence*
 * ops, SplitToSequence, ConcatFromSequence, SequenceMap, Optional*, Identity/If/Loop carrying
 * them; positions out of range and type mismatches are InvalidInput. Values by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "onnx_io.h"
#include "value.h"
#include "session.h"
#include "testutil.h"

/* ---- graph building ---------------------------------------------------------------------- */

static om_model *new_model(int64_t opset)
{
	om_model *m = om_model_new();
	m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", opset};
	m->nopsets = 1;
	return m;
}

static om_value *input(om_graph *g, const char *name, int32_t dtype, int32_t rank,
		       const int64_t *dims)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	if (dtype) {
		v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = dtype, .rank = rank};
		v->type.dims = om_arena_alloc(g->model->arena, sizeof(om_dim) * (size_t)(rank + 1));
		for (int32_t i = 0; i < rank; i++)
			v->type.dims[i] = (om_dim){dims[i], NULL};
	} else {
		v->type.rank = -1; /* no type: a subgraph input that carries a sequence */
	}
	tu_push_value(g, &g->inputs, &g->ninputs, v);
	return v;
}

static void output(om_graph *g, om_value *v)
{
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, v);
}

static om_node *node(om_graph *g, const char *type, const char *out, int32_t nin,
		     om_value *const *in)
{
	om_node *n = om_graph_add_node(g, type, "", out, nin, 1);
	for (int32_t i = 0; i < nin; i++)
		n->in[i] = in[i];
	om_node_set_output(n, 0, om_graph_value(g, out));
	if (!strcmp(type, "ConcatFromSequence")) /* ONNX requires axis; callers may set another */
		om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 0;
	return n;
}

static om_value *op1(om_graph *g, const char *type, const char *out, om_value *a)
{
	return node(g, type, out, a ? 1 : 0, (om_value *[]){a})->out[0];
}

static om_value *op2(om_graph *g, const char *type, const char *out, om_value *a, om_value *b)
{
	return node(g, type, out, 2, (om_value *[]){a, b})->out[0];
}

static om_tensor tensor(int32_t dtype, int32_t rank, const int64_t *dims, void *data)
{
	om_tensor t = {.dtype = dtype, .rank = rank, .data = data};
	if (rank)
		memcpy(t.dims, dims, sizeof(int64_t) * (size_t)rank);
	t.nbytes = om_tensor_bytes_for(dtype, rank, dims);
	return t;
}

static om_kind run(om_session *s, om_tensor *in, int nin, om_tensor *out, int nout)
{
	om_status st = {0};
	om_kind rc = om_session_run(s, in, nin, out, nout, &st);
	if (rc) {
		char buf[1024];
		om_status_format(&st, buf, sizeof buf);
		print_message("(expected or not) %s\n", buf);
	}
	return rc;
}

static void check_f32(const om_tensor *t, int32_t rank, const int64_t *dims, const float *want)
{
	assert_int_equal(t->dtype, OM_FLOAT);
	assert_int_equal(t->rank, rank);
	for (int32_t i = 0; i < rank; i++)
		assert_int_equal(t->dims[i], dims[i]);
	for (int64_t i = 0, n = om_tensor_numel(t); i < n; i++)
		assert_true(((const float *)t->data)[i] == want[i]);
}

static void check_i64(const om_tensor *t, int64_t n, const int64_t *want)
{
	assert_int_equal(t->dtype, OM_INT64);
	assert_int_equal(om_tensor_numel(t), n);
	for (int64_t i = 0; i < n; i++)
		assert_int_equal(((const int64_t *)t->data)[i], want[i]);
}

static void free_all(om_tensor *t, int n)
{
	for (int i = 0; i < n; i++)
		om_value_free(&t[i]);
}

/* ---- SplitToSequence, SequenceLength, SequenceAt, ConcatFromSequence --------------------- */

/* seq = SplitToSequence(x [2,3], split, axis 1); len, at = seq[pos], cat (axis 1), stack
 * (SplitToSequence without split, keepdims 0, then ConcatFromSequence new_axis 1 axis 0) */
static void split_at_concat(void **state)
{
	(void)state;
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t xd[] = {2, 3}, one[] = {1}, two[] = {2};
	om_value *x = input(g, "x", OM_FLOAT, 2, xd), *sp = input(g, "split", OM_INT64, 1, two);
	om_value *pos = input(g, "pos", OM_INT64, 0, one);
	om_node *split = node(g, "SplitToSequence", "seq", 2, (om_value *[]){x, sp});
	om_node_set_attr(split, "axis", OM_ATTR_INT)->i = 1;
	om_value *seq = split->out[0];
	output(g, op1(g, "SequenceLength", "len", seq));
	output(g, op2(g, "SequenceAt", "at", seq, pos));
	om_node *cat = node(g, "ConcatFromSequence", "cat", 1, (om_value *[]){seq});
	om_node_set_attr(cat, "axis", OM_ATTR_INT)->i = -1;
	output(g, cat->out[0]);
	om_node *rows = node(g, "SplitToSequence", "rows", 1, (om_value *[]){x});
	om_node_set_attr(rows, "keepdims", OM_ATTR_INT)->i = 0;
	om_node *stack = node(g, "ConcatFromSequence", "stack", 1, (om_value *[]){rows->out[0]});
	om_node_set_attr(stack, "new_axis", OM_ATTR_INT)->i = 1;
	om_node_set_attr(stack, "axis", OM_ATTR_INT)->i = 1;
	output(g, stack->out[0]);
	om_session *s = tu_session_create(m);
	float xv[] = {1, 2, 3, 4, 5, 6};
	int64_t spv[] = {1, 2}, pv = -1;
	om_tensor in[3] = {tensor(OM_FLOAT, 2, xd, xv), tensor(OM_INT64, 1, two, spv),
			   tensor(OM_INT64, 0, one, &pv)};
	om_tensor out[4];
	assert_int_equal(run(s, in, 3, out, 4), OM_OK);
	check_i64(&out[0], 1, (const int64_t[]){2});
	check_f32(&out[1], 2, (const int64_t[]){2, 2}, (const float[]){2, 3, 5, 6});
	check_f32(&out[2], 2, xd, xv);
	/* rows of x ([3] each, the axis dropped) stacked on a new axis 1: x transposed */
	check_f32(&out[3], 2, (const int64_t[]){3, 2}, (const float[]){1, 4, 2, 5, 3, 6});
	free_all(out, 4);
	pv = 0; /* the first chunk, [2,1] */
	assert_int_equal(run(s, in, 3, out, 4), OM_OK);
	check_f32(&out[1], 2, (const int64_t[]){2, 1}, (const float[]){1, 4});
	free_all(out, 4);
	/* positions outside [-2, 1] */
	for (int64_t bad = -3; bad <= 2; bad += 5) {
		pv = bad;
		assert_int_equal(run(s, in, 3, out, 4), OM_ERR_INVALID_INPUT);
	}
	pv = 0;
	spv[0] = 2; /* sizes summing to 4, not 3 */
	assert_int_equal(run(s, in, 3, out, 4), OM_ERR_INVALID_INPUT);
	spv[0] = -1;
	spv[1] = 4;
	assert_int_equal(run(s, in, 3, out, 4), OM_ERR_INVALID_INPUT);
	om_session_free(s);
	om_model_free(m);
}

/* a scalar split: chunks of 2 along axis 0 of [5], the last one shorter */
static void split_scalar(void **state)
{
	(void)state;
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t xd[] = {5}, one[] = {1};
	om_value *x = input(g, "x", OM_FLOAT, 1, xd), *sp = input(g, "k", OM_INT64, 0, one);
	om_value *pos = input(g, "pos", OM_INT64, 0, one);
	om_value *seq = op2(g, "SplitToSequence", "seq", x, sp);
	output(g, op1(g, "SequenceLength", "len", seq));
	output(g, op2(g, "SequenceAt", "at", seq, pos));
	om_session *s = tu_session_create(m);
	float xv[] = {1, 2, 3, 4, 5};
	int64_t k = 2, pv = 2;
	om_tensor in[3] = {tensor(OM_FLOAT, 1, xd, xv), tensor(OM_INT64, 0, one, &k),
			   tensor(OM_INT64, 0, one, &pv)};
	om_tensor out[2];
	assert_int_equal(run(s, in, 3, out, 2), OM_OK);
	check_i64(&out[0], 1, (const int64_t[]){3});
	check_f32(&out[1], 1, one, (const float[]){5});
	free_all(out, 2);
	k = 0;
	assert_int_equal(run(s, in, 3, out, 2), OM_ERR_INVALID_INPUT);
	om_session_free(s);
	om_model_free(m);
}

/* the box lives while views into it are read: at = seq[1] and its Reshape are read after the
 * last direct reader of seq (ASan checks the frees); then the box goes before the run ends */
static void views_keep_the_box(void **state)
{
	(void)state;
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t xd[] = {4}, one[] = {1}, two[] = {2};
	om_value *x = input(g, "x", OM_FLOAT, 1, xd), *pos = input(g, "pos", OM_INT64, 0, one);
	om_value *shape = input(g, "shape", OM_INT64, 1, one);
	om_value *k = input(g, "k", OM_INT64, 0, one);
	om_value *seq = op2(g, "SplitToSequence", "seq", x, k);
	om_value *at = op2(g, "SequenceAt", "at", seq, pos);
	om_value *len = op1(g, "SequenceLength", "len", seq); /* the last direct reader */
	om_value *r = op2(g, "Reshape", "r", at, shape);
	output(g, op2(g, "Add", "sum", r, r));
	output(g, len);
	om_session *s = tu_session_create(m);
	float xv[] = {1, 2, 3, 4};
	int64_t pv = 1, shp = 2, kv = 2;
	om_tensor in[4] = {tensor(OM_FLOAT, 1, xd, xv), tensor(OM_INT64, 0, one, &pv),
			   tensor(OM_INT64, 1, one, &shp), tensor(OM_INT64, 0, one, &kv)};
	om_tensor out[2];
	for (int rep = 0; rep < 2; rep++) {
		assert_int_equal(run(s, in, 4, out, 2), OM_OK);
		check_f32(&out[0], 1, two, (const float[]){6, 8});
		check_i64(&out[1], 1, (const int64_t[]){2});
		free_all(out, 2);
	}
	om_session_free(s);
	om_model_free(m);
}

/* string items: split (the box owns copies), an item concatenated with Concat (pointers
 * copied out of the box, read after the box's last reader), ConcatFromSequence */
static void string_items(void **state)
{
	(void)state;
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t xd[] = {3}, one[] = {1};
	om_value *x = input(g, "x", OM_STRING, 1, xd), *pos = input(g, "pos", OM_INT64, 0, one);
	om_value *seq = op1(g, "SplitToSequence", "seq", x);
	om_value *at = op2(g, "SequenceAt", "at", seq, pos);
	om_node *cat = node(g, "ConcatFromSequence", "all", 1, (om_value *[]){seq});
	om_node *c2 = node(g, "Concat", "twice", 2, (om_value *[]){at, at});
	om_node_set_attr(c2, "axis", OM_ATTR_INT)->i = 0;
	output(g, op1(g, "Identity", "twice_id", c2->out[0]));
	output(g, cat->out[0]);
	om_session *s = tu_session_create(m);
	om_str xv[] = {{"ab", 2}, {"c", 1}, {"", 0}};
	int64_t pv = -2;
	om_tensor in[2] = {tensor(OM_STRING, 1, xd, xv), tensor(OM_INT64, 0, one, &pv)};
	om_tensor out[2];
	assert_int_equal(run(s, in, 2, out, 2), OM_OK);
	assert_int_equal(out[0].dtype, OM_STRING);
	assert_int_equal(om_tensor_numel(&out[0]), 2);
	for (int i = 0; i < 2; i++) {
		const om_str *e = &((const om_str *)out[0].data)[i];
		assert_int_equal(e->len, 1);
		assert_memory_equal(e->ptr, "c", 1);
	}
	assert_int_equal(om_tensor_numel(&out[1]), 3);
	for (int i = 0; i < 3; i++) {
		const om_str *e = &((const om_str *)out[1].data)[i];
		assert_int_equal(e->len, xv[i].len);
		assert_ptr_not_equal(e->ptr, xv[i].ptr);
		if (e->len)
			assert_memory_equal(e->ptr, xv[i].ptr, (size_t)e->len);
	}
	free_all(out, 2);
	om_session_free(s);
	om_model_free(m);
}

/* ---- SequenceConstruct, SequenceInsert, SequenceErase, SequenceEmpty --------------------- */

/* cat(Erase(Insert(Construct(a, b), c, ip), ep)); a = [1], b = [2], c = [3] */
static void construct_insert_erase(void **state)
{
	(void)state;
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t d[] = {1};
	om_value *a = input(g, "a", OM_FLOAT, 1, d), *b = input(g, "b", OM_FLOAT, 1, d);
	om_value *c = input(g, "c", 0, 0, NULL);
	om_value *ip = input(g, "ip", OM_INT64, 0, d), *ep = input(g, "ep", OM_INT64, 0, d);
	om_value *seq = op2(g, "SequenceConstruct", "ab", a, b);
	om_value *ins = node(g, "SequenceInsert", "ins", 3, (om_value *[]){seq, c, ip})->out[0];
	om_value *er = op2(g, "SequenceErase", "er", ins, ep);
	output(g, op1(g, "ConcatFromSequence", "cat", er));
	output(g, op1(g, "SequenceLength", "n0", seq)); /* the input sequence is unchanged */
	om_session *s = tu_session_create(m);
	float av = 1, bv = 2, cv = 3;
	int64_t ipv = 1, epv = 0;
	om_tensor in[5] = {tensor(OM_FLOAT, 1, d, &av), tensor(OM_FLOAT, 1, d, &bv),
			   tensor(OM_FLOAT, 1, d, &cv), tensor(OM_INT64, 0, d, &ipv),
			   tensor(OM_INT64, 0, d, &epv)};
	om_tensor out[2];
	assert_int_equal(run(s, in, 5, out, 2), OM_OK); /* [1,3,2] minus item 0 */
	check_f32(&out[0], 1, (const int64_t[]){2}, (const float[]){3, 2});
	check_i64(&out[1], 1, (const int64_t[]){2});
	free_all(out, 2);
	ipv = 2; /* the end */
	epv = -3; /* the first of three */
	assert_int_equal(run(s, in, 5, out, 2), OM_OK);
	check_f32(&out[0], 1, (const int64_t[]){2}, (const float[]){2, 3});
	free_all(out, 2);
	ipv = 3; /* insert positions are [-2, 2] */
	assert_int_equal(run(s, in, 5, out, 2), OM_ERR_INVALID_INPUT);
	ipv = -3;
	assert_int_equal(run(s, in, 5, out, 2), OM_ERR_INVALID_INPUT);
	ipv = 0;
	epv = 3; /* erase positions are [-3, 2] */
	assert_int_equal(run(s, in, 5, out, 2), OM_ERR_INVALID_INPUT);
	epv = 0;
	int64_t ci = 3; /* an int64 tensor cannot join a float sequence */
	in[2] = tensor(OM_INT64, 1, d, &ci);
	assert_int_equal(run(s, in, 5, out, 2), OM_ERR_INVALID_INPUT);
	om_session_free(s);
	om_model_free(m);
}

/* SequenceEmpty: length 0; erasing from it, concatenating it are InvalidInput */
static void empty_sequence(void **state)
{
	(void)state;
	for (int which = 0; which < 3; which++) {
		om_model *m = new_model(13);
		om_graph *g = m->graph;
		om_value *e = op1(g, "SequenceEmpty", "e", NULL);
		if (which == 0)
			output(g, op1(g, "SequenceLength", "len", e));
		else if (which == 1)
			output(g, op1(g, "SequenceLength", "len", op1(g, "SequenceErase", "x", e)));
		else
			output(g, op1(g, "ConcatFromSequence", "cat", e));
		om_session *s = tu_session_create(m);
		om_tensor out[1];
		om_kind rc = run(s, NULL, 0, out, 1);
		assert_int_equal(rc, which ? OM_ERR_INVALID_INPUT : OM_OK);
		if (!rc) {
			check_i64(&out[0], 1, (const int64_t[]){0});
			free_all(out, 1);
		}
		om_session_free(s);
		om_model_free(m);
	}
}

/* ---- Optional ---------------------------------------------------------------------------- */

/* Optional(x) or Optional() with a type: has, get; getting from the empty one is InvalidInput */
static void optionals(void **state)
{
	(void)state;
	for (int full = 0; full < 2; full++) {
		om_model *m = new_model(18);
		om_graph *g = m->graph;
		const int64_t d[] = {2};
		om_value *x = input(g, "x", OM_FLOAT, 1, d);
		om_node *o = node(g, "Optional", "o", full, (om_value *[]){x});
		if (!full)
			om_node_set_attr(o, "type", OM_ATTR_TYPE_PROTO);
		om_value *id = op1(g, "Identity", "id", o->out[0]); /* a view of the box */
		output(g, op1(g, "OptionalHasElement", "has", id));
		output(g, op1(g, "OptionalHasElement", "has_x", x)); /* a tensor: true */
		om_value *get = op1(g, "OptionalGetElement", "get", id);
		output(g, op2(g, "Add", "sum", get, x));
		om_session *s = tu_session_create(m);
		float xv[] = {1, 2};
		om_tensor in[1] = {tensor(OM_FLOAT, 1, d, xv)};
		om_tensor out[3];
		om_kind rc = run(s, in, 1, out, 3);
		if (full) {
			assert_int_equal(rc, OM_OK);
			assert_int_equal(out[0].dtype, OM_BOOL);
			assert_int_equal(*(unsigned char *)out[0].data, 1);
			assert_int_equal(*(unsigned char *)out[1].data, 1);
			check_f32(&out[2], 1, d, (const float[]){2, 4});
			free_all(out, 3);
		} else {
			assert_int_equal(rc, OM_ERR_INVALID_INPUT);
		}
		om_session_free(s);
		om_model_free(m);
	}
	/* an empty optional says it has nothing */
	om_model *m = new_model(18);
	om_node *o = node(m->graph, "Optional", "o", 0, NULL);
	om_node_set_attr(o, "type", OM_ATTR_TYPE_PROTO);
	output(m->graph, op1(m->graph, "OptionalHasElement", "has", o->out[0]));
	om_session *s = tu_session_create(m);
	om_tensor out[1];
	assert_int_equal(run(s, NULL, 0, out, 1), OM_OK);
	assert_int_equal(*(unsigned char *)out[0].data, 0);
	free_all(out, 1);
	om_session_free(s);
	om_model_free(m);
}

/* Optional without input and without a type is an invalid model */
static void optional_needs_type(void **state)
{
	(void)state;
	om_model *m = new_model(18);
	output(m->graph, op1(m->graph, "Optional", "o", NULL));
	om_session *s = NULL;
	om_status st = {0};
	assert_int_equal(om_session_create(m, NULL, &s, &st), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* ---- control flow ------------------------------------------------------------------------ */

/* Loop(M, "", SequenceEmpty(int64)): body inserts the iteration number; stacked after it */
static void loop_carried_sequence(void **state)
{
	(void)state;
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t one[] = {1};
	om_value *mv = input(g, "M", OM_INT64, 0, one);
	om_node *e = node(g, "SequenceEmpty", "e", 0, NULL);
	om_node_set_attr(e, "dtype", OM_ATTR_INT)->i = OM_INT64;
	om_graph *b = om_graph_new(m, g);
	om_value *bi = input(b, "i", OM_INT64, 0, one), *bc = input(b, "c", OM_BOOL, 0, one);
	om_value *bs = input(b, "s", 0, 0, NULL);
	output(b, op1(b, "Identity", "c2", bc));
	output(b, op2(b, "SequenceInsert", "s2", bs, bi));
	om_node *loop = node(g, "Loop", "final", 3, (om_value *[]){mv, NULL, e->out[0]});
	om_node_set_attr(loop, "body", OM_ATTR_GRAPH)->g = b;
	om_node *stack = node(g, "ConcatFromSequence", "stack", 1, (om_value *[]){loop->out[0]});
	om_node_set_attr(stack, "new_axis", OM_ATTR_INT)->i = 1;
	output(g, stack->out[0]);
	output(g, op1(g, "SequenceLength", "len", loop->out[0]));
	om_session *s = tu_session_create(m);
	int64_t trips = 3;
	om_tensor in[1] = {tensor(OM_INT64, 0, one, &trips)};
	om_tensor out[2];
	assert_int_equal(run(s, in, 1, out, 2), OM_OK);
	check_i64(&out[0], 3, (const int64_t[]){0, 1, 2});
	check_i64(&out[1], 1, (const int64_t[]){3});
	free_all(out, 2);
	trips = 0; /* the empty sequence comes out: its length only (concat would be invalid) */
	assert_int_equal(run(s, in, 1, out, 2), OM_ERR_INVALID_INPUT);
	om_session_free(s);
	om_model_free(m);
}

/* If(c) then SequenceConstruct(x, x) else SequenceEmpty; y = SequenceLength; SequenceMap
 * (body: Add(v, v)) over the branch's sequence, concatenated */
static void if_and_map(void **state)
{
	(void)state;
	om_model *m = new_model(17);
	om_graph *g = m->graph;
	const int64_t d[] = {2}, one[] = {1};
	om_value *c = input(g, "c", OM_BOOL, 0, one);
	input(g, "x", OM_FLOAT, 1, d);
	om_graph *tb = om_graph_new(m, g), *eb = om_graph_new(m, g);
	om_value *tx = om_graph_value(tb, "x");
	tx->flags |= OM_VALUE_OUTER;
	output(tb, op2(tb, "SequenceConstruct", "ts", tx, tx));
	output(eb, op1(eb, "SequenceEmpty", "es", NULL));
	om_node *in = node(g, "If", "seq", 1, (om_value *[]){c});
	om_node_set_attr(in, "then_branch", OM_ATTR_GRAPH)->g = tb;
	om_node_set_attr(in, "else_branch", OM_ATTR_GRAPH)->g = eb;
	output(g, op1(g, "SequenceLength", "len", in->out[0]));
	om_graph *mb = om_graph_new(m, g);
	om_value *mv = input(mb, "v", OM_FLOAT, 1, d);
	output(mb, op2(mb, "Add", "vv", mv, mv));
	om_node *map = node(g, "SequenceMap", "mapped", 1, (om_value *[]){in->out[0]});
	om_node_set_attr(map, "body", OM_ATTR_GRAPH)->g = mb;
	output(g, op1(g, "SequenceLength", "mlen", map->out[0]));
	om_session *s = tu_session_create(m);
	unsigned char cv = 1;
	float xv[] = {1, 2};
	om_tensor inp[2] = {tensor(OM_BOOL, 0, one, &cv), tensor(OM_FLOAT, 1, d, xv)};
	om_tensor out[2];
	assert_int_equal(run(s, inp, 2, out, 2), OM_OK);
	check_i64(&out[0], 1, (const int64_t[]){2});
	check_i64(&out[1], 1, (const int64_t[]){2});
	free_all(out, 2);
	cv = 0;
	assert_int_equal(run(s, inp, 2, out, 2), OM_OK);
	check_i64(&out[0], 1, (const int64_t[]){0});
	check_i64(&out[1], 1, (const int64_t[]){0});
	free_all(out, 2);
	om_session_free(s);
	om_model_free(m);
	/* the mapped values, concatenated; with an item the body cannot take ([2] * [3] against
	 * the body's declared [2]: a model error), the results made so far are freed (ASan) */
	for (int bad = 0; bad < 2; bad++) {
		m = new_model(17);
		g = m->graph;
		om_value *x = input(g, "x", OM_FLOAT, 1, d);
		om_value *z = input(g, "z", OM_FLOAT, 1, (const int64_t[]){3});
		om_value *seq =
			node(g, "SequenceConstruct", "s", 3, (om_value *[]){x, x, z})->out[0];
		if (!bad) /* the last one, z, goes */
			seq = op1(g, "SequenceErase", "cut", seq);
		mb = om_graph_new(m, g);
		mv = input(mb, "v", OM_FLOAT, 1, d);
		om_value *w = input(mb, "w", OM_FLOAT, 1, d);
		output(mb, op2(mb, "Mul", "vw", mv, w));
		map = node(g, "SequenceMap", "mapped", 2, (om_value *[]){seq, x}); /* x: a tensor */
		om_node_set_attr(map, "body", OM_ATTR_GRAPH)->g = mb;
		output(g, op1(g, "ConcatFromSequence", "cat", map->out[0]));
		s = tu_session_create(m);
		float zv[3] = {0};
		om_tensor zin[2] = {inp[1], tensor(OM_FLOAT, 1, (const int64_t[]){3}, zv)};
		om_kind rc = run(s, zin, 2, out, 1);
		assert_int_equal(rc, bad ? OM_ERR_INVALID_MODEL : OM_OK);
		if (!bad) {
			check_f32(&out[0], 1, (const int64_t[]){4}, (const float[]){1, 4, 1, 4});
			free_all(out, 1);
		}
		om_session_free(s);
		om_model_free(m);
	}
}

/* a sequence where a tensor is expected: fed to a tensor input, or given to Add */
static void boxes_are_not_tensors(void **state)
{
	(void)state;
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t d[] = {1};
	om_value *x = input(g, "x", OM_FLOAT, 1, d);
	om_value *seq = op1(g, "SequenceConstruct", "s", x);
	output(g, op2(g, "Add", "bad", seq, x));
	om_session *s = tu_session_create(m);
	float xv = 1;
	om_tensor in[1] = {tensor(OM_FLOAT, 1, d, &xv)}, out[1];
	assert_int_equal(run(s, in, 1, out, 1), OM_ERR_INVALID_MODEL);
	om_tensor box;
	om_status st = {0};
	assert_int_equal(om_box_new(OM_SEQ_DTYPE, OM_FLOAT, &box, &st), OM_OK);
	assert_int_equal(om_box_insert(om_box(&box), 0, &in[0], &st), OM_OK);
	assert_int_equal(run(s, &box, 1, out, 1), OM_ERR_INVALID_INPUT);
	om_value_free(&box);
	om_session_free(s);
	om_model_free(m);
}

/* a sequence output: om_session_run (omopt.h) returns tensors only; om_session_run_values
 * returns the box */
static void sequence_output(void **state)
{
	(void)state;
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t d[] = {1};
	om_value *x = input(g, "x", OM_FLOAT, 1, d);
	output(g, op2(g, "SequenceConstruct", "s", x, x));
	om_session *s = tu_session_create(m);
	float xv = 7;
	om_tensor in[1] = {tensor(OM_FLOAT, 1, d, &xv)}, out[1];
	om_status st = {0};
	assert_int_equal(om_session_run(s, in, 1, out, 1, &st), OM_ERR_UNSUPPORTED);
	assert_int_equal(om_session_run_values(s, in, 1, out, 1, &st), OM_OK);
	assert_int_equal(out[0].dtype, OM_SEQ_DTYPE);
	assert_int_equal(om_box(&out[0])->n, 2);
	check_f32(&om_box(&out[0])->items[1], 1, d, &xv);
	om_value_free(&out[0]);
	om_session_free(s);
	om_model_free(m);
}

/* seq.c on its own: deep copies are independent, erase keeps the order */
static void box_copy_erase(void **state)
{
	(void)state;
	om_status st = {0};
	om_tensor a, b, opt;
	const int64_t d[] = {1};
	float v[] = {1, 2, 3};
	assert_int_equal(om_box_new(OM_SEQ_DTYPE, OM_FLOAT, &a, &st), OM_OK);
	for (int i = 0; i < 3; i++) {
		om_tensor t = tensor(OM_FLOAT, 1, d, &v[i]);
		assert_int_equal(om_box_insert(om_box(&a), i, &t, &st), OM_OK);
	}
	assert_int_equal(om_box_new(OM_OPT_DTYPE, 0, &opt, &st), OM_OK);
	assert_int_equal(om_box_insert(om_box(&opt), 0, &a, &st), OM_OK); /* optional(sequence) */
	assert_int_equal(om_value_copy(&b, &opt, &st), OM_OK);
	om_box_erase(om_box(&a), 1);
	assert_int_equal(om_box(&a)->n, 2);
	assert_true(*(float *)om_box(&a)->items[1].data == 3);
	const om_seq *inner = om_box(&om_box(&b)->items[0]);
	assert_int_equal(inner->n, 3);
	assert_true(*(float *)inner->items[1].data == 2);
	om_value_free(&a);
	om_value_free(&b);
	om_value_free(&opt);
}

/* ---- test data files (onnx/value_file.c) -------------------------------------------------- */

static void write_bytes(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

/* a SequenceProto of two float tensors, an OptionalProto of one and an empty one, read as their
 * declared types say; every truncation of the sequence file is an error or a shorter value,
 * never a crash (ASan) */
static void value_files(void **state)
{
	(void)state;
	char dir[256], path[300];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "omseq"), 0);
	float a[] = {1, 2}, b[] = {3};
	int64_t da[] = {2}, db[] = {1};
	Onnx__TensorProto t[2] = {ONNX__TENSOR_PROTO__INIT, ONNX__TENSOR_PROTO__INIT};
	t[0].n_dims = 1, t[0].dims = da, t[0].has_data_type = 1, t[0].data_type = OM_FLOAT;
	t[0].n_float_data = 2, t[0].float_data = a;
	t[1].n_dims = 1, t[1].dims = db, t[1].has_data_type = 1, t[1].data_type = OM_FLOAT;
	t[1].n_float_data = 1, t[1].float_data = b;
	Onnx__TensorProto *tv[] = {&t[0], &t[1]};
	Onnx__SequenceProto sp = ONNX__SEQUENCE_PROTO__INIT;
	sp.has_elem_type = 1, sp.elem_type = 1, sp.n_tensor_values = 2, sp.tensor_values = tv;
	uint8_t buf[256];
	size_t n = onnx__sequence_proto__pack(&sp, buf);
	Onnx__TypeProto__Sequence seq_t = ONNX__TYPE_PROTO__SEQUENCE__INIT;
	Onnx__TypeProto seq_ty = ONNX__TYPE_PROTO__INIT;
	seq_ty.value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE, seq_ty.sequence_type = &seq_t;
	Onnx__TypeProto__Optional opt_t = ONNX__TYPE_PROTO__OPTIONAL__INIT;
	Onnx__TypeProto opt_ty = ONNX__TYPE_PROTO__INIT;
	opt_ty.value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE, opt_ty.optional_type = &opt_t;
	om_type ts = {.kind = OM_TYPE_OTHER, .proto = &seq_ty};
	om_type to = {.kind = OM_TYPE_OTHER, .proto = &opt_ty};
	assert_int_equal(om_type_box_kind(&ts), OM_SEQ_DTYPE);
	assert_int_equal(om_type_box_kind(&to), OM_OPT_DTYPE);
	snprintf(path, sizeof path, "%s/seq.pb", dir);
	write_bytes(path, buf, n);
	om_tensor v;
	om_status st = {0};
	assert_int_equal(om_value_read_file(path, &ts, &v, &st), OM_OK);
	assert_int_equal(v.dtype, OM_SEQ_DTYPE);
	assert_int_equal(om_box(&v)->n, 2);
	check_f32(&om_box(&v)->items[0], 1, da, a);
	check_f32(&om_box(&v)->items[1], 1, db, b);
	om_value_free(&v);
	for (size_t cut = 0; cut < n; cut++) {
		write_bytes(path, buf, cut);
		if (om_value_read_file(path, &ts, &v, &st) == OM_OK) {
			assert_true(om_box(&v)->n < 2);
			om_value_free(&v);
		}
	}
	Onnx__OptionalProto op = ONNX__OPTIONAL_PROTO__INIT;
	op.has_elem_type = 1, op.elem_type = 1, op.tensor_value = &t[1];
	n = onnx__optional_proto__pack(&op, buf);
	snprintf(path, sizeof path, "%s/opt.pb", dir);
	write_bytes(path, buf, n);
	assert_int_equal(om_value_read_file(path, &to, &v, &st), OM_OK);
	assert_int_equal(v.dtype, OM_OPT_DTYPE);
	assert_int_equal(om_box(&v)->n, 1);
	check_f32(&om_box(&v)->items[0], 1, db, b);
	om_value_free(&v);
	write_bytes(path, buf, 0); /* no value: the empty optional */
	assert_int_equal(om_value_read_file(path, &to, &v, &st), OM_OK);
	assert_int_equal(om_box(&v)->n, 0);
	om_value_free(&v);
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_at_concat),
		cmocka_unit_test(split_scalar),
		cmocka_unit_test(views_keep_the_box),
		cmocka_unit_test(string_items),
		cmocka_unit_test(construct_insert_erase),
		cmocka_unit_test(empty_sequence),
		cmocka_unit_test(optionals),
		cmocka_unit_test(optional_needs_type),
		cmocka_unit_test(loop_carried_sequence),
		cmocka_unit_test(if_and_map),
		cmocka_unit_test(boxes_are_not_tensors),
		cmocka_unit_test(sequence_output),
		cmocka_unit_test(box_copy_erase),
		cmocka_unit_test(value_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

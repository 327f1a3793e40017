/* test_arity.c — the malformed-arity sweep (issue 10 #2, #8): every op row, at every opset
 * where its signature changes, as one-node models with a missing, empty-named or extra input or
 * output, no outputs, an attribute of the wrong type or a required attribute missing. Each goes
 * through om_eval_node, a session, save + load and om_simplify: the malformed ones must be
 * refused as InvalidModel naming the node wherever a node is checked (eval, load), and nothing
 * may crash or report an internal error. A sample goes through the omopt CLI (simplify, run,
 * dot): exit 1 naming the node. Also: IR versions, and a model built right that still runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "omopt.h"
#include "registry.h"
#include "testutil.h"

#define MAX_IO 8 /* slots a variant uses at most: beyond the signature's min/max by one */

typedef struct variant {
	const char *what;
	int32_t nin, nout;
	int32_t empty_in, empty_out; /* slot given as "" (-1: none) */
	bool opt_empty;              /* every optional input slot given as "" */
	const om_sig_attr *bad_attr; /* given with another type */
	bool malformed;              /* refused wherever a node is checked */
} variant;

typedef struct sweep {
	char dir[256];
	int rows, cases, refused, cli_models, cli_kinds;
	char cli_paths[3][300];
} sweep;

static int64_t clamp_io(int64_t v) { return v > MAX_IO ? MAX_IO : v; }

static bool slot_optional(uint64_t mask, int32_t i) { return (mask >> (i < 63 ? i : 63)) & 1u; }

static om_model *build(const om_op *op, int64_t opset, const variant *v)
{
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	m->ir_version = 8;
	m->opsets = om_arena_alloc(m->arena, 2 * sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", op->domain[0] ? 17 : opset};
	/* the row's own domain (com.microsoft, ai.onnx.preview) at the opset swept */
	m->opsets[1] = (om_opset){op->domain[0] ? op->domain : "com.microsoft",
				  op->domain[0] ? opset : 1};
	m->nopsets = 2;
	om_node *n = om_graph_add_node(g, op->name, op->domain, "n0", v->nin, v->nout);
	const om_sig *s = op->sig;
	while (s->newer && s->newer->since <= opset)
		s = s->newer;
	char name[16];
	for (int32_t i = 0; i < v->nin; i++) {
		if (i == v->empty_in || (v->opt_empty && slot_optional(s->opt_in, i)))
			continue;
		snprintf(name, sizeof name, "x%d", i);
		om_value *x = om_graph_value(g, name);
		x->flags |= OM_VALUE_GRAPH_INPUT;
		x->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = OM_FLOAT, .rank = 2};
		x->type.dims = om_arena_alloc(m->arena, 2 * sizeof(om_dim));
		x->type.dims[0] = (om_dim){2, NULL};
		x->type.dims[1] = (om_dim){3, NULL};
		tu_push_value(g, &g->inputs, &g->ninputs, x);
		n->in[i] = x;
	}
	for (int32_t i = 0; i < v->nout; i++) {
		if (i == v->empty_out)
			continue;
		snprintf(name, sizeof name, "y%d", i);
		om_value *y = om_graph_value(g, name);
		om_node_set_output(n, i, y);
		y->flags |= OM_VALUE_GRAPH_OUTPUT;
		tu_push_value(g, &g->outputs, &g->noutputs, y);
	}
	if (v->bad_attr) {
		if (v->bad_attr->type == OM_ATTR_FLOAT)
			om_node_set_attr(n, v->bad_attr->name, OM_ATTR_INT)->i = 1;
		else
			om_node_set_attr(n, v->bad_attr->name, OM_ATTR_FLOAT)->f = 1.0f;
	}
	return m;
}

static void free_model(om_model *m)
{
	HASH_CLEAR(hh, m->graph->values);
	om_model_free(m);
}

/* A refusal of a malformed node: InvalidModel naming n0, with a message. */
static int failures; /* printed as found, the sweep fails at its end */

static void expect_refused(const char *path, const om_op *op, int64_t opset, const variant *v,
			   om_kind rc, const om_status *st)
{
	if (rc == OM_ERR_INVALID_MODEL && !strcmp(st->node, "n0") && st->msg[0])
		return;
	print_error("%s: %s%s%s-%lld, %s: kind %d node '%s': %s\n", path, op->domain,
		    op->domain[0] ? "." : "", op->name, (long long)opset, v->what, rc, st->node,
		    st->msg);
	failures++;
}

static void no_internal(const char *path, const om_op *op, int64_t opset, const variant *v,
			om_kind rc, const om_status *st)
{
	if (rc != OM_ERR_INTERNAL)
		return;
	print_error("%s: %s-%lld, %s: internal error: %s\n", path, op->name, (long long)opset,
		    v->what, st->msg);
	failures++;
}

static void run_variant(sweep *sw, const om_op *op, int64_t opset, const variant *v)
{
	om_model *m = build(op, opset, v);
	const om_node *n = m->graph->nodes[0];
	sw->cases++;

	/* eval: the folder's and the passes' path */
	float zeros[6] = {0};
	om_tensor t = {.dtype = OM_FLOAT, .rank = 2, .dims = {2, 3}, .data = zeros,
		       .nbytes = sizeof zeros};
	const om_tensor *in[MAX_IO + 1] = {0};
	for (int32_t i = 0; i < n->nin; i++)
		in[i] = n->in[i] ? &t : NULL;
	om_tensor out[MAX_IO + 1];
	memset(out, 0, sizeof out);
	om_status st = {0};
	om_kind rc = om_eval_node(n, opset, in, out, &st);
	if (v->malformed)
		expect_refused("eval", op, opset, v, rc, &st);
	no_internal("eval", op, opset, v, rc, &st);
	for (int32_t i = 0; !rc && i < n->nout; i++)
		om_tensor_free(&out[i]);

	/* a session plans every node it runs */
	om_session *s = NULL;
	memset(&st, 0, sizeof st);
	rc = om_session_create(m, NULL, &s, &st);
	if (v->malformed && rc)
		expect_refused("session", op, opset, v, rc, &st);
	no_internal("session", op, opset, v, rc, &st);
	om_session_free(s);

	/* save and load: the loader checks every node */
	char path[300];
	snprintf(path, sizeof path, "%s/m.onnx", sw->dir);
	memset(&st, 0, sizeof st);
	if (om_model_save(m, path, NULL, &st) == OM_OK) {
		om_model *back = NULL;
		memset(&st, 0, sizeof st);
		rc = om_model_load(path, &back, &st);
		if (v->malformed) {
			expect_refused("load", op, opset, v, rc, &st);
			sw->refused += rc == OM_ERR_INVALID_MODEL;
		}
		no_internal("load", op, opset, v, rc, &st);
		om_model_free(back);
		/* the first malformed model of each of three kinds goes to the CLI */
		const char *kinds[] = {"missing input", "attribute of the wrong type",
				       "empty-named output"};
		bool take = false;
		for (int k = 0; k < 3; k++)
			if (!strcmp(v->what, kinds[k]) && !(sw->cli_kinds & (1 << k))) {
				take = true;
				sw->cli_kinds |= 1 << k;
			}
		if (take && sw->cli_models < 3 && rc == OM_ERR_INVALID_MODEL) {
			char dst[300];
			snprintf(dst, sizeof dst, "%s/cli%d.onnx", sw->dir, sw->cli_models);
			if (rename(path, dst) == 0)
				memcpy(sw->cli_paths[sw->cli_models++], dst, sizeof dst);
		}
	} else {
		no_internal("save", op, opset, v, st.kind, &st);
	}

	/* simplify: the passes' inference treats a refused node as unknown */
	memset(&st, 0, sizeof st);
	om_simplify_options so = {.verify = 1};
	rc = om_simplify(m, &so, &st);
	no_internal("simplify", op, opset, v, rc, &st);
	free_model(m);
}

static void sweep_sig(sweep *sw, const om_op *op, const om_sig *s, int64_t opset)
{
	const int32_t min_in = (int32_t)clamp_io(s->min_in), max_in = (int32_t)clamp_io(s->max_in);
	const int32_t min_out = (int32_t)clamp_io(s->min_out);
	const int32_t max_out = (int32_t)clamp_io(s->max_out);
	variant vs[32];
	int nv = 0;
	/* the shape a node may have: every slot up to the minimum, optional ones empty */
	vs[nv++] = (variant){"optional inputs empty", max_in, min_out ? min_out : 1, -1, -1, true,
			     NULL, false};
	if (s->min_in > 0)
		vs[nv++] = (variant){"missing input", min_in - 1, min_out, -1, -1, false, NULL, true};
	if (s->max_in < MAX_IO)
		vs[nv++] = (variant){"extra input", max_in + 1, min_out, -1, -1, false, NULL, true};
	for (int32_t i = 0; i < max_in && i < MAX_IO; i++)
		if (!slot_optional(s->opt_in, i)) {
			int32_t nin = i + 1 > min_in ? i + 1 : min_in;
			vs[nv++] = (variant){"empty-named input", nin, min_out, i, -1, false, NULL,
					     true};
			break;
		}
	if (s->min_out > 0) {
		vs[nv++] = (variant){"missing output", min_in, min_out - 1, -1, -1, false, NULL,
				     true};
		vs[nv++] = (variant){"no outputs", min_in, 0, -1, -1, false, NULL, true};
	}
	if (s->max_out < MAX_IO)
		vs[nv++] = (variant){"extra output", min_in, max_out + 1, -1, -1, false, NULL, true};
	if (s->min_out > 0 && !slot_optional(s->opt_out, 0))
		vs[nv++] = (variant){"empty-named output", min_in, min_out, -1, 0, false, NULL,
				     true};
	for (const om_sig_attr *a = s->attrs; a && a->name && nv < 32; a++)
		vs[nv++] = (variant){"attribute of the wrong type", min_in, min_out, -1, -1, false,
				     a, true};
	for (int i = 0; i < nv; i++)
		run_variant(sw, op, opset, &vs[i]);
}

static void sweep_row(const om_op *op, void *arg)
{
	sweep *sw = arg;
	if (!op->sig) {
		fail_msg("%s%s%s-%d has no signature", op->domain, op->domain[0] ? "." : "",
			 op->name, op->since);
		return;
	}
	assert_int_equal(op->sig->since, op->since);
	sw->rows++;
	for (const om_sig *s = op->sig; s; s = s->newer)
		sweep_sig(sw, op, s, s->since);
}

static void test_sweep(void **state)
{
	(void)state;
	sweep sw = {0};
	/* ~2,700 saves, each fsync'ed: in memory when the machine has /dev/shm */
	snprintf(sw.dir, sizeof sw.dir, "/dev/shm/om_arityXXXXXX");
	if (!mkdtemp(sw.dir))
		assert_int_equal(tu_tmpdir_make(sw.dir, sizeof sw.dir, "om_arity"), 0);
	om_op_each(sweep_row, &sw);
	printf("arity sweep: %d rows, %d cases, %d malformed models refused at load\n", sw.rows,
	       sw.cases, sw.refused);
	assert_int_equal(failures, 0);
	assert_true(sw.rows > 200);
	assert_true(sw.refused > 1000);

	/* the CLI: exit 1 and the node named, for each command */
	const char *cmds[] = {"simplify %s %s/out.onnx", "run %s --output-dir %s/out",
			      "dot %s -o %s/out.dot"};
	assert_int_equal(sw.cli_models, 3);
	for (int k = 0; k < sw.cli_models; k++)
		for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
			char args[800], out[4096], err[4096];
			snprintf(args, sizeof args, cmds[c], sw.cli_paths[k], sw.dir);
			int code = tu_run_omopt(sw.dir, args, out, sizeof out, err, sizeof err);
			if (code != 1 || !strstr(err, "node 'n0'"))
				fail_msg("omopt %s: exit %d, stderr: %s", args, code, err);
		}
	tu_tmpdir_remove(sw.dir);
}

/* ---- the model-level checks -------------------------------------------------------------- */

static om_kind load_with_ir(const char *dir, int64_t ir, om_status *st)
{
	om_model *m = om_model_new();
	m->graph = om_graph_new(m, NULL);
	m->ir_version = ir;
	om_node *n = tu_graph_node(m->graph, "Relu", "x", "y");
	(void)n;
	char path[300];
	snprintf(path, sizeof path, "%s/ir.onnx", dir);
	assert_int_equal(om_model_save(m, path, NULL, st), OM_OK);
	free_model(m);
	om_model *back = NULL;
	om_kind rc = om_model_load(path, &back, st);
	om_model_free(back);
	return rc;
}

static void test_ir_version(void **state)
{
	(void)state;
	char dir[256];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "om_arity_ir"), 0);
	om_status st = {0};
	/* ONNX Runtime 1.30 loads 0 (absent) to 13; ONNX defines up to 14 */
	const int64_t good[] = {0, 1, 3, 7, 10, 13, OM_IR_VERSION_MAX};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		memset(&st, 0, sizeof st);
		if (load_with_ir(dir, good[i], &st))
			fail_msg("IR version %lld: %s", (long long)good[i], st.msg);
	}
	const int64_t bad[] = {OM_IR_VERSION_MAX + 1, (int64_t)1 << 62, -1, INT64_MIN};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&st, 0, sizeof st);
		assert_int_equal(load_with_ir(dir, bad[i], &st), OM_ERR_INVALID_MODEL);
		assert_non_null(strstr(st.msg, "IR version"));
	}
	tu_tmpdir_remove(dir);
}

/* The messages name what is wrong, with the counts. */
static void test_messages(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 13};
	m->nopsets = 1;
	om_node *r = tu_graph_node(g, "Reshape", "x", "y");
	r->name = "r1";
	om_status st = {0};
	const om_op *op = om_op_find("", "Reshape", 13);
	assert_int_equal(om_node_check(op, r, 13, &st), OM_ERR_INVALID_MODEL);
	char buf[600];
	om_status_format(&st, buf, sizeof buf);
	assert_string_equal(buf, "InvalidModel: node 'r1' (Reshape): 1 input given, at least 2 "
				 "required");
	/* Reshape-1 took the shape as an attribute: one input is right there */
	assert_int_equal(om_node_check(om_op_find("", "Reshape", 4), r, 4, &st), OM_OK);

	om_node *l = tu_graph_node(g, "LeakyRelu", "x", "z");
	om_node_set_attr(l, "alpha", OM_ATTR_INT)->i = 3;
	assert_int_equal(om_node_check(om_op_find("", "LeakyRelu", 13), l, 13, &st),
			 OM_ERR_INVALID_MODEL);
	assert_string_equal(st.msg, "attribute 'alpha' is of type int, float expected");

	om_node *s = tu_graph_node(g, "Sum", "x,", "w");
	assert_int_equal(om_node_check(om_op_find("", "Sum", 13), s, 13, &st),
			 OM_ERR_INVALID_MODEL);
	assert_string_equal(st.msg, "input 1 has no name, the op requires it");

	/* Gemm's C is optional from opset 11 on, required before */
	om_node *gm = tu_graph_node(g, "Gemm", "a,b", "c");
	assert_int_equal(om_node_check(om_op_find("", "Gemm", 11), gm, 11, &st), OM_OK);
	assert_int_equal(om_node_check(om_op_find("", "Gemm", 9), gm, 9, &st),
			 OM_ERR_INVALID_MODEL);
	assert_string_equal(st.msg, "2 inputs given, at least 3 required");

	/* Constant needs no attribute from 12 on, 'value' before */
	om_node *k = tu_graph_node(g, "Constant", "", "k");
	assert_int_equal(om_node_check(om_op_find("", "Constant", 9), k, 9, &st),
			 OM_ERR_INVALID_MODEL);
	assert_string_equal(st.msg, "required attribute 'value' is missing");
	free_model(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_ir_version),
		cmocka_unit_test(test_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

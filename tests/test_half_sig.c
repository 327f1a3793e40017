/* test_half_sig.c — which slots admit float16 and bfloat16, as the rows' signatures say
 * (om_sig in_f16 ... out_bf16, from ONNX's type constraints by scripts/gen_signatures.py), and
 * the half conversion (passes/half_convert.c) converting or keeping nodes by them. */
#include <stdint.h>
#include <string.h>

#include "half_convert.h"
#include "registry.h"
#include "testutil.h"

static const om_sig *sig_of(const char *domain, const char *op, int64_t opset)
{
	const om_op *row = om_op_find(domain, op, opset);
	assert_non_null(row);
	const om_sig *s = om_op_sig_at(row, opset);
	assert_non_null(s);
	return s;
}

static void assert_masks(const om_sig *s, uint64_t in16, uint64_t out16, uint64_t inb,
			 uint64_t outb)
{
	assert_true(s->in_f16 == in16 && s->out_f16 == out16);
	assert_true(s->in_bf16 == inb && s->out_bf16 == outb);
}

/* Abs admits float16 from version 1 and bfloat16 from 13 (ONNX's Abs-6 and Abs-13). */
static void abs_bfloat16_from_13(void **state)
{
	(void)state;
	assert_masks(sig_of("", "Abs", 6), 1, 1, 0, 0);
	assert_masks(sig_of("", "Abs", 12), 1, 1, 0, 0);
	assert_masks(sig_of("", "Abs", 13), 1, 1, 1, 1);
	assert_masks(sig_of("ai.onnx", "Abs", 21), 1, 1, 1, 1);
}

/* Per slot: Resize-13's X and roi admit float16, scales (float) and sizes (int64) do not; a
 * variadic input sets every later slot; ArgMax's int64 output admits none. */
static void per_slot(void **state)
{
	(void)state;
	assert_masks(sig_of("", "Resize", 13), 0x3, 0x1, 0x1, 0x1);
	assert_masks(sig_of("", "Resize", 11), 0x3, 0x1, 0x0, 0x0);
	assert_masks(sig_of("", "Concat", 13), UINT64_MAX, 0x1, UINT64_MAX, 0x1);
	assert_masks(sig_of("", "ArgMax", 13), 0x1, 0x0, 0x1, 0x0);
}

/* A change of half types alone is a version of the signature: Abs-13 lists bfloat16 where
 * Abs-6 did not, with the same inputs, outputs and (no) attributes. Range admits no half type
 * before 27. */
static void half_change_alone_is_a_version(void **state)
{
	(void)state;
	const om_sig *a = sig_of("", "Abs", 12), *b = sig_of("", "Abs", 13);
	assert_ptr_not_equal(a, b);
	assert_int_equal(b->since, 13);
	assert_true(a->min_in == b->min_in && a->max_in == b->max_in && a->min_out == b->min_out &&
		    a->max_out == b->max_out && !a->attrs && !b->attrs);
	assert_masks(sig_of("", "Range", 26), 0, 0, 0, 0);
	assert_masks(sig_of("", "Range", 27), 0x7, 0x1, 0x7, 0x1);
	/* deprecated at 10 (ONNX lists no schema): Upsample goes on, admitting none */
	assert_masks(sig_of("", "Upsample", 9), 0x1, 0x1, 0, 0);
	assert_masks(sig_of("", "Upsample", 10), 0, 0, 0, 0);
	/* ONNX Runtime's LayerNormalization before ONNX's (17) admits none */
	assert_masks(sig_of("", "LayerNormalization", 16), 0, 0, 0, 0);
	assert_masks(sig_of("", "LayerNormalization", 17), 0x7, 0x1, 0x7, 0x7);
}

/* arg: the count of other domains' signatures */
static void no_half_outside_ai_onnx(const om_op *op, void *arg)
{
	for (const om_sig *s = op->sig; s; s = s->newer) {
		if (op->domain[0]) {
			assert_masks(s, 0, 0, 0, 0);
			(*(int *)arg)++;
		}
		/* no bit beyond the slots a node may have */
		if (s->max_in < 63)
			assert_true(!(s->in_f16 >> s->max_in) && !(s->in_bf16 >> s->max_in));
		if (s->max_out < 63)
			assert_true(!(s->out_f16 >> s->max_out) && !(s->out_bf16 >> s->max_out));
	}
}

/* A row of another domain (com.microsoft) admits no half type. */
static void other_domains_admit_none(void **state)
{
	(void)state;
	assert_masks(sig_of("com.microsoft", "FusedConv", 1), 0, 0, 0, 0);
	int others = 0;
	om_op_each(no_half_outside_ai_onnx, &others);
	assert_true(others >= 7);
}

/* s, l, d: float scalars; r = Range(s, l, d); y = Abs(r); z = FusedMatMul(m, u) (com.microsoft,
 * u of unknown type); w = Add(m, u). */
static om_model *model(int64_t opset)
{
	om_model *m = tu_model_ms(opset);
	om_graph *g = m->graph;
	const char *const in[] = {"s", "l", "d", "m", "u"};
	for (int i = 0; i < 5; i++) {
		om_value *v = i < 3 ? tu_typed_value(g, in[i], OM_FLOAT, 0, NULL)
				    : i == 3 ? tu_typed_value(g, in[i], OM_FLOAT, 2, (int64_t[]){2, 2})
					     : om_graph_value(g, in[i]);
		v->flags |= OM_VALUE_GRAPH_INPUT;
		tu_push_value(g, &g->inputs, &g->ninputs, v);
	}
	tu_graph_node(g, "Range", "s,l,d", "r");
	tu_graph_node(g, "Abs", "r", "y");
	tu_graph_node(g, "FusedMatMul", "m,u", "z")->domain = "com.microsoft";
	tu_graph_node(g, "Add", "m,u", "w");
	const char *const out[] = {"y", "z", "w"};
	for (int i = 0; i < 3; i++) {
		om_value *v = om_graph_value(g, out[i]);
		v->flags |= OM_VALUE_GRAPH_OUTPUT;
		tu_push_value(g, &g->outputs, &g->noutputs, v);
	}
	return m;
}

/* why[] of Range, Abs, FusedMatMul, Add after converting model(opset) to dtype. */
static void convert(int64_t opset, int32_t dtype, const uint8_t want[4])
{
	om_model *m = model(opset);
	uint8_t why[4] = {0};
	bool redo = false;
	int64_t clamped = 0;
	om_status st = {0};
	assert_int_equal(om_half_convert(m, dtype, why, &redo, &clamped, &st), OM_OK);
	assert_false(redo);
	assert_memory_equal(why, want, 4);
	/* a converted Range writes the half type, a converted Abs reads it (through a Cast after
	 * a kept Range) */
	const om_graph *g = m->graph;
	assert_true((om_graph_value(m->graph, "r")->type.elem == dtype) ==
		    (want[0] == OM_HALF_CONVERTED));
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i]->op, "Abs"))
			assert_true((g->nodes[i]->in[0]->type.elem == dtype) ==
				    (want[1] == OM_HALF_CONVERTED));
	om_model_free(m);
}

/* The conversion keeps a node whose float32 slots admit no half type at the model's opset
 * (Range before 27), converts it where they do; a row of another domain is kept for its domain
 * before its untyped input is looked at, an ai.onnx node with one for that. */
static void conversion_reads_the_signature(void **state)
{
	(void)state;
	const uint8_t at13[4] = {OM_HALF_KEEP_TYPE, OM_HALF_CONVERTED, OM_HALF_KEEP_TYPE,
				 OM_HALF_KEEP_UNTYPED};
	const uint8_t at27[4] = {OM_HALF_CONVERTED, OM_HALF_CONVERTED, OM_HALF_KEEP_TYPE,
				 OM_HALF_KEEP_UNTYPED};
	convert(13, OM_FLOAT16, at13);
	convert(13, OM_BFLOAT16, at13);
	convert(27, OM_FLOAT16, at27);
	convert(27, OM_BFLOAT16, at27);
	/* Abs-6 admits float16, not bfloat16 */
	const uint8_t at11_f16[4] = {OM_HALF_KEEP_TYPE, OM_HALF_CONVERTED, OM_HALF_KEEP_TYPE,
				     OM_HALF_KEEP_UNTYPED};
	const uint8_t at11_bf16[4] = {OM_HALF_KEEP_TYPE, OM_HALF_KEEP_TYPE, OM_HALF_KEEP_TYPE,
				      OM_HALF_KEEP_UNTYPED};
	convert(11, OM_FLOAT16, at11_f16);
	convert(11, OM_BFLOAT16, at11_bf16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abs_bfloat16_from_13),
		cmocka_unit_test(per_slot),
		cmocka_unit_test(half_change_alone_is_a_version),
		cmocka_unit_test(other_domains_admit_none),
		cmocka_unit_test(conversion_reads_the_signature),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

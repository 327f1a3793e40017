/* test_ops_detect.c — NonMaxSuppression and RoiAlign (hand computation). */
#include "nodetest.h"
#include "session.h"

/* boxes A [0, 0, 1, 1], B [0, 0.1, 1, 1.1] (IoU with A 0.9 / 1.1), C [0, 2, 1, 3] */
static const float boxes[] = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3};
static const float scores[] = {0.9f, 0.8f, 0.7f};

static void nms_case(int64_t max_out, float iou, float score, int64_t n, const int64_t *want)
{
	om_model *m;
	om_node *nd = nt_node(&m, "NonMaxSuppression", 5, 1);
	om_tensor tb = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 3, 4}, boxes);
	om_tensor ts = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 3}, scores);
	om_tensor tm = nt_tensor(OM_INT64, 1, (int64_t[]){1}, &max_out);
	om_tensor ti = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, &iou);
	om_tensor tsc = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, &score);
	const om_tensor *in[] = {&tb, &ts, &tm, &ti, score >= 0 ? &tsc : NULL};
	om_tensor out[1];
	assert_int_equal(nt_run(nd, 11, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT64);
	assert_int_equal(out[0].dims[0], n);
	assert_int_equal(out[0].dims[1], 3);
	const int64_t *y = out[0].data;
	for (int64_t i = 0; i < n; i++) {
		assert_int_equal(y[i * 3], 0), assert_int_equal(y[i * 3 + 1], 0);
		assert_int_equal(y[i * 3 + 2], want[i]);
	}
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void non_max_suppression(void **state)
{
	(void)state;
	nms_case(3, 0.5f, -1, 2, (int64_t[]){0, 2});
	nms_case(3, 0.9f, -1, 3, (int64_t[]){0, 1, 2});
	nms_case(1, 0.5f, -1, 1, (int64_t[]){0});
	nms_case(3, 0.5f, 0.75f, 1, (int64_t[]){0});
	nms_case(0, 0.5f, -1, 0, NULL);
}

static void nms_errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *nd = nt_node(&m, "NonMaxSuppression", 2, 1);
	om_tensor tb = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 3, 4}, boxes);
	om_tensor ts = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 2}, scores);
	const om_tensor *in[] = {&tb, &ts};
	om_tensor out[1];
	assert_int_equal(nt_run(nd, 11, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* ONNX Runtime's SuppressByIOU (non_max_suppression_helper.h), in float with its early returns:
 * the reference for the bucketed selection of kernels/nn/nms.c */
static bool ref_suppress(const float *a, const float *b, int center, float t)
{
	float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
	if (center) {
		ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2;
		ay1 = a[1] + a[3] / 2, bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2;
		by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
	} else {
		ax0 = a[1] >= a[3] ? a[3] : a[1], ax1 = a[1] >= a[3] ? a[1] : a[3];
		ay0 = a[0] >= a[2] ? a[2] : a[0], ay1 = a[0] >= a[2] ? a[0] : a[2];
		bx0 = b[1] >= b[3] ? b[3] : b[1], bx1 = b[1] >= b[3] ? b[1] : b[3];
		by0 = b[0] >= b[2] ? b[2] : b[0], by1 = b[0] >= b[2] ? b[0] : b[2];
	}
	const float ix0 = ax0 < bx0 ? bx0 : ax0, ix1 = bx1 < ax1 ? bx1 : ax1;
	if (ix1 <= ix0)
		return false;
	const float iy0 = ay0 < by0 ? by0 : ay0, iy1 = by1 < ay1 ? by1 : ay1;
	if (iy1 <= iy0)
		return false;
	const float inter = (ix1 - ix0) * (iy1 - iy0);
	if (inter <= 0)
		return false;
	const float aa = (ax1 - ax0) * (ay1 - ay0), ab = (bx1 - bx0) * (by1 - by0);
	const float uni = aa + ab - inter;
	if (aa <= 0 || ab <= 0 || uni <= 0)
		return false;
	return inter / uni > t;
}

/* the plain algorithm: candidates above the threshold by descending score (lower index first),
 * each checked against every kept box; returns the count, triples in out */
static int64_t ref_nms(const float *box, const float *sc, int64_t B, int64_t C, int64_t S,
		       int center, int64_t max_out, float t, float st, int64_t *out)
{
	int64_t n = 0;
	int64_t *order = malloc(sizeof(int64_t) * (size_t)S);
	int64_t *kept = malloc(sizeof(int64_t) * (size_t)S);
	for (int64_t b = 0; b < B; b++)
		for (int64_t k = 0; k < C; k++) {
			const float *s = sc + (b * C + k) * S;
			int64_t nc = 0, nk = 0;
			for (int64_t i = 0; i < S; i++)
				if (s[i] > st)
					order[nc++] = i;
			for (int64_t i = 1; i < nc; i++) /* insertion sort: stable on ties */
				for (int64_t j = i; j > 0 && s[order[j]] > s[order[j - 1]]; j--) {
					const int64_t x = order[j];
					order[j] = order[j - 1], order[j - 1] = x;
				}
			for (int64_t i = 0; i < nc && nk < max_out; i++) {
				bool keep = true;
				for (int64_t q = 0; q < nk && keep; q++)
					keep = !ref_suppress(box + (b * S + kept[q]) * 4,
							     box + (b * S + order[i]) * 4, center,
							     t);
				if (!keep)
					continue;
				kept[nk++] = order[i];
				out[n * 3] = b, out[n * 3 + 1] = k, out[n * 3 + 2] = order[i], n++;
			}
		}
	free(order), free(kept);
	return n;
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005u + 1442695040888963407u;
	return *x >> 33;
}

/* random batched_nms layouts (classes offset apart), clustered boxes, NaN and infinite edges,
 * flipped and empty boxes, ties; both box formats; several thresholds: the same selection as
 * the plain algorithm */
static void nms_random(void **state)
{
	(void)state;
	uint64_t seed = 7;
	const int64_t B = 2, C = 2, S = 1500;
	float *box = malloc(sizeof(float) * B * S * 4), *sc = malloc(sizeof(float) * B * C * S);
	int64_t *want = malloc(sizeof(int64_t) * B * C * S * 3);
	for (int trial = 0; trial < 12; trial++) {
		const int center = trial % 2;
		const float t = (float[]){0.5f, 0.f, 0.3f, 0.7f, 1.f, 0.55f}[trial % 6];
		for (int64_t i = 0; i < B * S; i++) {
			float *q = box + i * 4;
			const float off = (float)(lcg(&seed) % 40) * 400.f * (trial % 3 != 0);
			for (int j = 0; j < 4; j++)
				q[j] = off + (float)(lcg(&seed) % 3000) / 10.f;
			if (center)
				q[2] = (float)(lcg(&seed) % 900) / 10.f,
				q[3] = (float)(lcg(&seed) % 900) / 10.f;
			if (lcg(&seed) % 97 == 0)
				q[lcg(&seed) % 4] = lcg(&seed) % 2 ? NAN : INFINITY;
			if (lcg(&seed) % 89 == 0)
				q[2] = q[0];
		}
		for (int64_t i = 0; i < B * C * S; i++)
			sc[i] = (float)(lcg(&seed) % (trial < 6 ? 50 : 100000)) / 100.f;
		const int64_t max_out = trial % 4 == 3 ? 37 : S;
		const float st = trial % 3 == 1 ? 0.2f : -1.f;
		const int64_t n = ref_nms(box, sc, B, C, S, center, max_out, t, st, want);
		om_model *m;
		om_node *nd = nt_node(&m, "NonMaxSuppression", 5, 1);
		nt_int(nd, "center_point_box", center);
		om_tensor tb = nt_tensor(OM_FLOAT, 3, (int64_t[]){B, S, 4}, box);
		om_tensor ts = nt_tensor(OM_FLOAT, 3, (int64_t[]){B, C, S}, sc);
		om_tensor tm = nt_tensor(OM_INT64, 0, NULL, &max_out);
		om_tensor ti = nt_tensor(OM_FLOAT, 0, NULL, &t);
		om_tensor tsc = nt_tensor(OM_FLOAT, 0, NULL, &st);
		const om_tensor *in[] = {&tb, &ts, &tm, &ti, &tsc};
		om_tensor out[1];
		assert_int_equal(nt_run(nd, 11, in, out), OM_OK);
		assert_int_equal(out[0].dims[0], n);
		assert_true(n > 10);
		assert_memory_equal(out[0].data, want, sizeof(int64_t) * 3 * (size_t)n);
		om_tensor_free(&out[0]);
		om_model_free(m);
	}
	free(box), free(sc), free(want);
}

/* In a session the selection made by the run-time inference is kept for the kernel (the step's
 * state, with a copy of the inputs it was made from): runs on scores A, A (inputs under 4 KiB:
 * the inference cache answers, the kernel selects itself), B, A each give the plain
 * algorithm's selection */
static void nms_session_runs(void **state)
{
	(void)state;
	enum { S = 100 };
	om_model *m = tu_model(11);
	om_graph *g = m->graph;
	const char *names[] = {"boxes", "scores"};
	const int64_t dims[2][3] = {{1, S, 4}, {1, 1, S}};
	for (int i = 0; i < 2; i++) {
		om_value *v = om_graph_value(g, names[i]);
		om_tensor like = {.dtype = OM_FLOAT, .rank = 3};
		memcpy(like.dims, dims[i], sizeof dims[i]);
		om_type_from_tensor(m, &v->type, &like);
		v->flags |= OM_VALUE_GRAPH_INPUT;
		tu_push_value(g, &g->inputs, &g->ninputs, v);
	}
	om_value *mo = om_graph_value(g, "max"), *io = om_graph_value(g, "iou");
	mo->init = om_model_tensor(m, OM_INT64, 0, NULL);
	*(int64_t *)mo->init->data = S;
	io->init = om_model_tensor(m, OM_FLOAT, 0, NULL);
	*(float *)io->init->data = 0.3f;
	om_value *inits[] = {mo, io};
	for (int i = 0; i < 2; i++) {
		inits[i]->flags |= OM_VALUE_INITIALIZER;
		om_type_from_tensor(m, &inits[i]->type, inits[i]->init);
		tu_push_value(g, &g->inits, &g->ninits, inits[i]);
	}
	tu_graph_node(g, "NonMaxSuppression", "boxes,scores,max,iou", "y");
	om_value *y = om_graph_value(g, "y");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_session *s = tu_session_create(m);
	static float box[S * 4], sc[4][S];
	static int64_t want[S * 3];
	uint64_t seed = 3;
	for (int i = 0; i < S * 4; i++)
		box[i] = (float)(lcg(&seed) % 1000) / 10.f;
	for (int k = 1; k < 3; k++)
		for (int i = 0; i < S; i++)
			sc[k][i] = (float)(lcg(&seed) % 1000) / 1000.f;
	memcpy(sc[0], sc[1], sizeof sc[0]);
	memcpy(sc[3], sc[1], sizeof sc[0]);
	for (int r = 0; r < 4; r++) {
		om_tensor in[2] = {nt_tensor(OM_FLOAT, 3, dims[0], box),
				   nt_tensor(OM_FLOAT, 3, dims[1], sc[r])}, out;
		om_status st = {0};
		assert_int_equal(om_session_run(s, in, 2, &out, 1, &st), OM_OK);
		const int64_t n = ref_nms(box, sc[r], 1, 1, S, 0, S, 0.3f, -1.f, want);
		assert_true(n > 10);
		assert_int_equal(out.dims[0], n);
		assert_memory_equal(out.data, want, sizeof(int64_t) * 3 * (size_t)n);
		om_tensor_free(&out);
	}
	om_session_free(s);
	om_model_free(m);
}

/* X = [[1, 2], [3, 4]], roi [0, 0, 2, 2] (half_pixel, opset 16's default), one bin of one
 * sample: the centre 2.5 */
static void roi_align(void **state)
{
	(void)state;
	om_model *m;
	om_node *nd = nt_node(&m, "RoiAlign", 3, 1);
	nt_int(nd, "sampling_ratio", 1);
	om_tensor x = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, (float[]){1, 2, 3, 4});
	om_tensor r = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 4}, (float[]){0, 0, 2, 2});
	int64_t b[] = {0};
	om_tensor tb = nt_tensor(OM_INT64, 1, (int64_t[]){1}, b);
	const om_tensor *in[] = {&x, &r, &tb};
	om_tensor out[1];
	assert_int_equal(nt_run(nd, 16, in, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 1, 1}, (float[]){2.5f}, 1e-6);
	om_tensor_free(&out[0]);
	/* before opset 16 the default is output_half_pixel: the bin's centre is (1, 1), X's 4 */
	assert_int_equal(nt_run(nd, 10, in, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 1, 1}, (float[]){4}, 1e-6);
	om_tensor_free(&out[0]);
	nt_str(nd, "coordinate_transformation_mode", "half_pixel");
	assert_int_equal(nt_run(nd, 10, in, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 1, 1}, (float[]){2.5f}, 1e-6);
	om_tensor_free(&out[0]);
	nt_str(nd, "coordinate_transformation_mode", "output_half_pixel");
	assert_int_equal(nt_run(nd, 16, in, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 1, 1}, (float[]){4}, 1e-6);
	om_tensor_free(&out[0]);
	b[0] = 1;
	assert_int_equal(nt_run(nd, 16, in, out), OM_ERR_INVALID_INPUT);
	/* an image of width 0 (fuzz_run's finding: a sample at x in [-1, 0], which clamps to
	 * column 0, read column -1 of X): no sample is inside, the average 0, and max 0 too */
	b[0] = 0;
	om_tensor r0 = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 4}, (float[]){-1, 0, -0.5f, 2});
	for (int mode = 0; mode < 2; mode++) {
		nt_str(nd, "mode", mode ? "max" : "avg");
		om_tensor e = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 0}, (float[]){0});
		const om_tensor *ein[] = {&e, &r0, &tb};
		assert_int_equal(nt_run(nd, 16, ein, out), OM_OK);
		nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 1, 1}, (float[]){0}, 0);
		om_tensor_free(&out[0]);
	}
	/* a box of 2e29 pixels with the adaptive ratio: 2^20 samples an axis 1.9e23 apart, none
	 * on the image (fuzz_run's finding: they were all visited, hours a run): 0 both ways */
	nt_int(nd, "sampling_ratio", 0);
	om_tensor rh = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 4}, (float[]){-1e29f, -1e29f, 1e29f, 1e29f});
	for (int mode = 0; mode < 2; mode++) {
		nt_str(nd, "mode", mode ? "max" : "avg");
		const om_tensor *hin[] = {&x, &rh, &tb};
		assert_int_equal(nt_run(nd, 16, hin, out), OM_OK);
		nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 1, 1}, (float[]){0}, 0);
		om_tensor_free(&out[0]);
	}
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(non_max_suppression),
		cmocka_unit_test(nms_errors),
		cmocka_unit_test(nms_random),
		cmocka_unit_test(nms_session_runs),
		cmocka_unit_test(roi_align),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

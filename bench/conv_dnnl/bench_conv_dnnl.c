/* bench_conv_dnnl.c — one float32 convolution layer through oneDNN (libdnnl, Debian's 2.6),
 * weights reordered once to the primitive's layout, timed two ways: activations in NCHW at
 * both ends (what a single Conv step sees today), and in the primitive's preferred (blocked)
 * layout (what a planner keeping activations blocked between convolutions would see; the
 * reorders at the edges not counted), and blocked with the reorders from and to NCHW counted
 * (what a single Conv step would pay for taking the blocked kernel alone).
 * Prints {"nchw_ms": median, "blocked_ms": median, "edges_ms": median}.
 * Threads: OMP_NUM_THREADS (the library's OpenMP pool).
 * usage: bench_conv_dnnl N C H W M KH KW STRIDE PAD GROUP RUNS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dnnl.h>

#define CHECK(x)                                                                           \
	do {                                                                               \
		dnnl_status_t s_ = (x);                                                    \
		if (s_ != dnnl_success) {                                                  \
			fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, s_); \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static dnnl_memory_t mem(dnnl_engine_t eng, const dnnl_memory_desc_t *md)
{
	dnnl_memory_t m;
	CHECK(dnnl_memory_create(&m, md, eng, DNNL_MEMORY_ALLOCATE));
	void *p;
	CHECK(dnnl_memory_get_data_handle(m, &p));
	memset(p, 0, dnnl_memory_desc_get_size(md));
	return m;
}

/* median ms of `runs` executions; blocked: src/dst in the primitive's own layout (2: with the
 * reorders from and to NCHW in each execution) */
static double run(dnnl_engine_t eng, dnnl_stream_t st, const int64_t *a, int blocked, int runs)
{
	const int64_t N = a[0], C = a[1], H = a[2], W = a[3], M = a[4], KH = a[5], KW = a[6];
	const int64_t S = a[7], P = a[8], G = a[9];
	const int64_t OH = (H + 2 * P - KH) / S + 1, OW = (W + 2 * P - KW) / S + 1;
	dnnl_memory_desc_t src, dst, wei, bias, wany;
	const dnnl_dims_t sd = {N, C, H, W}, dd = {N, M, OH, OW}, bd = {M};
	const dnnl_format_tag_t act = blocked ? dnnl_format_tag_any : dnnl_nchw;
	CHECK(dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, act));
	CHECK(dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, act));
	CHECK(dnnl_memory_desc_init_by_tag(&bias, 1, bd, dnnl_f32, dnnl_x));
	if (G > 1) {
		const dnnl_dims_t wd = {G, M / G, C / G, KH, KW};
		CHECK(dnnl_memory_desc_init_by_tag(&wei, 5, wd, dnnl_f32, dnnl_goihw));
		CHECK(dnnl_memory_desc_init_by_tag(&wany, 5, wd, dnnl_f32, dnnl_format_tag_any));
	} else {
		const dnnl_dims_t wd = {M, C, KH, KW};
		CHECK(dnnl_memory_desc_init_by_tag(&wei, 4, wd, dnnl_f32, dnnl_oihw));
		CHECK(dnnl_memory_desc_init_by_tag(&wany, 4, wd, dnnl_f32, dnnl_format_tag_any));
	}
	const dnnl_dims_t strides = {S, S}, pad = {P, P};
	dnnl_convolution_desc_t cd;
	CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
						 dnnl_convolution_direct, &src, &wany, &bias, &dst,
						 strides, pad, pad));
	dnnl_primitive_desc_t pd;
	CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
	const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
	const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
	/* the weights: reordered once, as a session would at create time */
	dnnl_memory_t w_user = mem(eng, &wei), w = mem(eng, wmd);
	dnnl_primitive_desc_t rpd;
	CHECK(dnnl_reorder_primitive_desc_create(&rpd, &wei, eng, wmd, eng, NULL));
	dnnl_primitive_t reorder;
	CHECK(dnnl_primitive_create(&reorder, rpd));
	dnnl_exec_arg_t rargs[] = {{DNNL_ARG_FROM, w_user}, {DNNL_ARG_TO, w}};
	CHECK(dnnl_primitive_execute(reorder, st, 2, rargs));
	CHECK(dnnl_stream_wait(st));
	dnnl_memory_t x = mem(eng, smd), y = mem(eng, dmd), b = mem(eng, &bias);
	dnnl_primitive_t conv;
	CHECK(dnnl_primitive_create(&conv, pd));
	dnnl_memory_desc_t xs, ys;
	CHECK(dnnl_memory_desc_init_by_tag(&xs, 4, sd, dnnl_f32, dnnl_nchw));
	CHECK(dnnl_memory_desc_init_by_tag(&ys, 4, dd, dnnl_f32, dnnl_nchw));
	dnnl_memory_t xn = mem(eng, &xs), yn = mem(eng, &ys);
	dnnl_primitive_desc_t ipd, opd;
	dnnl_primitive_t rin, rout;
	CHECK(dnnl_reorder_primitive_desc_create(&ipd, &xs, eng, smd, eng, NULL));
	CHECK(dnnl_reorder_primitive_desc_create(&opd, dmd, eng, &ys, eng, NULL));
	CHECK(dnnl_primitive_create(&rin, ipd));
	CHECK(dnnl_primitive_create(&rout, opd));
	dnnl_exec_arg_t iargs[] = {{DNNL_ARG_FROM, xn}, {DNNL_ARG_TO, x}};
	dnnl_exec_arg_t oargs[] = {{DNNL_ARG_FROM, y}, {DNNL_ARG_TO, yn}};
	dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b},
				  {DNNL_ARG_DST, y}};
	double *t = malloc(sizeof(double) * (size_t)runs);
	for (int i = -1; i < runs; i++) {
		const double t0 = now_ms();
		if (blocked == 2)
			CHECK(dnnl_primitive_execute(rin, st, 2, iargs));
		CHECK(dnnl_primitive_execute(conv, st, 4, args));
		if (blocked == 2)
			CHECK(dnnl_primitive_execute(rout, st, 2, oargs));
		CHECK(dnnl_stream_wait(st));
		if (i >= 0)
			t[i] = now_ms() - t0;
	}
	qsort(t, (size_t)runs, sizeof *t, cmp);
	const double med = t[runs / 2];
	free(t);
	dnnl_primitive_destroy(conv), dnnl_primitive_destroy(reorder);
	dnnl_primitive_destroy(rin), dnnl_primitive_destroy(rout);
	dnnl_primitive_desc_destroy(ipd), dnnl_primitive_desc_destroy(opd);
	dnnl_memory_destroy(xn), dnnl_memory_destroy(yn);
	dnnl_primitive_desc_destroy(pd), dnnl_primitive_desc_destroy(rpd);
	dnnl_memory_destroy(x), dnnl_memory_destroy(y), dnnl_memory_destroy(b);
	dnnl_memory_destroy(w), dnnl_memory_destroy(w_user);
	return med;
}

int main(int argc, char **argv)
{
	if (argc != 12) {
		fprintf(stderr, "usage: %s N C H W M KH KW STRIDE PAD GROUP RUNS\n", argv[0]);
		return 2;
	}
	int64_t a[10];
	for (int i = 0; i < 10; i++)
		a[i] = atoll(argv[i + 1]);
	const int runs = atoi(argv[11]) > 0 ? atoi(argv[11]) : 1;
	dnnl_engine_t eng;
	dnnl_stream_t st;
	CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
	CHECK(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
	const double plain = run(eng, st, a, 0, runs), blocked = run(eng, st, a, 1, runs);
	const double edges = run(eng, st, a, 2, runs);
	printf("{\"nchw_ms\": %.4f, \"blocked_ms\": %.4f, \"edges_ms\": %.4f}\n", plain,
	       blocked, edges);
	dnnl_stream_destroy(st);
	dnnl_engine_destroy(eng);
	return 0;
}

/* gemm_int.c — om_igemm_run: the 8-bit integer product over oneDNN's u8s8s32 GEMM (a signed A
 * shifted to unsigned, an unsigned B to signed, their zero points moved by 128; zero points per
 * row or column as rank-1 corrections) when the CPU has VNNI, else int16 pairs on AVX2
 * (igemm_pairs.c), else a loop of int32 lanes. */
#include <stdlib.h>
#include <string.h>

#ifdef OM_HAVE_DNNL
#include <dnnl.h>
#include <omp.h>

#include "dnnl_prims.h"
#endif

#include "clones.h"
#include "gemm_int.h"
#include "igemm_pairs.h"
#include "parallel.h"


/* ---- the int32 loop: operands less their zero points as int32, rows over threads ---------- */

typedef struct iloop {
	int64_t N, K;
	const int32_t *a, *b; /* M x K, K x N */
	int32_t *C;
	int64_t ldc;
} iloop;

/* rows [lo, hi): sums in uint32 (wrapping, no overflow UB); lanes are columns */
OM_CLONES static void iloop_rows(void *arg, int64_t lo, int64_t hi)
{
	const iloop *l = arg;
	const int64_t N = l->N, K = l->K;
	for (int64_t i = lo; i < hi; i++) {
		uint32_t *c = (uint32_t *)(l->C + i * l->ldc);
		for (int64_t j = 0; j < N; j++)
			c[j] = 0;
		for (int64_t k = 0; k < K; k++) {
			const uint32_t a = (uint32_t)l->a[i * K + k];
			const uint32_t *b = (const uint32_t *)(l->b + k * N);
			for (int64_t j = 0; j < N; j++)
				c[j] += a * b[j];
		}
	}
}

static bool igemm_loop(const om_igemm *g, int threads)
{
	const int64_t M = g->M, N = g->N, K = g->K;
	int32_t *a = malloc(sizeof(int32_t) * (size_t)(M * K + 1));
	int32_t *b = malloc(sizeof(int32_t) * (size_t)(K * N + 1));
	if (!a || !b) {
		free(a), free(b);
		return false;
	}
	for (int64_t i = 0; i < M; i++)
		for (int64_t k = 0; k < K; k++)
			a[i * K + k] = om_i8_at(g->A, g->a_signed, g->ta, g->lda, i, k) -
				       om_izp_at(g->za, g->nza, i);
	for (int64_t k = 0; k < K; k++)
		for (int64_t j = 0; j < N; j++)
			b[k * N + j] = om_i8_at(g->B, g->b_signed, g->tb, g->ldb, k, j) -
				       om_izp_at(g->zb, g->nzb, j);
	iloop l = {.N = N, .K = K, .a = a, .b = b, .C = g->C, .ldc = g->ldc};
	const int64_t grain = N * K > 0 ? 1 + (int64_t)(1 << 18) / (N * K) : M;
	om_par_for(threads, M, grain, iloop_rows, &l);
	free(a), free(b);
	return true;
}

/* ---- oneDNN ------------------------------------------------------------------------------ */

#ifdef OM_HAVE_DNNL
/* Below this many multiply-adds a product runs on one thread (gemm.c's DNNL_1T_MNK) */
#define IDNNL_1T_MNK 3e6

/* The sums stay below 2^31 without wrapping: |a - ao| and |b - bo| are at most 255 */
enum { IDNNL_MAX_K = 33025 };

bool om_dnnl_int8_exact(void)
{
	const unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
	const unsigned avx512 = (unsigned)dnnl_cpu_isa_avx512_core_vnni;
	const unsigned avx2 = (unsigned)dnnl_cpu_isa_avx2_vnni;
	return (isa & avx512) == avx512 || (isa & avx2) == avx2;
}

static bool idnnl_takes(const om_igemm *g)
{
	return g->K <= IDNNL_MAX_K && om_dnnl_int8_exact();
}

/* the operands as oneDNN reads them: A uint8, B int8; copies (bytes xor 0x80) of the other
 * signedness, their zero points moved by 128: a - za = (a ^ 0x80) - (za + 128) for int8 a */
typedef struct ipre {
	const uint8_t *A;
	const int8_t *B;
	int64_t lda, ldb;
	bool ta, tb;
	int32_t ashift, bshift; /* added to every A / B zero point */
	void *abuf, *bbuf;
} ipre;

static void *flip_copy(const void *src, bool t, int64_t ld, int64_t rows, int64_t cols)
{
	uint8_t *d = malloc((size_t)(rows * cols + 1));
	if (d)
		for (int64_t i = 0; i < rows; i++)
			for (int64_t j = 0; j < cols; j++)
				d[i * cols + j] = (uint8_t)(om_i8_at(src, false, t, ld, i, j) ^ 0x80);
	return d;
}

static bool ipre_make(const om_igemm *g, ipre *p)
{
	memset(p, 0, sizeof *p);
	p->A = g->A, p->B = g->B, p->lda = g->lda, p->ldb = g->ldb, p->ta = g->ta, p->tb = g->tb;
	if (g->a_signed) {
		if (!(p->A = p->abuf = flip_copy(g->A, g->ta, g->lda, g->M, g->K)))
			return false;
		p->lda = g->K, p->ta = false, p->ashift = 128;
	}
	if (!g->b_signed) {
		if (!(p->B = p->bbuf = flip_copy(g->B, g->tb, g->ldb, g->K, g->N)))
			return false;
		p->ldb = g->N, p->tb = false, p->bshift = -128;
	}
	return true;
}

/* C -= y_j RA_i + x_i CB_j - K x_i y_j, where x, y are the zero points less the offsets
 * oneDNN applied (ao, bo) and RA, CB the row sums of A - ao and column sums of B - bo */
static bool idnnl_correct(const om_igemm *g, const ipre *p, int32_t ao, int32_t bo)
{
	const int64_t M = g->M, N = g->N, K = g->K;
	const bool rows = g->za && g->nza != 1, cols = g->zb && g->nzb != 1;
	if (!rows && !cols)
		return true;
	uint32_t *ra = malloc(sizeof(uint32_t) * (size_t)(M + N + 2)), *cb = ra + M + 1;
	if (!ra)
		return false;
	for (int64_t i = 0; i < M && cols; i++) {
		uint32_t s = 0;
		for (int64_t k = 0; k < K; k++)
			s += (uint32_t)(om_i8_at(p->A, false, p->ta, p->lda, i, k) - ao);
		ra[i] = s;
	}
	for (int64_t j = 0; j < N && rows; j++) {
		uint32_t s = 0;
		for (int64_t k = 0; k < K; k++)
			s += (uint32_t)(om_i8_at(p->B, true, p->tb, p->ldb, k, j) - bo);
		cb[j] = s;
	}
	for (int64_t i = 0; i < M; i++) {
		const uint32_t x = rows ? (uint32_t)(g->za[i] + p->ashift - ao) : 0;
		uint32_t *c = (uint32_t *)(g->C + i * g->ldc);
		for (int64_t j = 0; j < N; j++) {
			const uint32_t y = cols ? (uint32_t)(g->zb[j] + p->bshift - bo) : 0;
			c[j] -= (cols ? y * ra[i] : 0) + (rows ? x * cb[j] : 0) -
				(uint32_t)K * x * y;
		}
	}
	free(ra);
	return true;
}

/* Multiply-adds a piece of a split product at least (gemm.c's SPLIT_MNK) */
#define IDNNL_SPLIT_MNK 5e5

/* pieces a product of mnk multiply-adds over `extent` rows (or columns) is cut into at
 * `threads`: 1 below IDNNL_1T_MNK, else up to one a thread, each of IDNNL_SPLIT_MNK at least */
static int64_t isplit_pieces(double mnk, int64_t extent, int threads)
{
	/* a held pool (parallel.h) runs one piece: the pieces one after another were slower
	 * (mlp_dynq's 64-row products on AMX in two 32-row calls) */
	if (threads <= 1 || mnk < IDNNL_1T_MNK || om_par_held(threads))
		return 1;
	int64_t n = (int64_t)(mnk / IDNNL_SPLIT_MNK);
	n = n < threads ? n : threads;
	return n < extent ? n : extent;
}

/* a u8s8s32 product cut into rows of C (columns when it has more), pieces of `step` */
typedef struct isplit {
	const om_igemm *g;
	const ipre *p;
	int32_t ao, bo;
	bool rows;
	int64_t step, extent;
	bool failed; /* a piece oneDNN refused (it checks only its arguments: all or none) */
} isplit;

/* pieces [lo, hi): one dnnl_gemm_u8s8s32 each, on this thread (om_par_for's pieces run at an
 * OpenMP count of 1: no OpenMP team) */
static void isplit_piece(void *arg, int64_t lo, int64_t hi)
{
	isplit *s = arg;
	const om_igemm *g = s->g;
	const ipre *p = s->p;
	const int32_t co = 0;
	for (int64_t k = lo; k < hi; k++) {
		const int64_t a = k * s->step, e = s->extent - a < s->step ? s->extent - a : s->step;
		const int64_t m = s->rows ? e : g->M, n = s->rows ? g->N : e;
		const uint8_t *A = s->rows ? p->A + (p->ta ? a : a * p->lda) : p->A;
		const int8_t *B = s->rows ? p->B : p->B + (p->tb ? a * p->ldb : a);
		int32_t *C = g->C + (s->rows ? a * g->ldc : a);
		if (dnnl_gemm_u8s8s32(p->ta ? 'T' : 'N', p->tb ? 'T' : 'N', 'F', m, n, g->K, 1.0f, A,
				      p->lda, (uint8_t)s->ao, B, p->ldb, (int8_t)s->bo, 0.0f, C,
				      g->ldc, &co) != dnnl_success)
			__atomic_store_n(&s->failed, true, __ATOMIC_RELAXED);
	}
}

/* At more than one thread a product of IDNNL_1T_MNK multiply-adds is cut over omopt's pool
 * (om_par_for), each piece one single-threaded oneDNN call: no OpenMP team, whose idle
 * workers spin after each region (libgomp's default), holding up a loaded machine */
static bool igemm_dnnl(const om_igemm *g, int threads)
{
	ipre p;
	if (!ipre_make(g, &p)) {
		free(p.abuf), free(p.bbuf);
		return false;
	}
	/* scalar zero points go to oneDNN, per-row/column ones to idnnl_correct */
	const int32_t ao = g->za && g->nza == 1 ? g->za[0] + p.ashift : (g->za ? 0 : p.ashift);
	const int32_t bo = g->zb && g->nzb == 1 ? g->zb[0] + p.bshift : (g->zb ? 0 : p.bshift);
	const double mnk = (double)g->M * (double)g->N * (double)g->K;
	const bool rows = g->M >= g->N;
	const int64_t extent = rows ? g->M : g->N;
	const int64_t pieces = isplit_pieces(mnk, extent, threads);
	const int64_t step = (extent + pieces - 1) / pieces;
	isplit s = {g, &p, ao, bo, rows, step, extent, false};
	const int saved = om_par_threads_set(1);
	om_par_for(threads, (extent + step - 1) / step, 1, isplit_piece, &s);
	om_par_threads_restore(saved);
	const bool ok = !s.failed && idnnl_correct(g, &p, ao, bo);
	free(p.abuf), free(p.bbuf);
	return ok;
}
#endif

const char *om_igemm_path(const om_igemm *g)
{
#ifdef OM_HAVE_DNNL
	if (idnnl_takes(g))
		return "dnnl-u8s8s32";
#endif
	(void)g;
	return om_ipairs_ok() ? "int16-pairs" : "int32-loop";
}

/* g's product as int16 pairs, B packed for this call */
static bool igemm_pairs(const om_igemm *g, int threads)
{
	om_ipairs_b pb;
	const bool ok = om_ipairs_pack(g, &pb, threads) && om_ipairs_run(g, &pb, threads);
	om_ipairs_free(&pb);
	return ok;
}

/* g's product into all of g->C (its epilogue aside) */
static bool igemm_whole(const om_igemm *g, int threads)
{
	if (g->K <= 0) {
		for (int64_t i = 0; i < g->M; i++)
			memset(g->C + i * g->ldc, 0, sizeof(int32_t) * (size_t)g->N);
		return true;
	}
#ifdef OM_HAVE_DNNL
	if (idnnl_takes(g) && igemm_dnnl(g, threads))
		return true;
#endif
	if (om_ipairs_ok() && igemm_pairs(g, threads))
		return true;
	return igemm_loop(g, threads);
}

bool om_igemm_run(const om_igemm *g, int threads)
{
	if (g->M <= 0 || g->N <= 0)
		return true;
#ifdef OM_HAVE_DNNL
	const bool dnnl = idnnl_takes(g);
#else
	const bool dnnl = false;
#endif
	if (g->epi && g->K > 0 && !dnnl && om_ipairs_ok() && igemm_pairs(g, threads))
		return true; /* the pieces went to the epilogue */
	om_igemm w = *g;
	w.epi = NULL;
	if (!igemm_whole(&w, threads))
		return false;
	if (g->epi)
		g->epi->fn(g->epi->arg, g->C, g->ldc, 0, g->M, 0, g->N);
	return true;
}

/* ---- a constant B packed once: for oneDNN's int8 matmul primitive (VNNI), else as the
 * pairs' int16 panels (igemm_pairs.h) ---------------------------------------------------------- */

struct om_igemm_pk {
	int64_t K, N;
	om_ipairs_b pairs; /* B as int16 pairs (data NULL: oneDNN's packed B below) */
#ifdef OM_HAVE_DNNL
	dnnl_engine_t eng;
	dnnl_stream_t st;
	dnnl_memory_desc_t wmd; /* the packed layout */
	dnnl_memory_t w;
	void *wbuf;
	om_dnnl_prims prims; /* IPK_PRIMS of them */
	bool refused; /* oneDNN refused a primitive: om_igemm_run from then on (no retry a run) */
#endif
};

static om_igemm_pk *pairs_pack(const int8_t *B, int64_t K, int64_t N, int64_t ldb, bool tb,
			       int threads)
{
	if (!om_ipairs_ok())
		return NULL;
	om_igemm_pk *p = calloc(1, sizeof *p);
	const om_igemm g = {.K = K, .N = N, .B = B, .ldb = ldb, .tb = tb, .b_signed = true};
	if (p && !om_ipairs_pack(&g, &p->pairs, threads)) {
		free(p);
		return NULL;
	}
	if (p)
		p->K = K, p->N = N;
	return p;
}

/* g's product over p's pairs: B's zero point must be none or 0 (the packing's) */
static bool pairs_pk_run(const om_igemm_pk *p, const om_igemm *g, int threads)
{
	if (g->K != p->K || g->N != p->N || g->M < 1 ||
	    (g->zb && (g->nzb != 1 || g->zb[0] != 0)))
		return false;
	return om_ipairs_run(g, &p->pairs, threads);
}

#ifndef OM_HAVE_DNNL
bool om_dnnl_int8_exact(void)
{
	return false;
}

om_igemm_pk *om_igemm_pack(const int8_t *B, int64_t K, int64_t N, int64_t ldb, bool tb,
			   int threads)
{
	return K < 1 || N < 1 ? NULL : pairs_pack(B, K, N, ldb, tb, threads);
}

void om_igemm_pk_free(om_igemm_pk *p)
{
	if (p)
		om_ipairs_free(&p->pairs);
	free(p);
}

bool om_igemm_pk_run(om_igemm_pk *p, const om_igemm *g, int threads)
{
	return p && pairs_pk_run(p, g, threads);
}
#else

/* primitives kept per packed B: one per shape of A (rows, strides, signedness, threads) */
enum { IPK_PRIMS = 4, IPK_KEY = 6 }; /* the key: M, ta, lda, ldc, a_signed, threads */
_Static_assert((int)IPK_PRIMS <= (int)OM_DNNL_PRIMS && (int)IPK_KEY <= (int)OM_DNNL_PKEY,
	       "om_dnnl_prims holds them");

void om_igemm_pk_free(om_igemm_pk *p)
{
	if (!p)
		return;
	om_ipairs_free(&p->pairs);
	om_dnnl_prims_release(&p->prims);
	if (p->w)
		dnnl_memory_destroy(p->w);
	free(p->wbuf);
	if (p->st)
		dnnl_stream_destroy(p->st);
	if (p->eng)
		dnnl_engine_destroy(p->eng);
	free(p);
}

static bool ipk_md(dnnl_memory_desc_t *md, dnnl_data_type_t dt, int64_t rows, int64_t cols,
		   int64_t rs, int64_t cs)
{
	const dnnl_dims_t d = {rows, cols}, s = {rs, cs};
	return dnnl_memory_desc_init_by_strides(md, 2, d, dt, s) == dnnl_success;
}

/* a matmul descriptor: M rows of A (u8 or s8, ta, lda) times the packed B into s32 C (ldc) */
static dnnl_status_t ipk_pd(const om_igemm_pk *p, dnnl_primitive_desc_t *pd, const int64_t *key,
			    const_dnnl_primitive_attr_t attr, dnnl_memory_desc_t *amd,
			    dnnl_memory_desc_t *cmd)
{
	const int64_t M = key[0], K = p->K, N = p->N;
	const dnnl_data_type_t adt = key[4] ? dnnl_s8 : dnnl_u8;
	dnnl_memory_desc_t wany;
	const dnnl_dims_t wd = {K, N};
	dnnl_matmul_desc_t d;
	if (!(key[1] ? ipk_md(amd, adt, M, K, 1, key[2]) : ipk_md(amd, adt, M, K, key[2], 1)) ||
	    !ipk_md(cmd, dnnl_s32, M, N, key[3], 1) ||
	    dnnl_memory_desc_init_by_tag(&wany, 2, wd, dnnl_s8, dnnl_format_tag_any) ||
	    dnnl_matmul_desc_init(&d, amd, &wany, NULL, cmd))
		return dnnl_invalid_arguments;
	return dnnl_primitive_desc_create(pd, &d, attr, p->eng, NULL);
}

/* the attributes every primitive has: a runtime zero point of A, a scratchpad of its own */
static dnnl_primitive_attr_t ipk_attr(void)
{
	dnnl_primitive_attr_t attr = NULL;
	const int32_t rt = DNNL_RUNTIME_S32_VAL;
	if (dnnl_primitive_attr_create(&attr))
		return NULL;
	if (dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) ||
	    dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &rt)) {
		dnnl_primitive_attr_destroy(attr);
		return NULL;
	}
	return attr;
}

om_igemm_pk *om_igemm_pack(const int8_t *B, int64_t K, int64_t N, int64_t ldb, bool tb,
			   int threads)
{
	if (K < 1 || N < 1)
		return NULL;
	if (!om_dnnl_int8_exact())
		return pairs_pack(B, K, N, ldb, tb, threads);
	if (K > IDNNL_MAX_K)
		return NULL;
	om_igemm_pk *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->K = K, p->N = N;
	dnnl_primitive_desc_t pd = NULL, rpd = NULL;
	dnnl_primitive_t reorder = NULL;
	dnnl_memory_t from = NULL;
	dnnl_primitive_attr_t attr = ipk_attr();
	dnnl_memory_desc_t amd, cmd, bmd;
	const int64_t key[IPK_KEY] = {32, 0, K, N, 0, 1};
	bool ok = attr && !dnnl_engine_create(&p->eng, dnnl_cpu, 0) &&
		  !dnnl_stream_create(&p->st, p->eng, dnnl_stream_default_flags) &&
		  !ipk_pd(p, &pd, key, attr, &amd, &cmd);
	if (ok)
		p->wmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	ok = ok && (tb ? ipk_md(&bmd, dnnl_s8, K, N, 1, ldb) : ipk_md(&bmd, dnnl_s8, K, N, ldb, 1)) &&
	     !dnnl_reorder_primitive_desc_create(&rpd, &bmd, p->eng, &p->wmd, p->eng, NULL) &&
	     !dnnl_primitive_create(&reorder, rpd);
	const size_t wbytes = ok ? dnnl_memory_desc_get_size(&p->wmd) : 0;
	ok = ok && wbytes && (p->wbuf = aligned_alloc(64, (wbytes + 63) / 64 * 64)) &&
	     !dnnl_memory_create(&p->w, &p->wmd, p->eng, p->wbuf) &&
	     !dnnl_memory_create(&from, &bmd, p->eng, (void *)B);
	if (ok) {
		const int saved = omp_get_max_threads();
		omp_set_num_threads(threads < 1 ? 1 : threads);
		dnnl_exec_arg_t a[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, p->w}};
		ok = !dnnl_primitive_execute(reorder, p->st, 2, a) && !dnnl_stream_wait(p->st);
		omp_set_num_threads(saved);
	}
	if (from)
		dnnl_memory_destroy(from);
	if (reorder)
		dnnl_primitive_destroy(reorder);
	if (rpd)
		dnnl_primitive_desc_destroy(rpd);
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (!ok) {
		om_igemm_pk_free(p);
		return NULL;
	}
	return p;
}

/* the primitive for this shape of A: found, or made (replacing the oldest once all slots
 * are taken); NULL when oneDNN refuses it or wants B in another layout than the packed one */
static om_dnnl_prim *ipk_prim_for(om_igemm_pk *p, const int64_t *key)
{
	om_dnnl_prim *found = om_dnnl_prims_find(&p->prims, key, IPK_KEY);
	if (found)
		return found;
	dnnl_primitive_attr_t attr = ipk_attr();
	dnnl_primitive_desc_t pd = NULL;
	dnnl_memory_desc_t amd, cmd, zmd;
	const dnnl_dims_t one = {1};
	om_dnnl_prim q = {0};
	bool ok = attr && !ipk_pd(p, &pd, key, attr, &amd, &cmd) &&
		  !dnnl_memory_desc_init_by_tag(&zmd, 1, one, dnnl_s32, dnnl_a) &&
		  om_dnnl_prim_make(&q, key, IPK_KEY, p->eng, pd, &p->wmd, &amd, &cmd) &&
		  !dnnl_memory_create(&q.zp, &zmd, p->eng, DNNL_MEMORY_NONE);
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (!ok) {
		om_dnnl_prim_release(&q);
		return NULL;
	}
	return om_dnnl_prims_put(&p->prims, IPK_PRIMS, &q);
}

/* one execution of q over rows of A and C (its M), on memory objects of this call's own (the
 * same primitive may run on other threads at once: each its own memory and scratchpad) */
static bool ipk_exec(const om_igemm_pk *p, const om_dnnl_prim *q, const uint8_t *A, int32_t *C,
		     int32_t za)
{
	const dnnl_memory_desc_t *amd, *cmd, *zmd, *smd = NULL;
	dnnl_memory_t a = NULL, c = NULL, zp = NULL, scratch = NULL;
	dnnl_stream_t st = NULL;
	bool ok = !dnnl_memory_get_memory_desc(q->a, &amd) &&
		  !dnnl_memory_get_memory_desc(q->c, &cmd) &&
		  !dnnl_memory_get_memory_desc(q->zp, &zmd) &&
		  (!q->scratch || !dnnl_memory_get_memory_desc(q->scratch, &smd)) &&
		  !dnnl_memory_create(&a, amd, p->eng, (void *)A) &&
		  !dnnl_memory_create(&c, cmd, p->eng, C) &&
		  !dnnl_memory_create(&zp, zmd, p->eng, &za) &&
		  (!smd || !dnnl_memory_create(&scratch, smd, p->eng, DNNL_MEMORY_ALLOCATE)) &&
		  !dnnl_stream_create(&st, p->eng, dnnl_stream_default_flags);
	if (ok) {
		dnnl_exec_arg_t x[] = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, p->w},
				       {DNNL_ARG_DST, c},
				       {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp},
				       {DNNL_ARG_SCRATCHPAD, scratch}};
		ok = !dnnl_primitive_execute(q->prim, st, scratch ? 5 : 4, x) &&
		     !dnnl_stream_wait(st);
	}
	dnnl_memory_t m[] = {a, c, zp, scratch};
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
		if (m[i])
			dnnl_memory_destroy(m[i]);
	if (st)
		dnnl_stream_destroy(st);
	return ok;
}

/* rows of a packed product cut into pieces of `step` (the last `last` rows), each one
 * single-threaded primitive: full for `step` rows, tail for the last piece's */
typedef struct ipk_split {
	const om_igemm_pk *p;
	const om_igemm *g;
	const om_dnnl_prim *full, *tail;
	int64_t step, pieces;
	int32_t za;
	bool failed;
} ipk_split;

static void ipk_piece(void *arg, int64_t lo, int64_t hi)
{
	ipk_split *s = arg;
	for (int64_t k = lo; k < hi; k++) {
		const om_dnnl_prim *q = k == s->pieces - 1 ? s->tail : s->full;
		const uint8_t *A = (const uint8_t *)s->g->A + k * s->step * s->g->lda;
		if (!ipk_exec(s->p, q, A, s->g->C + k * s->step * s->g->ldc, s->za))
			__atomic_store_n(&s->failed, true, __ATOMIC_RELAXED);
	}
}

/* At more than one thread a product of IDNNL_1T_MNK multiply-adds is cut into rows over
 * omopt's pool, each piece one primitive made for one thread: no OpenMP team (see
 * igemm_dnnl) */
static bool ipk_run_split(om_igemm_pk *p, const om_igemm *g, int64_t pieces, int threads)
{
	const int64_t step = (g->M + pieces - 1) / pieces, n = (g->M + step - 1) / step;
	const int64_t kf[IPK_KEY] = {step, 0, g->lda, g->ldc, 0, 1};
	const int64_t kt[IPK_KEY] = {g->M - (n - 1) * step, 0, g->lda, g->ldc, 0, 1};
	const int saved = om_par_threads_set(1);
	const om_dnnl_prim *tail = ipk_prim_for(p, kt), *full = tail ? ipk_prim_for(p, kf) : NULL;
	p->refused = !full;
	/* making full may have replaced tail's slot (all slots taken) */
	bool ok = full && !memcmp(tail->key, kt, sizeof kt);
	if (ok) {
		ipk_split s = {p, g, full, tail, step, n, g->za ? g->za[0] : 0, false};
		om_par_for(threads, n, 1, ipk_piece, &s);
		ok = !s.failed;
	}
	om_par_threads_restore(saved);
	return ok;
}

bool om_igemm_pk_run(om_igemm_pk *p, const om_igemm *g, int threads)
{
	if (p && p->pairs.data)
		return pairs_pk_run(p, g, threads);
	/* oneDNN 2.6 has no int8 A with a zero point over packed B (s8s8 compensation); A
	 * stored transposed never comes from MatMulInteger */
	if (!p || p->refused || g->K != p->K || g->N != p->N || g->M < 1 || g->ta || g->epi ||
	    g->a_signed || (g->za && g->nza != 1) || (g->zb && (g->nzb != 1 || g->zb[0] != 0)))
		return false;
	const double mnk = (double)g->M * (double)g->N * (double)g->K;
	const int64_t pieces = isplit_pieces(mnk, g->M, threads);
	if (pieces > 1)
		return ipk_run_split(p, g, pieces, threads);
	const int64_t key[IPK_KEY] = {g->M, g->ta, g->lda, g->ldc, g->a_signed, 1};
	/* oneDNN sizes a primitive's work split by OpenMP's count at creation and runs it at
	 * the count when it executes: 1, one thread */
	const int saved = om_par_threads_set(1);
	om_dnnl_prim *q = ipk_prim_for(p, key);
	p->refused = !q;
	int32_t za = g->za ? g->za[0] : 0;
	bool ok = q && !dnnl_memory_set_data_handle(q->a, (void *)g->A) &&
		  !dnnl_memory_set_data_handle(q->c, g->C) &&
		  !dnnl_memory_set_data_handle(q->zp, &za);
	if (ok) {
		dnnl_exec_arg_t a[] = {{DNNL_ARG_SRC, q->a}, {DNNL_ARG_WEIGHTS, p->w},
				       {DNNL_ARG_DST, q->c},
				       {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, q->zp},
				       {DNNL_ARG_SCRATCHPAD, q->scratch}};
		ok = !dnnl_primitive_execute(q->prim, p->st, q->scratch ? 5 : 4, a) &&
		     !dnnl_stream_wait(p->st);
	}
	om_par_threads_restore(saved);
	return ok;
}
#endif

/* gemm_packed.c — products with a constant B packed once (gemm_packed.h), on oneDNN's matmul
 * primitive: the weights reordered into the layout it picks for them (format_tag any; on
 * AVX-512, 16x64 blocks), one primitive per shape of A kept beside them. Where oneDNN keeps
 * B plain (no AVX-512), into omopt's panels of 16 columns instead (num/sgemm_panels.c). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_packed.h"
#include "bigbuf.h"
#include "parallel.h"

#ifndef OM_HAVE_DNNL

om_gemm_packed *om_gemm_packed_get(om_ctx *c, int input, const om_gemm_b *b, int64_t rows)
{
	(void)c, (void)input, (void)b, (void)rows;
	return NULL;
}

bool om_gemm_packed_takes(const om_ctx *c, int input, const om_gemm_b *b, int64_t rows)
{
	(void)c, (void)input, (void)b, (void)rows;
	return false;
}

bool om_gemm_packed_mul(om_ctx *c, om_gemm_packed *p, int64_t i, bool ta, int64_t M,
			float alpha, const float *A, int64_t lda, float beta, float *C, int64_t ldc,
			om_kind *rc)
{
	(void)c, (void)p, (void)i, (void)ta, (void)M, (void)alpha, (void)A, (void)lda;
	(void)beta, (void)C, (void)ldc, (void)rc;
	return false;
}

#else

#include <dnnl.h>
#include <omp.h>

#include "dnnl_prims.h"
#include "sgemm_panels.h"

/* Below this many elements of B the packing does not pay: the primitive pads B to 16x64
 * blocks and one execution costs a few microseconds; such products go through om_sgemm. */
enum { GP_MIN_KN = 16384 };

/* At one thread and fewer than OM_GEMM_PACKED_ROWS_1T rows, the largest B packed although its
 * pages stay resident (a copy the loader made of a misaligned payload; gemm_packed.h) */
#define GP_SECOND_COPY_MAX (16.0 * 1024 * 1024)

/* Primitives kept per step: one per shape of A (rows, transpose, strides, alpha, beta,
 * threads). A model whose rows change every run (a decoder's growing sequence) cycles through
 * them; each new shape makes a primitive (oneDNN's own primitive cache keeps recent ones). */
enum { GP_PRIMS = 8, GP_PKEY = 7 }; /* the key: M, ta, lda, ldc, threads, alpha's, beta's bits */
_Static_assert((int)GP_PRIMS <= (int)OM_DNNL_PRIMS && (int)GP_PKEY <= (int)OM_DNNL_PKEY,
	       "om_dnnl_prims holds them");

enum { GP_BKEY = 6 };

struct om_gemm_packed {
	int64_t key[GP_BKEY]; /* tb, count, K, N, ldb, bstride */
	bool declined;        /* oneDNN refused B: om_sgemm from now on */
	dnnl_engine_t eng;
	dnnl_stream_t st;
	dnnl_memory_desc_t wmd; /* the packed layout */
	dnnl_memory_t *w;       /* count packed matrices, each wbytes of wbuf */
	void *wbuf;             /* om_bigbuf_alloc'd: count * wbytes */
	size_t wbytes;
	om_dnnl_prims prims; /* GP_PRIMS of them */
	om_spanels *own;     /* count of omopt's panels in place of oneDNN's layout, or NULL */
};

static void gp_release(void *block)
{
	om_gemm_packed *p = block;
	om_dnnl_prims_release(&p->prims);
	for (int64_t i = 0; p->w && i < p->key[1]; i++)
		if (p->w[i])
			dnnl_memory_destroy(p->w[i]);
	free(p->w);
	for (int64_t i = 0; p->own && i < p->key[1]; i++)
		om_spanels_free(&p->own[i]);
	free(p->own);
	om_bigbuf_free(p->wbuf, (size_t)p->key[1] * p->wbytes);
	if (p->st)
		dnnl_stream_destroy(p->st);
	if (p->eng)
		dnnl_engine_destroy(p->eng);
	const int64_t key[GP_BKEY] = {p->key[0], p->key[1], p->key[2], p->key[3], p->key[4],
				      p->key[5]};
	memset(p, 0, sizeof *p);
	memcpy(p->key, key, sizeof key);
}

/* a 2-D float memory descriptor: rows x cols, element (r, k) at r * rs + k * cs */
static bool gp_md(dnnl_memory_desc_t *md, int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
	const dnnl_dims_t d = {rows, cols}, s = {rs, cs};
	return dnnl_memory_desc_init_by_strides(md, 2, d, dnnl_f32, s) == dnnl_success;
}

/* B's memory descriptor as the model stores it: K x N */
static bool gp_b_md(dnnl_memory_desc_t *md, const om_gemm_b *b)
{
	return b->tb ? gp_md(md, b->K, b->N, 1, b->ldb) : gp_md(md, b->K, b->N, b->ldb, 1);
}

/* A matmul primitive descriptor for M rows of A (ta, lda) into C (ldc), with B in the packed
 * layout `any` asks for; attr NULL: alpha 1, beta 0 */
static dnnl_status_t gp_pd(const om_gemm_packed *p, dnnl_primitive_desc_t *pd, int64_t M,
			   bool ta, int64_t lda, int64_t ldc, const_dnnl_primitive_attr_t attr,
			   dnnl_memory_desc_t *amd, dnnl_memory_desc_t *cmd)
{
	const int64_t K = p->key[2], N = p->key[3];
	dnnl_memory_desc_t wany;
	const dnnl_dims_t wd = {K, N};
	dnnl_matmul_desc_t d;
	if (!(ta ? gp_md(amd, M, K, 1, lda) : gp_md(amd, M, K, lda, 1)) ||
	    !gp_md(cmd, M, N, ldc, 1) ||
	    dnnl_memory_desc_init_by_tag(&wany, 2, wd, dnnl_f32, dnnl_format_tag_any) ||
	    dnnl_matmul_desc_init(&d, amd, &wany, NULL, cmd))
		return dnnl_invalid_arguments;
	return dnnl_primitive_desc_create(pd, &d, attr, p->eng, NULL);
}

/* The layout p's primitive asks B in (asked for 32 rows: oneDNN 2.6 picks it from K and N
 * alone), in p->wmd; false when oneDNN refuses, or when the layout is plain: oneDNN 2.6
 * without AVX-512 runs its gemm:jit, which packs B in every call anyway (64 x 1024 x 1024 on
 * a Zen 3: 3.3 ms, om_sgemm 1.7, omopt's panels 1.47) */
static bool gp_layout(om_gemm_packed *p)
{
	dnnl_primitive_desc_t pd;
	dnnl_memory_desc_t amd, cmd;
	if (gp_pd(p, &pd, 32, false, p->key[2], p->key[3], NULL, &amd, &cmd))
		return false;
	p->wmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	dnnl_primitive_desc_destroy(pd);
	return p->wmd.format_kind == dnnl_blocked && p->wmd.format_desc.blocking.inner_nblks > 0;
}

/* every B_i into omopt's panels (p->own); false when no memory */
static bool gp_pack_own(om_gemm_packed *p, const om_gemm_b *b)
{
	if (!(p->own = calloc((size_t)b->count, sizeof *p->own)))
		return false;
	for (int64_t i = 0; i < b->count; i++)
		if (!om_spanels_pack(b->B + i * b->bstride, b->K, b->N, b->ldb, b->tb, &p->own[i]))
			return false;
	return true;
}

/* the engine, the packed layout (gp_layout) and every B_i reordered into it, or, where that
 * layout is plain, into omopt's panels; false when neither takes B */
static bool gp_pack(om_gemm_packed *p, const om_gemm_b *b)
{
	if (dnnl_engine_create(&p->eng, dnnl_cpu, 0) ||
	    dnnl_stream_create(&p->st, p->eng, dnnl_stream_default_flags))
		return false;
	if (!gp_layout(p))
		return om_spanels_ok() && gp_pack_own(p, b);
	dnnl_memory_desc_t bmd;
	dnnl_primitive_desc_t rpd;
	dnnl_primitive_t reorder = NULL;
	if (!gp_b_md(&bmd, b) ||
	    dnnl_reorder_primitive_desc_create(&rpd, &bmd, p->eng, &p->wmd, p->eng, NULL))
		return false;
	bool ok = dnnl_primitive_create(&reorder, rpd) == dnnl_success;
	dnnl_primitive_desc_destroy(rpd);
	ok = ok && (p->w = calloc((size_t)b->count, sizeof *p->w));
	p->wbytes = (dnnl_memory_desc_get_size(&p->wmd) + 63) / 64 * 64;
	ok = ok && p->wbytes && (size_t)b->count <= SIZE_MAX / p->wbytes &&
	     (p->wbuf = om_bigbuf_alloc((size_t)b->count * p->wbytes));
	omp_set_num_threads(1); /* once, on this thread: no OpenMP team (its workers spin) */
	for (int64_t i = 0; ok && i < b->count; i++) {
		dnnl_memory_t from = NULL;
		ok = !dnnl_memory_create(&p->w[i], &p->wmd, p->eng,
					 (char *)p->wbuf + (size_t)i * p->wbytes) &&
		     !dnnl_memory_create(&from, &bmd, p->eng, (void *)(b->B + i * b->bstride));
		if (ok) {
			dnnl_exec_arg_t a[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, p->w[i]}};
			ok = !dnnl_primitive_execute(reorder, p->st, 2, a) &&
			     !dnnl_stream_wait(p->st);
		}
		if (from)
			dnnl_memory_destroy(from);
	}
	if (reorder)
		dnnl_primitive_destroy(reorder);
	return ok;
}

/* om_gemm_packed_takes but for the layout oneDNN picks: what every call checks (a state
 * whose packing oneDNN refused, or found plain, then declines) */
static bool gp_takes(const om_ctx *c, int input, const om_gemm_b *b, int64_t rows)
{
	if (c->exact || input >= 64 || !(c->const_in >> input & 1) || b->count < 1 ||
	    b->K * b->N < GP_MIN_KN)
		return false;
	if (c->threads >= 2 || rows >= OM_GEMM_PACKED_ROWS_1T)
		return true;
	/* one thread, 2 to 127 rows: packed unless the copy would double large weights */
	const double bytes = (double)b->count * (double)b->K * (double)b->N * sizeof(float);
	return rows >= 2 && (bytes <= GP_SECOND_COPY_MAX || om_ctx_own_copy(c, input, false));
}

bool om_gemm_packed_takes(const om_ctx *c, int input, const om_gemm_b *b, int64_t rows)
{
	if (!gp_takes(c, input, b, rows))
		return false;
	if (om_spanels_ok()) /* oneDNN's blocks, or else omopt's panels */
		return true;
	om_gemm_packed p = {.key = {b->tb, b->count, b->K, b->N, b->ldb, b->bstride}};
	const bool blocked = !dnnl_engine_create(&p.eng, dnnl_cpu, 0) && gp_layout(&p);
	if (p.eng)
		dnnl_engine_destroy(p.eng);
	return blocked;
}

om_gemm_packed *om_gemm_packed_get(om_ctx *c, int input, const om_gemm_b *b, int64_t rows)
{
	if (!c->state || !c->state_release || !gp_takes(c, input, b, rows))
		return NULL;
	const int64_t key[GP_BKEY] = {b->tb, b->count, b->K, b->N, b->ldb, b->bstride};
	_Static_assert(offsetof(om_gemm_packed, key) == 0, "om_ctx_state_keyed: the key first");
	bool made;
	om_gemm_packed *p = om_ctx_state_keyed(c, gp_release, key, GP_BKEY, sizeof *p, &made);
	if (!p)
		return NULL;
	if (made && !gp_pack(p, b)) {
		gp_release(p);
		p->declined = true;
	} else if (made && c->run && input < c->nin && b->B == c->in[input]->data) {
		(void)om_ctx_own_copy(c, input, true); /* B lives on packed: its file pages go */
	}
	return p->declined ? NULL : p;
}

/* the primitive for this shape of A: found, or made (replacing the oldest once all slots are
 * taken); NULL when oneDNN refuses it or wants B in another layout than the packed one */
static om_dnnl_prim *gp_prim_for(om_gemm_packed *p, const int64_t *key, bool ta, float alpha,
				 float beta)
{
	om_dnnl_prim *found = om_dnnl_prims_find(&p->prims, key, GP_PKEY);
	if (found)
		return found;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t ops = NULL;
	/* a scratchpad of the primitive's own (oneDNN's default shares one between
	 * primitives): the packed products of separate steps may run on separate threads at
	 * once (a bidirectional RNN's directions) */
	bool ok = !dnnl_primitive_attr_create(&attr) &&
		  !dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) &&
		  (alpha == 1 || !dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha));
	if (ok && beta != 0)
		ok = !dnnl_post_ops_create(&ops) && !dnnl_post_ops_append_sum(ops, beta) &&
		     !dnnl_primitive_attr_set_post_ops(attr, ops);
	dnnl_primitive_desc_t pd = NULL;
	dnnl_memory_desc_t amd, cmd;
	ok = ok && !gp_pd(p, &pd, key[0], ta, key[2], key[3], attr, &amd, &cmd);
	if (ops)
		dnnl_post_ops_destroy(ops);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	om_dnnl_prim q = {0};
	ok = ok && om_dnnl_prim_make(&q, key, GP_PKEY, p->eng, pd, &p->wmd, &amd, &cmd);
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	return ok ? om_dnnl_prims_put(&p->prims, GP_PRIMS, &q) : NULL;
}

/* Below this many multiply-adds a product runs on one thread; pieces of a split one have
 * GP_SPLIT_MNK at least (num/gemm.c's DNNL_1T_MNK and SPLIT_MNK) */
#define GP_1T_MNK 3e6
#define GP_SPLIT_MNK 5e5

/* one execution of q on memory objects, a stream and a scratchpad of this call's own (the
 * same primitive may run on other threads at once) */
static dnnl_status_t gp_exec(const om_gemm_packed *p, const om_dnnl_prim *q, dnnl_memory_t w,
			     const float *A, float *C)
{
	const dnnl_memory_desc_t *amd, *cmd, *smd = NULL;
	dnnl_memory_t a = NULL, c = NULL, scratch = NULL;
	dnnl_stream_t st = NULL;
	dnnl_status_t r;
	if (!(r = dnnl_memory_get_memory_desc(q->a, &amd)) &&
	    !(r = dnnl_memory_get_memory_desc(q->c, &cmd)) &&
	    !(r = q->scratch ? dnnl_memory_get_memory_desc(q->scratch, &smd) : dnnl_success) &&
	    !(r = dnnl_memory_create(&a, amd, p->eng, (void *)A)) &&
	    !(r = dnnl_memory_create(&c, cmd, p->eng, C)) &&
	    !(r = smd ? dnnl_memory_create(&scratch, smd, p->eng, DNNL_MEMORY_ALLOCATE)
		      : dnnl_success) &&
	    !(r = dnnl_stream_create(&st, p->eng, dnnl_stream_default_flags))) {
		dnnl_exec_arg_t x[] = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, w},
				       {DNNL_ARG_DST, c}, {DNNL_ARG_SCRATCHPAD, scratch}};
		if (!(r = dnnl_primitive_execute(q->prim, st, scratch ? 4 : 3, x)))
			r = dnnl_stream_wait(st);
	}
	dnnl_memory_t m[] = {a, c, scratch};
	for (size_t k = 0; k < sizeof m / sizeof m[0]; k++)
		if (m[k])
			dnnl_memory_destroy(m[k]);
	if (st)
		dnnl_stream_destroy(st);
	return r;
}

/* rows of a packed product in pieces of `step` rows (the last: tail's rows), one
 * single-threaded primitive each */
typedef struct gp_split {
	const om_gemm_packed *p;
	const om_dnnl_prim *full, *tail;
	dnnl_memory_t w;
	bool ta;
	int64_t step, pieces, lda, ldc;
	const float *A;
	float *C;
	int status; /* a failed piece's dnnl_status_t, else dnnl_success */
} gp_split;

static void gp_piece(void *arg, int64_t lo, int64_t hi)
{
	gp_split *s = arg;
	for (int64_t k = lo; k < hi; k++) {
		const int64_t r0 = k * s->step;
		const dnnl_status_t r = gp_exec(s->p, k == s->pieces - 1 ? s->tail : s->full, s->w,
						s->A + (s->ta ? r0 : r0 * s->lda),
						s->C + r0 * s->ldc);
		if (r != dnnl_success)
			__atomic_store_n(&s->status, (int)r, __ATOMIC_RELAXED);
	}
}

/* the product cut into `pieces` runs of rows over omopt's pool (om_par_for), each one
 * primitive made for one thread: no OpenMP team, whose idle workers spin after each region
 * (libgomp's default) and hold up a loaded machine; false when oneDNN refuses a shape */
static bool gp_mul_split(om_ctx *c, om_gemm_packed *p, int64_t i, bool ta, int64_t M,
			 int64_t pieces, float alpha, const float *A, int64_t lda, float beta,
			 float *C, int64_t ldc, dnnl_status_t *r)
{
	const int64_t step = (M + pieces - 1) / pieces, n = (M + step - 1) / step;
	int64_t kf[GP_PKEY] = {step, ta, lda, ldc, 1, 0, 0}, kt[GP_PKEY];
	memcpy(&kf[5], &alpha, sizeof alpha);
	memcpy(&kf[6], &beta, sizeof beta);
	memcpy(kt, kf, sizeof kt);
	kt[0] = M - (n - 1) * step;
	omp_set_num_threads(1);
	const om_dnnl_prim *tail = gp_prim_for(p, kt, ta, alpha, beta);
	const om_dnnl_prim *full = tail ? gp_prim_for(p, kf, ta, alpha, beta) : NULL;
	omp_set_num_threads(c->threads);
	/* making full may have replaced tail's slot (all slots taken) */
	if (!full || memcmp(tail->key, kt, sizeof kt))
		return false;
	gp_split s = {p, full, tail, p->w[i], ta, step, n, lda, ldc, A, C, dnnl_success};
	om_par_for(c->threads, n, 1, gp_piece, &s);
	*r = (dnnl_status_t)s.status;
	return true;
}

bool om_gemm_packed_mul(om_ctx *c, om_gemm_packed *p, int64_t i, bool ta, int64_t M,
			float alpha, const float *A, int64_t lda, float beta, float *C, int64_t ldc,
			om_kind *rc)
{
	if (i < 0 || i >= p->key[1] || M < 1)
		return false;
	if (p->own) {
		om_spanels_mul(&p->own[i], ta, M, alpha, A, lda, beta, C, ldc, c->threads);
		*rc = OM_OK;
		return true;
	}
	const double mnk = (double)M * (double)p->key[2] * (double)p->key[3];
	dnnl_status_t r;
	int64_t pieces = c->threads > 1 && mnk >= GP_1T_MNK ? (int64_t)(mnk / GP_SPLIT_MNK) : 1;
	pieces = pieces < c->threads ? pieces : c->threads;
	pieces = pieces < M ? pieces : M;
	if (pieces > 1 && gp_mul_split(c, p, i, ta, M, pieces, alpha, A, lda, beta, C, ldc, &r))
		goto done;
	/* one piece: one thread (a product below GP_1T_MNK, or one the split could not take).
	 * oneDNN sizes a primitive's work split by OpenMP's count at creation and starts a team
	 * of the count when it runs: 1, so that no OpenMP team starts (libgomp's idle workers
	 * spin after a region: gpt_tiny_dyn at 2 threads had runs of 100 ms among 0.3 ms ones) */
	int64_t key[GP_PKEY] = {M, ta, lda, ldc, 1, 0, 0};
	memcpy(&key[5], &alpha, sizeof alpha);
	memcpy(&key[6], &beta, sizeof beta);
	const int saved = om_par_threads_set(1);
	om_dnnl_prim *q = gp_prim_for(p, key, ta, alpha, beta);
	if (!q) {
		om_par_threads_restore(saved);
		return false;
	}
	dnnl_exec_arg_t a[] = {{DNNL_ARG_SRC, q->a}, {DNNL_ARG_WEIGHTS, p->w[i]},
			       {DNNL_ARG_DST, q->c}, {DNNL_ARG_SCRATCHPAD, q->scratch}};
	if (!(r = dnnl_memory_set_data_handle(q->a, (void *)A)) &&
	    !(r = dnnl_memory_set_data_handle(q->c, C)) &&
	    !(r = dnnl_primitive_execute(q->prim, p->st, q->scratch ? 4 : 3, a)))
		r = dnnl_stream_wait(p->st);
	om_par_threads_restore(saved);
done:
	*rc = r == dnnl_success ? OM_OK
	      : r == dnnl_out_of_memory
		      ? om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory in oneDNN")
		      : om_error(c->st, OM_ERR_INTERNAL, c->node,
				 "oneDNN matmul failed (status %d)", (int)r);
	return true;
}

#endif

/* run.c — one run of a plan: a frame of tensors over its runner's buffer pool, steps that
 * infer (when dynamic), place their outputs (views alias, in-place kernels reuse a dying
 * input, others get a best-fit block) and release buffers when their last reader has run. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layout.h"
#include "runner.h"
#include "onnx_io.h"
#include "value.h"

/* f->blk of a slot whose sequence or optional value (box) the frame owns: freed when the last
 * reader of it and of every view into it has run, or when the run ends (always so for a box
 * holding strings: kernels copy string pointers, which may outlive the readers) */
#define BLK_OWNED (-2)

/* One run of a plan: the tensor of every slot and the pool block holding it (-1: none). */
typedef struct om_frame {
	const om_plan *p;
	struct om_frame *parent;
	om_tensor *t;
	int32_t *blk;
	int32_t *owner; /* the slot owning the box this slot's value is or lies in; -1: none */
	int32_t *brefs; /* of an owning slot: reads still to come of it and of its views */
	const struct om_step *step; /* the step whose kernel runs */
} om_frame;

/* zero-byte tensors still get a non-NULL data pointer; nobody reads or writes through it */
static const unsigned char no_bytes[16];

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- liveness ---------------------------------------------------------------------------- */

/* Slot k's value is (or lies in) the box of slot o (-1: in no box of this frame). */
static void box_hold(om_frame *f, int32_t k, int32_t o)
{
	f->owner[k] = o;
	if (o >= 0)
		f->brefs[o] += f->p->slots[k].uses;
}

static void box_free(om_frame *f, int32_t o)
{
	om_value_free(&f->t[o]);
	f->blk[o] = -1;
}

/* One consumer of slot k has run: the block goes back when nobody else will read it. */
static void drop(om_runner *r, om_frame *f, int32_t k)
{
	int32_t o = f->owner[k];
	if (o >= 0 && --f->brefs[o] <= 0 && f->blk[o] == BLK_OWNED &&
	    !om_value_has_strings(&f->t[o]))
		box_free(f, o);
	int32_t b = f->blk[k];
	if (b < 0 || !r->pool.b[b].busy)
		return;
	if (--r->pool.b[b].refs <= 0)
		om_pool_release(&r->pool, b);
}

static void hold(om_runner *r, om_frame *f, int32_t k, int32_t b)
{
	f->blk[k] = b;
	if (b >= 0)
		r->pool.b[b].refs += f->p->slots[k].uses;
}
/* ---- one step ---------------------------------------------------------------------------- */

static om_kind over_limit(const om_runner *r, const om_node *n, const char *what, size_t bytes,
			  om_status *st)
{
	return om_error(st, OM_ERR_INVALID_INPUT, n,
			"%s needs %zu bytes; with %zu bytes in use that is over the memory limit "
			"of %zu bytes (max_memory)",
			what, bytes, r->pool.busy_bytes, r->pool.limit);
}

/* A pool block for node n's output i; the memory limit is checked before allocating. */
static om_kind get_block(om_runner *r, const om_node *n, int32_t i, size_t bytes, int32_t *b,
			 om_status *st)
{
	*b = om_pool_get(&r->pool, bytes);
	if (*b >= 0)
		return OM_OK;
	if (*b == OM_POOL_OVER_LIMIT) {
		char what[32];
		snprintf(what, sizeof what, "output %d", i);
		return over_limit(r, n, what, bytes, st);
	}
	return om_error(st, OM_ERR_NOMEM, n, "out of memory for %zu bytes", bytes);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void om_run_start_clock(om_runner *r)
{
	const int64_t ms = r->s->opt.max_run_ms;
	r->deadline_ns = ms > 0 && ms < INT64_MAX / 2000000 ? now_ns() + ms * 1000000 : 0;
}

static om_kind check_time(const om_runner *r, const om_node *n, om_status *st)
{
	if (!r->deadline_ns || now_ns() <= r->deadline_ns)
		return OM_OK;
	return om_error(st, OM_ERR_INVALID_INPUT, n, "the run took longer than its limit of "
			"%lld ms (max_run_ms)", (long long)r->s->opt.max_run_ms);
}

static om_kind ctx_check_time(const om_ctx *c)
{
	return check_time(c->runner, c->node, c->st);
}

static om_kind ctx_reserve(const om_ctx *c, size_t bytes, const char *what)
{
	const om_runner *r = c->runner;
	if (!r->pool.limit)
		return OM_OK;
	if (bytes > r->pool.limit || r->pool.busy_bytes > r->pool.limit - bytes)
		return over_limit(r, c->node, what, bytes, c->st);
	return OM_OK;
}

/* om_ctx_scratch: the runner's scratch stack (scratch.h), within the memory limit with the
 * pool's busy blocks */
static om_kind ctx_scratch(const om_ctx *c, size_t bytes, const char *what, void **p)
{
	om_runner *r = c->runner;
	const size_t used = r->pool.busy_bytes + r->scratch.busy;
	if (r->pool.limit && (bytes > r->pool.limit || used > r->pool.limit - bytes))
		return over_limit(r, c->node, what, bytes, c->st);
	if (r->scratch.n >= OM_SCRATCH_MOST)
		return om_error(c->st, OM_ERR_INTERNAL, c->node,
				"more than %d scratch buffers at once", OM_SCRATCH_MOST);
	if (!om_scratch_take(&r->scratch, bytes, p))
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory for %zu bytes of %s",
				bytes, what);
	return OM_OK;
}

static void ctx_scratch_done(const om_ctx *c, void *p)
{
	om_runner *r = c->runner;
	om_scratch_give(&r->scratch, p);
}

static const om_run_services services; /* what a run offers the kernels: defined below */

static om_kind check_shape(const om_node *n, int32_t i, om_tensor *t, om_status *st)
{
	if (om_is_box(t)) { /* a sequence or optional: no bytes of its own */
		t->rank = 0;
		t->nbytes = 0;
		return OM_OK;
	}
	if (!om_dtype_bits(t->dtype))
		return om_error(st, OM_ERR_UNSUPPORTED, n, "output %d has element type %d", i,
				t->dtype);
	const int64_t bytes = om_shape_bytes(t->dtype, t->rank, t->dims);
	if (bytes < 0 || (uint64_t)bytes >= SIZE_MAX)
		return om_error(st, OM_ERR_INVALID_INPUT, n,
				"output %d gets an invalid shape or one whose bytes overflow", i);
	t->nbytes = (size_t)bytes;
	return OM_OK;
}

/* the input whose block output 0 may take over (OM_OP_INPLACE: input 0, OM_OP_INPLACE_LAST:
 * the last one), or -1 */
static int32_t inplace_input(const om_step *sp)
{
	const int32_t nin = sp->node->nin;
	if (nin < 1)
		return -1;
	if (sp->op->flags & OM_OP_INPLACE)
		return 0;
	return sp->op->flags & OM_OP_INPLACE_LAST ? nin - 1 : -1;
}

/* Gives the step's outputs their memory: a view aliases its input, an in-place kernel may
 * take over an input that dies here, everything else gets a block from the pool. */
static om_kind place_outputs(om_runner *r, om_frame *f, const om_step *sp,
			     const om_tensor *const *in, om_tensor *const *out, om_status *st)
{
	const om_node *n = sp->node;
	if (sp->view) {
		if (!in[0])
			return om_error(st, OM_ERR_INVALID_INPUT, n, "input 0 is missing");
		if (out[0]->nbytes > in[0]->nbytes)
			return om_error(st, OM_ERR_INTERNAL, n, "view needs %zu bytes of %zu",
					out[0]->nbytes, in[0]->nbytes);
		out[0]->data = in[0]->data;
		int32_t b = f->blk[sp->in[0]];
		hold(r, f, sp->out[0], b >= 0 ? b : -1); /* a box stays owned by its first slot */
		box_hold(f, sp->out[0], f->owner[sp->in[0]]);
		return OM_OK;
	}
	for (int32_t i = 0; i < n->nout; i++) {
		if (!out[i])
			continue;
		if (om_is_box(out[i]))
			return om_error(st, OM_ERR_INTERNAL, n,
					"output %d is a sequence or optional", i);
		const int32_t over = i == 0 ? inplace_input(sp) : -1;
		int32_t b = -1;
		if (over >= 0 && in[over] && (b = f->blk[sp->in[over]]) >= 0) {
			int32_t reads = 0;
			for (int32_t k = 0; k < n->nin; k++)
				reads += sp->in[k] >= 0 && f->blk[sp->in[k]] == b;
			for (int32_t k = 0; k < sp->nimplicit; k++)
				reads += f->blk[sp->implicit[k]] == b;
			const om_tensor *v = in[over];
			if (r->pool.b[b].refs != reads || reads != 1 || v->dtype != out[0]->dtype ||
			    v->nbytes != out[0]->nbytes || v->data != r->pool.b[b].ptr)
				b = -1;
		}
		if (b >= 0) {
			out[0]->data = in[over]->data;
		} else {
			om_kind rc = get_block(r, n, i, out[i]->nbytes, &b, st);
			if (rc)
				return rc;
			out[i]->data = r->pool.b[b].ptr; /* not zeroed: kernels write every byte */
		}
		hold(r, f, sp->out[i], b);
	}
	/* a view op that cannot alias (Dropout with a mask) copies */
	if ((sp->op->flags & OM_OP_VIEW) && in[0] && out[0])
		memcpy(out[0]->data, in[0]->data,
		       in[0]->nbytes < out[0]->nbytes ? in[0]->nbytes : out[0]->nbytes);
	return OM_OK;
}

/* Infers a step shaped per run that takes channel-blocked values (plan_layout.c) on their
 * logical shapes, then gives its blocked outputs their blocked shapes. */
static om_kind infer_blocked(const om_plan *p, const om_step *sp, om_infer_cache **cache,
			     om_ctx *c)
{
	const om_tensor *in[32];
	om_tensor logical[32];
	const om_tensor *const *given = c->in;
	for (int32_t i = 0; i < c->nin && i < 32; i++) {
		in[i] = given[i];
		if (!(sp->blocked & OM_LAYOUT_IN(i)) || !given[i])
			continue;
		logical[i] = om_layout_logical(given[i], p->slots[sp->in[i]].chans);
		in[i] = &logical[i];
	}
	c->in = in;
	om_kind rc = om_infer_step(p, sp, cache, c);
	c->in = given;
	for (int32_t i = 0; !rc && i < c->nout && i < 32; i++) {
		om_tensor *t = c->out[i];
		if (!(sp->blocked & OM_LAYOUT_OUT(i)) || !t)
			continue;
		if (t->rank != 4 || t->dims[1] != p->slots[sp->out[i]].chans)
			return om_error(c->st, OM_ERR_INTERNAL, sp->node,
					"output %d was planned blocked with %lld channels", i,
					(long long)p->slots[sp->out[i]].chans);
		int64_t d[5];
		om_layout_dims(t->dims, p->block, d);
		t->rank = 5;
		memcpy(t->dims, d, sizeof d);
	}
	return rc;
}

static om_kind run_step(om_runner *r, om_frame *f, const om_step *sp, om_status *st)
{
	const om_session *s = r->s;
	om_step_state *ss = &r->steps[sp->ix];
	const om_node *n = sp->node;
	const om_plan *p = f->p;
	int32_t nin = n->nin, nout = n->nout;
	const om_tensor *in_fixed[16];
	om_tensor *out_fixed[16];
	const om_tensor **in = nin <= 16 ? in_fixed : malloc(sizeof *in * (size_t)nin);
	om_tensor **out = nout <= 16 ? out_fixed : malloc(sizeof *out * (size_t)nout);
	om_kind rc = OM_OK;
	if (!in || !out) {
		rc = om_error(st, OM_ERR_NOMEM, n, "out of memory");
		goto done;
	}
	double t0 = s->opt.profile ? now_ms() : 0, nested0 = r->prof_nested;
	for (int32_t i = 0; i < nin; i++) {
		int32_t k = sp->in[i];
		in[i] = k >= 0 && f->t[k].data ? &f->t[k] : NULL;
		if (k >= 0 && !in[i] && p->slots[k].kind != OM_SLOT_INPUT) {
			rc = om_error(st, OM_ERR_INTERNAL, n, "input '%s' was not computed",
				      p->slots[k].v->name);
			goto done;
		}
	}
	for (int32_t i = 0; i < nout; i++) {
		int32_t k = sp->out[i];
		out[i] = k >= 0 ? &f->t[k] : NULL;
		if (!out[i])
			continue;
		memset(out[i], 0, sizeof *out[i]);
		if (!sp->dynamic) {
			*out[i] = p->slots[k].meta;
			out[i]->data = NULL;
		}
	}
	om_ctx c = {.node = n, .op = sp->op, .opset = sp->opset, .nin = nin, .nout = nout,
		    .in = (const om_tensor *const *)in, .out = (om_tensor *const *)out, .st = st,
		    .exact = s->opt.exact, /* rows flagged exact may take fast paths in fast mode */
		    .threads = s->opt.threads > 1 ? s->opt.threads : 1,
		    .deterministic = s->opt.deterministic || s->opt.exact,
		    .runner = r, .run = &services, .state = &ss->kstate,
		    .state_release = &ss->krelease, .impl = &ss->impl,
		    .post = sp->post.kind ? &sp->post : NULL,
		    .in_scale = sp->scale >= 0 && f->t[sp->scale].data ? &f->t[sp->scale] : NULL,
		    .blocked = sp->blocked,
		    .block = sp->blocked ? p->block : 0};
	for (int32_t i = 0; i < nin && i < 64; i++)
		if (sp->in[i] >= 0 && p->slots[sp->in[i]].kind == OM_SLOT_CONST)
			c.const_in |= (uint64_t)1 << i;

	bool control = sp->op->flags & OM_OP_CONTROL;
	for (int32_t i = 0; !control && !sp->view && i < nin; i++)
		if (om_is_box(in[i])) { /* only control rows and views take boxes */
			rc = om_error(st, OM_ERR_INVALID_MODEL, n,
				      "input %d is a sequence or optional, %s takes tensors", i,
				      n->op);
			goto done;
		}
	if (sp->dynamic && !control) {
		rc = sp->blocked ? infer_blocked(p, sp, &ss->icache, &c)
				 : om_infer_step(p, sp, &ss->icache, &c);
		if (rc == OM_NEED_VALUE)
			rc = om_error(st, OM_ERR_INTERNAL, n,
				      "inference needs a value it was given");
		else if (rc == OM_ERR_INVALID_MODEL && !sp->deferred) /* this run's inputs */
			st->kind = rc = OM_ERR_INVALID_INPUT;
		for (int32_t i = 0; !rc && i < nout; i++)
			if (out[i])
				rc = check_shape(n, i, out[i], st);
		if (rc)
			goto done;
	}
	if (!control && (rc = place_outputs(r, f, sp, (const om_tensor *const *)in, out, st)))
		goto done;
	if (sp->op->kernel) {
		om_frame *prev = r->cur;
		const om_step *prev_step = f->step;
		r->cur = f;
		f->step = sp;
		const om_tensor *with_sum[4] = {NULL};
		if (sp->sum >= 0) { /* an absorbed Add's addend: input 3 (OM_OP_SUM, nin <= 3) */
			for (int32_t i = 0; i < nin; i++)
				with_sum[i] = in[i];
			with_sum[3] = &f->t[sp->sum];
			c.in = with_sum, c.nin = 4;
			const om_tensor *y = out[0], *z = with_sum[3];
			if (!y || z->rank != y->rank ||
			    memcmp(z->dims, y->dims, sizeof(int64_t) * (size_t)y->rank))
				rc = om_error(st, OM_ERR_UNSUPPORTED, n,
					      "the Add absorbed into this step broadcasts in this "
					      "run (its shapes agreed at plan time)");
		}
		const int scratch0 = r->scratch.n; /* a control step's subgraph steps nest */
		r->read_const = false;
		if (!rc)
			rc = sp->op->kernel(&c);
		om_scratch_give_from(&r->scratch, scratch0); /* what the kernel did not give back */
		/* a gather of many rows (a prompt's tokens) that read the table through its mapping
		 * gives the table's pages back (plan.c); a decode step's one row leaves its 64 KiB
		 * mapped: given back after every step it cost a faulted window in each (small_gqa
		 * decode 515-550 -> 373-398 tokens/s). A kernel that read the rows from the file
		 * (om_ctx_read_const) mapped nothing. */
		const bool many = nin > 1 && in[1] && om_shape_numel(in[1]->rank, in[1]->dims) >= 16 &&
				  !r->read_const;
		for (int32_t i = 0; !rc && many && sp->give_back && i < nin && i < 32; i++)
			if (sp->give_back >> i & 1)
				(void)om_model_file_pages(s->m, in[i]->data, in[i]->nbytes, true);
		r->cur = prev;
		f->step = prev_step;
		if (rc)
			goto done;
	}
	for (int32_t i = 0; control && i < nout; i++)
		if (out[i] && !out[i]->data) {
			rc = om_error(st, OM_ERR_INTERNAL, n, "output %d was not produced", i);
			goto done;
		}
	if (!sp->view && !control &&
	    (rc = om_run_adopt_strings(r, n, (const om_tensor *const *)in, nin, out, nout, st)))
		goto done;
	ss->mode = sp->exact ? OM_MODE_EXACT : OM_MODE_FAST;
	if (s->opt.profile) {
		/* exclusive time: the steps a control op ran in its subgraphs (counted under their
		 * own op types while they ran) are taken out of its own */
		const double all = now_ms() - t0;
		om_profile_row *row = &r->prof[sp->prof];
		row->calls++;
		row->ms += all - (r->prof_nested - nested0);
		if (row->node) /* a row per node: its kernel's implementation */
			row->impl = ss->impl;
		r->prof_nested = nested0 + all;
	}
	if (s->hook)
		s->hook(s->hook_arg, n, (const om_tensor *const *)in, nin,
			(const om_tensor *const *)out, nout);
	for (int32_t i = 0; i < nin; i++)
		if (sp->in[i] >= 0)
			drop(r, f, sp->in[i]);
	for (int32_t i = 0; i < sp->nimplicit; i++)
		drop(r, f, sp->implicit[i]);
	if (sp->scale >= 0)
		drop(r, f, sp->scale);
	if (sp->sum >= 0)
		drop(r, f, sp->sum);
	for (int32_t i = 0; i < nout; i++) {
		int32_t b = sp->out[i] >= 0 ? f->blk[sp->out[i]] : -1;
		if (b >= 0 && r->pool.b[b].busy && r->pool.b[b].refs <= 0)
			om_pool_release(&r->pool, b); /* an output nobody reads */
		if (b == BLK_OWNED && f->brefs[sp->out[i]] <= 0 &&
		    !om_value_has_strings(&f->t[sp->out[i]]))
			box_free(f, sp->out[i]);
	}
done:
	if (in != in_fixed)
		free(in);
	if (out != out_fixed)
		free(out);
	return rc;
}

static om_kind ctx_output(om_ctx *c, int32_t i, int32_t dtype, int32_t rank,
			  const int64_t *dims)
{
	om_runner *r = c->runner;
	om_frame *f = r->cur;
	const om_step *sp = f ? f->step : NULL;
	if (!sp || sp->node != c->node || i < 0 || i >= c->nout || sp->out[i] < 0 ||
	    f->t[sp->out[i]].data)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "output %d cannot be placed", i);
	int32_t k = sp->out[i];
	om_tensor *t = &f->t[k];
	if (rank < 0 || rank > OM_MAX_RANK)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "output %d has rank %d", i,
				rank);
	if (om_is_box_kind(dtype))
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "output %d is a box", i);
	om_set_shape(t, dtype, rank, dims);
	om_kind rc = check_shape(c->node, i, t, c->st);
	if (rc)
		return rc;
	int32_t b;
	if ((rc = get_block(r, c->node, i, t->nbytes, &b, c->st)))
		return rc;
	t->data = r->pool.b[b].ptr;
	hold(r, f, k, b);
	return OM_OK;
}

/* The frame slot of the running step's output i, free to be set; NULL after an error. */
static om_tensor *free_output(om_ctx *c, int32_t i, om_frame **fp, int32_t *kp)
{
	om_runner *r = c->runner;
	om_frame *f = r->cur;
	const om_step *sp = f ? f->step : NULL;
	if (!sp || sp->node != c->node || i < 0 || i >= c->nout || sp->out[i] < 0 ||
	    f->t[sp->out[i]].data) {
		om_error(c->st, OM_ERR_INTERNAL, c->node, "output %d cannot be placed", i);
		return NULL;
	}
	*fp = f;
	*kp = sp->out[i];
	return &f->t[sp->out[i]];
}

static om_kind ctx_output_value(om_ctx *c, int32_t i, om_tensor *v)
{
	om_frame *f;
	int32_t k;
	om_tensor *t = free_output(c, i, &f, &k);
	if (!t)
		return c->st->kind;
	if (!om_is_box(v) || !v->data)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "output %d is not a box", i);
	*t = *v;
	t->rank = 0;
	t->nbytes = 0;
	f->blk[k] = BLK_OWNED;
	box_hold(f, k, k);
	memset(v, 0, sizeof *v);
	return OM_OK;
}

static om_kind ctx_output_alias(om_ctx *c, int32_t i, const om_tensor *v, int32_t from)
{
	om_frame *f;
	int32_t k;
	om_tensor *t = free_output(c, i, &f, &k);
	if (!t)
		return c->st->kind;
	if (from < 0 || from >= c->nin || f->step->in[from] < 0)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "output %d aliases no input", i);
	*t = *v;
	if (!t->data)
		t->data = (void *)no_bytes;
	f->blk[k] = -1;
	box_hold(f, k, f->owner[f->step->in[from]]);
	return OM_OK;
}

/* Subgraph g of the running node, run inside the current run (om_ctx_run_graph). */
static om_kind ctx_run_graph(const om_ctx *c, const om_graph *g, const om_tensor *const *in,
			     int nin, om_tensor *out, int nout)
{
	om_runner *r = c->runner;
	const om_plan *p = om_plan_find(r->s, g);
	if (!p)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "graph '%s' was not planned",
				g->name);
	return om_run_plan(r, p, r->cur, in, nin, out, nout, c->st);
}

/* a new key for each unseeded random draw of the run: a runner serves one run at a time */
static uint64_t ctx_random_key(const om_ctx *c)
{
	om_runner *r = c->runner;
	return r->rng_key + 0x9E3779B97F4A7C15u * ++r->rng_draws;
}

/* whether the running step's kernel may keep its own copy of constant input i in place of
 * its file pages, and with give_back, gives them back (om_ctx_own_copy) */
static bool ctx_own_copy(const om_ctx *c, int32_t i, bool give_back)
{
	const om_runner *r = c->runner;
	const om_frame *f = r->cur;
	if (!f || !f->step || f->step->node != c->node ||
	    !om_plan_copied_gives_back(r->s, f->p, f->step, i))
		return false;
	if (give_back)
		(void)om_model_file_pages(r->s->m, c->in[i]->data, c->in[i]->nbytes, true);
	return true;
}

/* copies bytes [off, off + n) of the running step's constant input i from the model's file,
 * when the step gives that input's pages back (om_ctx_read_const) */
static bool ctx_read_const(const om_ctx *c, int32_t i, size_t off, size_t n, void *dst)
{
	om_runner *r = c->runner;
	const om_frame *f = r->cur;
	if (!f || !f->step || f->step->node != c->node || i < 0 || i >= 32 || i >= c->nin ||
	    !(f->step->give_back >> i & 1) || off > c->in[i]->nbytes ||
	    n > c->in[i]->nbytes - off ||
	    !om_model_file_read(r->s->m, (const unsigned char *)c->in[i]->data + off, n, dst))
		return false;
	r->read_const = true;
	return true;
}

/* what a run offers the kernels (ops/op.h) */
static const om_run_services services = {
	.reserve = ctx_reserve,
	.check_time = ctx_check_time,
	.run_graph = ctx_run_graph,
	.output = ctx_output,
	.output_value = ctx_output_value,
	.output_alias = ctx_output_alias,
	.random_key = ctx_random_key,
	.own_copy = ctx_own_copy,
	.read_const = ctx_read_const,
	.scratch = ctx_scratch,
	.scratch_done = ctx_scratch_done,
};

/* ---- one run of a plan ------------------------------------------------------------------- */

static om_kind check_input(const om_slot *s, const om_tensor *t, bool strict, om_status *st)
{
	const om_type *ty = &s->v->type;
	const char *name = s->v->name;
	int32_t box = om_type_box_kind(ty);
	if (om_is_box(t) || box) {
		if (!om_is_box(t) || !t->data || (strict && t->dtype != box))
			return om_error(st, OM_ERR_INVALID_INPUT, NULL,
					"input '%s' must be a %s", name,
					box == OM_OPT_DTYPE   ? "optional value"
					: box == OM_SEQ_DTYPE ? "sequence"
					: box == OM_MAP_DTYPE ? "map"
							      : "tensor");
		om_status why = {0};
		if (strict && om_value_check(t, &why))
			return om_error(st, why.kind, NULL, "input '%s': %.400s", name, why.msg);
		return OM_OK;
	}
	if (t->rank < 0 || t->rank > OM_MAX_RANK || om_shape_numel(t->rank, t->dims) < 0)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "input '%s' has an invalid shape",
				name);
	if (!om_dtype_bits(t->dtype))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "input '%s' has element type %d",
				name, t->dtype);
	size_t need = om_tensor_bytes_for(t->dtype, t->rank, t->dims);
	if (t->nbytes < need || (need && !t->data))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input '%s' has %zu bytes, its shape needs %zu", name,
				t->data ? t->nbytes : 0, need);
	if (!strict || ty->kind != OM_TYPE_TENSOR)
		return OM_OK;
	if (ty->elem && t->dtype != ty->elem)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input '%s' has element type %s, the model expects %s", name,
				om_dtype_name(t->dtype), om_dtype_name(ty->elem));
	if (ty->rank >= 0 && t->rank != ty->rank)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input '%s' has rank %d, the model expects %d", name, t->rank,
				ty->rank);
	for (int32_t i = 0; ty->rank >= 0 && i < ty->rank; i++)
		if (om_dim_known(ty->dims[i]) && ty->dims[i].value != t->dims[i])
			return om_error(
				st, OM_ERR_INVALID_INPUT, NULL,
				"input '%s' has extent %lld on axis %d, the model expects %lld",
				name, (long long)t->dims[i], i, (long long)ty->dims[i].value);
	return OM_OK;
}

static om_kind bind_slots(const om_plan *p, om_frame *f, const om_tensor *const *in, int nin,
			  om_status *st)
{
	if (nin != p->ninputs && nin != p->nrequired)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				p->nrequired == p->ninputs ? "%d inputs given, graph '%s' has %d"
							   : "%d inputs given, graph '%s' has %d "
							     "(and %d overridable initializers)",
				nin, p->g->name, p->nrequired, p->ninputs - p->nrequired);
	for (int32_t k = 0; k < p->nslots; k++) {
		const om_slot *sl = &p->slots[k];
		if (sl->kind == OM_SLOT_CONST) {
			f->t[k] = sl->meta;
			if (!f->t[k].data)
				f->t[k].data = (void *)no_bytes;
		} else if (sl->kind == OM_SLOT_OUTER) {
			const om_frame *q = f;
			for (int32_t u = 0; q && u < sl->up; u++)
				q = q->parent;
			if (!q || !q->t[sl->from].data)
				return om_error(
					st, OM_ERR_INVALID_MODEL, NULL,
					"outer value '%s' is not computed before graph '%s' runs",
					sl->v->name, p->g->name);
			f->t[k] = q->t[sl->from];
		}
	}
	for (int i = 0; i < p->ninputs; i++) {
		int32_t k = p->inputs[i];
		const om_tensor *t = i < nin ? in[i] : NULL;
		if (!t && i >= p->nrequired) {
			/* an overridable initializer not fed: its initializer, which must fit
			 * the input's declaration as a feed would (the plan shaped its readers
			 * by the declaration) */
			t = p->slots[k].v->init;
			om_status why = {0};
			if (!t || check_input(&p->slots[k], t, true, &why))
				return om_error(st, OM_ERR_INVALID_MODEL, NULL,
						"the initializer of input '%s' does not fit the "
						"input's declaration: %.300s",
						p->slots[k].v->name, t ? why.msg : "no data");
		} else if (!t) {
			if (!p->parent)
				return om_error(st, OM_ERR_INVALID_INPUT, NULL,
						"input '%s' is missing", p->slots[k].v->name);
			continue;
		} else {
			om_kind rc = check_input(&p->slots[k], t, !p->parent, st);
			if (rc)
				return rc;
		}
		f->t[k] = *t;
		if (!f->t[k].data)
			f->t[k].data = (void *)no_bytes;
	}
	return OM_OK;
}

/* The main graph's output i may take its pool block (no copy): the block holds nothing else that
 * is an output, holds no strings (callers get copies), is not much larger than the tensor and
 * is not a place in the pool's arena. */
static bool can_hand_over(const om_runner *r, const om_plan *p, const om_frame *f, int i)
{
	const om_tensor *t = &f->t[p->outputs[i]];
	int32_t b = f->blk[p->outputs[i]];
	if (p->parent || b < 0 || t->dtype == OM_STRING || t->data != r->pool.b[b].ptr ||
	    r->pool.b[b].arena || r->pool.b[b].cap > 2 * t->nbytes + 4096)
		return false;
	for (int j = 0; j < p->noutputs; j++)
		if (j != i && f->blk[p->outputs[j]] == b)
			return false;
	return true;
}

static om_kind copy_outputs(om_runner *r, const om_plan *p, const om_frame *f, om_tensor *out,
			    int nout, om_status *st)
{
	for (int i = 0; i < nout; i++) {
		const om_tensor *t = &f->t[p->outputs[i]];
		if (!t->data)
			return om_error(st, OM_ERR_INVALID_MODEL, NULL,
					"output '%s' is never computed",
					p->slots[p->outputs[i]].v->name);
		if (om_is_box(t) && !p->parent && !r->boxes)
			return om_error(st, OM_ERR_UNSUPPORTED, NULL,
					"output '%s' is a sequence or optional (omopt.h returns "
					"tensors only)",
					p->slots[p->outputs[i]].v->name);
		if (om_is_box(t)) {
			om_kind rc = om_value_copy(&out[i], t, st);
			if (rc)
				return rc;
			continue;
		}
		if (can_hand_over(r, p, f, i)) {
			out[i] = *t;
			out[i].data = om_pool_take(&r->pool, f->blk[p->outputs[i]]);
			continue;
		}
		om_kind rc = om_tensor_alloc(&out[i], t->dtype, t->rank, t->dims, st);
		if (!rc)
			rc = om_tensor_copy_data(&out[i], t, st);
		if (rc)
			return rc;
	}
	return OM_OK;
}

om_kind om_run_plan(om_runner *r, const om_plan *p, om_frame *parent, const om_tensor *const *in,
		    int nin, om_tensor *out, int nout, om_status *st)
{
	for (int i = 0; i < nout; i++)
		memset(&out[i], 0, sizeof out[i]);
	if (nout > p->noutputs)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"%d outputs asked, graph '%s' has %d", nout, p->g->name,
				p->noutputs);
	if ((parent ? parent->p : NULL) != p->parent)
		return om_error(st, OM_ERR_INTERNAL, NULL, "graph '%s' run outside its parent",
				p->g->name);
	om_frame f = {.p = p, .parent = parent};
	f.t = calloc((size_t)(p->nslots ? p->nslots : 1), sizeof *f.t);
	f.blk = malloc(sizeof *f.blk * (size_t)(p->nslots ? p->nslots : 1) * 3);
	om_kind rc = OM_OK;
	if (f.blk) {
		f.owner = f.blk + p->nslots;
		f.brefs = f.owner + p->nslots;
	}
	if (!f.t || !f.blk) {
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		goto out;
	}
	for (int32_t k = 0; k < p->nslots; k++) {
		f.blk[k] = f.owner[k] = -1;
		f.brefs[k] = 0;
	}
	if (!parent)
		om_pool_run_begin(&r->pool);
	rc = bind_slots(p, &f, in, nin, st);
	for (int32_t i = 0; !rc && i < p->nsteps; i++)
		if (!p->steps[i].folded && !p->steps[i].dead && !p->steps[i].absorbed &&
		    !(rc = check_time(r, p->steps[i].node, st)))
			rc = run_step(r, &f, &p->steps[i], st);
	if (!rc)
		rc = copy_outputs(r, p, &f, out, nout, st);
	if (rc)
		for (int i = 0; i < nout; i++)
			om_value_free(&out[i]);
out:
	for (int32_t k = 0; f.blk && k < p->nslots; k++)
		if (f.blk[k] >= 0)
			om_pool_release(&r->pool, f.blk[k]);
		else if (f.blk[k] == BLK_OWNED)
			box_free(&f, k);
	if (!parent && f.blk)
		om_pool_run_end(&r->pool, rc == OM_OK);
	free(f.t);
	free(f.blk);
	return rc;
}

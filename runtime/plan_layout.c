/*
 * plan_layout.c — which values a plan keeps channel-blocked (fast mode; the layout is op.h's).
 *
 * oneDNN's convolutions run on channel-blocked activations (nChw16c on AVX-512, or NHWC:
 * plan_block below); fed plain NCHW, each reorders its input in and its output back
 * (bench/conv_layers.py: the reorders cost as much as a depthwise or 1x1 conv itself). So a
 * run of convolutions keeps its values blocked between them and converts only at the edges,
 * as ONNX Runtime's NCHWc transformer does; the element-wise ops and global pools between the
 * convs (residual Adds, the squeeze-excitation Mul) run on the blocked values too.
 *
 * Each row with a layout function says which of a node's positions may be blocked and which
 * are tied (all blocked or all plain). A value is blocked when its producer and every reader
 * take it blocked, it is a float (N, C, H, W) (a shape settled or probed, below), no graph
 * output and read by no subgraph; then the ties are settled by demoting, until nothing changes. A blocked value's
 * slot gets the blocked tensor shape (N, ceil(C/b), H, W, b), so its buffer is the padded one
 * and element-wise kernels need nothing else; a step's om_ctx.blocked says which of its
 * positions are blocked. Exact mode plans nothing: its kernels' bits are the contract.
 *
 * The rows answer on plan-time shapes. Steps shaped per run (a symbolic batch or image size)
 * take part with the probe's shapes (plan_probe.c): a blocked value's channels are those of
 * the convolutions it comes from, the same in every run (a second probe with other values of
 * the symbols must give the same: settled_channels); run.c shapes such steps on the
 * logical shapes of their blocked inputs, gives their blocked outputs the blocked shape and
 * checks the channels. Their inputs that are not blocked (a Clip's bounds) must be settled.
 */
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "plan.h"

enum { MAX_POS = 32 }; /* positions of a node that can be blocked: inputs, outputs */

typedef struct step_req {
	bool takes;       /* the step's row has a layout function and the step may use it */
	om_layout_req r;
} step_req;

static bool runs(const om_step *sp)
{
	return !sp->folded && !sp->dead && !sp->absorbed;
}

/* the row's answer for step sp on the plan-time shapes t */
static bool ask_row(const om_session *s, const om_plan *p, const om_tensor *t,
		    const om_step *sp, int32_t block, om_layout_req *r)
{
	const om_node *n = sp->node;
	if (!sp->op->layout || n->nin > MAX_POS || n->nout > MAX_POS)
		return false;
	const om_tensor *in[MAX_POS];
	om_tensor *out[MAX_POS], res[MAX_POS];
	uint64_t const_in = 0;
	for (int32_t i = 0; i < n->nin; i++) {
		const int32_t k = sp->in[i];
		if (k >= 0 && t[k].rank < 0)
			return false;
		in[i] = k >= 0 ? &t[k] : NULL;
		if (k >= 0 && p->slots[k].kind == OM_SLOT_CONST)
			const_in |= OM_LAYOUT_IN(i);
	}
	for (int32_t i = 0; i < n->nout; i++) {
		const int32_t k = sp->out[i];
		if (k >= 0 && t[k].rank < 0)
			return false;
		res[i] = k >= 0 ? t[k] : (om_tensor){0};
		out[i] = k >= 0 ? &res[i] : NULL;
	}
	om_status st = {0};
	const om_ctx c = {.node = n, .op = sp->op, .opset = sp->opset,
			  .nin = n->nin, .nout = n->nout,
			  .in = in, .out = out, .st = &st, .threads = s->opt.threads,
			  .const_in = const_in, .block = block};
	sp->op->layout(&c, r);
	for (int32_t i = 0; sp->dynamic && i < n->nin; i++)
		if (sp->in[i] >= 0 && !(r->may & OM_LAYOUT_IN(i)) && !p->slots[sp->in[i]].known)
			return false; /* an input whose shape the probe guessed stays as it is */
	return r->may && (!r->block || r->block == block);
}

/* position bit of step sp: its slot, or -1 */
static int32_t slot_at(const om_step *sp, int32_t pos)
{
	return pos < 32 ? (pos < sp->node->nin ? sp->in[pos] : -1)
			: (pos - 32 < sp->node->nout ? sp->out[pos - 32] : -1);
}

/* the tie of step sp: any plain slot makes all plain; true when something changed */
static bool settle_tie(const om_step *sp, const step_req *q, uint8_t *blk)
{
	bool plain = false;
	for (int32_t pos = 0; pos < 64; pos++) {
		const int32_t k = q->r.tied >> pos & 1 ? slot_at(sp, pos) : -1;
		plain |= k >= 0 && !blk[k];
	}
	bool changed = false;
	for (int32_t pos = 0; plain && pos < 64; pos++) {
		const int32_t k = q->r.tied >> pos & 1 ? slot_at(sp, pos) : -1;
		if (k >= 0 && blk[k])
			blk[k] = 0, changed = true;
	}
	return changed;
}

/* whether a value of type dtype may be blocked by `block`: float, and 8-bit integers in NHWC
 * (no padding channels: QLinearConv's values, between the int8 convolutions of a QDQ model) */
static bool blockable_type(int32_t dtype, int32_t block)
{
	return dtype == OM_FLOAT ||
	       ((dtype == OM_INT8 || dtype == OM_UINT8) && block == OM_BLOCK_NHWC);
}

/* a slot's initial verdict: float (N, C, H, W) (8-bit too in NHWC), produced and read only
 * where blocked is taken, no graph output, no subgraph's */
static void initial(const om_plan *p, const om_tensor *t, const step_req *q, int32_t block,
		    uint8_t *blk)
{
	int32_t *reads = calloc((size_t)p->nslots, sizeof *reads);
	if (!reads)
		return; /* blk stays all zero: nothing blocked */
	for (int32_t i = 0; i < p->nsteps; i++) {
		const om_step *sp = &p->steps[i];
		for (int32_t k = 0; runs(sp) && k < sp->node->nout; k++) {
			const int32_t v = sp->out[k];
			if (v >= 0 && q[i].takes && (q[i].r.may & OM_LAYOUT_OUT(k)) &&
			    p->slots[v].kind == OM_SLOT_NODE && blockable_type(t[v].dtype, block) &&
			    t[v].rank == 4 && t[v].dims[1] > 0)
				blk[v] = 1;
		}
	}
	for (int32_t i = 0; i < p->nsteps; i++) {
		const om_step *sp = &p->steps[i];
		for (int32_t k = 0; runs(sp) && k < sp->node->nin; k++) {
			const int32_t v = sp->in[k];
			if (v < 0)
				continue;
			reads[v]++;
			if (!q[i].takes || !(q[i].r.may & OM_LAYOUT_IN(k)))
				blk[v] = 0;
		}
	}
	for (int32_t v = 0; v < p->nslots; v++)
		if (reads[v] != p->slots[v].uses)
			blk[v] = 0; /* a graph output, or read by a subgraph */
	free(reads);
}

/* The plan's block: NHWC when every step that takes blocked values by the CPU's block takes
 * them in NHWC too (no depthwise conv), else the CPU's (OM_LAYOUT_AUTO; the session's option
 * may ask for either). oneDNN runs convs of one group in NHWC on its brgemm kernels, which beat
 * its nChw16c ones (two threads, ms: googlenet's 64 -> 192 3x3 at 56x56 1.75 -> 1.60, 160 ->
 * 320 at 14x14 0.46 -> 0.37, resnet50's 512 at 7x7 0.62 -> 0.48, 1x1 convs 3-13%); its NHWC
 * depthwise kernel loses (72 at 56x56, one thread: 0.036 -> 0.061). On AVX2 (block 8) only
 * when asked, or for steps that take NHWC alone (QLinearConv's 8-bit values): oneDNN 2.6 has
 * no brgemm conv there, and nChw8c or plain NCHW beat NHWC for float convs (a Zen 3, ms a run
 * at 1 / 2 threads: resnet18 44 / 37 NHWC, 36 / 25 nChw8c, 36 / 24 NCHW). q: the rows'
 * answers by
 * the CPU's block, replaced by NHWC's when NHWC is chosen. */
static int32_t plan_block(const om_session *s, const om_plan *p, const om_tensor *t,
			  int32_t block, step_req *q)
{
	bool nhwc = block > 0 && s->opt.layout != OM_LAYOUT_BLOCKED;
	om_layout_req r;
	for (int32_t i = 0; nhwc && s->opt.layout != OM_LAYOUT_NHWC && i < p->nsteps; i++)
		nhwc = !q[i].takes || ask_row(s, p, t, &p->steps[i], OM_BLOCK_NHWC, &r);
	/* AVX2: only for steps that take NHWC alone (8-bit values) */
	bool gains = block == 16 || s->opt.layout == OM_LAYOUT_NHWC;
	for (int32_t i = 0; nhwc && !gains && i < p->nsteps; i++)
		gains = !q[i].takes && runs(&p->steps[i]) &&
			ask_row(s, p, t, &p->steps[i], OM_BLOCK_NHWC, &r);
	nhwc = nhwc && gains;
	for (int32_t i = 0; nhwc && i < p->nsteps; i++)
		q[i].takes = runs(&p->steps[i]) &&
			     ask_row(s, p, t, &p->steps[i], OM_BLOCK_NHWC, &q[i].r);
	return nhwc ? OM_BLOCK_NHWC : block;
}

/* A value shaped per run stays plain unless its channels are the same whatever the graph
 * inputs' symbolic dims are: probed again with other values (a batch of 3, sides of 96), its
 * channel count must not change. The probe's rule (channels from convolutions' weights) does
 * not hold for a Resize of a graph input of symbolic channels: blocked for the probe's 64, a
 * run with 2 failed ("planned blocked with 64 channels"; found by fuzz_run). False: no memory. */
static bool settled_channels(const om_plan *p, const om_tensor *t, uint8_t *blk)
{
	bool any = false;
	for (int32_t v = 0; v < p->nslots && !any; v++)
		any = blk[v] && !p->slots[v].known;
	if (!any)
		return true;
	om_tensor *t2 = om_plan_probe_with(p, 3, 96);
	if (!t2)
		return false;
	for (int32_t v = 0; v < p->nslots; v++)
		if (blk[v] && !p->slots[v].known &&
		    (t2[v].rank != t[v].rank || t2[v].rank < 2 || t2[v].dims[1] != t[v].dims[1]))
			blk[v] = 0;
	free(t2);
	return true;
}

om_kind om_plan_layout(const om_session *s, om_plan *p, const om_tensor *t, om_status *st)
{
	int32_t block = s->opt.exact || s->opt.layout == OM_LAYOUT_NCHW ? 0 : om_layout_block();
	if (!block || !p->nslots)
		return OM_OK;
	step_req *q = calloc((size_t)p->nsteps + 1, sizeof *q);
	uint8_t *blk = calloc((size_t)p->nslots, 1);
	if (!q || !blk) {
		free(q), free(blk);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	}
	for (int32_t i = 0; i < p->nsteps; i++)
		q[i].takes = runs(&p->steps[i]) && ask_row(s, p, t, &p->steps[i], block, &q[i].r);
	block = plan_block(s, p, t, block, q);
	initial(p, t, q, block, blk);
	if (!settled_channels(p, t, blk)) {
		free(q), free(blk);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	}
	for (bool changed = true; changed;) {
		changed = false;
		for (int32_t i = 0; i < p->nsteps; i++)
			if (q[i].takes)
				changed |= settle_tie(&p->steps[i], &q[i], blk);
	}
	for (int32_t v = 0; v < p->nslots; v++) {
		om_slot *sl = &p->slots[v];
		if (!blk[v])
			continue;
		sl->chans = t[v].dims[1];
		if (!sl->known)
			continue; /* shaped per run (run.c) */
		int64_t d[5];
		om_layout_dims(sl->meta.dims, block, d);
		sl->meta.rank = 5;
		memcpy(sl->meta.dims, d, sizeof d);
		sl->meta.nbytes = om_tensor_bytes_for(sl->meta.dtype, 5, d);
	}
	for (int32_t i = 0; i < p->nsteps; i++) {
		om_step *sp = &p->steps[i];
		for (int32_t pos = 0; q[i].takes && pos < 64; pos++) {
			const int32_t k = slot_at(sp, pos);
			if (k >= 0 && blk[k])
				sp->blocked |= UINT64_C(1) << pos;
		}
	}
	p->block = block;
	free(q), free(blk);
	return OM_OK;
}

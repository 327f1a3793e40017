/* plan_notes.c — the executor's plan as dot annotations: the model is planned in a session
 * and run once on placeholder inputs (zeros; symbolic and unknown dims set to 1), and a node
 * hook records which buffer each value landed in. Values sharing a buffer (a view and its
 * source, or a later value reusing a freed block) get one colour. A node's note says how its
 * step runs, with the implementation its row chose at plan time (the step's record, which this
 * file only reads; op.h om_op.choose) and the one its kernel ran when that differs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activation.h"
#include "plan_notes.h"
#include "session.h"

typedef struct seen_value {
	const om_value *key;
	const void *data;
	UT_hash_handle hh;
} seen_value;

typedef struct seen_buffer {
	const void *key;
	int id;
	UT_hash_handle hh;
} seen_buffer;

typedef struct seen_node {
	const om_node *key;
	char note[256];
	int view; /* the plan aliases output 0 to input 0 */
	UT_hash_handle hh;
} seen_node;

struct om_plan_notes {
	const om_model *m;
	om_session *s;
	seen_value *values;
	seen_buffer *buffers;
	seen_node *nodes;
	int nbuffers;
	bool oom;
};

static seen_node *node_entry(om_plan_notes *p, const om_node *n)
{
	seen_node *e = NULL;
	HASH_FIND_PTR(p->nodes, &n, e);
	if (!e && (e = calloc(1, sizeof *e))) {
		e->key = n;
		HASH_ADD_PTR(p->nodes, key, e);
	}
	p->oom |= !e;
	return e;
}

static void hook(void *arg, const om_node *n, const om_tensor *const *in, int nin,
		 const om_tensor *const *out, int nout)
{
	(void)in, (void)nin;
	om_plan_notes *p = arg;
	for (int i = 0; i < nout; i++) {
		if (!n->out[i] || !out[i] || !out[i]->data)
			continue;
		seen_value *v = NULL;
		const om_value *key = n->out[i];
		HASH_FIND_PTR(p->values, &key, v);
		if (!v && (v = calloc(1, sizeof *v))) {
			v->key = key;
			HASH_ADD_PTR(p->values, key, v);
		}
		if (!v) {
			p->oom = true;
			return;
		}
		v->data = out[i]->data;
		seen_buffer *b = NULL;
		HASH_FIND_PTR(p->buffers, &v->data, b);
		if (!b && (b = calloc(1, sizeof *b))) {
			b->key = v->data;
			b->id = p->nbuffers++;
			HASH_ADD_PTR(p->buffers, key, b);
		}
		p->oom |= !b;
	}
}

/* the buffer recorded for `from` (a node output never stored) belongs to `to` */
static void move_value(om_plan_notes *p, const om_value *from, const om_value *to)
{
	seen_value *v = NULL;
	HASH_FIND_PTR(p->values, &from, v);
	if (!v || !to)
		return;
	HASH_DEL(p->values, v);
	v->key = to;
	HASH_ADD_PTR(p->values, key, v);
}

/* Zeros shaped like the graph input (symbolic and unknown dims taken as 1). */
static om_kind placeholder(const om_value *v, om_tensor *t, om_status *st)
{
	int64_t dims[OM_MAX_RANK];
	int32_t rank = v->type.rank < 0 ? 0 : v->type.rank;
	if (rank > OM_MAX_RANK)
		return om_error(st, OM_ERR_UNSUPPORTED, NULL, "input '%s' has rank %d", v->name, rank);
	for (int32_t i = 0; i < rank; i++)
		dims[i] = v->type.dims[i].value >= 0 ? v->type.dims[i].value : 1;
	int32_t dtype = v->type.elem ? v->type.elem : OM_FLOAT;
	return om_tensor_alloc(t, dtype, rank, dims, st);
}

static om_kind run_once(om_plan_notes *p, const om_model *m, om_status *st)
{
	int nin = om_session_input_count(p->s), nout = om_session_output_count(p->s);
	om_tensor *in = calloc((size_t)nin + 1, sizeof *in);
	om_tensor *out = calloc((size_t)nout + 1, sizeof *out);
	om_kind rc = in && out ? OM_OK : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int i = 0; i < nin && !rc; i++) {
		const om_value *v = om_graph_find(m->graph, om_session_input_name(p->s, i));
		rc = v ? placeholder(v, &in[i], st)
		       : om_error(st, OM_ERR_INTERNAL, NULL, "no graph input %d", i);
	}
	if (!rc) {
		om_session_set_hook(p->s, hook, p);
		rc = om_session_run(p->s, in, nin, out, nout, st);
	}
	for (int i = 0; in && i < nin; i++)
		om_tensor_free(&in[i]);
	for (int i = 0; out && i < nout; i++)
		om_tensor_free(&out[i]);
	free(in);
	free(out);
	return rc;
}

om_kind om_plan_notes_make(const om_model *m, const om_session_options *opt, om_plan_notes **out,
			   om_status *st)
{
	*out = NULL;
	om_plan_notes *p = calloc(1, sizeof *p);
	if (!p)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	p->m = m;
	om_kind rc = om_session_create(m, opt, &p->s, st);
	if (!rc && run_once(p, m, st)) {
		/* a placeholder input the model rejects: draw the plan without buffers */
		fprintf(stderr, "omopt dot: note: the plan was not run on placeholder inputs (%s); "
				"buffers are not shown\n", st->msg);
		*st = (om_status){0};
	}
	for (int i = 0; !rc && i < om_session_node_count(p->s); i++) {
		om_node_info ni = om_session_node_info(p->s, i);
		seen_node *e = node_entry(p, ni.node);
		if (!e)
			break;
		e->view = ni.view;
		char post[48] = "";
		/* what else the plan-time choice fixed (Transpose: the rank it moves) */
		const char *extra = ni.plan_how ? ni.plan_how : "";
		const char *own = om_attr_string(ni.node, "activation", NULL);
		if (ni.post) {
			/* output 0 is never stored: the kernel writes the absorbed activation's */
			snprintf(post, sizeof post, ", applies %s", om_act_name(ni.post));
			move_value(p, ni.node->out[0], ni.out0);
		} else if (own && (ni.op->flags & OM_OP_EPILOGUE)) { /* FusedConv's own */
			snprintf(post, sizeof post, ", applies %.32s", own);
		}
		/* FusedConv's Z: added before the activation, Y written over it when Z dies here
		 * (OM_OP_INPLACE_LAST: a new user could not tell from the plan) */
		const bool z = ni.op->code == OM_OPC_MS_FUSED_CONV && ni.node->nin > 3 &&
			       ni.node->in[3];
		char layout[48] = "", tag[16] = "NHWC";
		const bool reads = ni.blocked & 0xffffffffu, writes = ni.blocked >> 32;
		if (ni.block != OM_BLOCK_NHWC)
			snprintf(tag, sizeof tag, "nChw%dc", ni.block);
		if (ni.blocked && !ni.absorbed) /* values kept channel-blocked between convs
						   (plan_layout.c); an absorbed node moves none */
			snprintf(layout, sizeof layout, ", %s%s%s %s", reads ? "reads" : "",
				 reads && writes ? " and " : "", writes ? "writes" : "", tag);
		/* the implementation chosen at plan time (the step's record: om_op.choose), and
		 * the one the kernel ran when that differs (a step shaped per run has no plan-time
		 * choice; a kernel may decline it) */
		char impl[80] = "";
		const char *plan = ni.plan_impl, *ran = ni.impl;
		const bool other = ran && (!plan || strcmp(ran, plan));
		if (!ni.folded && !ni.absorbed)
			snprintf(impl, sizeof impl, "%s%.32s%s%.32s%s", plan ? " " : "",
				 plan ? plan : "", other ? " (ran " : "", other ? ran : "",
				 other ? ")" : "");
		snprintf(e->note, sizeof e->note, "%s%s%s%s%s%s%s%s%s%s",
			 ni.folded     ? "folded at plan time"
			 : ni.absorbed == 2 ? "absorbed into its output's reader"
			 : ni.absorbed ? "absorbed into its input's producer"
			 : ni.mode == OM_MODE_FAST ? "fast kernel" : "exact kernel", impl,
			 ni.scaled ? ", scales its input per channel" : "",
			 z ? ", adds Z (in its place when Z dies here)" : "", post, layout,
			 ni.dynamic ? ", shaped per run" : "", ni.view ? ", view" : "",
			 extra[0] ? "; " : "", extra);
	}
	if (!rc && p->oom)
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (rc) {
		om_plan_notes_free(p);
		return rc;
	}
	*out = p;
	return OM_OK;
}

static int plan_value(void *arg, const om_value *v, om_dot_plan_value *pv)
{
	om_plan_notes *p = arg;
	seen_value *sv = NULL;
	HASH_FIND_PTR(p->values, &v, sv);
	if (!sv)
		return 1;
	seen_buffer *b = NULL;
	HASH_FIND_PTR(p->buffers, &sv->data, b);
	pv->buffer = b ? b->id : -1;
	seen_node *e = NULL;
	const om_node *n = v->producer;
	if (n && v == n->out[0])
		HASH_FIND_PTR(p->nodes, &n, e);
	pv->is_view = e && e->view; /* in-place kernels share the buffer but are not views */
	return 0;
}

static const char *plan_node(void *arg, const om_node *n)
{
	om_plan_notes *p = arg;
	seen_node *e = NULL;
	HASH_FIND_PTR(p->nodes, &n, e);
	return e && e->note[0] ? e->note : NULL;
}

void om_plan_notes_options(om_plan_notes *p, om_dot_config *opt)
{
	opt->plan_value = plan_value;
	opt->plan_node = plan_node;
	opt->plan_arg = p;
}

void om_plan_notes_free(om_plan_notes *p)
{
	if (!p)
		return;
	seen_value *v, *vt;
	HASH_ITER(hh, p->values, v, vt) {
		HASH_DEL(p->values, v);
		free(v);
	}
	seen_buffer *b, *bt;
	HASH_ITER(hh, p->buffers, b, bt) {
		HASH_DEL(p->buffers, b);
		free(b);
	}
	seen_node *n, *nt;
	HASH_ITER(hh, p->nodes, n, nt) {
		HASH_DEL(p->nodes, n);
		free(n);
	}
	om_session_free(p->s);
	free(p);
}

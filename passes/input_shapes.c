/*
 * input_shapes.c — om_simplify_options.input_shapes (`--input-shape NAME:D1,D2,...`): the
 * shapes the user gives graph inputs, checked against the declarations and written into them
 * before any pass, as onnx-simplifier's --overwrite-input-shape does.
 *
 * A given shape must have the declared rank (any rank when none is declared); a declared
 * number stays that number (unless overwrite_fixed: then the main graph's value_info goes
 * and its outputs' numbers become unknown dims, inferred again from the new shapes). A
 * declared symbol may become a number or another symbol: that
 * binds the symbol, and every declaration of the model that names it (graph inputs and
 * outputs, value_info, in every graph) takes the binding, since one symbol is one extent.
 * A symbol bound two ways ("N" to 1 by one input and to 2 by another) is an error.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pass.h"

enum { MAX_BINDINGS = 64 };

typedef struct binding {
	const char *sym; /* the declared symbol */
	om_dim to;       /* what it becomes: a number or another symbol */
} binding;

static const char *shape_text(const om_input_shape *s, char *buf, size_t size)
{
	size_t k = 0;
	buf[0] = 0;
	for (int32_t i = 0; i < s->rank && k < size; i++) {
		if (s->dims[i] >= 0)
			k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "",
					      (long long)s->dims[i]);
		else
			k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? "," : "",
					      s->dim_params[i] ? s->dim_params[i] : "?");
	}
	return buf;
}

static const char *dim_text(om_dim d, char *buf, size_t size)
{
	if (d.value >= 0)
		snprintf(buf, size, "%lld", (long long)d.value);
	else
		snprintf(buf, size, "%s", d.param ? d.param : "?");
	return buf;
}

/* Records sym -> to; an error when sym is already bound to something else. */
static om_kind bind(binding *b, int32_t *nb, const char *sym, om_dim to, const char *input,
		    om_status *st)
{
	for (int32_t i = 0; i < *nb; i++) {
		if (strcmp(b[i].sym, sym))
			continue;
		if (om_dims_equal(b[i].to, to))
			return OM_OK;
		char x[80], y[80];
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input shape of '%s': symbol '%s' is given %s here and %s by "
				"another input shape", input, sym, dim_text(to, x, sizeof x),
				dim_text(b[i].to, y, sizeof y));
	}
	if (*nb == MAX_BINDINGS)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input shapes bind more than %d symbols", MAX_BINDINGS);
	b[(*nb)++] = (binding){sym, to};
	return OM_OK;
}

/* Checks s against the declaration of its input and records the symbols it binds. */
static om_kind check_one(const om_graph *g, const om_input_shape *s, binding *b, int32_t *nb,
			 int overwrite_fixed, bool *fixed_changed, om_status *st)
{
	char want[256], have[256];
	if (!s->name)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "an input shape without a name");
	const om_value *v = om_graph_find(g, s->name);
	if (!v || !(v->flags & OM_VALUE_GRAPH_INPUT))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input shape of '%s': the model has no graph input of that name",
				s->name);
	if (v->flags & OM_VALUE_INITIALIZER)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input shape of '%s': it is an initializer (its shape is its data's)",
				s->name);
	if (s->rank < 0 || s->rank > OM_MAX_RANK)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input shape of '%s': rank %d is outside 0..%d", s->name, s->rank,
				OM_MAX_RANK);
	for (int32_t i = 0; i < s->rank; i++)
		if (s->dims[i] < -1 || (s->dims[i] == -1 && (!s->dim_params[i] ||
							      !s->dim_params[i][0])))
			return om_error(st, OM_ERR_INVALID_INPUT, NULL,
					"input shape of '%s': dim %d is neither a number nor a "
					"symbol", s->name, i);
	if (v->type.kind != OM_TYPE_TENSOR || !v->type.elem)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input shape of '%s': the model does not declare it as a tensor of "
				"an element type", s->name);
	const om_type *t = &v->type;
	if (t->rank < 0)
		return OM_OK; /* no declared shape: any shape fits */
	if (t->rank != s->rank) {
		om_input_shape d = {.rank = t->rank <= OM_MAX_RANK ? t->rank : 0};
		for (int32_t i = 0; i < d.rank; i++)
			d.dims[i] = t->dims[i].value, d.dim_params[i] = t->dims[i].param;
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"input shape of '%s': [%s] has rank %d but the model declares "
				"rank %d ([%s])", s->name, shape_text(s, want, sizeof want), s->rank,
				t->rank, shape_text(&d, have, sizeof have));
	}
	for (int32_t i = 0; i < s->rank; i++) {
		const om_dim d = t->dims[i];
		const om_dim to = s->dims[i] >= 0 ? (om_dim){s->dims[i], NULL}
						  : (om_dim){-1, s->dim_params[i]};
		if (om_dim_known(d) && !om_dims_equal(d, to) && overwrite_fixed) {
			*fixed_changed = true;
		} else if (om_dim_known(d) && !om_dims_equal(d, to)) {
			char x[80];
			return om_error(st, OM_ERR_INVALID_INPUT, NULL,
					"input shape of '%s': dim %d is declared %lld and cannot "
					"become %s", s->name, i, (long long)d.value,
					dim_text(to, x, sizeof x));
		}
		om_kind k = d.param ? bind(b, nb, d.param, to, s->name, st) : OM_OK;
		if (k)
			return k;
	}
	return OM_OK;
}

/* The dims of ty with the bindings applied; the type is rebuilt (a new dims array) when one
 * applies, so that the writer writes the new shape. */
static om_kind apply_bindings(om_model *m, om_type *ty, const binding *b, int32_t nb)
{
	if (ty->kind != OM_TYPE_TENSOR || ty->rank <= 0)
		return OM_OK;
	om_dim *dims = NULL;
	for (int32_t i = 0; i < ty->rank; i++) {
		if (!ty->dims[i].param)
			continue;
		for (int32_t k = 0; k < nb; k++) {
			if (strcmp(ty->dims[i].param, b[k].sym))
				continue;
			if (!dims) {
				dims = om_arena_memdup(m->arena, ty->dims,
						       sizeof *dims * (size_t)ty->rank);
				if (!dims)
					return OM_ERR_NOMEM;
			}
			dims[i] = b[k].to;
			break;
		}
	}
	if (dims) {
		ty->dims = dims;
		ty->proto = NULL;
	}
	return OM_OK;
}

static om_kind apply_graph(om_model *m, om_graph *g, const binding *b, int32_t nb)
{
	om_value **lists[3] = {g->inputs, g->outputs, g->infos};
	const int32_t counts[3] = {g->ninputs, g->noutputs, g->ninfos};
	for (int l = 0; l < 3; l++)
		for (int32_t i = 0; i < counts[l]; i++)
			if (apply_bindings(m, &lists[l][i]->type, b, nb))
				return OM_ERR_NOMEM;
	return OM_OK;
}

/* After a declared number changed: what the main graph declared from the old shapes may be
 * wrong now. Its value_info goes and its outputs' numbers become unknown dims, which
 * om_refine_outputs fills from inference. */
static om_kind forget_fixed(om_model *m)
{
	om_graph *g = m->graph;
	g->ninfos = 0;
	for (int32_t i = 0; i < g->noutputs; i++) {
		om_type *ty = &g->outputs[i]->type;
		if (ty->kind != OM_TYPE_TENSOR || ty->rank <= 0)
			continue;
		om_dim *dims = om_arena_memdup(m->arena, ty->dims, sizeof *dims * (size_t)ty->rank);
		if (!dims)
			return OM_ERR_NOMEM;
		for (int32_t d = 0; d < ty->rank; d++)
			if (om_dim_known(dims[d]))
				dims[d] = (om_dim){-1, NULL};
		ty->dims = dims;
		ty->proto = NULL;
	}
	return OM_OK;
}

om_kind om_apply_input_shapes(om_model *m, const om_input_shape *shapes, int32_t n,
			      int overwrite_fixed, om_status *st)
{
	if (n <= 0)
		return OM_OK;
	if (!shapes)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "input_shapes is NULL");
	om_graph *g = m->graph;
	binding b[MAX_BINDINGS];
	int32_t nb = 0;
	bool fixed_changed = false;
	for (int32_t i = 0; i < n; i++) {
		for (int32_t k = 0; k < i; k++)
			if (shapes[i].name && shapes[k].name &&
			    !strcmp(shapes[i].name, shapes[k].name))
				return om_error(st, OM_ERR_INVALID_INPUT, NULL,
						"input shape of '%s' given twice", shapes[i].name);
		om_kind k = check_one(g, &shapes[i], b, &nb, overwrite_fixed, &fixed_changed, st);
		if (k)
			return k;
	}
	/* symbols the user named live in the model's arena, as loaded ones do */
	for (int32_t i = 0; i < nb; i++)
		if (b[i].to.param && !(b[i].to.param = om_arena_strdup(m->arena, b[i].to.param)))
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (fixed_changed && forget_fixed(m))
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	/* the bindings first: the given shapes are written as given */
	for (om_graph *sg = m->all_graphs; sg; sg = sg->next_in_model)
		if (apply_graph(m, sg, b, nb))
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int32_t i = 0; i < n; i++) {
		const om_input_shape *s = &shapes[i];
		om_value *v = om_graph_find(g, s->name);
		om_dim *dims = om_arena_alloc(m->arena, sizeof *dims * (size_t)(s->rank + 1));
		if (!dims)
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		for (int32_t d = 0; d < s->rank; d++) {
			dims[d] = (om_dim){s->dims[d] >= 0 ? s->dims[d] : -1, NULL};
			if (s->dims[d] < 0 &&
			    !(dims[d].param = om_arena_strdup(m->arena, s->dim_params[d])))
				return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		}
		v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = v->type.elem, .rank = s->rank,
				    .dims = dims};
	}
	return OM_OK;
}

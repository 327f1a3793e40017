#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crowd.h"
#include "session.h"
#include "testutil.h"

/* Every unit test splits its loops whatever else the machine runs (crowd.h): CI runs two test
 * programs at once on two cores, where the watch would hold every split and leave the
 * sanitizers' runs without a second thread in them. test_crowd turns it on itself. */
__attribute__((constructor)) static void tu_no_crowd_watch(void)
{
	om_crowd_watch(false);
}

const char *tu_shared_dir(void)
{
	const char *d = getenv("OMOPT_SHARED");
	struct stat sb;
	if (!d || stat(d, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return NULL;
	return d;
}

const char *tu_source_path(const char *rel)
{
	static char buf[4096];
	const char *src = getenv("OMOPT_SOURCE");
	snprintf(buf, sizeof buf, "%s/%s", src ? src : ".", rel);
	return buf;
}

int tu_tmpdir_make(char *buf, size_t size, const char *prefix)
{
	snprintf(buf, size, "/tmp/%sXXXXXX", prefix);
	return mkdtemp(buf) ? 0 : -1;
}

int tu_tmpdir_remove(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void read_back(const char *dir, const char *name, char *buf, size_t size)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
}

int tu_run_omopt(const char *dir, const char *args, char *out, size_t nout, char *err,
		 size_t nerr)
{
	const char *b = getenv("OMOPT_BUILD");
	char cmd[16384];
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tools/omopt' %s >.omopt_out 2>.omopt_err", dir,
		 b ? b : ".", args);
	int st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st));
	read_back(dir, ".omopt_out", out, nout);
	read_back(dir, ".omopt_err", err, nerr);
	return WEXITSTATUS(st);
}

void tu_push_value(om_graph *g, om_value ***list, int32_t *n, om_value *v)
{
	om_value **na = om_arena_alloc(g->model->arena, sizeof *na * (size_t)(*n + 1));
	assert_non_null(na);
	if (*n)
		memcpy(na, *list, sizeof *na * (size_t)*n);
	na[(*n)++] = v;
	*list = na;
}

om_model *tu_model(int64_t opset)
{
	om_model *m = om_model_new();
	assert_non_null(m);
	m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	assert_non_null(m->opsets);
	m->opsets[0] = (om_opset){"", opset};
	m->nopsets = 1;
	m->ir_version = 8;
	return m;
}

om_model *tu_model_ms(int64_t opset)
{
	om_model *m = tu_model(opset);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets * 2);
	assert_non_null(m->opsets);
	m->opsets[0] = (om_opset){"", opset};
	m->opsets[1] = (om_opset){"com.microsoft", 1};
	m->nopsets = 2;
	return m;
}

om_node *tu_graph_node(om_graph *g, const char *op, const char *ins, const char *outs)
{
	const char *names[2] = {ins, outs};
	int32_t cnt[2] = {0, 0};
	for (int k = 0; k < 2; k++)
		if (*names[k])
			for (const char *p = names[k]; p; p = strchr(p + 1, ','))
				cnt[k]++;
	om_node *n = om_graph_add_node(g, op, "", op, cnt[0], cnt[1]);
	assert_non_null(n);
	for (int k = 0; k < 2; k++) {
		char buf[256];
		snprintf(buf, sizeof buf, "%s", names[k]);
		int32_t i = 0;
		for (char *p = buf, *e; p && i < cnt[k]; p = e ? e + 1 : NULL, i++) {
			e = strchr(p, ',');
			if (e)
				*e = 0;
			if (!*p)
				continue;
			om_value *v = om_graph_value(g, p);
			if (k == 0)
				n->in[i] = v;
			else
				om_node_set_output(n, i, v);
		}
	}
	return n;
}

void tu_attr_ints(om_node *n, const char *name, int32_t k, const int64_t *v)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_INTS);
	a->n = k;
	a->ints = om_arena_memdup(n->graph->model->arena, v, sizeof(int64_t) * (size_t)k);
}

const char *tu_join(const char *dir, const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

om_value *tu_typed_value(om_graph *g, const char *name, int32_t elem, int32_t rank,
			 const int64_t *dims)
{
	om_value *v = om_graph_value(g, name);
	assert_non_null(v);
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = elem;
	v->type.rank = rank;
	v->type.dims = om_arena_alloc(g->model->arena, sizeof(om_dim) * (size_t)(rank + 1));
	assert_non_null(v->type.dims);
	for (int d = 0; d < rank; d++)
		v->type.dims[d] = dims[d] < 0 ? (om_dim){-1, "N"} : (om_dim){dims[d], NULL};
	return v;
}

om_model *tu_reload(const om_model *m)
{
	char dir[64], path[128];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "omreload"), 0);
	snprintf(path, sizeof path, "%s/m.onnx", dir);
	om_status st = {0};
	assert_int_equal(om_model_save(m, path, NULL, &st), OM_OK);
	om_model *r = NULL;
	assert_int_equal(om_model_load(path, &r, &st), OM_OK);
	tu_tmpdir_remove(dir);
	return r;
}

int tu_count_op(const om_graph *g, const char *op)
{
	int k = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		k += !strcmp(g->nodes[i]->op, op);
	return k;
}

om_session *tu_session_create(const om_model *m)
{
	om_session *s = NULL;
	om_status st = {0};
	om_kind rc = om_session_create(m, NULL, &s, &st);
	if (rc) {
		char buf[1024];
		om_status_format(&st, buf, sizeof buf);
		print_error("%s\n", buf);
	}
	assert_int_equal(rc, OM_OK);
	return s;
}

int tu_absorbed(const om_session *s)
{
	int n = 0;
	for (int i = 0; i < om_session_node_count(s); i++)
		n += om_session_node_info(s, i).absorbed != 0;
	return n;
}

void tu_fill(float *v, int64_t n, uint32_t seed, float scale)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = scale * (float)((int32_t)(seed >> 8) % 20001) / 10000.0f;
	}
}

om_value *tu_float_init(om_graph *g, const char *name, int32_t rank, const int64_t *dims,
			uint32_t seed, float scale)
{
	om_value *v = om_graph_value(g, name);
	v->init = om_model_tensor(g->model, OM_FLOAT, rank, dims);
	tu_fill(v->init->data, om_tensor_numel(v->init), seed, scale);
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, v->init);
	tu_push_value(g, &g->inits, &g->ninits, v);
	return v;
}

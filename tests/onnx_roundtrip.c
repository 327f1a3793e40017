/* onnx_roundtrip.c — helper for tests/roundtrip_ort.py (not a unit test):
 *   onnx_roundtrip model IN.onnx OUT.onnx [--rebuild] [--external]
 *       load → save (--rebuild: every message rebuilt from the IR; --external: weights to
 *       OUT.onnx.<digest>.data) and prints the IR dump's FNV hash of before and after;
 *   onnx_roundtrip tensor IN OUT   converts a tensor file (.pb/.npy by suffix);
 *   onnx_roundtrip inputs IN.onnx  prints the graph inputs that are not initializers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forget_protos.h"


static int fail(const om_status *st)
{
	char b[800];
	om_status_format(st, b, sizeof b);
	fprintf(stderr, "%s\n", b);
	return 1;
}

static unsigned long long dump_hash(const om_model *m)
{
	char *b = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&b, &n);
	om_model_dump(m, f);
	fclose(f);
	unsigned long long h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)b[i]) * 0x100000001b3ull;
	free(b);
	return h;
}

int main(int argc, char **argv)
{
	om_status st = {0};
	if (argc >= 4 && !strcmp(argv[1], "tensor")) {
		om_tensor t;
		if (om_tensor_read_file(argv[2], &t, &st))
			return fail(&st);
		if (om_tensor_write_file(argv[3], &t, "t", &st)) {
			om_tensor_free(&t);
			return fail(&st);
		}
		om_tensor_free(&t);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "inputs")) {
		om_model *m = NULL;
		if (om_model_load(argv[2], &m, &st))
			return fail(&st);
		for (int32_t i = 0; i < m->graph->ninputs; i++)
			if (!(m->graph->inputs[i]->flags & OM_VALUE_INITIALIZER))
				printf("%s\n", m->graph->inputs[i]->name);
		om_model_free(m);
		return 0;
	}
	if (argc < 4 || strcmp(argv[1], "model")) {
		fprintf(stderr, "usage: onnx_roundtrip model IN OUT [--rebuild] [--external]\n"
				"       onnx_roundtrip tensor IN OUT\n"
				"       onnx_roundtrip inputs IN\n");
		return 2;
	}
	om_save_options o = {0};
	bool rebuild = false;
	for (int i = 4; i < argc; i++) {
		rebuild |= !strcmp(argv[i], "--rebuild");
		o.external_data |= !strcmp(argv[i], "--external");
	}
	om_model *m = NULL, *m2 = NULL;
	if (om_model_load(argv[2], &m, &st))
		return fail(&st);
	unsigned long long h1 = dump_hash(m);
	if (rebuild)
		forget_protos(m->graph);
	if (om_model_save(m, argv[3], &o, &st))
		return fail(&st);
	om_model_free(m);
	if (om_model_load(argv[3], &m2, &st))
		return fail(&st);
	printf("%016llx %016llx\n", h1, dump_hash(m2));
	om_model_free(m2);
	return 0;
}

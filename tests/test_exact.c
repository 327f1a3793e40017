/* test_exact.c — exact mode (seed §1, issue 4): outputs are byte-identical with 1 and 2
 * threads, and identical to the hashes in tests/exact_golden.txt, which the plain and the
 * ASan+UBSan builds both check (so both builds give the same bytes). Runs the bundled example
 * and, when present, ../shared/models. OMOPT_WRITE_GOLDEN=1 prints the lines of the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t tensor_hash(const om_tensor *t)
{
	uint64_t h = fnv1a(&t->dtype, sizeof t->dtype, 0xcbf29ce484222325ull);
	h = fnv1a(t->dims, sizeof(int64_t) * (size_t)t->rank, h);
	return fnv1a(t->data, t->nbytes, h);
}

/* Exact is not a licence to be wrong: float outputs stay within rtol 1e-3, atol 1e-4 of
 * ONNX Runtime's ref/<i>.npy where the folder has one. */
static void check_ref(const char *dir, int i, const om_tensor *got)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/ref/%d.npy", dir, i);
	om_tensor ref;
	om_status st = {0};
	if (om_tensor_read_file(path, &ref, &st))
		return;
	assert_int_equal(ref.dtype, got->dtype);
	assert_int_equal(om_tensor_numel(&ref), om_tensor_numel(got));
	if (got->dtype == OM_FLOAT) {
		const float *a = got->data, *b = ref.data;
		for (int64_t k = 0; k < om_tensor_numel(got); k++)
			if (!(fabsf(a[k] - b[k]) <= 1e-4f + 1e-3f * fabsf(b[k])))
				fail_msg("%s output %d element %lld: %g, ONNX Runtime %g", dir, i,
					 (long long)k, (double)a[k], (double)b[k]);
	}
	om_tensor_free(&ref);
}

/* Runs the model in exact mode with `threads`; returns the output hashes (count in *n). */
static void run_exact(const char *dir, const char *model, int threads, uint64_t *hash, int *n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, model);
	om_model *m = NULL;
	om_status st = {0};
	char msg[1024];
	if (om_model_load(path, &m, &st)) {
		om_status_format(&st, msg, sizeof msg);
		fail_msg("%s: %s", path, msg);
	}
	om_session_options opt = {.exact = 1, .threads = threads};
	om_session *s = NULL;
	if (om_session_create(m, &opt, &s, &st)) {
		om_status_format(&st, msg, sizeof msg);
		fail_msg("%s: %s", path, msg);
	}
	int nin = om_session_input_count(s);
	*n = om_session_output_count(s);
	om_tensor in[16], out[16];
	assert_true(nin <= 16 && *n <= 16);
	for (int i = 0; i < nin; i++) {
		snprintf(path, sizeof path, "%s/in/%s.npy", dir, om_session_input_name(s, i));
		assert_int_equal(om_tensor_read_file(path, &in[i], &st), OM_OK);
	}
	if (om_session_run(s, in, nin, out, *n, &st)) {
		om_status_format(&st, msg, sizeof msg);
		fail_msg("%s: %s", dir, msg);
	}
	for (int i = 0; i < *n; i++) {
		hash[i] = tensor_hash(&out[i]);
		check_ref(dir, i, &out[i]);
		om_tensor_free(&out[i]);
	}
	for (int i = 0; i < nin; i++)
		om_tensor_free(&in[i]);
	om_session_free(s);
	om_model_free(m);
}

static bool golden(const char *name, int i, uint64_t *want)
{
	FILE *f = fopen(tu_source_path("tests/exact_golden.txt"), "r");
	if (!f)
		return false;
	char line[256], key[128];
	int idx;
	unsigned long long h;
	bool found = false;
	while (!found && fgets(line, sizeof line, f))
		if (sscanf(line, "%127s %d %llx", key, &idx, &h) == 3 && !strcmp(key, name) &&
		    idx == i) {
			*want = h;
			found = true;
		}
	fclose(f);
	return found;
}

static void check_model(const char *name, const char *dir, const char *model)
{
	uint64_t one[16], two[16];
	int n1, n2;
	run_exact(dir, model, 1, one, &n1);
	run_exact(dir, model, 2, two, &n2);
	assert_int_equal(n1, n2);
	for (int i = 0; i < n1; i++) {
		assert_true(one[i] == two[i]); /* 1 and 2 threads: the same bytes */
		if (getenv("OMOPT_WRITE_GOLDEN")) {
			printf("%s %d %016llx\n", name, i, (unsigned long long)one[i]);
			continue;
		}
		uint64_t want;
		if (!golden(name, i, &want))
			fail_msg("%s output %d has no line in tests/exact_golden.txt", name, i);
		if (one[i] != want)
			fail_msg("%s output %d: hash %016llx, golden %016llx", name, i,
				 (unsigned long long)one[i], (unsigned long long)want);
	}
}

static void bundled_example(void **state)
{
	(void)state;
	/* examples/ keeps its input as image.npy beside the model: in/ is a link-free copy */
	check_model("tiny_shuffle", tu_source_path("tests/exact"), "../../examples/tiny_shuffle.onnx");
}

static void shared_models(void **state)
{
	(void)state;
	const char *shared = tu_shared_dir();
	if (!shared)
		skip();
	static const char *const models[] = {"shufflenet", "gpt_tiny_dyn", "ppocr_det",
					      "silero_op15"};
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/models/%s", shared, models[i]);
		check_model(models[i], dir, "model.onnx");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(bundled_example),
					   cmocka_unit_test(shared_models)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

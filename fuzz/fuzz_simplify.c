/* fuzz_simplify.c — libFuzzer harness: bytes -> load -> om_simplify (verifier after every
 * pass) -> om_model_save into the scratch folder (external data for some inputs) -> load the
 * saved file again. What simplify accepted and saved must load back. */
#include <stdio.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	om_model *m = fz_load(data, size);
	if (!m)
		return 0;
	om_status st = {0};
	const om_simplify_options sopt = {.verify = 1};
	om_kind k = om_simplify(m, &sopt, &st);
	fz_check_kind(k, &st, "om_simplify");
	if (!k) {
		const uint64_t h = fz_hash(data, size);
		char path[512];
		snprintf(path, sizeof path, "%s/simplified.onnx", fz_dir());
		const om_save_options save = {.external_data = (int)(h & 1),
					      .external_min_bytes = 16};
		k = om_model_save(m, path, &save, &st);
		fz_check_kind(k, &st, "om_model_save");
		om_model *back = NULL;
		if (!k && (k = om_model_load(path, &back, &st))) {
			char buf[1024];
			om_status_format(&st, buf, sizeof buf);
			fz_fail("the simplified model does not load again: %s", buf);
		}
		om_model_free(back);
	}
	om_model_free(m);
	return 0;
}

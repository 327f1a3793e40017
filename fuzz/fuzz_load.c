/* fuzz_load.c — libFuzzer harness: bytes -> om_model_load_memory (external data from the
 * scratch folder, which holds the weights file the seed models name). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	om_model *m = NULL;
	om_status st = {0};
	om_kind k = om_model_load_memory(data, size, fz_dir(), &m, &st);
	fz_check_kind(k, &st, "om_model_load_memory");
	if ((k == OM_OK) != (m != NULL))
		fz_fail("om_model_load_memory returned %s with model %p", om_kind_name(k),
			(void *)m);
	om_model_free(m);
	return 0;
}

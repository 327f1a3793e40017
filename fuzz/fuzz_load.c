/* fuzz_load.c — libFuzzer harness: bytes -> om_model_load_memory (external data from the
 * scratch folder, which holds the weights file the seed models name). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	om_model_free(fz_load(data, size));
	return 0;
}

/* random.c — the key of a random op's draw (random.h). */
#include <time.h>

#include "half.h"
#include "random.h"

om_philox_key om_random_key(const om_ctx *c, const char *seed_attr)
{
	const om_attr *a = om_node_attr(c->node, seed_attr);
	if (a && a->type == OM_ATTR_FLOAT)
		return om_philox_key_of_seed((double)a->f);
	if (a && a->type == OM_ATTR_INT)
		return om_philox_key_of_seed((double)a->i);
	if (c->run && c->run->random_key)
		return om_philox_key_of(c->run->random_key(c));
	struct timespec ts = {0};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	const uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return om_philox_key_of(t ^ (uint64_t)(uintptr_t)&ts);
}

bool om_random_store_type(int32_t dtype)
{
	switch (dtype) {
	case OM_FLOAT16: case OM_BFLOAT16: case OM_FLOAT: case OM_DOUBLE: case OM_BOOL:
	case OM_INT8: case OM_UINT8: case OM_INT16: case OM_UINT16: case OM_INT32: case OM_UINT32:
	case OM_INT64: case OM_UINT64:
		return true;
	default:
		return false;
	}
}

void om_random_store(om_tensor *t, int64_t i, double v)
{
	void *p = t->data;
	switch (t->dtype) {
	case OM_FLOAT16: ((uint16_t *)p)[i] = om_float_to_half((float)v); break;
	case OM_BFLOAT16: ((uint16_t *)p)[i] = om_float_to_bf16((float)v); break;
	case OM_FLOAT: ((float *)p)[i] = (float)v; break;
	case OM_DOUBLE: ((double *)p)[i] = v; break;
	case OM_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case OM_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case OM_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case OM_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
	case OM_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case OM_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case OM_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case OM_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
	case OM_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	default: break;
	}
}

/* parallel.c — om_par_for (parallel.h) on OpenMP's pool. */
#include "parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Pieces per thread: more than one, so that a thread slowed by other work on its core leaves
 * the rest to the others; few, so that each piece stays large. */
enum { PIECES_PER_THREAD = 4 };

void om_par_for(int threads, int64_t n, int64_t grain, om_par_fn fn, void *arg)
{
	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
#ifdef _OPENMP
	const int64_t grains = (n - 1) / grain + 1;
	const int64_t nth = threads < grains ? threads : grains;
	if (nth > 1 && !omp_in_parallel()) {
		const int64_t most = nth * PIECES_PER_THREAD;
		const int64_t len = ((grains - 1) / (grains < most ? grains : most) + 1) * grain;
		const int64_t pieces = (n - 1) / len + 1;
#pragma omp parallel for num_threads((int)nth) schedule(dynamic, 1)
		for (int64_t p = 0; p < pieces; p++)
			fn(arg, p * len, n - p * len < len ? n : p * len + len);
		return;
	}
#else
	(void)threads;
#endif
	fn(arg, 0, n);
}

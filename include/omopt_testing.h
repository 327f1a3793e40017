/*
 * omopt_testing.h — entry points for omopt's own tests: not installed, not part of the API.
 *
 * They make a wrong rewrite on purpose so that a test can prove om_check catches a broken pass
 * and om_bisect names it. The test suite, `omopt simplify --test-break-pass` and the Python
 * package's `simplify(test_break_pass=...)` use them; libomopt exports them for those two,
 * with no promise that they stay.
 */
#ifndef OMOPT_TESTING_H
#define OMOPT_TESTING_H

#include "omopt.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * om_simplify, and after the first run of the pass named break_pass (NULL: none, plain
 * om_simplify) a wrong rewrite: the first Conv, MatMul or Gemm node of the main graph whose
 * weight (input 1) is a float initializer reads a copy of it with 1 added to the elements
 * whose index has an odd number of 1 bits. OM_ERR_INVALID_INPUT when the pass is unknown or
 * skipped, or no node fits.
 */
OM_API om_kind om_simplify_with_break(om_model *m, const om_simplify_options *opt,
				      const char *break_pass, om_status *st);

/** om_bisect whose om_simplify makes the wrong rewrite of om_simplify_with_break. */
OM_API om_kind om_bisect_with_break(const om_model *original, const om_simplify_options *sopt,
				    const char *break_pass, const om_check_options *copt,
				    om_bisect_report *rep, om_status *st);

#ifdef __cplusplus
}
#endif
#endif /* OMOPT_TESTING_H */

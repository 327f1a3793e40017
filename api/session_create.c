/* session_create.c — om_session_create: a model with a Gradient node (ai.onnx.preview.training)
 * is copied, its Gradients lowered into backward nodes (passes/lower_gradient.c), and the copy
 * planned (the session holds it); any other model is planned as it is (runtime/session.c). */
#include "pass.h"
#include "session.h"

om_kind om_session_create(const om_model *m, const om_session_options *opt, om_session **out,
			  om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	if (!m || !om_model_has_gradient(m))
		return om_public_kind(st, om_session_create_ex(m, opt, NULL, out, st));
	*out = NULL;
	om_model *copy = NULL;
	om_kind rc = om_model_clone(m, &copy, st);
	if (!rc)
		rc = om_lower_gradients(copy, st);
	if (!rc)
		rc = om_session_create_ex(copy, opt, NULL, out, st);
	if (copy)
		om_model_free(copy); /* the session holds its own reference */
	return om_public_kind(st, rc);
}

/* registry_tables.c — the list of every kernel family's op table (registry.c looks rows up
 * in it through the index gen_op_index.c sorts at build time). */
#include "op_index.h"
#include "grad.h"

/* one line per kernel file; a file that defines a table must be listed here */
extern const om_op_table om_ops_view, om_ops_move, om_ops_index, om_ops_generate,
	om_ops_elementwise, om_ops_cast, om_ops_reduce, om_ops_linalg, om_ops_conv,
	om_ops_pool, om_ops_resize, om_ops_control, om_ops_rnn;
extern const om_op_table om_ops_global_pool, om_ops_unpool;
extern const om_op_table om_ops_softmax, om_ops_lpnorm, om_ops_layernorm, om_ops_groupnorm,
	om_ops_batchnorm, om_ops_mvn, om_ops_lrn;
extern const om_op_table om_ops_loss;
extern const om_op_table om_ops_attention;
extern const om_op_table om_ops_rope;
extern const om_op_table om_ops_gqa;
extern const om_op_table om_ops_mha;
extern const om_op_table om_ops_attention_ms;
extern const om_op_table om_ops_quant;
extern const om_op_table om_ops_matmul_nbits;
extern const om_op_table om_ops_gather_bq;
extern const om_op_table om_ops_sample;
extern const om_op_table om_ops_scatter;
extern const om_op_table om_ops_tensor_scatter;
extern const om_op_table om_ops_detect;
extern const om_op_table om_ops_signal;
extern const om_op_table om_ops_misc;
extern const om_op_table om_ops_unique;
extern const om_op_table om_ops_fold;
extern const om_op_table om_ops_einsum;
extern const om_op_table om_ops_contrib;
extern const om_op_table om_ops_dynq_matmul;
extern const om_op_table om_ops_qlinear_ew, om_ops_qlinear_lut, om_ops_qlinear_pool,
	om_ops_qgemm;
extern const om_op_table om_ops_sequence, om_ops_optional;
extern const om_op_table om_ops_random;
extern const om_op_table om_ops_linear_attn, om_ops_flex_attn, om_ops_causal_conv,
	om_ops_deform_conv;
extern const om_op_table om_ops_ml_tree, om_ops_ml_linear, om_ops_ml_svm, om_ops_ml_prep;
extern const om_op_table om_ops_training;
extern const om_op_table om_ops_string_split, om_ops_string_normalizer, om_ops_regex, om_ops_tfidf;
extern const om_op_table om_ops_image_decoder;
extern const om_op_table om_ops_ml_encode, om_ops_ml_maps;

const om_op_table *const om_op_tables[] = {
	&om_ops_view,   &om_ops_move,        &om_ops_index, &om_ops_generate, &om_ops_elementwise,
	&om_ops_cast,   &om_ops_reduce,
	&om_ops_softmax, &om_ops_lpnorm, &om_ops_layernorm, &om_ops_groupnorm, &om_ops_batchnorm,
	&om_ops_mvn, &om_ops_lrn,
	&om_ops_linalg,   &om_ops_conv,
	&om_ops_pool, &om_ops_global_pool, &om_ops_unpool,
	&om_ops_resize,      &om_ops_control, &om_ops_rnn,
	&om_ops_loss,
	&om_ops_attention,
	&om_ops_rope,
	&om_ops_gqa,
	&om_ops_mha,
	&om_ops_attention_ms,
	&om_ops_quant,
	&om_ops_matmul_nbits,
	&om_ops_gather_bq,
	&om_ops_sample,
	&om_ops_scatter,
	&om_ops_tensor_scatter,
	&om_ops_detect,
	&om_ops_signal,
	&om_ops_misc,
	&om_ops_unique,
	&om_ops_fold,
	&om_ops_einsum,
	&om_ops_contrib,
	&om_ops_dynq_matmul,
	&om_ops_qlinear_ew, &om_ops_qlinear_lut, &om_ops_qlinear_pool, &om_ops_qgemm,
	&om_ops_sequence, &om_ops_optional,
	&om_ops_random,
	&om_ops_linear_attn, &om_ops_flex_attn, &om_ops_causal_conv, &om_ops_deform_conv,
	&om_ops_ml_tree, &om_ops_ml_linear, &om_ops_ml_svm, &om_ops_ml_prep,
	&om_ops_training,
	&om_ops_string_split, &om_ops_string_normalizer, &om_ops_regex, &om_ops_tfidf,
	&om_ops_image_decoder,
	&om_ops_ml_encode, &om_ops_ml_maps,
};

const size_t om_op_ntables = sizeof om_op_tables / sizeof om_op_tables[0];

/* the families' derivative rules (ops/grad.h; om_op_grad) */
extern const om_grad_table om_grads_math, om_grads_move;

const om_grad_table *const om_grad_tables[] = {
	&om_grads_math, &om_grads_move,
};

const size_t om_grad_ntables = sizeof om_grad_tables / sizeof om_grad_tables[0];

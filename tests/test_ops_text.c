/* test_ops_text.c — StringSplit, StringNormalizer, RegexFullMatch and TfIdfVectorizer through
 * om_eval_node: values computed by hand from ONNX's text (and ONNX Runtime's behaviour where
 * docs/ops.md says omopt follows it), non-ASCII text, malformed strings and attributes. */
#include "nodetest.h"

static void set_strings(om_node *n, const char *name, const char *const *v, int64_t count)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_STRINGS);
	a->strings = om_arena_alloc(n->graph->model->arena, sizeof(om_str) * (size_t)(count + 1));
	for (int64_t i = 0; i < count; i++)
		a->strings[i] = (om_str){v[i], (int64_t)strlen(v[i])};
	a->n = count;
}

static om_str S(const char *s)
{
	return (om_str){s, (int64_t)strlen(s)};
}

/* out's strings are want's (count of them) */
static void check_strs(const om_tensor *out, const char *const *want, int64_t count)
{
	assert_int_equal(out->dtype, OM_STRING);
	assert_int_equal(om_tensor_numel(out), count);
	const om_str *o = out->data;
	for (int64_t i = 0; i < count; i++)
		if (o[i].len != (int64_t)strlen(want[i]) ||
		    memcmp(o[i].ptr, want[i], (size_t)o[i].len))
			fail_msg("element %lld: got \"%.*s\", want \"%s\"", (long long)i,
				 (int)o[i].len, o[i].ptr, want[i]);
}

static om_kind run1(om_node *n, int64_t opset, const om_tensor *x, om_tensor *out)
{
	return nt_run(n, opset, (const om_tensor *[]){x}, out);
}

static void split_whitespace(void **state)
{
	(void)state;
	/* U+00A0, U+3000, U+2028 and \x1c are whitespace (Python's), U+200B is not */
	const om_str x[] = {S("  a b\t\xc2\xa0""c\xe3\x80\x80"),
			    S(""), S("x\xe2\x80\x8by  "), S(" \xe2\x80\xa8 ")};
	om_tensor tx = nt_tensor(OM_STRING, 1, (int64_t[]){4}, x);
	om_model *m;
	om_tensor out[2];
	om_node *n = nt_node(&m, "StringSplit", 1, 2);
	assert_int_equal(run1(n, 20, &tx, out), OM_OK);
	nt_assert_shape(&out[0], 2, (int64_t[]){4, 3});
	check_strs(&out[0], (const char *[]){"a", "b", "c", "", "", "", "x\xe2\x80\x8by", "", "",
					     "", "", ""}, 12);
	const int64_t z[] = {3, 0, 1, 0};
	assert_memory_equal(out[1].data, z, sizeof z);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* maxsplit 1: the rest keeps its inner whitespace, loses the trailing */
	nt_int(n, "maxsplit", 1);
	assert_int_equal(run1(n, 20, &tx, out), OM_OK);
	nt_assert_shape(&out[0], 2, (int64_t[]){4, 2});
	check_strs(&out[0], (const char *[]){"a", "b\t\xc2\xa0""c", "", "", "x\xe2\x80\x8by", "",
					     "", ""}, 8);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	nt_free(m);
}

static void split_delimiter(void **state)
{
	(void)state;
	const om_str x[] = {S("a,,b,"), S(""), S("\xc3\xa9,,\xc3\xa9"), S(",,,")};
	om_tensor tx = nt_tensor(OM_STRING, 2, (int64_t[]){2, 2}, x);
	om_model *m;
	om_tensor out[2];
	om_node *n = nt_node(&m, "StringSplit", 1, 2);
	nt_str(n, "delimiter", ",");
	assert_int_equal(run1(n, 20, &tx, out), OM_OK);
	nt_assert_shape(&out[0], 3, (int64_t[]){2, 2, 4});
	check_strs(&out[0], (const char *[]){"a", "", "b", "", "", "", "", "", "\xc3\xa9", "",
					     "\xc3\xa9", "", "", "", "", ""}, 16);
	const int64_t z[] = {4, 1, 3, 4};
	assert_memory_equal(out[1].data, z, sizeof z);
	nt_assert_shape(&out[1], 2, (int64_t[]){2, 2});
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* a delimiter of two bytes, at most 1 split; "" keeps its one empty part */
	nt_str(n, "delimiter", ",,");
	nt_int(n, "maxsplit", 1);
	assert_int_equal(run1(n, 20, &tx, out), OM_OK);
	nt_assert_shape(&out[0], 3, (int64_t[]){2, 2, 2});
	check_strs(&out[0], (const char *[]){"a", "b,", "", "", "\xc3\xa9", "\xc3\xa9", "", ","},
		   8);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* maxsplit 0: the element whole */
	nt_int(n, "maxsplit", 0);
	assert_int_equal(run1(n, 20, &tx, out), OM_OK);
	nt_assert_shape(&out[0], 3, (int64_t[]){2, 2, 1});
	check_strs(&out[0], (const char *[]){"a,,b,", "", "\xc3\xa9,,\xc3\xa9", ",,,"}, 4);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* an empty X: Y [0, 0] */
	om_tensor te = nt_tensor(OM_STRING, 1, (int64_t[]){0}, x);
	assert_int_equal(run1(n, 20, &te, out), OM_OK);
	nt_assert_shape(&out[0], 2, (int64_t[]){0, 0});
	nt_assert_shape(&out[1], 1, (int64_t[]){0});
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* a malformed element and a wrong type are refused */
	const om_str bad[] = {{NULL, 3}};
	om_tensor tb = nt_tensor(OM_STRING, 1, (int64_t[]){1}, bad);
	assert_int_equal(run1(n, 20, &tb, out), OM_ERR_INVALID_INPUT);
	const float f[] = {1};
	om_tensor tf = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, f);
	assert_int_equal(run1(n, 20, &tf, out), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

static void normalizer(void **state)
{
	(void)state;
	const om_str x[] = {S("Mon"), S("\xc3\x89T\xc3\x89"), S("stra\xc3\x9f""e"), S("monday"),
			    S("\xce\xa3\xcf\x83\xcf\x82"), S("\xe2\xb1\xa5x")};
	om_tensor tx = nt_tensor(OM_STRING, 1, (int64_t[]){6}, x);
	om_model *m;
	om_tensor out;
	om_node *n = nt_node(&m, "StringNormalizer", 1, 1);
	nt_str(n, "case_change_action", "UPPER");
	assert_int_equal(run1(n, 10, &tx, &out), OM_OK);
	/* simple case mapping: ß stays, ⱥ (3 bytes) becomes Ⱥ (2 bytes) */
	check_strs(&out, (const char *[]){"MON", "\xc3\x89T\xc3\x89", "STRA\xc3\x9f""E", "MONDAY",
					  "\xce\xa3\xce\xa3\xce\xa3", "\xc8\xba""X"}, 6);
	om_tensor_free(&out);
	/* case-insensitive stopwords, compared lowered, output lowered */
	nt_str(n, "case_change_action", "LOWER");
	set_strings(n, "stopwords", (const char *[]){"mON", "\xc3\xa9t\xc3\x89", "\xcf\x83\xcf\x83\xcf\x82"}, 3);
	assert_int_equal(run1(n, 10, &tx, &out), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){3});
	check_strs(&out, (const char *[]){"stra\xc3\x9f""e", "monday", "\xe2\xb1\xa5x"}, 3);
	om_tensor_free(&out);
	/* NONE keeps the elements as they are */
	nt_str(n, "case_change_action", "NONE");
	assert_int_equal(run1(n, 10, &tx, &out), OM_OK);
	check_strs(&out, (const char *[]){"stra\xc3\x9f""e", "monday", "\xe2\xb1\xa5x"}, 3);
	om_tensor_free(&out);
	/* case-sensitive: only "Mon" itself would go, and it is not listed */
	nt_int(n, "is_case_sensitive", 1);
	set_strings(n, "stopwords", (const char *[]){"mon", "monday"}, 2);
	assert_int_equal(run1(n, 10, &tx, &out), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){5});
	om_tensor_free(&out);
	/* [1, C] with every element dropped: [1, 1] holding "" */
	set_strings(n, "stopwords", (const char *[]){"Mon", "\xc3\x89T\xc3\x89", "stra\xc3\x9f""e",
						    "monday", "\xce\xa3\xcf\x83\xcf\x82",
						    "\xe2\xb1\xa5x"}, 6);
	om_tensor t2 = nt_tensor(OM_STRING, 2, (int64_t[]){1, 6}, x);
	assert_int_equal(run1(n, 10, &t2, &out), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){1, 1});
	check_strs(&out, (const char *[]){""}, 1);
	om_tensor_free(&out);
	assert_int_equal(run1(n, 10, &tx, &out), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){1});
	om_tensor_free(&out);
	nt_free(m);

	/* locale "C" maps ASCII alone (as ONNX Runtime) */
	n = nt_node(&m, "StringNormalizer", 1, 1);
	nt_str(n, "case_change_action", "LOWER");
	nt_str(n, "locale", "C");
	assert_int_equal(run1(n, 10, &tx, &out), OM_OK);
	check_strs(&out, (const char *[]){"mon", "\xc3\x89t\xc3\x89", "stra\xc3\x9f""e", "monday",
					  "\xce\xa3\xcf\x83\xcf\x82", "\xe2\xb1\xa5x"}, 6);
	om_tensor_free(&out);
	/* ill-formed UTF-8 where a case is mapped; [2, 3]; C = 0; a bad action */
	const om_str bad[] = {S("a\xff")};
	om_tensor tb = nt_tensor(OM_STRING, 1, (int64_t[]){1}, bad);
	assert_int_equal(run1(n, 10, &tb, &out), OM_ERR_INVALID_INPUT);
	om_tensor t23 = nt_tensor(OM_STRING, 2, (int64_t[]){2, 3}, x);
	assert_int_equal(run1(n, 10, &t23, &out), OM_ERR_INVALID_MODEL);
	om_tensor t0 = nt_tensor(OM_STRING, 1, (int64_t[]){0}, x);
	assert_int_equal(run1(n, 10, &t0, &out), OM_ERR_INVALID_INPUT);
	nt_str(n, "case_change_action", "lower");
	assert_int_equal(run1(n, 10, &tx, &out), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

static void regex(void **state)
{
	(void)state;
	const om_str x[] = {S("ab"), S("a.b"), S("\xc3\xa9"), S("xa.b"), S(""), S("\xc3\x89t\xc3\xa9")};
	om_tensor tx = nt_tensor(OM_STRING, 2, (int64_t[]){3, 2}, x);
	om_model *m;
	om_tensor out;
	om_node *n = nt_node(&m, "RegexFullMatch", 1, 1);
	nt_str(n, "pattern", "a.b|.|\\p{Lu}\\pL*");
	assert_int_equal(run1(n, 20, &tx, &out), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){3, 2});
	const bool want[] = {false, true, true, false, false, true}; /* é is one code point */
	assert_memory_equal(out.data, want, sizeof want);
	om_tensor_free(&out);
	nt_str(n, "pattern", "([");
	assert_int_equal(run1(n, 20, &tx, &out), OM_ERR_INVALID_MODEL);
	nt_free(m);
	n = nt_node(&m, "RegexFullMatch", 1, 1);
	assert_int_equal(run1(n, 20, &tx, &out), OM_ERR_INVALID_MODEL); /* no pattern */
	nt_free(m);
}

/* TfIdfVectorizer with the pool {2, 3, 5, 4, 5, 6, 7, 8, 6, 7} (unigrams 2 3 5 4, bigrams
 * (5 6) (7 8) (6 7)), columns 0..6 */
static om_node *tfidf_node(om_model **m, const char *mode, int64_t min_n, int64_t max_n,
			   int64_t skip)
{
	om_node *n = nt_node(m, "TfIdfVectorizer", 1, 1);
	nt_str(n, "mode", mode);
	nt_int(n, "min_gram_length", min_n);
	nt_int(n, "max_gram_length", max_n);
	nt_int(n, "max_skip_count", skip);
	nt_ints(n, "ngram_counts", (const int64_t[]){0, 4}, 2);
	nt_ints(n, "ngram_indexes", (const int64_t[]){0, 1, 2, 3, 4, 5, 6}, 7);
	nt_ints(n, "pool_int64s", (const int64_t[]){2, 3, 5, 4, 5, 6, 7, 8, 6, 7}, 10);
	return n;
}

static void tfidf(void **state)
{
	(void)state;
	const int32_t x[] = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
	om_tensor tx = nt_tensor(OM_INT32, 2, (int64_t[]){2, 6}, x);
	om_model *m;
	om_tensor out;
	/* row 0: 1 1 3 3 3 7 -> unigram 3 three times; row 1: 8 6 7 5 6 8 -> 5 once, (6 7) and
	 * (5 6) once; skip 1 adds (7 6)? no: (8 7), (6 5), (7 6), (5 8) are not in the pool */
	om_node *n = tfidf_node(&m, "TF", 1, 2, 1);
	assert_int_equal(run1(n, 9, &tx, &out), OM_OK);
	nt_check_f32(&out, 2, (int64_t[]){2, 7},
		     (const float[]){0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1}, 0);
	om_tensor_free(&out);
	nt_free(m);
	/* skips of up to 5, bigrams only: row 1 has 6 _ 8? no; (7 8) with one skip: 7 5 6 8?
	 * 7 at 2, 8 at 5: distance 3 -> skip 2 counts it; (5 6) at distance 1; (6 7) at 1; (6 8)
	 * not pooled; (5 6)? 5 at 3, 6 at 4 only; (6 7) also 6 at 1, 7 at 2; row 0: none */
	n = tfidf_node(&m, "TF", 2, 2, 5);
	assert_int_equal(run1(n, 9, &tx, &out), OM_OK);
	nt_check_f32(&out, 2, (int64_t[]){2, 7},
		     (const float[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}, 0);
	om_tensor_free(&out);
	/* IDF and TFIDF with weights, 1-D input */
	nt_str(n, "mode", "TFIDF");
	nt_int(n, "min_gram_length", 1);
	nt_floats(n, "weights", (const float[]){1, 2, 3, 4, 5, 6, 7}, 7);
	om_tensor t1 = nt_tensor(OM_INT32, 1, (int64_t[]){6}, x);
	assert_int_equal(run1(n, 9, &t1, &out), OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){7}, (const float[]){0, 6, 0, 0, 0, 0, 0}, 0);
	om_tensor_free(&out);
	nt_str(n, "mode", "IDF");
	assert_int_equal(run1(n, 9, &t1, &out), OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){7}, (const float[]){0, 2, 0, 0, 0, 0, 0}, 0);
	om_tensor_free(&out);
	/* strings for an integer pool; a count past the pool; too few weights */
	const om_str xs[] = {S("a")};
	om_tensor ts = nt_tensor(OM_STRING, 1, (int64_t[]){1}, xs);
	assert_int_equal(run1(n, 9, &ts, &out), OM_ERR_INVALID_MODEL);
	nt_floats(n, "weights", (const float[]){1}, 1);
	assert_int_equal(run1(n, 9, &t1, &out), OM_ERR_INVALID_MODEL);
	nt_floats(n, "weights", (const float[]){1}, 0);
	nt_ints(n, "ngram_counts", (const int64_t[]){0, 11}, 2);
	assert_int_equal(run1(n, 9, &t1, &out), OM_ERR_INVALID_MODEL);
	nt_free(m);

	/* a string pool: unigram "é", bigram ("a" "b"), X [C] with both; column order swapped */
	n = nt_node(&m, "TfIdfVectorizer", 1, 1);
	nt_str(n, "mode", "TF");
	nt_int(n, "min_gram_length", 1);
	nt_int(n, "max_gram_length", 2);
	nt_int(n, "max_skip_count", 0);
	nt_ints(n, "ngram_counts", (const int64_t[]){0, 1}, 2);
	nt_ints(n, "ngram_indexes", (const int64_t[]){1, 0}, 2);
	set_strings(n, "pool_strings", (const char *[]){"\xc3\xa9", "a", "b"}, 3);
	const om_str xw[] = {S("a"), S("b"), S("\xc3\xa9"), S("a"), S("c"), S("b"), S("\xc3\xa9")};
	om_tensor tw = nt_tensor(OM_STRING, 1, (int64_t[]){7}, xw);
	assert_int_equal(run1(n, 9, &tw, &out), OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){2}, (const float[]){1, 2}, 0);
	om_tensor_free(&out);
	nt_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_whitespace), cmocka_unit_test(split_delimiter),
		cmocka_unit_test(normalizer),       cmocka_unit_test(regex),
		cmocka_unit_test(tfidf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

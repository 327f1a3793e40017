/* test_ops_image.c — ImageDecoder through om_eval_node: small hand-made PNM and BMP images
 * (pixels known by construction) in RGB, BGR and Grayscale; malformed, truncated and oversized
 * bytes of every format are InvalidInput, never a crash; the node tests' images (../shared)
 * cut at many lengths decode or are InvalidInput. */
#include "nodetest.h"

static om_kind decode(const uint8_t *p, int64_t n, const char *fmt, om_tensor *out)
{
	om_model *m;
	om_node *nd = nt_node(&m, "ImageDecoder", 1, 1);
	if (fmt)
		nt_str(nd, "pixel_format", fmt);
	om_tensor x = nt_tensor(OM_UINT8, 1, (int64_t[]){n}, p);
	om_kind rc = nt_run(nd, 20, (const om_tensor *[]){&x}, out);
	nt_free(m);
	return rc;
}

/* P6 2x2, 8-bit: red, green / blue, (10, 200, 30) */
static const uint8_t ppm[] = "P6\n2 2\n255\n\xff\x00\x00\x00\xff\x00\x00\x00\xff\x0a\xc8\x1e";

static void pnm_formats(void **state)
{
	(void)state;
	om_tensor out;
	assert_int_equal(decode(ppm, sizeof ppm - 1, NULL, &out), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){2, 2, 3});
	assert_memory_equal(out.data, ppm + 11, 12);
	om_tensor_free(&out);
	assert_int_equal(decode(ppm, sizeof ppm - 1, "BGR", &out), OM_OK);
	const uint8_t bgr[] = {0, 0, 255, 0, 255, 0, 255, 0, 0, 30, 200, 10};
	assert_memory_equal(out.data, bgr, 12);
	om_tensor_free(&out);
	assert_int_equal(decode(ppm, sizeof ppm - 1, "Grayscale", &out), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){2, 2, 1});
	/* PIL's L: (19595 R + 38470 G + 7471 B + 32768) >> 16 */
	const uint8_t gray[] = {76, 150, 29, (19595 * 10 + 38470 * 200 + 7471 * 30 + 32768) >> 16};
	assert_memory_equal(out.data, gray, 4);
	om_tensor_free(&out);
	assert_int_equal(decode(ppm, sizeof ppm - 1, "YUV", &out), OM_ERR_INVALID_MODEL);
	/* a gray P5 replicated into RGB */
	const uint8_t pgm[] = "P5\n3 1\n255\n\x01\x80\xfe";
	assert_int_equal(decode(pgm, sizeof pgm - 1, NULL, &out), OM_OK);
	const uint8_t rep[] = {1, 1, 1, 128, 128, 128, 254, 254, 254};
	nt_assert_shape(&out, 3, (int64_t[]){1, 3, 3});
	assert_memory_equal(out.data, rep, 9);
	om_tensor_free(&out);
}

static void bmp_24bit(void **state)
{
	(void)state;
	/* 2x1 24-bit BMP, bottom-up rows padded to 4 bytes: pixels BGR (1,2,3) (4,5,6) */
	uint8_t b[62] = {'B', 'M', 62, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, /* file header */
			 40, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 24, 0, 0, 0, 0, 0, 8, 0, 0, 0,
			 0x13, 0x0b, 0, 0, 0x13, 0x0b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			 1, 2, 3, 4, 5, 6, 0, 0};
	om_tensor out;
	assert_int_equal(decode(b, 62, NULL, &out), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){1, 2, 3});
	const uint8_t rgb[] = {3, 2, 1, 6, 5, 4};
	assert_memory_equal(out.data, rgb, 6);
	om_tensor_free(&out);
	/* the same header claiming 60000 x 60000: refused from the header */
	b[18] = 0x60, b[19] = 0xea, b[22] = 0x60, b[23] = 0xea;
	assert_int_equal(decode(b, 62, NULL, &out), OM_ERR_INVALID_INPUT);
}

static void malformed(void **state)
{
	(void)state;
	static const char *const sigs[] = {
		"\xff\xd8\xff", "\x89PNG\r\n\x1a\n", "RIFF\x10\0\0\0WEBPVP8 ", "II*\0", "MM\0*",
		"\0\0\0\x0cjP  \r\n\x87\n", "\xff\x4f\xff\x51", "BM", "P5", "P6", "GIF89a", "",
	};
	static const size_t lens[] = {3, 8, 16, 4, 4, 12, 4, 2, 2, 2, 6, 0};
	uint8_t buf[300];
	for (size_t s = 0; s < sizeof lens / sizeof lens[0]; s++)
		for (int fill = 0; fill < 3; fill++)
			for (size_t n = lens[s]; n <= sizeof buf; n += n < 40 ? 1 : 37) {
				memcpy(buf, sigs[s], lens[s]);
				for (size_t i = lens[s]; i < n; i++)
					buf[i] = (uint8_t)(fill == 0 ? 0 : fill == 1 ? 0xff
									 : (i * 131 + s) & 0xff);
				om_tensor out;
				const om_kind rc = decode(buf, (int64_t)n, NULL, &out);
				if (rc == OM_OK) {
					om_tensor_free(&out);
					continue;
				}
				if (rc != OM_ERR_INVALID_INPUT && rc != OM_ERR_UNSUPPORTED)
					fail_msg("signature %zu, %zu bytes, fill %d: kind %d", s, n,
						 fill, (int)rc);
			}
	/* PNM headers past the size limit, a wrong input type */
	const char *big[] = {"P6\n100000 1\n255\n", "P6\n9000 9000\n255\n", "P5\n0 5\n255\n"};
	for (int i = 0; i < 3; i++) {
		om_tensor out;
		assert_int_equal(decode((const uint8_t *)big[i], (int64_t)strlen(big[i]), NULL, &out),
				 OM_ERR_INVALID_INPUT);
	}
	om_model *m;
	om_node *nd = nt_node(&m, "ImageDecoder", 1, 1);
	const float f[] = {1};
	om_tensor x = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, f), out;
	assert_int_equal(nt_run(nd, 20, (const om_tensor *[]){&x}, &out), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

/* The node tests' encoded images cut short and with bytes flipped: decoded or InvalidInput. */
static void damaged_node_images(void **state)
{
	(void)state;
	const char *shared = tu_shared_dir();
	if (!shared) {
		printf("# ../shared (OMOPT_SHARED) is missing: the node tests' images are not "
		       "checked\n");
		skip();
	}
	static const char *const cases[] = {"jpeg_rgb", "png_rgb", "webp_rgb", "tiff_rgb",
					    "jpeg2k_rgb", "bmp_rgb", "pnm_rgb"};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/conformance/onnx-node-1.23/test_image_decoder_decode_"
			 "%s/test_data_set_0/input_0.pb", shared, cases[k]);
		om_tensor t;
		om_status st = {0};
		if (om_tensor_read_file(path, &t, &st)) {
			printf("# missing %s: skipped\n", path);
			continue;
		}
		const int64_t n = om_tensor_numel(&t);
		uint8_t *b = malloc((size_t)n);
		assert_non_null(b);
		for (int64_t cut = 0; cut < n; cut += 1 + n / 23) {
			om_tensor out;
			om_kind rc = decode(t.data, cut, NULL, &out);
			if (rc == OM_OK)
				om_tensor_free(&out);
			else if (rc != OM_ERR_INVALID_INPUT)
				fail_msg("%s cut at %lld: kind %d", cases[k], (long long)cut, (int)rc);
			memcpy(b, t.data, (size_t)n);
			for (int64_t i = cut; i < n; i += 97)
				b[i] ^= 0x5a;
			rc = decode(b, n, NULL, &out);
			if (rc == OM_OK)
				om_tensor_free(&out);
			else if (rc != OM_ERR_INVALID_INPUT && rc != OM_ERR_UNSUPPORTED)
				fail_msg("%s flipped from %lld: kind %d", cases[k], (long long)cut,
					 (int)rc);
		}
		free(b);
		om_tensor_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pnm_formats), cmocka_unit_test(bmp_24bit),
		cmocka_unit_test(malformed), cmocka_unit_test(damaged_node_images),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

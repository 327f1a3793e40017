/* hello.c — a user's program, built by check_install.sh against the installed tree with
 * `pkg-config --cflags --libs omopt` alone: version, load, simplify, saved sizes, a session. */
#include <omopt.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("%s\n", om_version());
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: hello MODEL.onnx\n");
		return 2;
	}
	char want[32];
	snprintf(want, sizeof want, "%d.%d.%d", OMOPT_VERSION_MAJOR, OMOPT_VERSION_MINOR,
		 OMOPT_VERSION_PATCH);
	if (strcmp(om_version(), want)) {
		fprintf(stderr, "header %s, library %s\n", want, om_version());
		return 1;
	}
	om_status st = {0};
	om_model *m = NULL;
	size_t before = 0, after = 0;
	om_session *s = NULL;
	if (om_model_load(argv[1], &m, &st) || om_model_saved_size(m, &before, &st) ||
	    om_simplify(m, NULL, &st) || om_model_saved_size(m, &after, &st) ||
	    om_session_create(m, NULL, &s, &st)) {
		char buf[1024];
		om_status_format(&st, buf, sizeof buf);
		fprintf(stderr, "hello: %s\n", buf);
		om_model_free(m);
		return 1;
	}
	printf("omopt %s: %zu -> %zu bytes, %d input(s), first '%s'\n", om_version(), before, after,
	       om_session_input_count(s), om_session_input_name(s, 0));
	om_session_free(s);
	om_model_free(m);
	return 0;
}

/* bench_concurrent.c — throughput of one session run from several threads at once
 * (docs/session.md, "Runs from many threads"): for T = 1 .. MAXT threads, each thread runs the
 * session RUNS times on the model folder's inputs (MODEL_DIR/model.onnx, MODEL_DIR/in/NAME.npy,
 * as ../shared/models has them); prints runs per second and the speed-up over one thread.
 *
 *     build/bench/concurrent/bench_concurrent MODEL_DIR [MAXT [RUNS]]
 *
 * Sessions run single-threaded (threads 1): the threads are the callers'. Not a test. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "omopt.h"

enum { MAX_IO = 16, MAX_THREADS = 64 };

typedef struct job {
	om_session *s;
	const om_tensor *in;
	int nin, nout, runs, failed;
} job;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	job *j = arg;
	for (int k = 0; k < j->runs; k++) {
		om_tensor out[MAX_IO];
		if (om_session_run(j->s, j->in, j->nin, out, j->nout, NULL)) {
			j->failed++;
			continue;
		}
		for (int i = 0; i < j->nout; i++)
			om_tensor_free(&out[i]);
	}
	return NULL;
}

/* runs per second with t threads at once */
static double rate(const job *base, int t)
{
	job j[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	const double t0 = now_s();
	for (int i = 0; i < t; i++) {
		j[i] = *base;
		pthread_create(&th[i], NULL, work, &j[i]);
	}
	int failed = 0;
	for (int i = 0; i < t; i++) {
		pthread_join(th[i], NULL);
		failed += j[i].failed;
	}
	if (failed)
		fprintf(stderr, "%d runs failed\n", failed);
	return t * base->runs / (now_s() - t0);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s MODEL_DIR [MAXT [RUNS]]\n", argv[0]);
		return 2;
	}
	const int maxt = argc > 2 ? atoi(argv[2]) : 4, runs = argc > 3 ? atoi(argv[3]) : 50;
	if (maxt < 1 || maxt > MAX_THREADS || runs < 1)
		return 2;
	char path[4096];
	om_status st = {0};
	om_model *m;
	snprintf(path, sizeof path, "%s/model.onnx", argv[1]);
	if (om_model_load(path, &m, &st)) {
		fprintf(stderr, "%s\n", st.msg);
		return 1;
	}
	job base = {.runs = runs};
	if (om_session_create(m, &(om_session_options){.threads = 1}, &base.s, &st)) {
		fprintf(stderr, "%s\n", st.msg);
		return 1;
	}
	base.nin = om_session_input_count(base.s);
	base.nout = om_session_output_count(base.s);
	om_tensor in[MAX_IO];
	for (int i = 0; i < base.nin && i < MAX_IO; i++) {
		snprintf(path, sizeof path, "%s/in/%s.npy", argv[1], om_session_input_name(base.s, i));
		if (om_tensor_read_file(path, &in[i], &st)) {
			fprintf(stderr, "%s\n", st.msg);
			return 1;
		}
	}
	if (base.nin > MAX_IO || base.nout > MAX_IO)
		return 1;
	base.in = in;
	base.runs = 3;
	rate(&base, maxt); /* warm-up: every runner made */
	base.runs = runs;
	const double one = rate(&base, 1);
	printf("threads  runs/s  speed-up\n%7d %7.1f %9.2f\n", 1, one, 1.0);
	for (int t = 2; t <= maxt; t++) {
		const double r = rate(&base, t);
		printf("%7d %7.1f %9.2f\n", t, r, r / one);
	}
	for (int i = 0; i < base.nin; i++)
		om_tensor_free(&in[i]);
	om_session_free(base.s);
	om_model_free(m);
	return 0;
}

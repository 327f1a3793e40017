/* progress.c — see progress.h. A terminal gets one line rewritten in place (at most ten times
 * a second); a file or pipe, with -v, a line per second. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_start(cli_progress *p, const char *cmd, bool verbose)
{
	*p = (cli_progress){.cmd = cmd, .t0 = now_s(), .tty = isatty(2) == 1,
			    .verbose = verbose};
}

void cli_progress_report(void *user, const char *what, int done, int total)
{
	cli_progress *p = user;
	if (!strncmp(p->what, what, sizeof p->what - 1) && done < p->done)
		p->round++;
	else if (strncmp(p->what, what, sizeof p->what - 1))
		p->round = 1;
	snprintf(p->what, sizeof p->what, "%s", what);
	p->done = done;
	double t = now_s();
	if (t - p->t0 < 1.0 || (!p->tty && !p->verbose) || t - p->last < (p->tty ? 0.1 : 1.0))
		return;
	p->last = t;
	p->shown = true;
	char count[64] = "";
	if (total > 0 && p->round > 1)
		snprintf(count, sizeof count, ", round %d (%d/%d)", p->round, done, total);
	else if (total > 0)
		snprintf(count, sizeof count, " (%d/%d)", done, total);
	fprintf(stderr, p->tty ? "\r\033[K%s: %s%s, %.0f s" : "%s: %s%s, %.0f s\n", p->cmd, what,
		count, t - p->t0);
	fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
	if (p->tty && p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

/* signals.c — the omopt command's signal handlers: om_save_cleanup, then the signal's own
 * action (the exit status says which signal ended it). */
#include <signal.h>
#include <stddef.h>

#include "omopt.h"
#include "signals.h"

static void on_signal(int sig)
{
	om_save_cleanup();
	/* SA_RESETHAND made the action the default again; sig is blocked until we return */
	raise(sig);
}

void cli_signals_install(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESETHAND};
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction old;
		/* one ignored by whoever started us (nohup, a background job) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
	signal(SIGXFSZ, SIG_IGN);
}

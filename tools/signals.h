/* signals.h — what the omopt command does on signals: outputs being written are removed. */
#ifndef OM_CLI_SIGNALS_H
#define OM_CLI_SIGNALS_H

/** SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE (those not ignored when the command started)
 *  remove the temporary files of the outputs being written (om_save_cleanup), then end the
 *  process as the signal would have; SIGXFSZ is ignored, so that a write over the file-size
 *  limit (ulimit -f) fails with EFBIG and the save removes what it wrote. */
void cli_signals_install(void);

#endif

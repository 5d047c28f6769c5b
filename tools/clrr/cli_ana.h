/* cli_ana.h — internal to the analysis commands of `clrr` (stats, graph,
 * timeline, analyze): loading a trace into an analyzer model with one
 * error line, and seq ranges (output files: cli_out in cli.h). */
#ifndef CLRR_CLI_ANA_H
#define CLRR_CLI_ANA_H

#include <stdint.h>
#include <stdio.h>

#include "analyzer/ana.h"
#include "tools/clrr/cli.h"

/*! cli_ana_load() : opens trace @p path, builds its model and, when
 *  @p analyze, runs the kernel analysis on it. On failure prints one line
 *  ("clrr CMD: PATH: reason") and returns CLI_EXIT_ERROR with *r and *m
 *  NULL; on success the caller frees both (ana_model_free, tf_reader_close). */
int cli_ana_load(const char *path, int analyze, tf_reader **r, ana_model **m);

/*! cli_ana_range() : parses "A:B", "A:", ":B" or "N" into [*lo, *hi].
 *  @return 0, or -1 when malformed or A > B. */
int cli_ana_range(const char *s, uint64_t *lo, uint64_t *hi);

/*! cli_ana_status_err() : prints "clrr CMD: PATH: <what>" for a failed
 *  analyzer call. @return CLI_EXIT_ERROR. */
int cli_ana_status_err(const char *path, ana_status s, const char *detail);

#endif /* CLRR_CLI_ANA_H */

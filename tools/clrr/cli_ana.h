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

struct rpl_write_hint;
/*! cli_replay_hints() (replay_hints.c) : the bytes each kernel launch of
 *  trace @p path may write into each buffer argument, from the kernel
 *  analysis, sorted as rpl_opts.write_hints wants (*out malloc'ed, the
 *  caller frees; launches and buffers the analysis cannot bound are left
 *  out). @return 0, or -1 (nothing set) when the trace or its model cannot
 *  be read: the replay then goes without. Prints nothing. */
int cli_replay_hints(const char *path, struct rpl_write_hint **out, size_t *nout);

#endif /* CLRR_CLI_ANA_H */

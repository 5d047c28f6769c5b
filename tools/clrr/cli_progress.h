/* cli_progress.h — internal header of the `clrr` command: one progress
 * line on stderr for the commands that can take seconds (replay, trim,
 * profile, optimize, record).
 *
 * The line is drawn only when stderr is a terminal and the command was not
 * asked to be quiet (-q, --json), first after 200 ms (a command that ends
 * sooner draws nothing; CLRR_PROGRESS_MS=N: after N ms) and then at most
 * 10 times a second; it is cleared
 * by cli_progress_clear() before anything else goes to stderr, and at the
 * end. It says what is done of the total (calls, with a percentage and an
 * ETA when the total is known), bytes, and the elapsed time:
 *   "clrr replay: call 1234 of 5678 (21%), 12.3 MiB, 3.2s, ETA 12s"
 *
 * Every function accepts NULL (progress off), so callers need no test.
 * Not thread-safe: one thread updates a progress.
 */
#ifndef CLRR_CLI_PROGRESS_H
#define CLRR_CLI_PROGRESS_H

#include <stdint.h>

typedef struct cli_progress cli_progress;

/*! cli_progress_new() : a progress for command @p cmd ("replay"), whose
 *  units are @p unit ("call"; NULL: no count, bytes and the extra text
 *  only), @p total of them (0: unknown). @p quiet set,
 *  or stderr not a terminal: @return NULL (off). Else malloc'ed, released
 *  by cli_progress_end(); NULL also when out of memory. */
cli_progress *cli_progress_new(const char *cmd, const char *unit, uint64_t total, int quiet);

/*! cli_progress_total() : sets the total (0: unknown) once it is known. */
void cli_progress_total(cli_progress *p, uint64_t total);

/*! cli_progress_update() : @p done units (and @p bytes, 0: not shown) so
 *  far, and an optional @p extra text (may be NULL; copied) after them;
 *  redraws when the last draw is 100 ms old. */
void cli_progress_update(cli_progress *p, uint64_t done, uint64_t bytes, const char *extra);

/*! cli_progress_due() : 1 when the next update would draw (so that a
 *  caller computes what it shows only then), else 0 (also for NULL). */
int cli_progress_due(const cli_progress *p);

/*! cli_progress_clear() : erases the line (if drawn) so that the caller
 *  can print; the next update draws it again. */
void cli_progress_clear(cli_progress *p);

/*! cli_progress_clear_all() : cli_progress_clear() of the progress open now,
 *  if any (cli_err() calls it, so an error line starts on a clean line). */
void cli_progress_clear_all(void);

/*! cli_progress_end() : erases the line and releases @p p. */
void cli_progress_end(cli_progress *p);

/*! cli_progress_on_call() : an rpl_opts.on_progress callback whose user
 *  is the cli_progress: the call number replayed now, of the total set. */
void cli_progress_on_call(void *user, uint64_t seq, uint64_t last_seq);

/*! cli_progress_count_calls() : the number of calls in trace @p path (the
 *  last call number), read without decompressing data; 0 when unknown or
 *  the trace cannot be read (the command says why when it reads it). */
uint64_t cli_progress_count_calls(const char *path);

#endif /* CLRR_CLI_PROGRESS_H */

/* report_int.h — internal to `clrr report` (cmd_report.c, report_*.c):
 * the parts of the one JSON object the HTML page is drawn from, each made
 * from the analyzer's public API, and the writing of the page (the
 * template tools/clrr/report/report.html, embedded at build time into
 * build/gen/report_html.c).
 *
 * Every builder returns a new jansson reference (the caller owns it,
 * json_decref) or NULL with a one-line reason in @p err. Not thread-safe. */
#ifndef CLRR_CLI_REPORT_INT_H
#define CLRR_CLI_REPORT_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "analyzer/ana.h"
#include "tools/clrr/cli.h"

/* The most slices and arrows the page gets, host calls and device commands
 * counted apart (the rest is counted, not drawn). */
#define CLI_REPORT_MAX_HOST_SLICES 50000
#define CLI_REPORT_MAX_DEVICE_SLICES 50000
#define CLI_REPORT_MAX_FLOWS 50000
/* The graph: of the first CLI_REPORT_GRAPH_COMMANDS commands, collapsed,
 * at most CLI_REPORT_MAX_NODES nodes drawn. */
#define CLI_REPORT_GRAPH_COMMANDS 5000
#define CLI_REPORT_MAX_NODES 400
/* The most failing calls listed. */
#define CLI_REPORT_MAX_ERRORS 1000

/*! cli_report_summary() : trace, program, devices, calls, failed calls,
 *  bytes moved and host/device time of model @p m (reader @p r: its ENV). */
json_t *cli_report_summary(const char *path, tf_reader *r, const ana_model *m, const ana_stats *s);

/*! cli_report_kernels() : one row per kernel of @p s: device time,
 *  launches, bytes, work sizes (distinct NDRanges with counts) and the
 *  kernel analysis' verdicts (each argument's access, whether its offsets
 *  are known, whether its writes split by work-groups), or why there is
 *  no analysis. */
json_t *cli_report_kernels(const ana_model *m, const ana_stats *s);

/*! cli_report_errors() : the calls of @p r that returned an error (as the
 *  model counts them): seq, function, error name, and the total. Streams
 *  the trace again (rewound). NULL with @p err on a read error. */
json_t *cli_report_errors(tf_reader *r, char *err, size_t err_cap);

/*! cli_report_timeline() : the timeline of `clrr timeline` (host calls per
 *  thread, device commands per queue on the host clock, dependency
 *  arrows) in the compact form the page draws: tracks, slices, flows.
 *  Streams the trace again. NULL with @p err. */
json_t *cli_report_timeline(tf_reader *r, const ana_model *m, const ana_graph *g, char *err,
                            size_t err_cap);

/*! cli_report_graph() : `clrr graph --collapse --format json` of @p g (of
 *  its first CLI_REPORT_GRAPH_COMMANDS commands: "view_seq_hi" says where
 *  it stops), at most CLI_REPORT_MAX_NODES nodes ("nodes_left_out"). */
json_t *cli_report_graph(const ana_model *m, const ana_graph *g, char *err, size_t err_cap);

/*! cli_report_plan() : what plan @p path does: its trace, its passes with
 *  their expected effect, and each transformation (pass, action, call,
 *  reason, what it saves). NULL with @p err when it cannot be read. */
json_t *cli_report_plan(const char *path, char *err, size_t err_cap);

/*! cli_report_replay() : the JSON that `clrr replay --json` wrote to
 *  @p path (checked to be one: an object with "calls" and "ok"). */
json_t *cli_report_replay(const char *path, char *err, size_t err_cap);

/*! cli_report_write() : the page: the template with @p data embedded as one
 *  JSON object in a <script type="application/json"> element ("</" written
 *  as "<\/" so that no string can end the element). @return 0, or -1 when
 *  writing failed or the template has no placeholder. */
int cli_report_write(FILE *f, const json_t *data);

/*! cli_report_json_value() : value @p v of a trace as JSON (strings
 *  shortened to @p max_str bytes; blobs as {"blob_bytes": N}). */
json_t *cli_report_json_value(const tf_value *v, size_t max_str);

#endif /* CLRR_CLI_REPORT_INT_H */

/* info_int.h — internal to `clrr info`: the facts gathered from a trace
 * (cmd_info.c) and their printing (info_print.c). */
#ifndef CLRR_CLI_INFO_INT_H
#define CLRR_CLI_INFO_INT_H

#include <stdio.h>

#include "tools/clrr/cli.h"

/* Calls of one function (one signature while streaming; merged by name
 * afterwards). name points into the reader's signatures. */
typedef struct cli_fn_count {
    const char *name;
    uint32_t id;
    uint64_t count;
} cli_fn_count;

typedef struct cli_info_stats {
    const char *path;
    const tf_reader_info *info;   /* container totals (after tf_reader_scan) */
    const tf_value *env;                 /* ENV map or NULL */
    uint64_t calls, incomplete, launches, transfers;
    uint64_t h2d, d2h;                   /* data bytes host->device, device->host */
    uint64_t blob_refs;                  /* bytes of every blob reference */
    uint64_t devtimes, devtime_ns, data_items, notes;
    int64_t t_first, t_last;             /* earliest begin, latest end (host ns) */
    int have_time, oom;
    cli_fn_count *fns;                   /* hash table while streaming, then sorted */
    size_t nfn, cap;
} cli_info_stats;

/*! cli_info_print_human() / cli_info_print_json() : write @p st. */
void cli_info_print_human(FILE *f, const cli_info_stats *st);
void cli_info_print_json(FILE *f, const cli_info_stats *st);

#endif /* CLRR_CLI_INFO_INT_H */

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

typedef struct cli_trace_set cli_trace_set;   /* below */

/* ------------------------------------------------------------ binaries only
 * Programs built from binaries only (cli_binonly.c): successful
 * clCreateProgramWithBinary calls whose binaries were not fetched from a
 * program created from source earlier in the trace, and for which no
 * source was recorded (post.source): such a trace replays only where those
 * binaries load. Zero-initialize; feed cli_binonly_env() the ENV map and
 * cli_binonly_item() every item in order; free with cli_binonly_free(). */
typedef struct cli_binonly {
    uint64_t programs;                   /* how many */
    char devices[512];                   /* the devices they were built for, ", "-joined */
    uint64_t *src;                       /* ids of programs made from source */
    struct cli_bo_hash { uint8_t h[16]; } *hash;   /* binaries fetched from them */
    struct cli_bo_dev { uint64_t id; char name[128]; } *dev;
    size_t nsrc, cap_src, nhash, cap_hash, ndev, cap_dev;
} cli_binonly;
void cli_binonly_env(cli_binonly *b, const tf_value *env);
void cli_binonly_item(cli_binonly *b, const tf_item *it);
void cli_binonly_free(cli_binonly *b);
/*! cli_binonly_line() : "N programs were built from binaries only ...: the
 *  trace replays only on DEVICES; ..." after @p prefix, one line. */
void cli_binonly_line(FILE *f, const char *prefix, const cli_binonly *b);

typedef struct cli_info_stats {
    const char *path;
    const tf_reader_info *info;   /* container totals (after tf_reader_scan) */
    const tf_value *env;                 /* ENV map or NULL */
    uint64_t calls, incomplete, launches, transfers;
    uint64_t failed;                     /* calls that returned an error (show_call_failed) */
    uint64_t h2d, d2h;                   /* data bytes host->device, device->host */
    uint64_t blob_refs;                  /* bytes of every blob reference */
    uint64_t devtimes, devtime_ns, data_items, notes;
    uint64_t hashed_reads, hashed_bytes; /* read-backs recorded as hashes (--hash-reads) */
    int64_t t_first, t_last;             /* earliest begin, latest end (host ns) */
    int have_time, oom;
    cli_fn_count *fns;                   /* hash table while streaming, then sorted */
    size_t nfn, cap;
    const cli_trace_set *set;            /* the other processes' traces, or NULL */
    cli_binonly bo;                      /* programs built from binaries only */
} cli_info_stats;

/* ------------------------------------------------------------ trace sets
 * The traces of one `clrr record`, one per process: NAME.EXT and its
 * siblings NAME.PID.EXT, or every *.clrr of a directory (-o DIR/). */
typedef struct cli_set_member {
    char *path;                          /* malloc'ed */
    uint64_t pid, ppid, start_ns, size;  /* from its ENV record (0: unknown) */
    int ok;                              /* readable: header, ENV and every chunk header */
    char err[320];                       /* why not, when !ok */
    char cmd[240];                       /* its command line, printable */
} cli_set_member;

struct cli_trace_set {
    cli_set_member *m;
    size_t n;
};

/*! cli_set_find() : the existing members of the set @p path names: when
 *  @p is_dir, every regular *.clrr file in directory @p path; else @p path
 *  itself when it is a regular file, and its siblings (NAME.<digits>.EXT in
 *  the same directory). Only paths are filled (sorted by name, @p path
 *  first). @return 0, or -1 (errno set: the directory cannot be read, or
 *  out of memory). Free with cli_set_free(). */
int cli_set_find(const char *path, int is_dir, cli_trace_set *s);
/*! cli_set_read() : opens every member, scans its chunk headers and reads
 *  its ENV (ok, err, pid, ppid, start_ns, size, cmd), then sorts the
 *  members by start time. @return the number of unreadable members. */
size_t cli_set_read(cli_trace_set *s);
/*! cli_set_print_human() : one line per member (pid, parent, start, size,
 *  path, command). */
void cli_set_print_human(FILE *f, const cli_trace_set *s);
/*! cli_set_json() : the members as a new jansson array (the caller's) of
 *  objects (file, pid, ppid, start_unix_ns, bytes, readable, error,
 *  cmdline). */
struct json_t *cli_set_json(const cli_trace_set *s);
/*! cli_set_free() : frees what cli_set_find() allocated; accepts an empty set. */
void cli_set_free(cli_trace_set *s);

/*! cli_info_print_human() / cli_info_print_json() : write @p st. */
void cli_info_print_human(FILE *f, const cli_info_stats *st);
void cli_info_print_json(FILE *f, const cli_info_stats *st);

#endif /* CLRR_CLI_INFO_INT_H */

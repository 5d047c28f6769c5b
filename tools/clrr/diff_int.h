/* diff_int.h — internal to `clrr diff` (tools/clrr/cmd_diff.c): two traces
 * walked side by side. diff_call.c compares a pair of calls parameter by
 * parameter, diff_ring.c keeps the recent calls (for context) and the
 * differences found, diff_data.c
 * compares data bytes (blobs in bounded pieces, through rpl_compare) and
 * matches late DATA items, diff_track.c follows trace A to name the kernels
 * that last wrote a memory object, diff_print.c writes the result.
 *
 * Everything here is single-threaded. Strings named "valid until close"
 * point into a reader's signatures. */
#ifndef CLRR_CLI_DIFF_INT_H
#define CLRR_CLI_DIFF_INT_H

#include <stdint.h>
#include <stdio.h>

#include "replayer/rpl.h"
#include "tools/clrr/cli.h"

#define CLI_DIFF_LINE_CAP 240      /* one call in the human form, cut with "..." */
#define CLI_DIFF_RING 1024         /* recent calls kept for context and late data */
#define CLI_DIFF_WRITERS_CAP 200   /* "kernel \"k\" (#23) or ..." */
#define CLI_DIFF_TEXT_CAP 400      /* what differs, in words */
#define CLI_DIFF_CONTEXT 3         /* calls shown before the divergent one */

/* ------------------------------------------------------------ tracking */

typedef struct cli_diff_track cli_diff_track;

/*! cli_diff_track_new() : empty tracker; NULL when out of memory. */
cli_diff_track *cli_diff_track_new(void);
void cli_diff_track_free(cli_diff_track *t);   /* accepts NULL */

/*! cli_diff_track_call() : updates kernel names, kernel arguments and the last
 *  writers of memory objects after call @p c (of trace A).
 *  @return 0, or -1 when out of memory (tracking is then incomplete). */
int cli_diff_track_call(cli_diff_track *t, const tf_call *c);

/*! cli_diff_track_writers() : writes who last wrote object @p id, e.g.
 *  `kernel "vecadd" (#23)` or `kernel "b" (#30) or kernel "a" (#28)` or
 *  `clEnqueueWriteBuffer (#17)`, into @p dst. @return 1, or 0 when nothing
 *  is known (dst = ""). */
int cli_diff_track_writers(const cli_diff_track *t, uint64_t id, char *dst, size_t cap);

/* ------------------------------------------------------------ differences */

typedef enum cli_diff_kind {
    CLI_DIFF_SEQUENCE = 1,  /* a different function at the same position */
    CLI_DIFF_END,           /* one trace ends first */
    CLI_DIFF_VALUE,         /* a return value, input or output value */
    CLI_DIFF_DATA,          /* data bytes (an input blob, or a read-back) */
    CLI_DIFF_CODE           /* program code or build options: a note, not a difference */
} cli_diff_kind;

typedef struct cli_diff_found {
    cli_diff_kind kind;
    uint64_t pos;              /* position of the call in both traces, from 1 */
    uint64_t seq_a, seq_b;     /* its sequence numbers (0: none) */
    const char *fn_a, *fn_b;   /* function names (valid until close) */
    char what[64];             /* "return value", a parameter, "pre.data", a DATA key */
    int output;                /* 1: an output or read-back; 0: an input */
    char text[CLI_DIFF_TEXT_CAP];  /* the difference in words (after "WHAT differs: ") */
    char *a_json, *b_json;     /* CLI_DIFF_VALUE: both values as JSON (owned) */
    /* CLI_DIFF_DATA */
    uint64_t size_a, size_b;
    rpl_cmp cmp;
    uint64_t words;            /* exact comparison of a multiple of 4 bytes:
                                * 4-byte words that differ (0: not counted) */
    int have_vals;             /* va/vb hold the first differing element */
    double va, vb;
    uint64_t object;           /* read-backs: the memory object read (0: none) */
    char objkind[16];          /* "buffer" or "image" */
    char writers[CLI_DIFF_WRITERS_CAP];
    /* CLI_DIFF_END */
    int ended;                 /* the side (0 = A, 1 = B) that ends first */
    uint64_t more;             /* calls the other side has after that */
    /* context: the calls before it (both traces agree on them unless marked)
     * and the call itself (from A; from both for CLI_DIFF_SEQUENCE) */
    int nctx;
    char *ctx[CLI_DIFF_CONTEXT];
    uint64_t ctx_pos[CLI_DIFF_CONTEXT];
    int ctx_differs[CLI_DIFF_CONTEXT];
    char *line_a, *line_b;
} cli_diff_found;

/* A call seen in both traces, kept in a ring for context and late data. */
typedef struct cli_diff_slot {
    uint64_t pos, seq[2];
    const char *fn;            /* A's function (valid until close) */
    int differs;               /* a difference was found at this call */
    int expect;                /* late read-back data still expected */
    uint64_t object;           /* read-backs: the object read */
    char objkind[16];
    char writers[CLI_DIFF_WRITERS_CAP];
    char line[CLI_DIFF_LINE_CAP];
} cli_diff_slot;

/* Late DATA seen on one side only so far. */
typedef struct cli_diff_pending {
    uint64_t seq_a;            /* the call, as numbered in trace A */
    uint64_t pos;              /* its position; 0 when unknown */
    char key[32];
    int have[2];
    tf_value val[2];           /* blob, false or nil (bins are copied to bin[]) */
    unsigned char *bin[2];
} cli_diff_pending;

typedef struct cli_diff_side {
    const char *path;
    tf_reader *r;
    char device[160];
    uint64_t calls;            /* calls read */
    int ended;
} cli_diff_side;

typedef struct cli_diff_ctx {
    cli_diff_side side[2];
    int queries;               /* compare query results (--queries) */
    unsigned max;              /* differences to list */
    rpl_tolerance tol;
    const char *tol_spec;
    uint64_t pos;              /* calls paired so far */
    uint64_t readbacks;        /* read-backs compared */
    uint64_t uncompared;       /* read-backs present on one side only, or not captured */
    cli_diff_slot *ring;
    cli_diff_found *found;
    size_t nfound, capfound;
    cli_diff_found *notes;     /* CLI_DIFF_CODE */
    size_t nnotes, capnotes;
    cli_diff_pending *pend;
    size_t npend, cappend;
    cli_diff_track *track;
    int err_side;              /* the side whose reader failed, -1 none */
    tf_status err;
} cli_diff_ctx;

/* diff_call.c */
/*! cli_diff_calls() : compares calls @p a and @p b at position d->pos, records
 *  the call in the ring, then tracks it. @return 1 to go on, 0 when the
 *  sequences diverged, -1 on a read error (d->err). */
int cli_diff_calls(cli_diff_ctx *d, const tf_call *a, const tf_call *b);

/* diff_ring.c */
/*! cli_diff_slot_find() : ring slot of the call numbered @p seq in trace
 *  @p side, or NULL when it left the ring. */
cli_diff_slot *cli_diff_slot_find(cli_diff_ctx *d, int side, uint64_t seq);
/*! cli_diff_add() : appends @p f (moved: its owned strings go with it) to the
 *  differences, or to the notes for CLI_DIFF_CODE; fills its context from the
 *  ring. @return 0, -1 when out of memory. */
int cli_diff_add(cli_diff_ctx *d, cli_diff_found *f);
/*! cli_diff_format_call() : the human form of a call, cut to @p cap. */
void cli_diff_format_call(const tf_call *c, char *dst, size_t cap);
/*! cli_diff_copy_cut() : @p n bytes of @p s into dst (capacity @p cap), cut
 *  with "..." when longer. */
void cli_diff_copy_cut(char *dst, size_t cap, const char *s, size_t n);
void cli_diff_found_free(cli_diff_found *f);
/*! cli_diff_expecting() : 1 while late data of a call before position @p pos
 *  is still expected, or one side's late data waits for the other. */
int cli_diff_expecting(const cli_diff_ctx *d, uint64_t pos);

/* diff_data.c */
/*! cli_diff_is_data() : 1 when @p v carries bytes (bin or blob reference). */
int cli_diff_is_data(const tf_value *v);
/*! cli_diff_data_cmp() : compares the bytes of @p a (trace A) and @p b, with the
 *  tolerance when @p readback, else exactly. Blobs with the same hash and
 *  size are equal unread; others are read in pieces. On a difference fills
 *  f->text, size_a/b, cmp, va/vb. @return 1 equal, 0 different, -1 on a
 *  read error (d->err). */
int cli_diff_data_cmp(cli_diff_ctx *d, const tf_value *a, const tf_value *b, int readback,
                      cli_diff_found *f);
/*! cli_diff_late_data() : a DATA item of trace @p side: kept until the other
 *  side's arrives, then compared. @return 0, -1 on error. */
int cli_diff_late_data(cli_diff_ctx *d, int side, const tf_data *data);
/*! cli_diff_pending_finish() : counts what never found its pair; frees. */
void cli_diff_pending_finish(cli_diff_ctx *d);

/* diff_print.c */
void cli_diff_print_human(FILE *f, const cli_diff_ctx *d);
void cli_diff_print_json(FILE *f, const cli_diff_ctx *d);

#endif /* CLRR_CLI_DIFF_INT_H */

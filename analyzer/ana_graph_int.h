/* ana_graph_int.h — internal to the dependency graph (analyzer/ana_graph*.c)
 * and its unit tests: the per-object access history that finds RAW, WAR
 * and WAW edges on overlapping byte ranges, and the graph's layout.
 * Not a public header. */
#ifndef CLRR_ANA_GRAPH_INT_H
#define CLRR_ANA_GRAPH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/ana.h"

/* ------------------------------------------------------------ access history */

/* A byte range [lo, hi) of one memory object last written, or read since
 * it was last written, by command @c cmd. */
typedef struct ana_span {
    uint64_t lo, hi;
    uint32_t cmd;
    uint8_t whole;           /* a whole-object stand-in for an unknown range */
    const char *why;
} ana_span;

/* The commands that read one byte range (with the same whole/why) since
 * those bytes were last written. Reads of the same range gather in one
 * group, so that a loop that reads a range every iteration costs one group
 * to scan, not one span per iteration. */
typedef struct ana_rgroup {
    uint64_t lo, hi;
    uint8_t whole;
    const char *why;
    uint32_t *cmds;
    size_t n, cap;
} ana_rgroup;

/* The history of one memory object: disjoint write spans (each byte's last
 * writer) and read groups (reads since that write; they may overlap). */
typedef struct ana_hist {
    ana_span *w;
    size_t nw, capw;
    ana_rgroup *r;
    size_t nr, capr;
} ana_hist;

/* Called for each dependency an access finds: @p from must precede the
 * accessing command because of bytes [lo, hi); whole/why as in ana_edge.
 * @return 0, or -1 to stop (out of memory). */
typedef int (*ana_hist_edge_fn)(void *ctx, uint32_t from, ana_edge_kind kind, uint64_t lo,
                                uint64_t hi, int whole, const char *why);

/*! ana_hist_read() : command @p cmd reads [lo, hi): a RAW dependency on each
 *  overlapping write span's command (other than cmd), then the read is
 *  remembered. @return 0, or -1 out of memory. */
int ana_hist_read(ana_hist *h, uint32_t cmd, uint64_t lo, uint64_t hi, int whole, const char *why,
                  ana_hist_edge_fn fn, void *ctx);

/*! ana_hist_write() : command @p cmd writes [lo, hi): WAW on each
 *  overlapping write span, WAR on each overlapping read span (other than
 *  cmd's own); then those bytes' earlier spans are dropped (later accesses
 *  reach them through cmd) and the write is remembered. A whole-object
 *  stand-in counts as writing every byte. @return 0, or -1 out of memory. */
int ana_hist_write(ana_hist *h, uint32_t cmd, uint64_t lo, uint64_t hi, int whole, const char *why,
                   ana_hist_edge_fn fn, void *ctx);

/*! ana_hist_free() : frees the spans; @p h is then empty. */
void ana_hist_free(ana_hist *h);

/* ------------------------------------------------------------ the graph */

struct ana_graph {
    const ana_model *m;
    ana_edge *e;             /* sorted by (to, from, kind, object) */
    size_t ne, cap;
};

/*! ana_graph_mark_implied() : sets ana_edge.implied for every edge u->v for
 *  which edges u->w and w->v exist (w other than u and v). Edges must be
 *  sorted by (to, from). @return 0, or -1 out of memory. */
int ana_graph_mark_implied(ana_edge *e, size_t ne, size_t nnodes);

/* ------------------------------------------------------------ views (exports) */

/* A node of an exported view: a command, or the representative of a
 * folded repetition. */
typedef struct ana_vnode {
    uint32_t cmd;            /* the command (the first iteration's, when folded) */
    uint32_t repeat;         /* iterations folded into it (1: none) */
    uint64_t last_seq;       /* seq of the last folded copy */
} ana_vnode;

typedef struct ana_vedge {
    uint32_t from, to;       /* view node indices */
    const ana_edge *e;       /* a representative edge */
    uint32_t count;          /* edges folded into this one */
    uint8_t carried;         /* between two iterations of a fold */
} ana_vedge;

typedef struct ana_view {
    ana_vnode *nodes;
    size_t nnodes;
    ana_vedge *edges;
    size_t nedges;
    uint32_t *node_of;       /* command index -> view node + 1 (0: not shown) */
} ana_view;

/*! ana_view_build() : the nodes and edges that view @p v shows: commands in
 *  its seq range (clFlush left out when @p skip_flush), repetitions folded
 *  when it collapses, edges between shown nodes merged per (from, to, kind,
 *  object). @return ANA_OK or ANA_ERR_NOMEM. */
ana_status ana_view_build(const ana_model *m, const ana_graph *g, const ana_graph_view *v,
                          int skip_flush, ana_view *out);
void ana_view_free(ana_view *v);

/*! ana_json_str() : writes @p s (@p len bytes) as a JSON string through
 *  jansson: valid UTF-8 is kept, a byte that is not becomes U+FFFD,
 *  control characters are escaped (one encoder with tools/clrr's
 *  cli_json_text(), via tf_utf8_fix()). Writes null when out of memory. */
void ana_json_str(FILE *f, const char *s, size_t len);
/*! ana_json_strmax() : ana_json_str() of at most @p max bytes (0: all),
 *  then "..." inside the string when @p s was longer. */
void ana_json_strmax(FILE *f, const char *s, size_t len, size_t max);
/*! ana_json_cstr() : ana_json_str() of a C string, null for NULL. */
void ana_json_cstr(FILE *f, const char *s);
/*! ana_cmd_title() : a short title for a command ("sobel_gx", "write img",
 *  "finish q4") into @p dst. */
const char *ana_cmd_title(const ana_model *m, const ana_cmd *c, char *dst, size_t cap);

#endif /* CLRR_ANA_GRAPH_INT_H */

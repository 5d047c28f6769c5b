/* ana_graph_implied.c — marks the edges that a path of two other edges
 * already orders (u -> w -> v makes u -> v implied), so that exports can
 * leave them out without losing any ordering. */
#include "analyzer/ana_graph_int.h"

#include <stdlib.h>

static int ana_u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int ana_graph_mark_implied(ana_edge *e, size_t ne, size_t nnodes)
{
    if (!ne)
        return 0;
    if (nnodes >= UINT32_MAX || ne >= UINT32_MAX)
        return -1;
    int rc = -1;
    /* out-adjacency (targets per source), sorted and unique; edges are
     * sorted by (to, from), so the sources of v are e[in_off[v]..) */
    uint32_t *out_off = calloc(nnodes + 1, sizeof *out_off);
    uint32_t *out = malloc(ne * sizeof *out);
    uint32_t *fill = calloc(nnodes + 1, sizeof *fill);
    uint32_t *in_off = calloc(nnodes + 1, sizeof *in_off);
    if (!out_off || !out || !fill || !in_off)
        goto out;
    for (size_t i = 0; i < ne; i++) {
        out_off[e[i].from + 1]++;
        in_off[e[i].to + 1]++;
    }
    for (size_t u = 0; u < nnodes; u++) {
        out_off[u + 1] += out_off[u];
        in_off[u + 1] += in_off[u];
    }
    for (size_t i = 0; i < ne; i++)
        out[out_off[e[i].from] + fill[e[i].from]++] = e[i].to;
    for (size_t u = 0; u < nnodes; u++)
        qsort(out + out_off[u], out_off[u + 1] - out_off[u], sizeof *out, ana_u32_cmp);
    for (size_t i = 0; i < ne; i++) {
        uint32_t u = e[i].from, v = e[i].to;
        /* targets of u: out[out_off[u]..out_off[u+1]), sorted; sources of
         * v: e[in_off[v]..in_off[v+1]).from, ascending. Walk the shorter
         * list and look each element up in the longer one. */
        size_t a = out_off[u], ae = out_off[u + 1], b = in_off[v], be = in_off[v + 1];
        int found = 0;
        if (ae - a <= be - b) {
            for (; a < ae && !found; a++) {
                uint32_t w = out[a];
                if (w == u || w == v)
                    continue;
                size_t lo = b, hi = be;   /* first source >= w */
                while (lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (e[mid].from < w)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                found = lo < be && e[lo].from == w;
            }
        } else {
            for (; b < be && !found; b++) {
                uint32_t w = e[b].from;
                if (w == u || w == v)
                    continue;
                found = bsearch(&w, out + a, ae - a, sizeof *out, ana_u32_cmp) != NULL;
            }
        }
        e[i].implied = (uint8_t)found;
    }
    rc = 0;
out:
    free(out_off);
    free(out);
    free(fill);
    free(in_off);
    return rc;
}

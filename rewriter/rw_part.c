/* rw_part.c — rw_partition(): a partition-ready copy of a kernel (rw.h).
 * Parses the program, finds K, refuses what the redirection would miss or
 * change (a function K reaches that calls one of the five builtins, a
 * program that defines one of their names itself), picks reserved names
 * that collide with nothing in the program, and appends: the helper
 * functions, one #define per builtin that sends its calls to a helper, the
 * new kernel (K's attributes, parameters and body as written, then the
 * nine launch parameters) and the #undefs; then checks the result
 * (rw_check.c). K's body is not edited: the preprocessor redirects its
 * calls, also those that the program's own macros write there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

/* The builtins that would describe the part, not the full launch. */
static const char *const rw_part_builtins[] = {
    "get_global_size", "get_global_offset", "get_num_groups", "get_group_id",
    "get_global_linear_id", NULL,
};
#define RW_PART_NBUILTINS 5u

/* Every name the generated text adds is the prefix ("__clrr_", else
 * "__clrr1_", ...) followed by one of these. */
static const char *const rw_part_suffixes[] = {
    "gsz0", "gsz1", "gsz2", "goff0", "goff1", "goff2", "lsz0", "lsz1", "lsz2",
    "d", "a0", "a1", "a2", "b0", "b1", "b2", "l",
    "part_sel", "part_lsz", "part_gsz", "part_goff", "part_ngrp", "part_grp", "part_lin",
};

static rw_status rw_part_prefix(const rw_tu *t, const char *name, char *pfx, size_t pcap,
                                char *err, size_t cap)
{
    rw_names ids = { 0 };
    char n[RW_NAME_MAX];
    unsigned i, k;
    rw_status st;

    st = rw_idents(t, &ids);
    if (st != RW_OK)
        goto out;
    if (rw_names_has(&ids, name)) {
        st = rw_fail(err, cap, RW_ERR_REFUSED, "the name %s is already used in the program", name);
        goto out;
    }
    for (k = 0; k < 1000; k++) {
        snprintf(pfx, pcap, k ? "__clrr%u_" : "__clrr_", k);
        for (i = 0; i < sizeof rw_part_suffixes / sizeof rw_part_suffixes[0]; i++) {
            snprintf(n, sizeof n, "%s%s", pfx, rw_part_suffixes[i]);
            if (rw_names_has(&ids, n) || !strcmp(n, name))
                break;
        }
        if (i == sizeof rw_part_suffixes / sizeof rw_part_suffixes[0])
            break;
    }
    if (k == 1000)
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "no free prefix for the generated names");
out:
    rw_names_free(&ids);
    return st;
}

/* Appends @p tmpl with every '@' replaced by the prefix @p P ('@' is no
 * character of OpenCL C outside strings). */
static void rw_add_prefixed(rw_buf *b, const char *tmpl, const char *P)
{
    const char *at;

    while ((at = strchr(tmpl, '@')) != NULL) {
        rw_buf_add(b, tmpl, (size_t)(at - tmpl));
        rw_buf_adds(b, P);
        tmpl = at + 1;
    }
    rw_buf_adds(b, tmpl);
}

/* The helpers, each taking the dimension once as the builtin does; a0..a2,
 * b0..b2: two triples of the new kernel's launch parameters. Then one
 * #define per builtin that sends its calls to a helper with the new
 * kernel's parameters. */
static const char rw_part_text[] =
    "ulong @part_sel(uint @d, ulong @a0, ulong @a1, ulong @a2)\n"
    "{\n"
    "    return @d == 0u ? @a0 : @d == 1u ? @a1 : @a2;\n"
    "}\n"
    "ulong @part_lsz(uint @d, ulong @a0, ulong @a1, ulong @a2)\n"
    "{\n"
    "    ulong @l = @part_sel(@d, @a0, @a1, @a2);\n"
    "    return @l ? @l : (ulong)get_local_size(@d);\n"
    "}\n"
    "size_t @part_gsz(uint @d, ulong @a0, ulong @a1, ulong @a2)\n"
    "{\n"
    "    return (size_t)(@d < 3u ? @part_sel(@d, @a0, @a1, @a2) : 1u);\n"
    "}\n"
    "size_t @part_goff(uint @d, ulong @a0, ulong @a1, ulong @a2)\n"
    "{\n"
    "    return (size_t)(@d < 3u ? @part_sel(@d, @a0, @a1, @a2) : 0u);\n"
    "}\n"
    "size_t @part_ngrp(uint @d, ulong @a0, ulong @a1, ulong @a2, ulong @b0, ulong @b1, ulong @b2)\n"
    "{\n"
    "    if (@d > 2u)\n"
    "        return 1;\n"
    "    ulong @l = @part_lsz(@d, @b0, @b1, @b2);\n"
    "    return (size_t)((@part_sel(@d, @a0, @a1, @a2) + @l - 1u) / @l);\n"
    "}\n"
    "size_t @part_grp(uint @d, ulong @a0, ulong @a1, ulong @a2, ulong @b0, ulong @b1, ulong @b2)\n"
    "{\n"
    "    if (@d > 2u)\n"
    "        return 0;\n"
    "    return (size_t)(((ulong)get_global_id(@d) - (ulong)get_local_id(@d) -\n"
    "                     @part_sel(@d, @a0, @a1, @a2)) / @part_lsz(@d, @b0, @b1, @b2));\n"
    "}\n"
    "size_t @part_lin(ulong @a0, ulong @a1, ulong @b0, ulong @b1, ulong @b2)\n"
    "{\n"
    "    return (size_t)((((ulong)get_global_id(2) - @b2) * @a1 +\n"
    "                     ((ulong)get_global_id(1) - @b1)) * @a0 +\n"
    "                    ((ulong)get_global_id(0) - @b0));\n"
    "}\n"
    "#define get_global_size(d) @part_gsz((d), @gsz0, @gsz1, @gsz2)\n"
    "#define get_global_offset(d) @part_goff((d), @goff0, @goff1, @goff2)\n"
    "#define get_num_groups(d) @part_ngrp((d), @gsz0, @gsz1, @gsz2, @lsz0, @lsz1, @lsz2)\n"
    "#define get_group_id(d) @part_grp((d), @goff0, @goff1, @goff2, @lsz0, @lsz1, @lsz2)\n"
    "#define get_global_linear_id() @part_lin(@gsz0, @gsz1, @goff0, @goff1, @goff2)\n";

/* The new kernel: K's attributes, parameters and body copied as written
 * (no edits: rw_edits_apply only records the copied pieces in segs). */
static rw_status rw_part_kernel(const rw_tu *t, const rw_kernel *k, const char *name,
                                const char *P, rw_buf *b, rw_segs *segs, char *err, size_t cap)
{
    static const char *const triples[] = { "gsz", "goff", "lsz" };
    rw_edits none = { 0 };
    unsigned i, j;

    RW_FORWARD(rw_kernel_head(t, k, NULL, name, b, segs, err, cap));
    for (i = 0; i < k->np; i++) {
        RW_FORWARD(rw_edits_apply(t, &none, k->p[i].start, k->p[i].end, b, segs, k->name, err,
                                  cap));
        rw_buf_adds(b, ",\n        ");
    }
    for (j = 0; j < 3; j++)
        rw_buf_addf(b, "ulong %s%s0, ulong %s%s1, ulong %s%s2%s", P, triples[j], P, triples[j], P,
                    triples[j], j < 2 ? ",\n        " : ")\n");
    RW_FORWARD(rw_edits_apply(t, &none, k->body_start, k->body_end, b, segs, k->name, err, cap));
    rw_buf_adds(b, "\n");
    for (i = 0; rw_part_builtins[i]; i++)
        rw_buf_addf(b, "#undef %s\n", rw_part_builtins[i]);
    return b->oom ? RW_ERR_NOMEM : RW_OK;
}

static rw_status rw_part_req_ok(const rw_part_req *req, char *err, size_t cap)
{
    if (!req || (!req->source && req->len) || !req->kernel)
        return rw_fail(err, cap, RW_ERR_ARG, "incomplete partition request");
    if (!rw_is_ident(req->name) || strlen(req->name) > 200)
        return rw_fail(err, cap, RW_ERR_ARG, "the new kernel's name is not an identifier");
    if (req->len > RW_MAX_SOURCE)
        return rw_fail(err, cap, RW_ERR_ARG, "program source too large (%zu bytes)", req->len);
    return RW_OK;
}

rw_status rw_partition(const rw_part_req *req, rw_part_out *out, char *err, size_t cap)
{
    rw_job j;
    rw_kernel *k;
    char pfx[32];
    rw_status st = rw_job_open(&j, out, sizeof *out, err, cap);

    if (st == RW_OK)
        st = rw_part_req_ok(req, err, cap);
    if (st == RW_OK)
        st = rw_job_parse(&j, req->source, req->len, req->options, req->kernel, NULL, err, cap);
    if (st != RW_OK)
        goto out;
    k = j.k[0];
    if (k->np + RW_PART_EXTRA > RW_MAX_PARAMS)
        st = rw_fail(err, cap, RW_ERR_REFUSED,
                     "the partition-ready kernel would have %u parameters", k->np + RW_PART_EXTRA);
    if (st == RW_OK)
        st = rw_own_names(&j.t, rw_part_builtins, RW_PART_NBUILTINS, "partition-ready kernel", err, cap);
    if (st == RW_OK)
        st = rw_reach_check(&j.t, k, rw_part_builtins, RW_PART_NBUILTINS, err, cap);
    if (st == RW_OK)
        st = rw_part_prefix(&j.t, req->name, pfx, sizeof pfx, err, cap);
    if (st != RW_OK)
        goto out;
    rw_buf_program(&j.b, &j.t);
    rw_buf_addf(&j.b, "\n/* %s: %s for one part of a split launch, its get_global_size, "
                      "get_global_offset, get_num_groups, get_group_id and get_global_linear_id "
                      "those of the full launch (generated by clrr's rewriter) */\n",
                req->name, k->name);
    rw_job_start(&j);
    rw_add_prefixed(&j.b, rw_part_text, pfx);
    st = rw_part_kernel(&j.t, k, req->name, pfx, &j.b, &j.segs, err, cap);
    if (st == RW_OK)
        st = rw_job_end(&j, req->name, k->np + RW_PART_EXTRA, k->name, rw_part_builtins, &out->source,
                        &out->len, err, cap);
    if (st == RW_OK)
        out->nparams = k->np;
out:
    rw_job_close(&j, st, out, sizeof *out);
    return st;
}

void rw_partition_free(rw_part_out *out)
{
    if (!out)
        return;
    free(out->source);
    memset(out, 0, sizeof *out);
}

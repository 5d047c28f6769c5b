/* rw_job.c — the frame every rewrite shares, from its request to its
 * hand-out: rw_coarsen, rw_partition, rw_specialize and rw_fuse open a job,
 * write the new program into it, and end it here. */
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

rw_status rw_job_open(rw_job *j, void *out, size_t size, char *err, size_t cap)
{
    memset(j, 0, sizeof *j);
    if (err && cap)
        err[0] = '\0';
    if (!out)
        return rw_fail(err, cap, RW_ERR_ARG, "no output");
    memset(out, 0, size);
    return RW_OK;
}

rw_status rw_job_parse(rw_job *j, const char *src, size_t len, const char *options, const char *k0,
                       const char *k1, char *err, size_t cap)
{
    rw_status st = rw_parse_args(options, &j->args, &j->nargs, err, cap);
    int i;

    if (st == RW_OK)
        st = rw_tu_parse(&j->t, src ? src : "", len, j->args, j->nargs, err, cap);
    for (i = 0; i < 2 && st == RW_OK; i++) {
        const char *name = i ? k1 : k0;

        if (i && !name)
            break;
        j->k[i] = malloc(sizeof *j->k[i]);
        st = j->k[i] ? rw_kernel_find(&j->t, name, j->k[i], err, cap) : RW_ERR_NOMEM;
    }
    return st;
}

void rw_job_start(rw_job *j)
{
    j->gen_off = j->b.len;
}

rw_status rw_job_end(rw_job *j, const char *name, unsigned nparams, const char *from,
                     const char *const *redirected, char **source, size_t *len, char *err, size_t cap)
{
    rw_check_req chk = { &j->t, j->b.s, j->b.len, j->args, j->nargs, j->gen_off, &j->segs, name,
                         nparams, from, redirected };
    rw_status st = rw_check(&chk, err, cap);

    if (st == RW_OK) {
        *source = j->b.s;
        *len = j->b.len;
        j->b.s = NULL;
        j->b.len = 0;
    }
    return st;
}

void rw_job_close(rw_job *j, rw_status st, void *out, size_t size)
{
    if (st != RW_OK && out)
        memset(out, 0, size);
    rw_buf_free(&j->b);
    rw_segs_free(&j->segs);
    free(j->k[0]);
    free(j->k[1]);
    free(j->args);
    rw_tu_close(&j->t);
}

/* cli_ana.c — shared by stats, graph, timeline and analyze: loading a
 * trace model, seq ranges, and output files that appear only when whole. */
#include "tools/clrr/cli_ana.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_ana_load(const char *path, int analyze, tf_reader **r, ana_model **m)
{
    char err[512];
    *m = NULL;
    *r = cli_open_trace(path);
    if (!*r)
        return CLI_EXIT_ERROR;
    ana_status st = ana_model_build(*r, m, err, sizeof err);
    if (st == ANA_OK && analyze)
        st = ana_model_analyze(*m);
    if (st != ANA_OK) {
        cli_ana_status_err(path, st, err);
        ana_model_free(*m);
        *m = NULL;
        tf_reader_close(*r);
        *r = NULL;
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

int cli_ana_status_err(const char *path, ana_status s, const char *detail)
{
    if (detail && *detail)
        cli_err("%s: %s", path, detail);
    else
        cli_err("%s: %s", path, ana_strerror(s));
    return CLI_EXIT_ERROR;
}

int cli_ana_range(const char *s, uint64_t *lo, uint64_t *hi)
{
    const char *colon = strchr(s, ':');
    *lo = 0;
    *hi = UINT64_MAX;
    for (int side = 0; side < 2; side++) {
        const char *p = side ? (colon ? colon + 1 : s) : s;
        const char *end = side ? p + strlen(p) : (colon ? colon : s + strlen(s));
        if (p == end) {
            if (!colon)
                return -1;
            continue;
        }
        uint64_t v = 0;
        for (const char *q = p; q < end; q++) {
            if (!isdigit((unsigned char)*q) || v > (UINT64_MAX - 9) / 10)
                return -1;
            v = v * 10 + (uint64_t)(*q - '0');
        }
        *(side ? hi : lo) = v;
    }
    return *lo <= *hi ? 0 : -1;
}

int cli_out_open(cli_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    size_t n = strlen(path) + 32;
    o->path = strdup(path);
    o->tmp = malloc(n);
    if (!o->path || !o->tmp) {
        free(o->path);
        free(o->tmp);
        cli_err("%s: out of memory", path);
        return CLI_EXIT_ERROR;
    }
    snprintf(o->tmp, n, "%s.tmp%ld", path, (long)getpid());
    o->f = fopen(o->tmp, "w");
    if (!o->f) {
        cli_err("%s: %s", path, strerror(errno));
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

int cli_out_commit(cli_out *o, int ok)
{
    int rc = CLI_EXIT_OK;
    if (!o->f)
        return ok ? CLI_EXIT_ERROR : CLI_EXIT_OK;
    int werr = ferror(o->f);
    if (fclose(o->f) != 0 || werr) {
        if (ok)
            cli_err("%s: write error", o->path);
        ok = 0;
        rc = CLI_EXIT_ERROR;
    }
    if (ok && rename(o->tmp, o->path) != 0) {
        cli_err("%s: %s", o->path, strerror(errno));
        ok = 0;
        rc = CLI_EXIT_ERROR;
    }
    if (!ok)
        unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return rc;
}

/* cli_ana.c — shared by stats, graph, timeline and analyze: loading a
 * trace model and seq ranges. */
#include "tools/clrr/cli_ana.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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

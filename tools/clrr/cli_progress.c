/* cli_progress.c — the progress line of the commands that take seconds
 * (cli_progress.h says what it shows and when). */
#include "tools/clrr/cli_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/clrr/cli.h"

#define CLI_PROGRESS_FIRST_NS 200000000   /* nothing before 200 ms */
#define CLI_PROGRESS_EVERY_NS 100000000   /* then at most 10 draws a second */

struct cli_progress {
    char cmd[32], unit[16], extra[96];
    uint64_t total, done, bytes;
    int64_t t0, last;   /* start, last draw (0: none yet) */
    int64_t first_ns;   /* no draw before t0 + first_ns */
    int drawn;          /* the line is on the terminal */
};

static cli_progress *cli_progress_open;   /* the one open now (one at a time) */

static int64_t cli_progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

cli_progress *cli_progress_new(const char *cmd, const char *unit, uint64_t total, int quiet)
{
    if (quiet || !isatty(STDERR_FILENO))
        return NULL;
    cli_progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->cmd, sizeof p->cmd, "%s", cmd);
    snprintf(p->unit, sizeof p->unit, "%s", unit ? unit : "");
    p->total = total;
    p->t0 = cli_progress_now();
    p->first_ns = CLI_PROGRESS_FIRST_NS;
    const char *e = getenv("CLRR_PROGRESS_MS");   /* tests: 0 draws at once */
    char *end;
    long ms = e && *e ? strtol(e, &end, 10) : -1;
    if (e && *e && !*end && ms >= 0 && ms <= 60000)
        p->first_ns = (int64_t)ms * 1000000;
    cli_progress_open = p;
    return p;
}

void cli_progress_total(cli_progress *p, uint64_t total)
{
    if (p)
        p->total = total;
}

/* "12s", "3m05s", "1h02m": a short duration for the line. */
static void cli_progress_secs(double s, char *buf, size_t cap)
{
    if (s < 10)
        snprintf(buf, cap, "%.1fs", s);
    else if (s < 60)
        snprintf(buf, cap, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

static void cli_progress_draw(cli_progress *p, int64_t now)
{
    char line[256], sz[CLI_FMT_CAP], el[16], eta[16];
    double secs = (double)(now - p->t0) / 1e9;
    int n = p->unit[0] ? snprintf(line, sizeof line, "clrr %s: %s %llu", p->cmd, p->unit, (unsigned long long)p->done)
                       : snprintf(line, sizeof line, "clrr %s: ", p->cmd);
    if (p->unit[0] && p->total && p->done <= p->total && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - n, " of %llu (%d%%)", (unsigned long long)p->total,
                      (int)(100.0 * (double)p->done / (double)p->total));
    if (p->bytes && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - n, "%s%s", p->unit[0] ? ", " : "", cli_fmt_size(p->bytes, sz));
    if (p->extra[0] && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - n, "%s%s", p->unit[0] || p->bytes ? ", " : "", p->extra);
    cli_progress_secs(secs, el, sizeof el);
    if (n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - n, ", %s", el);
    if (p->total && p->done && p->done < p->total && secs >= 1 && n < (int)sizeof line) {
        cli_progress_secs(secs * (double)(p->total - p->done) / (double)p->done, eta, sizeof eta);
        snprintf(line + n, sizeof line - n, ", ETA %s", eta);
    }
    /* one line, never wider than a usual terminal: no wrap to clear */
    line[79] = '\0';
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn = 1;
    p->last = now;
}

void cli_progress_update(cli_progress *p, uint64_t done, uint64_t bytes, const char *extra)
{
    if (!p)
        return;
    p->done = done;
    p->bytes = bytes;
    snprintf(p->extra, sizeof p->extra, "%s", extra ? extra : "");
    if (cli_progress_due(p))
        cli_progress_draw(p, cli_progress_now());
}

int cli_progress_due(const cli_progress *p)
{
    if (!p)
        return 0;
    int64_t now = cli_progress_now();
    return now - p->t0 >= p->first_ns && (!p->last || now - p->last >= CLI_PROGRESS_EVERY_NS);
}

void cli_progress_clear(cli_progress *p)
{
    if (!p || !p->drawn)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->drawn = 0;
}

void cli_progress_clear_all(void)
{
    cli_progress_clear(cli_progress_open);
}

void cli_progress_end(cli_progress *p)
{
    cli_progress_clear(p);
    if (p && p == cli_progress_open)
        cli_progress_open = NULL;
    free(p);
}

void cli_progress_on_call(void *user, uint64_t seq, uint64_t last_seq)
{
    (void)last_seq;
    cli_progress_update(user, seq, 0, NULL);
}

uint64_t cli_progress_count_calls(const char *path)
{
    tf_reader *r = NULL;
    tf_reader_opts ro = {.max_memory = cli_max_memory()};
    if (tf_reader_open(&r, path, &ro) != TF_OK || !r) {
        tf_reader_close(r);
        return 0;
    }
    uint64_t last = 0;
    tf_item it;
    while (tf_reader_next(r, &it) == TF_OK)
        if (it.type == TF_ITEM_CALL && it.u.call.seq > last)
            last = it.u.call.seq;
    tf_reader_close(r);
    return last;
}

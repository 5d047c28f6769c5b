/* rpl_watchdog.c — the replay's time budget (rpl_opts.timeout_s).
 *
 * A trace can make a driver run for ever (a kernel whose loop count or
 * global size was made huge) and a driver call cannot be interrupted, so a
 * thread of the session watches a deadline and, past it, prints one line
 * and ends the process with _exit(RPL_TIMEOUT_EXIT): no cleanup runs (the
 * driver may be inside any call). The deadline:
 *  - timeout_s > 0: the whole replay, from rpl_open to the end of rpl_close;
 *  - RPL_TIMEOUT_AUTO: each call may take 60 s (a program build 600 s)
 *    plus 20 times as long as it took when recorded (its BEGIN to END host
 *    time, at most an hour; 100 times when the trace replays on another
 *    device than the recorded one); the final waits for what is still
 *    running (the end of the trace and rpl_close) 60 s plus 20 (100) times
 *    the recorded span from the first call to the last (at most a day). Kernels run asynchronously: a kernel that
 *    runs too long is caught at the call that waits for it, whose recorded
 *    time held the recorded kernel's.
 * The thread wakes every 50 ms; the session's thread only stores the
 * deadline (an atomic), so the calls' path gains no lock. */
#include "replayer/rpl_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RPL_WD_BASE_NS (60LL * 1000000000LL)
#define RPL_WD_FACTOR 20
#define RPL_WD_FACTOR_OTHER 100                           /* replayed on another device than recorded */
#define RPL_WD_BUILD_NS (600LL * 1000000000LL)            /* program builds */
#define RPL_WD_CALL_MAX_NS (3600LL * 1000000000LL)     /* a recorded call counts at most an hour */
#define RPL_WD_SPAN_MAX_NS (86400LL * 1000000000LL)    /* the recorded span at most a day */

struct rpl_watchdog {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    int fixed;                    /* timeout_s > 0 */
    _Atomic int64_t deadline;     /* rpl_clock_ns() past which the process ends; 0 none */
    _Atomic uint64_t seq;         /* the call being replayed, 0 none */
    _Atomic int64_t started;      /* when it (or the final waits) began */
    _Atomic int64_t rec_ns;       /* what it took when recorded */
    _Atomic int rec_open;         /* 1: it never returned when recorded (the trace ends inside it) */
    _Atomic int64_t base, factor; /* the limit: base + factor * rec_ns */
    char fn[64];                  /* its function (written before seq is) */
    int64_t first_ns, last_ns;    /* recorded host times seen (session thread) */
    void (*on_timeout)(void *user, const char *msg);
    void *user;
    char path[1024];
};

static void rpl_wd_fire(struct rpl_watchdog *w, int64_t now)
{
    char msg[1400];
    uint64_t seq = atomic_load(&w->seq);
    double took = (double)(now - atomic_load(&w->started)) / 1e9;
    double rec = (double)atomic_load(&w->rec_ns) / 1e9;
    /* a call the recording ended inside (killed in a clFinish that never
     * returned) most likely hangs here for the same reason: say so */
    const char *open = seq && atomic_load(&w->rec_open)
                       ? "; it never returned when recorded either: the recording ended inside it" : "";
    long long base = (long long)(atomic_load(&w->base) / 1000000000LL), factor = (long long)atomic_load(&w->factor);
    if (w->fixed && seq)
        snprintf(msg, sizeof msg, "timed out (--timeout) in call #%llu %s after %.1f s of replay%s",
                 (unsigned long long)seq, w->fn, took, open);
    else if (w->fixed)
        snprintf(msg, sizeof msg, "timed out (--timeout) after %.1f s of replay", took);
    else if (seq && *open)
        snprintf(msg, sizeof msg,
                 "timed out in call #%llu %s after %.1f s (it never returned when recorded either: the recording "
                 "ended inside it; the limit is %lld s; --timeout SECONDS sets one for the whole replay)",
                 (unsigned long long)seq, w->fn, took, base);
    else if (seq)
        snprintf(msg, sizeof msg,
                 "timed out in call #%llu %s after %.1f s (it took %.3f s when recorded; the limit is %lld s plus "
                 "%lld times that; --timeout SECONDS sets one for the whole replay)",
                 (unsigned long long)seq, w->fn, took, rec, base, factor);
    else
        snprintf(msg, sizeof msg,
                 "timed out waiting for the last commands after %.1f s (the recording took %.3f s; the limit is %lld "
                 "s plus %lld times that; --timeout SECONDS sets one for the whole replay)",
                 took, rec, base, factor);
    if (w->on_timeout)
        w->on_timeout(w->user, msg);
    else
        fprintf(stderr, "%s: %s\n", w->path, msg);
    fflush(stderr);
    _exit(RPL_TIMEOUT_EXIT);
}

static void *rpl_wd_main(void *arg)
{
    struct rpl_watchdog *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (w->stop)
            break;
        int64_t d = atomic_load(&w->deadline), now = rpl_clock_ns();
        if (d && now > d)
            rpl_wd_fire(w, now);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int rpl_watchdog_start(rpl_session *s)
{
    if (!(s->o.timeout_s > 0) && s->o.timeout_s != RPL_TIMEOUT_AUTO)
        return RPL_OK;
    struct rpl_watchdog *w = calloc(1, sizeof *w);
    if (!w)
        return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->fixed = s->o.timeout_s > 0;
    w->on_timeout = s->o.on_timeout;
    w->user = s->o.user;
    snprintf(w->path, sizeof w->path, "%s", s->path);
    int64_t now = rpl_clock_ns();
    atomic_store(&w->started, w->fixed ? s->t_open : now);
    if (w->fixed) {
        double ns = s->o.timeout_s * 1e9;
        atomic_store(&w->deadline, s->t_open + (ns > 9e18 ? (int64_t)9e18 : (int64_t)ns));
    } else {
        atomic_store(&w->deadline, now + RPL_WD_BASE_NS);   /* opening: devices, the ENV record */
    }
    if (pthread_create(&w->th, NULL, rpl_wd_main, w)) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        free(w);
        return rpl_set_error(s, RPL_ERR_NOMEM, "cannot start the watchdog thread");
    }
    s->wd = w;
    return RPL_OK;
}

void rpl_watchdog_call(rpl_session *s, const tf_call *c)
{
    struct rpl_watchdog *w = s->wd;
    if (!w)
        return;
    if (c->t_begin > 0 && (!w->first_ns || c->t_begin < w->first_ns))
        w->first_ns = c->t_begin;
    int64_t end = c->complete && c->t_end > c->t_begin ? c->t_end : c->t_begin;
    if (end > w->last_ns)
        w->last_ns = end;
    atomic_store(&w->seq, 0);   /* the thread reads fn only with a seq set */
    snprintf(w->fn, sizeof w->fn, "%s", c->sig->name);
    atomic_store(&w->rec_open, !c->complete);
    if (w->fixed) {
        atomic_store(&w->seq, c->seq);
        return;
    }
    int64_t rec = c->complete && c->t_end > c->t_begin ? c->t_end - c->t_begin : 0;
    if (rec > RPL_WD_CALL_MAX_NS)
        rec = RPL_WD_CALL_MAX_NS;
    /* a build here may be cold where the recording's was cached; another
     * device may be far slower than the recorded one */
    const char *n = c->sig->name;
    int64_t base = !strcmp(n, "clBuildProgram") || !strcmp(n, "clCompileProgram") || !strcmp(n, "clLinkProgram")
                   ? RPL_WD_BUILD_NS : RPL_WD_BASE_NS;
    int64_t factor = rpl_devmap_remapped(s) ? RPL_WD_FACTOR_OTHER : RPL_WD_FACTOR;
    int64_t now = rpl_clock_ns();
    atomic_store(&w->rec_ns, rec);
    atomic_store(&w->started, now);
    atomic_store(&w->factor, factor);
    atomic_store(&w->base, base);
    atomic_store(&w->deadline, now + base + factor * rec);
    atomic_store(&w->seq, c->seq);
}

void rpl_watchdog_end(rpl_session *s)
{
    struct rpl_watchdog *w = s->wd;
    if (!w)
        return;
    atomic_store(&w->seq, 0);
    if (w->fixed)
        return;
    int64_t span = w->last_ns > w->first_ns ? w->last_ns - w->first_ns : 0;
    if (span > RPL_WD_SPAN_MAX_NS)
        span = RPL_WD_SPAN_MAX_NS;
    int64_t factor = rpl_devmap_remapped(s) ? RPL_WD_FACTOR_OTHER : RPL_WD_FACTOR;
    int64_t now = rpl_clock_ns();
    atomic_store(&w->rec_ns, span);
    atomic_store(&w->started, now);
    atomic_store(&w->factor, factor);
    atomic_store(&w->base, (int64_t)RPL_WD_BASE_NS);
    atomic_store(&w->deadline, now + RPL_WD_BASE_NS + factor * span);
}

void rpl_watchdog_stop(rpl_session *s)
{
    struct rpl_watchdog *w = s->wd;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
    s->wd = NULL;
}

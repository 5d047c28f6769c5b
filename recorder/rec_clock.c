/* rec_clock.c — the recorder's host clock (rec_now_ns, inline in
 * rec_int.h): the CPU's time-stamp counter, calibrated against
 * CLOCK_MONOTONIC, where the kernel keeps its own time with that counter;
 * clock_gettime elsewhere, or when CLRR_TSC_CLOCK=0 (`clrr record
 * --no-tsc-clock`). rec_clock.h says why and holds the arithmetic.
 *
 * The first 5 ms of calls read clock_gettime; then the counter's rate is
 * measured over that span, and every 10 ms of calls after it the first
 * call past the period measures it again over that period and starts a
 * new segment, continuous with the last, whose slope makes up any
 * difference from CLOCK_MONOTONIC over the next period (at most 1/8 of the
 * rate). So the times stay within microseconds of CLOCK_MONOTONIC, also
 * while NTP slews it, and the times one thread reads never decrease. Segments are published under a
 * sequence count: a reader that overlaps an update reads again. */
#include "recorder/rec_int.h"
#include "recorder/rec_clock.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

rec_clock_state rec_clock;

static pthread_mutex_t rc_mu = PTHREAD_MUTEX_INITIALIZER;   /* one calibrator at a time */
static uint64_t rc_c_first;   /* the run's first reading of both clocks (set at init) */
static int64_t rc_n_first;
static uint64_t rc_c_prev;    /* the last calibration's reading (rc_mu) */
static int64_t rc_n_prev;

static int64_t rc_gettime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#if defined(__x86_64__)
/* Both clocks at one moment: the counter read on either side of
 * clock_gettime, the narrowest of four tries, its midpoint. */
static void rc_read_both(uint64_t *c, int64_t *n)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 4; i++) {
        uint64_t a = __builtin_ia32_rdtsc();
        int64_t t = rc_gettime();
        uint64_t b = __builtin_ia32_rdtsc();
        if (b - a < best) {
            best = b - a;
            *c = a + (b - a) / 2;
            *n = t;
        }
    }
}

/* The kernel keeps time with the counter (so it runs at one rate, and
 * alike on every CPU: the kernel checks both before it chooses it), and
 * the CPU says it does not stop or change speed. */
static int rc_tsc_usable(void)
{
    char buf[4096];
    int ok = 0;
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 0;
    ok = fgets(buf, sizeof buf, f) && !strcmp(buf, "tsc\n");
    fclose(f);
    if (!ok || !(f = fopen("/proc/cpuinfo", "r")))
        return 0;
    ok = 0;
    while (fgets(buf, sizeof buf, f)) {
        if (strncmp(buf, "flags", 5))
            continue;
        ok = strstr(buf, " constant_tsc") && strstr(buf, " nonstop_tsc");
        break;   /* the first CPU's line; a line longer than buf: not found, not used */
    }
    fclose(f);
    return ok;
}
#endif

/* A child forked while another thread recalibrated would find rc_mu held
 * for ever (and convert with its last segment from then on). */
static void rc_atfork_child(void)
{
    pthread_mutex_init(&rc_mu, NULL);
}

const char *rec_clock_init(int want_tsc)
{
#if defined(__x86_64__)
    if (want_tsc && rc_tsc_usable()) {
        pthread_atfork(NULL, NULL, rc_atfork_child);
        rc_read_both(&rc_c_first, &rc_n_first);
        atomic_store_explicit(&rec_clock.mode, REC_CLOCK_PENDING, memory_order_release);
        return "tsc";
    }
#endif
    (void)want_tsc;
    return "monotonic";
}

/* Publishes @p s, valid until counter @p next (calibrator only). */
static void rc_publish(const rec_clock_seg *s, uint64_t next)
{
    uint32_t sq = atomic_load_explicit(&rec_clock.sq, memory_order_relaxed);
    atomic_store_explicit(&rec_clock.sq, sq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&rec_clock.c0, s->c0, memory_order_relaxed);
    atomic_store_explicit(&rec_clock.n0, s->n0, memory_order_relaxed);
    atomic_store_explicit(&rec_clock.mul, s->mul, memory_order_relaxed);
    atomic_store_explicit(&rec_clock.c1, s->c1, memory_order_relaxed);
    atomic_store_explicit(&rec_clock.rate, s->rate, memory_order_relaxed);
    atomic_store_explicit(&rec_clock.next, next, memory_order_relaxed);
    atomic_store_explicit(&rec_clock.sq, sq + 2, memory_order_release);
}

#if defined(__x86_64__)

/* The first segment, once REC_CLOCK_FIRST_NS have passed (rc_mu held). */
static void rc_first(void)
{
    uint64_t c;
    int64_t n;
    rc_read_both(&c, &n);
    uint64_t rate = rec_clock_rate(c - rc_c_first, n - rc_n_first);
    if (!rate) {   /* a counter that does not advance: keep clock_gettime */
        atomic_store_explicit(&rec_clock.mode, REC_CLOCK_GETTIME, memory_order_release);
        return;
    }
    rec_clock_seg s = {c, n, rate, c, rate};
    rc_c_prev = c;
    rc_n_prev = n;
    rc_publish(&s, c + rec_clock_period_ticks(rate));
    atomic_store_explicit(&rec_clock.mode, REC_CLOCK_TSC, memory_order_release);
}

/* The next segment, when the current one's period is over (rc_mu held). */
static void rc_again(void)
{
    rec_clock_seg cur;
    uint64_t next;
    rec_clock_snap(&cur, &next);   /* the only writer is this thread: never overlapped */
    uint64_t c = __builtin_ia32_rdtsc();
    int64_t n;
    if ((int64_t)(c - next) < 0)
        return;   /* another thread did it */
    rc_read_both(&c, &n);
    uint64_t rate = rec_clock_rate(c - rc_c_prev, n - rc_n_prev);
    if (!rate)
        rate = rec_clock_rate(c - rc_c_first, n - rc_n_first);
    if (!rate) {
        rc_publish(&cur, c + rec_clock_period_ticks(cur.mul));
        return;
    }
    rc_c_prev = c;
    rc_n_prev = n;
    rec_clock_seg s = rec_clock_next(&cur, c, n, rate);
    rc_publish(&s, c + rec_clock_period_ticks(rate));
}

/* The current segment's time now, read again while an update overlaps. */
static int64_t rc_read(void)
{
    for (;;) {
        uint64_t c = __builtin_ia32_rdtsc(), next;
        rec_clock_seg s;
        if (rec_clock_snap(&s, &next))
            return rec_clock_at(&s, c);
    }
}
#endif

int64_t rec_clock_slow(void)
{
#if defined(__x86_64__)
    int mode = atomic_load_explicit(&rec_clock.mode, memory_order_acquire);
    if (mode == REC_CLOCK_PENDING) {
        int64_t n = rc_gettime();
        if (n - rc_n_first >= REC_CLOCK_FIRST_NS && !pthread_mutex_trylock(&rc_mu)) {
            if (atomic_load_explicit(&rec_clock.mode, memory_order_acquire) == REC_CLOCK_PENDING)
                rc_first();
            pthread_mutex_unlock(&rc_mu);
        }
        return n;   /* read before the first segment's start: no later than its times */
    }
    if (mode == REC_CLOCK_TSC) {
        if (!pthread_mutex_trylock(&rc_mu)) {
            rc_again();
            pthread_mutex_unlock(&rc_mu);
        }
        return rc_read();
    }
#endif
    return rc_gettime();
}

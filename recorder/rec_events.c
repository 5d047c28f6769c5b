/* rec_events.c — work that waits for commands to complete: device times
 * (DEVTIME records) and read-backs of non-blocking reads and maps (DATA
 * records). A background thread polls for both. Sync calls (clFinish,
 * clWaitForEvents, clGetEventInfo) poll for read-backs only, on the
 * application's thread, so data is captured before the application can see
 * completion and touch its memory; device times stay with the background
 * thread, which gives way to such a poll between two entries. A sync call
 * with no read-back pending costs one look at a counter. */
#include "recorder/rec_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct rec_pending {
    cl_event ev;              /* we hold one reference */
    uint64_t seq;
    int timing;               /* write DEVTIME when complete */
    const char *key;          /* capture: DATA key (static), else NULL */
    const void *p;
    size_t len;
    void *hold;               /* a staged read's block (rec_defer_held): ev is REC_EV_HELD */
} rec_pending;

/* The event of an entry whose bytes are ready (a staged read's block,
 * rec_defer_held): never handed to the driver. */
static const char rec_ev_held_tag;
#define REC_EV_HELD ((cl_event)(uintptr_t)&rec_ev_held_tag)

static pthread_mutex_t rec_ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec_poll_lock = PTHREAD_MUTEX_INITIALIZER;   /* one poller at a time; before rec_ev_lock */
static pthread_cond_t rec_ev_cond = PTHREAD_COND_INITIALIZER;
static rec_pending *rec_pend;
static size_t rec_head, rec_npend, rec_cappend;   /* live entries: [rec_head, rec_npend) */
static _Atomic size_t rec_ncap;                   /* live entries that capture data */
static _Atomic int rec_sync_waiting;              /* sync polls waiting for the poll lock */
static pthread_t rec_ev_thread;
static int rec_ev_running, rec_ev_stop;

/* Who polls: the background thread; the application's thread past
 * REC_EV_MAX pending entries (both: what completed, in order); a sync call
 * (read-backs only, every one); the stop (all that completed). */
enum { REC_POLL_BG, REC_POLL_BACKLOG, REC_POLL_SYNC, REC_POLL_STOP };

static void rec_poll(int wait_all, int who);

/* Pending device times: past REC_EV_BUSY the background thread polls every
 * REC_EV_BUSY_NS; past REC_EV_MAX the application's thread polls too, so
 * that the driver does not keep too many events alive (PoCL slows down
 * with many). Below that the application's thread only pushes (a lock and
 * an append): the per-call cost of device timing. */
#define REC_EV_BUSY 64
#define REC_EV_MAX 4096
#define REC_EV_BUSY_NS 200000

/* Device timing by command kind. An event with profiling costs the driver
 * several microseconds per command (NVIDIA's, 7 us on the H200 machine:
 * `make bench`, "device timing in the driver"), far more than recording
 * the call. So a kind's first REC_TIME_FIRST commands are timed, then one
 * at most every timing_interval_us: a loop of short launches is sampled,
 * anything that runs less often than that is timed every time. A kind is
 * (function, first object after the queue), by address: a released
 * kernel's address reused by a new one continues its count. The table is
 * lock-free; a race may time one command more or fewer, never more than
 * that. A kind that finds the table full is timed every time. */
#define REC_TIME_FIRST 16
#define REC_TIME_SLOTS 4096u
#define REC_TIME_PROBE 16

typedef struct rec_tkind {
    _Atomic uint64_t key;      /* 0: free */
    _Atomic uint32_t n;        /* commands seen, counted up to REC_TIME_FIRST */
    _Atomic int64_t last;      /* host time of the last timed one */
} rec_tkind;

static rec_tkind rec_tkinds[REC_TIME_SLOTS];

void rec_time_decide(rec_call *c, const void *key)
{
    c->own_event = 0;
    c->timed = rec_g.ctl.device_timing;
    uint64_t every = rec_g.ctl.timing_interval_us * 1000u;
    if (!c->timed || !every)
        return;
    /* user-space addresses fit 56 bits: the function goes on top */
    uint64_t k = ((uint64_t)(uintptr_t)key & 0x00ffffffffffffffull) | ((uint64_t)(c->fn + 1) << 56);
    uint64_t h = k * 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < REC_TIME_PROBE; i++) {
        rec_tkind *t = &rec_tkinds[((h >> 40) + i) & (REC_TIME_SLOTS - 1)];
        uint64_t cur = atomic_load_explicit(&t->key, memory_order_acquire);
        if (cur == 0) {
            uint64_t zero = 0;
            if (!atomic_compare_exchange_strong(&t->key, &zero, k) && zero != k)
                continue;   /* another kind took it */
        } else if (cur != k) {
            continue;
        }
        /* past the first ones, the common case (not timed) reads only:
         * no locked instruction on the application's thread */
        int64_t last = atomic_load_explicit(&t->last, memory_order_relaxed);
        if (atomic_load_explicit(&t->n, memory_order_relaxed) < REC_TIME_FIRST &&
            atomic_fetch_add_explicit(&t->n, 1, memory_order_relaxed) < REC_TIME_FIRST)
            atomic_store_explicit(&t->last, c->t0, memory_order_relaxed);
        else if (c->t0 - last < (int64_t)every || !atomic_compare_exchange_strong(&t->last, &last, c->t0))
            c->timed = 0;
        return;
    }
}

int rec_want_event(rec_call *c, cl_bool blocking)
{
    c->own_event = 1;   /* asked: the application passed no event */
    return c->timed || (!blocking && c->capture);
}

/* Queues an entry. @return the number of live entries. */
static size_t rec_push(const rec_pending *p)
{
    pthread_mutex_lock(&rec_ev_lock);
    if (rec_npend == rec_cappend) {
        size_t cap = rec_cappend ? rec_cappend * 2 : 256;
        rec_pending *n = realloc(rec_pend, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&rec_ev_lock);
            if (!p->hold)
                rec_next.clReleaseEvent(p->ev);
            return 0;
        }
        rec_pend = n;
        rec_cappend = cap;
    }
    rec_pend[rec_npend++] = *p;
    rec_ncap += p->key != NULL;
    size_t live = rec_npend - rec_head;
    /* the thread polls every 50 ms, and often while the backlog is large:
     * one wakeup per backlog. A read-back to capture wakes it at once; a
     * device time does not. Sampled timing woke it for nearly every timed
     * command (the queue empties between two): a futex call on this
     * thread, and the poller's driver calls beside the application's, once
     * per sampled launch: on an H200 host that made sampled timing cost a
     * call-heavy loop far more than the events themselves should
     * (bench/results/nvidia-h200-recorder.txt). Hence the rule above. */
    if ((live == 1 && p->key) || p->hold || live == REC_EV_BUSY)   /* a held block: the stager waits for it */
        pthread_cond_signal(&rec_ev_cond);
    pthread_mutex_unlock(&rec_ev_lock);
    return live;
}

void rec_track_event(rec_call *c, cl_event ev, int owned)
{
    if (!ev)
        return;
    if (!c->timed) {
        if (owned)
            rec_next.clReleaseEvent(ev);
        return;
    }
    if (!owned)
        rec_next.clRetainEvent(ev);
    rec_pending p = {.ev = ev, .seq = c->seq, .timing = 1};
    if (rec_push(&p) > REC_EV_MAX)
        rec_poll(0, REC_POLL_BACKLOG);
}

void rec_defer_capture(uint64_t seq, const char *key, cl_event ev, const void *p, size_t len)
{
    rec_next.clRetainEvent(ev);
    rec_pending x = {.ev = ev, .seq = seq, .key = key, .p = p, .len = len};
    rec_push(&x);
}

static void rec_write_data(const rec_pending *p, int status);

void rec_defer_held(uint64_t seq, const char *key, const void *p, size_t len, void *hold)
{
    rec_pending x = {.ev = REC_EV_HELD, .seq = seq, .key = key, .p = p, .len = len, .hold = hold};
    if (!rec_push(&x)) {   /* (out of memory) captured now */
        rec_write_data(&x, CL_COMPLETE);
        rec_stage_release(hold);
    }
}

/* Device times of a completed command: 0 when not available. Only START
 * and END are asked (two driver calls); QUEUED and SUBMIT are recorded as 0.
 * @return 1 when END was available (the command completed). */
static int rec_write_devtime(const rec_pending *p)
{
    cl_ulong start = 0, end = 0;
    if (rec_next.clGetEventProfilingInfo(p->ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL)
        != CL_SUCCESS)
        return 0;
    if (rec_next.clGetEventProfilingInfo(p->ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL)
        != CL_SUCCESS)
        start = 0;
    tf_wrec_devtime(tf_writer_lock(rec_g.w), p->seq, 0, 0, start, end);
    tf_writer_unlock(rec_g.w);
    return 1;
}

static void rec_write_data(const rec_pending *p, int status)
{
    rec_call c;
    memset(&c, 0, sizeof c);
    c.capture = 1;
    rec_slot s = {0};
    if (status == CL_COMPLETE)
        rec_slot_fill_read(&c, &s, p->p, p->len);
    else
        s.state = REC_SLOT_SKIPPED;   /* the command failed: nothing was read */
    tf_enc *e = tf_writer_lock(rec_g.w);
    tf_wrec_data_head(e, p->seq, p->key);   /* then the value */
    rec_enc_slot(e, &s);
    tf_writer_unlock(rec_g.w);
}

/* Handles entries whose command has completed, oldest first. Commands
 * mostly complete in order, so the scan of device times stops after a few
 * incomplete ones: a poll costs O(completed), not O(pending). A sync poll
 * (@p who REC_POLL_SYNC) checks every read-back entry and skips device
 * times: the application synchronized, and may reuse or free the memory of
 * any command that completed, on any queue (other threads' entries, or
 * device times of slower queues, can sit before it). The background poll
 * stops early when a sync poll waits for the lock. Done entries are marked
 * (ev = NULL) and the head advances over them. */
static void rec_poll(int wait_all, int who)
{
    if (!rec_g.active)
        return;
    int sync = who == REC_POLL_SYNC;
    if (sync && atomic_load(&rec_ncap) == 0)
        return;   /* no read-back pending: nothing to capture before returning */
    /* one poller at a time (rec_poll_lock); the queue lock is held only to
     * copy entries out and to mark them done, not across driver calls, so
     * the application's pushes do not wait for a poll */
    static rec_pending *work;
    static size_t *work_at, work_cap;
    if (sync)
        atomic_fetch_add(&rec_sync_waiting, 1);
    pthread_mutex_lock(&rec_poll_lock);
    if (sync)
        atomic_fetch_sub(&rec_sync_waiting, 1);
    pthread_mutex_lock(&rec_ev_lock);
    size_t from = rec_head, to = rec_npend, ncap = rec_ncap;
    if (to - from > work_cap) {
        size_t cap = to - from + 256;
        rec_pending *w = realloc(work, cap * sizeof *w);
        size_t *at = w ? realloc(work_at, cap * sizeof *at) : NULL;
        if (w)
            work = w;
        if (at)
            work_at = at;
        if (w && at)
            work_cap = cap;
    }
    size_t n = 0;
    for (size_t i = from; i < to && n < work_cap; i++)
        if (rec_pend[i].ev) {
            work[n] = rec_pend[i];
            work_at[n++] = i;
        }
    pthread_mutex_unlock(&rec_ev_lock);

    int incomplete = 0;
    size_t caps_seen = 0, done_caps = 0;
    for (size_t k = 0; k < n; k++) {
        rec_pending *p = &work[k];
        if (sync) {
            if (caps_seen >= ncap)
                break;
            if (!p->key)
                continue;   /* device times: the background thread's */
            if (p->hold) {
                caps_seen++;
                continue;   /* the layer's block: not the application's memory, the background thread's */
            }
        } else if (who == REC_POLL_BG && atomic_load(&rec_sync_waiting)) {
            break;   /* the sync poll goes first; the rest waits for the next poll */
        } else if (incomplete >= 8) {
            if (who != REC_POLL_STOP || caps_seen >= ncap)
                break;
            if (!p->key)
                continue;   /* device times wait for a later poll */
        }
        caps_seen += p->key != NULL;
        if (p->hold) {   /* ready: no event */
            rec_write_data(p, CL_COMPLETE);
            rec_stage_release(p->hold);
            p->ev = NULL;
            done_caps++;
            continue;
        }
        if (wait_all)
            rec_next.clWaitForEvents(1, &p->ev);
        if (p->key) {
            cl_int st = CL_QUEUED;
            if (rec_next.clGetEventInfo(p->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                                        NULL) != CL_SUCCESS)
                st = -1;
            if (st > CL_COMPLETE) {
                incomplete++;
                continue;
            }
            rec_write_data(p, st);
            done_caps++;
        } else if (!rec_write_devtime(p)) {
            /* END not available: still running, or failed (then status < 0) */
            cl_int st = CL_QUEUED;
            rec_next.clGetEventInfo(p->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
            if (st >= CL_COMPLETE) {
                incomplete++;
                continue;
            }
        }
        rec_next.clReleaseEvent(p->ev);
        p->ev = NULL;
    }

    pthread_mutex_lock(&rec_ev_lock);
    for (size_t k = 0; k < n; k++)
        if (!work[k].ev)
            rec_pend[work_at[k]].ev = NULL;   /* indices hold: only pollers move entries */
    rec_ncap -= done_caps;
    while (rec_head < rec_npend && !rec_pend[rec_head].ev)
        rec_head++;
    if (rec_head == rec_npend) {
        rec_head = rec_npend = 0;
    } else if (rec_head > 4096 && rec_head * 2 > rec_npend) {
        memmove(rec_pend, rec_pend + rec_head, (rec_npend - rec_head) * sizeof *rec_pend);
        rec_npend -= rec_head;
        rec_head = 0;
    }
    pthread_mutex_unlock(&rec_ev_lock);
    pthread_mutex_unlock(&rec_poll_lock);
}

void rec_events_poll(int wait_all)
{
    rec_poll(wait_all, wait_all ? REC_POLL_STOP : REC_POLL_SYNC);
}

#define REC_SETTLE_MAX 64   /* events waited for at once; more: another round */

void rec_reads_settle(const void *p, size_t len)
{
    static _Atomic int warned;
    uintptr_t a = (uintptr_t)p, b = a + len;
    cl_event evs[REC_SETTLE_MAX];
    int more = 1, block;

    if (!p || !len || !rec_g.active || atomic_load(&rec_ncap) == 0)
        return;
    block = !rec_user_events_made();
    while (more) {
        size_t n = 0;
        more = 0;
        /* the poll lock: no poller releases an entry's event meanwhile */
        pthread_mutex_lock(&rec_poll_lock);
        pthread_mutex_lock(&rec_ev_lock);
        for (size_t i = rec_head; i < rec_npend; i++) {
            const rec_pending *x = &rec_pend[i];
            uintptr_t xa = (uintptr_t)x->p;
            if (!x->ev || !x->key || !x->p || x->hold || xa >= b || a >= xa + x->len)
                continue;
            if (n == REC_SETTLE_MAX) {
                more = block;
                break;
            }
            evs[n++] = x->ev;
        }
        for (size_t k = 0; k < n; k++)
            rec_next.clRetainEvent(evs[k]);
        pthread_mutex_unlock(&rec_ev_lock);
        pthread_mutex_unlock(&rec_poll_lock);
        if (n == 0)
            return;
        if (block) {
            rec_next.clWaitForEvents((cl_uint)n, evs);
        } else {
            for (size_t k = 0; k < n; k++) {
                cl_int st = CL_QUEUED;
                if (rec_next.clGetEventInfo(evs[k], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
                        CL_SUCCESS && st > CL_COMPLETE && !atomic_exchange(&warned, 1))
                    fprintf(stderr, "clrr: a command reads host memory that a non-blocking read still fills, "
                                    "and the application uses user events: its bytes are recorded as they "
                                    "are now (the replay may differ)\n");
            }
        }
        for (size_t k = 0; k < n; k++)
            rec_next.clReleaseEvent(evs[k]);
        rec_events_poll(0);   /* the completed ones: captured before the caller's capture */
    }
}

static void *rec_ev_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&rec_ev_lock);
    while (!rec_ev_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        /* 50 ms (sync calls poll sooner), 0.2 ms while the backlog is large */
        ts.tv_nsec += rec_npend - rec_head >= REC_EV_BUSY ? REC_EV_BUSY_NS : 50000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&rec_ev_cond, &rec_ev_lock, &ts);
        if (rec_head == rec_npend)
            continue;   /* nothing pending: wait again */
        pthread_mutex_unlock(&rec_ev_lock);
        rec_poll(0, REC_POLL_BG);
        pthread_mutex_lock(&rec_ev_lock);
    }
    pthread_mutex_unlock(&rec_ev_lock);
    return NULL;
}

void rec_events_atfork(int phase)
{
    if (phase == REC_FORK_PREPARE) {   /* the order every path takes them in */
        pthread_mutex_lock(&rec_poll_lock);
        pthread_mutex_lock(&rec_ev_lock);
        return;
    }
    if (phase == REC_FORK_CHILD) {
        /* the poller thread was not forked: nothing to stop or join; a
           condition variable a parent thread waited on is made anew */
        rec_ev_running = 0;
        pthread_cond_init(&rec_ev_cond, NULL);
    }
    pthread_mutex_unlock(&rec_ev_lock);   /* the forking thread holds both */
    pthread_mutex_unlock(&rec_poll_lock);
}

void rec_events_start(void)
{
    rec_ev_running = pthread_create(&rec_ev_thread, NULL, rec_ev_main, NULL) == 0;
}

void rec_events_stop(void)
{
    if (rec_ev_running) {
        pthread_mutex_lock(&rec_ev_lock);
        rec_ev_stop = 1;
        pthread_cond_signal(&rec_ev_cond);
        pthread_mutex_unlock(&rec_ev_lock);
        pthread_join(rec_ev_thread, NULL);
        rec_ev_running = 0;
    }
    rec_poll(0, REC_POLL_STOP);   /* what completed is kept; the rest is dropped at exit */
}

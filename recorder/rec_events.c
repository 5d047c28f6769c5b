/* rec_events.c — work that waits for commands to complete: device times
 * (DEVTIME records) and read-backs of non-blocking reads and maps (DATA
 * records). A background thread polls; sync calls (clFinish,
 * clWaitForEvents, clGetEventInfo) poll too, on the application's thread,
 * so data is captured before the application can see completion and touch
 * its memory. */
#include "recorder/rec_int.h"

#include <pthread.h>
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
} rec_pending;

static pthread_mutex_t rec_ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rec_ev_cond = PTHREAD_COND_INITIALIZER;
static rec_pending *rec_pend;
static size_t rec_head, rec_npend, rec_cappend;   /* live entries: [rec_head, rec_npend) */
static size_t rec_ncap;                           /* live entries that capture data */
static pthread_t rec_ev_thread;
static int rec_ev_running, rec_ev_stop;

static void rec_poll(int wait_all, int all_captures);

/* Pending device times: past REC_EV_BUSY the background thread polls every
 * REC_EV_BUSY_NS; past REC_EV_MAX the application's thread polls too, so
 * that the driver does not keep too many events alive (PoCL slows down
 * with many). Below that the application's thread only pushes (a lock and
 * an append): the per-call cost of device timing. */
#define REC_EV_BUSY 64
#define REC_EV_MAX 4096
#define REC_EV_BUSY_NS 200000

int rec_want_event(rec_call *c, cl_bool blocking)
{
    return rec_g.ctl.device_timing || (!blocking && c->capture);
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
            rec_next.clReleaseEvent(p->ev);
            return 0;
        }
        rec_pend = n;
        rec_cappend = cap;
    }
    rec_pend[rec_npend++] = *p;
    rec_ncap += p->key != NULL;
    size_t live = rec_npend - rec_head;
    /* the thread sleeps without a deadline only when nothing is pending,
     * and polls often while the backlog is large: one wakeup per backlog */
    if (live == 1 || live == REC_EV_BUSY)
        pthread_cond_signal(&rec_ev_cond);
    pthread_mutex_unlock(&rec_ev_lock);
    return live;
}

void rec_track_event(rec_call *c, cl_event ev, int owned)
{
    if (!ev)
        return;
    if (!rec_g.ctl.device_timing) {
        if (owned)
            rec_next.clReleaseEvent(ev);
        return;
    }
    if (!owned)
        rec_next.clRetainEvent(ev);
    rec_pending p = {.ev = ev, .seq = c->seq, .timing = 1};
    if (rec_push(&p) > REC_EV_MAX)
        rec_poll(0, 0);
}

void rec_defer_capture(uint64_t seq, const char *key, cl_event ev, const void *p, size_t len)
{
    rec_next.clRetainEvent(ev);
    rec_pending x = {.ev = ev, .seq = seq, .key = key, .p = p, .len = len};
    rec_push(&x);
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
    tf_enc *e = tf_writer_lock(rec_g.w);
    tf_enc_array(e, 6);
    tf_enc_uint(e, 4);
    tf_enc_uint(e, p->seq);
    tf_enc_uint(e, 0);
    tf_enc_uint(e, 0);
    tf_enc_uint(e, start);
    tf_enc_uint(e, end);
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
        rec_slot_fill(&c, &s, p->p, p->len);
    else
        s.state = REC_SLOT_SKIPPED;   /* the command failed: nothing was read */
    tf_enc *e = tf_writer_lock(rec_g.w);
    tf_enc_array(e, 4);
    tf_enc_uint(e, 5);
    tf_enc_uint(e, p->seq);
    tf_enc_cstr(e, p->key);
    rec_enc_slot(e, &s);
    tf_writer_unlock(rec_g.w);
}

/* Handles entries whose command has completed, oldest first. Commands
 * mostly complete in order, so the scan of device times stops after a few
 * incomplete ones: a poll costs O(completed), not O(pending). With
 * @p all_captures, every read-back entry is checked past that point: the
 * application synchronized, and may reuse or free the memory of any
 * command that completed, on any queue (other threads' entries, or device
 * times of slower queues, can sit before it). Done entries are marked (ev =
 * NULL) and the head advances over them. */
static void rec_poll(int wait_all, int all_captures)
{
    if (!rec_g.active)
        return;
    /* one poller at a time (rec_poll_lock); the queue lock is held only to
     * copy entries out and to mark them done, not across driver calls, so
     * the application's pushes do not wait for a poll */
    static pthread_mutex_t rec_poll_lock = PTHREAD_MUTEX_INITIALIZER;
    static rec_pending *work;
    static size_t *work_at, work_cap;
    pthread_mutex_lock(&rec_poll_lock);
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
        if (incomplete >= 8) {
            if (!all_captures || caps_seen >= ncap)
                break;
            if (!p->key)
                continue;   /* device times wait for a later poll */
        }
        caps_seen += p->key != NULL;
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
    rec_poll(wait_all, 1);
}

static void *rec_ev_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&rec_ev_lock);
    while (!rec_ev_stop) {
        if (rec_head == rec_npend) {
            pthread_cond_wait(&rec_ev_cond, &rec_ev_lock);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        /* 50 ms (sync calls poll sooner), 0.2 ms while the backlog is large */
        ts.tv_nsec += rec_npend - rec_head >= REC_EV_BUSY ? REC_EV_BUSY_NS : 50000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&rec_ev_cond, &rec_ev_lock, &ts);
        pthread_mutex_unlock(&rec_ev_lock);
        rec_poll(0, 0);
        pthread_mutex_lock(&rec_ev_lock);
    }
    pthread_mutex_unlock(&rec_ev_lock);
    return NULL;
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
    rec_events_poll(0);   /* what completed is kept; the rest is dropped at exit */
}

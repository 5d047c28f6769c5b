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
static size_t rec_npend, rec_cappend;
static pthread_t rec_ev_thread;
static int rec_ev_running, rec_ev_stop;

int rec_want_event(rec_call *c, cl_bool blocking)
{
    return rec_g.ctl.device_timing || (!blocking && c->capture);
}

static void rec_push(const rec_pending *p)
{
    pthread_mutex_lock(&rec_ev_lock);
    if (rec_npend == rec_cappend) {
        size_t cap = rec_cappend ? rec_cappend * 2 : 256;
        rec_pending *n = realloc(rec_pend, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&rec_ev_lock);
            rec_next.clReleaseEvent(p->ev);
            return;
        }
        rec_pend = n;
        rec_cappend = cap;
    }
    rec_pend[rec_npend++] = *p;
    pthread_cond_signal(&rec_ev_cond);
    pthread_mutex_unlock(&rec_ev_lock);
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
    rec_push(&p);
}

void rec_defer_capture(uint64_t seq, const char *key, cl_event ev, const void *p, size_t len)
{
    rec_next.clRetainEvent(ev);
    rec_pending x = {.ev = ev, .seq = seq, .key = key, .p = p, .len = len};
    rec_push(&x);
}

static void rec_write_devtime(const rec_pending *p)
{
    cl_ulong t[4];
    static const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                              CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    for (int i = 0; i < 4; i++)
        if (rec_next.clGetEventProfilingInfo(p->ev, what[i], sizeof t[i], &t[i], NULL) != CL_SUCCESS)
            return;   /* a queue without profiling: no device time */
    tf_enc *e = tf_writer_lock(rec_g.w);
    tf_enc_array(e, 6);
    tf_enc_uint(e, 4);
    tf_enc_uint(e, p->seq);
    for (int i = 0; i < 4; i++)
        tf_enc_uint(e, t[i]);
    tf_writer_unlock(rec_g.w);
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

/* Handles every entry whose command has completed (or all, waiting). */
void rec_events_poll(int wait_all)
{
    if (!rec_g.active)
        return;
    pthread_mutex_lock(&rec_ev_lock);
    for (size_t i = 0; i < rec_npend;) {
        rec_pending *p = &rec_pend[i];
        cl_int st = CL_QUEUED;
        if (wait_all)
            rec_next.clWaitForEvents(1, &p->ev);
        if (rec_next.clGetEventInfo(p->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL)
            != CL_SUCCESS)
            st = -1;
        if (st > CL_COMPLETE) {
            i++;
            continue;
        }
        if (p->key)
            rec_write_data(p, st);
        else if (p->timing && st == CL_COMPLETE)
            rec_write_devtime(p);
        rec_next.clReleaseEvent(p->ev);
        rec_pend[i] = rec_pend[--rec_npend];
    }
    pthread_mutex_unlock(&rec_ev_lock);
}

static void *rec_ev_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&rec_ev_lock);
    while (!rec_ev_stop) {
        if (!rec_npend) {
            pthread_cond_wait(&rec_ev_cond, &rec_ev_lock);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 2000000;   /* 2 ms */
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&rec_ev_cond, &rec_ev_lock, &ts);
        pthread_mutex_unlock(&rec_ev_lock);
        rec_events_poll(0);
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

/* rpl_verify.c — read-backs compared with the recording.
 *
 * A read-back is pending until two things are true: the replayed command is
 * complete, and the recorded bytes are known (in the END record for blocking
 * calls, in a later DATA record for non-blocking ones). Completion comes from
 * the command itself (blocking), from the replay's own event (waited for
 * when the recorded bytes arrive), or — in exact-calls mode, where the
 * replay makes no call of its own — from the application's recorded
 * synchronization: clFinish on the queue, clWaitForEvents on its event, or a
 * later blocking command on the same in-order queue. */
#include "replayer/rpl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A settled read-back waiting for rpl_step's caller. */
struct rpl_settled {
    rpl_readback rb;
    void *buf;                /* rpl_block_alloc'ed live bytes */
    struct rpl_undef *undef;  /* owned */
    char what[16];
};

struct rpl_pending {
    uint64_t seq;
    unsigned fn;
    char what[16];
    uint64_t mem;             /* object read, 0 for SVM/host */
    const char *src;          /* live bytes (mapped memory), copied at completion */
    int pitched;              /* ... from an image map with other pitches */
    rpl_pitched geom;
    char *buf;                /* owned bytes */
    size_t len;
    cl_event ev;              /* retained by us (not in exact mode) */
    int ev_own;
    int waited;               /* rpl_pending_wait waited for the command */
    int q_own;                /* q is retained by us */
    cl_command_queue q;
    int complete;
    int have_expected;
    tf_value exp;             /* TF_BIN (bytes in exp_bin) or TF_BLOB */
    char *exp_bin;
    struct rpl_undef *undef;  /* bytes nothing defined when it was read (rpl_defined.c) */
    int exp_hash;             /* the recording holds only the bytes' hash (exp_ref) */
    tf_blobref exp_ref;
    /* An "early" entry holds only the recorded bytes of a DATA item that came
     * before its call: calls are delivered in completion (END) order, so a
     * non-blocking read that completes while clEnqueueRead* is still running
     * has its DATA written before the call's END (FORMAT.md, section 4). The
     * call's read-back takes it over when it is submitted. Early entries are
     * never complete and are not read-backs: they are skipped by completion,
     * and dropped uncounted at the end. */
    int early;
};

/* Early entries kept at most: DATA comes early only for calls in flight
 * (begun, not ended) at that point of the trace; older ones are stale (DATA
 * of calls replayed without verification, e.g. before a --range). */
#define RPL_EARLY_MAX 64

static void rpl_pending_free(rpl_session *s, rpl_pending *p)
{
    if (p->ev_own && p->ev && s->api.clReleaseEvent)
        s->api.clReleaseEvent(p->ev);
    if (p->q_own && p->q && s->api.clReleaseCommandQueue)
        s->api.clReleaseCommandQueue(p->q);
    s->pending_bytes -= p->len;
    rpl_block_free(p->buf);
    free(p->exp_bin);
    rpl_undef_free(p->undef);
}

static void rpl_pending_remove(rpl_session *s, size_t i)
{
    rpl_pending_free(s, &s->pending[i]);
    memmove(&s->pending[i], &s->pending[i + 1], (s->npending - i - 1) * sizeof *s->pending);
    s->npending--;
}

static int rpl_keep_expected(rpl_session *s, rpl_pending *p, const tf_value *v)
{
    if (v->type == TF_BIN) {
        p->exp_bin = malloc(v->v.str.len ? v->v.str.len : 1);
        if (!p->exp_bin)
            return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
        memcpy(p->exp_bin, v->v.str.ptr, v->v.str.len);
        p->exp = *v;
        p->exp.v.str.ptr = p->exp_bin;
        p->have_expected = 1;
    } else if (v->type == TF_BLOB) {
        p->exp = *v;
        p->have_expected = 1;
    } else if (tf_value_hashref(v, &p->exp_ref)) {   /* FORMAT.md 11.4 */
        p->exp_hash = 1;
        p->exp = (tf_value){.type = TF_NIL};
        p->have_expected = 1;
    }
    return RPL_OK;
}

/* "sobel (#41)": the kernel launch that last had @p mem as an argument. */
static void rpl_writers(rpl_session *s, uint64_t mem, char *dst, size_t cap)
{
    dst[0] = 0;
    rpl_obj *m = mem ? rpl_obj_find(s, mem) : NULL;
    if (!m || !m->writer_seq)
        return;
    rpl_obj *k = rpl_obj_find(s, m->writer_kernel);
    char kid[32];
    snprintf(kid, sizeof kid, "kernel #%llu", (unsigned long long)m->writer_kernel);
    snprintf(dst, cap, "%s (#%llu)", k && k->name ? k->name : kid, (unsigned long long)m->writer_seq);
}

void rpl_note_launch(rpl_session *s, uint64_t seq, rpl_obj *kernel)
{
    for (int i = 0; kernel && i < RPL_MAX_KARGS; i++) {
        rpl_obj *m = kernel->args[i] ? rpl_obj_find(s, kernel->args[i]) : NULL;
        if (m) {
            m->writer_seq = seq;
            m->writer_kernel = kernel->id;
        }
    }
}

/* Read-back @p i was compared (@p same): its live bytes go to rpl_step's
 * caller, in the order they settled; the entry goes. */
static int rpl_settled(rpl_session *s, size_t i, int same)
{
    rpl_pending *p = &s->pending[i];
    if (s->want_rb) {
        if (s->rbq_n == s->rbq_cap) {
            size_t cap = s->rbq_cap ? s->rbq_cap * 2 : 8;
            struct rpl_settled *q = realloc(s->rbq, cap * sizeof *q);
            if (!q)
                return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
            s->rbq = q;
            s->rbq_cap = cap;
        }
        struct rpl_settled *e = &s->rbq[s->rbq_n++];
        e->rb = (rpl_readback){p->seq, rpl_gen_table[p->fn].name, NULL, p->mem, NULL, p->len, 1, same, NULL};
        e->buf = p->buf;
        e->undef = p->undef;
        p->undef = NULL;
        snprintf(e->what, sizeof e->what, "%s", p->what);
        p->buf = NULL;
    }
    rpl_pending_remove(s, i);
    return RPL_OK;
}

/* A read-back recorded as a hash (--hash-reads): the live bytes are
 * hashed as the recorder hashed them; equal or not, exactly (a tolerance
 * does not apply, undefined bytes cannot be skipped). */
static int rpl_settle_hash(rpl_session *s, size_t i)
{
    rpl_pending *p = &s->pending[i];
    tf_blobref live;
    tf_hash(p->buf, p->len, &live);
    int same = live.size == p->exp_ref.size && !memcmp(live.hash, p->exp_ref.hash, 16);
    s->sum.readbacks++;
    s->sum.hashed++;
    s->sum.bytes_out += p->len;
    if (!same) {
        s->sum.mismatches++;
        if (s->o.on_mismatch) {
            char w[160];
            rpl_writers(s, p->mem, w, sizeof w);
            rpl_cmp cmp = {p->len, 1, 0, 1, 0};
            rpl_mismatch m = {p->seq, rpl_gen_table[p->fn].name, p->what, p->mem, w, p->len, cmp, 1,
                              rpl_undef_apply(p->undef, NULL, NULL, p->len)};
            s->o.on_mismatch(s->o.user, &m);
        }
    }
    return rpl_settled(s, i, same);
}

/* Both conditions met: compare, report, count. */
static int rpl_settle(rpl_session *s, size_t i)
{
    rpl_pending *p = &s->pending[i];
    if (!p->complete || !p->have_expected)
        return RPL_OK;
    if (p->exp_hash)
        return rpl_settle_hash(s, i);
    if (p->exp.type != TF_BIN && p->exp.type != TF_BLOB) {   /* no recorded bytes (rpl_verify_data) */
        s->sum.unverified++;
        rpl_pending_remove(s, i);
        return RPL_OK;
    }
    uint64_t exp_size = p->exp.type == TF_BIN ? p->exp.v.str.len : p->exp.v.blob.size;
    void *exp = NULL;
    size_t got = 0;
    int st = rpl_fetch(s, &p->exp, 0, &exp, &got);
    if (st < 0)
        return st;
    rpl_cmp cmp;
    memset(&cmp, 0, sizeof cmp);
    size_t n = exp_size < p->len ? (size_t)exp_size : p->len;
    /* bytes nothing defined compare equal: the live ones stand in for them */
    uint64_t undef = exp ? rpl_undef_apply(p->undef, exp, p->buf, n) : 0;
    if (undef) {
        s->sum.undefined_bytes += undef;
        s->sum.undefined_readbacks++;
    }
    int same = rpl_compare(exp, p->buf, n, &s->o.tol, &cmp) && exp_size == p->len;
    free(exp);
    s->sum.readbacks++;
    s->sum.bytes_out += p->len;
    if (!same) {
        s->sum.mismatches++;
        if (exp_size != p->len && cmp.differ == 0) {
            cmp.first = n;
            cmp.differ = 1;
        }
        if (s->o.on_mismatch) {
            char w[160];
            rpl_writers(s, p->mem, w, sizeof w);
            rpl_mismatch m = {p->seq, rpl_gen_table[p->fn].name, p->what, p->mem, w, p->len, cmp, 0, 0};
            s->o.on_mismatch(s->o.user, &m);
        }
    }
    return rpl_settled(s, i, same);
}

int rpl_take_readback(rpl_session *s, rpl_readback *rb)
{
    rpl_block_free(s->rb_buf);
    s->rb_buf = NULL;
    rpl_undef_free(s->rb_undef);
    s->rb_undef = NULL;
    if (s->rbq_head == s->rbq_n)
        return 0;
    struct rpl_settled *e = &s->rbq[s->rbq_head++];
    s->rb = e->rb;
    s->rb_buf = e->buf;
    s->rb.data = e->buf;
    s->rb_undef = e->undef;
    s->rb.undef = e->undef;
    memcpy(s->rb_what, e->what, sizeof s->rb_what);
    s->rb.what = s->rb_what;
    if (s->rbq_head == s->rbq_n)
        s->rbq_head = s->rbq_n = 0;
    if (rb)
        *rb = s->rb;
    return 1;
}

void rpl_readbacks_free(rpl_session *s)
{
    for (size_t i = s->rbq_head; i < s->rbq_n; i++) {
        rpl_block_free(s->rbq[i].buf);
        rpl_undef_free(s->rbq[i].undef);
    }
    free(s->rbq);
    s->rbq = NULL;
    s->rbq_head = s->rbq_n = s->rbq_cap = 0;
    rpl_block_free(s->rb_buf);
    s->rb_buf = NULL;
    rpl_undef_free(s->rb_undef);
    s->rb_undef = NULL;
}

uint64_t rpl_readback_undefined(const rpl_readback *rb, void *dst, const void *src)
{
    return rb ? rpl_undef_apply(rb->undef, dst, src, (size_t)rb->size) : 0;
}

/* Outside exact-calls mode the replay holds the command's event: it waits
 * for it before the buffer is read or freed, whatever the recorded
 * synchronization said (a hostile trace's clFinish of another queue, a
 * sync that failed here): the driver may still be writing into it. */
static void rpl_pending_wait(rpl_session *s, rpl_pending *p)
{
    if (s->o.exact_calls || p->early || p->waited)
        return;
    p->waited = 1;
    if (p->ev_own && p->ev && s->api.clWaitForEvents)
        s->api.clWaitForEvents(1, &p->ev);
    else if (p->q && s->api.clFinish)
        s->api.clFinish(p->q);
}

static int rpl_complete(rpl_session *s, size_t i)
{
    rpl_pending *p = &s->pending[i];
    if (p->complete || p->early)
        return RPL_OK;
    rpl_pending_wait(s, p);
    p->complete = 1;
    if (p->src) {   /* mapped memory: copy it while it is still mapped */
        if (p->pitched)
            rpl_pitched_copy(&p->geom, p->buf, p->src, 1);
        else
            memcpy(p->buf, p->src, p->len);
        p->src = NULL;
    }
    return rpl_settle(s, i);
}

/* ------------------------------------------------------------ held data */
typedef struct rpl_held {
    void *chunks;
    cl_command_queue q;
    cl_event ev;              /* retained (not in exact mode) */
} rpl_held;

static void rpl_held_release(rpl_session *s, size_t i)
{
    rpl_held *h = &s->held[i];
    if (h->ev && !s->o.exact_calls && s->api.clReleaseEvent)
        s->api.clReleaseEvent(h->ev);
    rpl_scratch_list_free(h->chunks);
    s->held[i] = s->held[--s->nheld];
}

int rpl_hold(rpl_session *s, void *chunks, cl_command_queue q, cl_event ev)
{
    /* bounded: past 256 commands, wait for the oldest (not in exact mode) */
    while (s->nheld >= 256 && !s->o.exact_calls) {
        rpl_held *h = &s->held[0];
        if (h->ev && s->api.clWaitForEvents)
            s->api.clWaitForEvents(1, &h->ev);
        else if (h->q && s->api.clFinish)
            s->api.clFinish(h->q);
        rpl_held_release(s, 0);
    }
    if (s->nheld == s->cap_held) {
        size_t cap = s->cap_held ? s->cap_held * 2 : 64;
        rpl_held *a = realloc(s->held, cap * sizeof *a);
        if (!a) {
            rpl_scratch_list_free(chunks);
            return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
        }
        s->held = a;
        s->cap_held = cap;
    }
    if (ev && !s->o.exact_calls && s->api.clRetainEvent)
        s->api.clRetainEvent(ev);
    s->held[s->nheld++] = (rpl_held){chunks, q, ev};
    return RPL_OK;
}

static void rpl_held_queue_done(rpl_session *s, cl_command_queue q)
{
    for (size_t i = s->nheld; i-- > 0;)
        if (s->held[i].q == q)
            rpl_held_release(s, i);
}


static int rpl_readback_submit_(rpl_cx *x, const char *what, uint64_t mem, void *buf, size_t len, int blocking,
                                cl_event ev, cl_command_queue q, const tf_value *expected, int owned);

int rpl_readback_submit(rpl_cx *x, const char *what, uint64_t mem, void *buf, size_t len, int blocking,
                        cl_event ev, cl_command_queue q, const tf_value *expected)
{
    rpl_session *s = x->s;
    int owned = buf == x->readback;
    if (owned)
        x->readback = NULL;
    /* recorded bytes that came before the call (see rpl_pending.early) */
    tf_value early_exp;
    char *early_bin = NULL;
    for (size_t i = 0; i < s->npending; i++) {
        rpl_pending *e = &s->pending[i];
        if (e->early && e->seq == x->c->seq && !strcmp(e->what, what)) {
            early_exp = e->exp;
            early_bin = e->exp_bin;   /* ours now: freed below */
            e->exp_bin = NULL;
            rpl_pending_remove(s, i);
            if (!expected)
                expected = &early_exp;
            break;
        }
    }
    int st = rpl_readback_submit_(x, what, mem, buf, len, blocking, ev, q, expected, owned);
    free(early_bin);
    return st < 0 ? rpl_event_orphaned(x, ev, st) : st;
}

int rpl_event_orphaned(rpl_cx *x, cl_event ev, int st)
{
    if (ev && !x->cmd_event) {
        x->cmd_event = ev;
        x->cmd_event_own = 1;
    }
    return st;
}

static int rpl_readback_submit_(rpl_cx *x, const char *what, uint64_t mem, void *buf, size_t len, int blocking,
                                cl_event ev, cl_command_queue q, const tf_value *expected, int owned)
{
    rpl_session *s = x->s;
    if (x->no_verify) {
        if (owned && blocking)
            rpl_block_free(buf);
        else if (owned)
            rpl_block_to_scratch(x, buf);   /* the device writes it until the command completes */
        return RPL_OK;
    }
    if (expected && expected->type == TF_BOOL) {   /* not captured when recorded */
        s->sum.unverified++;
        if (owned)
            rpl_block_free(buf);
        return RPL_OK;
    }
    /* over half the budget: wait for the oldest (the replay's own event) */
    while (!s->o.exact_calls && s->npending && s->pending_bytes + len > s->o.max_memory / 2) {
        size_t oi = 0;
        while (oi < s->npending && s->pending[oi].early)
            oi++;
        if (oi == s->npending)
            break;
        rpl_pending *o = &s->pending[oi];
        if (!o->ev || !s->api.clWaitForEvents || s->api.clWaitForEvents(1, &o->ev) != CL_SUCCESS)
            break;
        size_t before = s->npending;
        RPL_TRY(rpl_complete(s, oi));
        if (s->npending == before)
            break;   /* its recorded bytes have not arrived yet */
    }
    if (s->pending_bytes + len > s->o.max_memory) {
        if (owned)
            rpl_block_free(buf);
        return rpl_call_error(x, RPL_ERR_LIMIT, "pending read-backs exceed the memory limit (%zu bytes)",
                              s->o.max_memory);
    }
    rpl_pending *a = realloc(s->pending, (s->npending + 1) * sizeof *a);
    if (!a) {
        if (owned)
            rpl_block_free(buf);
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    }
    s->pending = a;
    rpl_pending *p = &a[s->npending];
    memset(p, 0, sizeof *p);
    p->seq = x->c->seq;
    p->fn = x->fn;
    snprintf(p->what, sizeof p->what, "%s", what);
    p->mem = mem;
    p->len = len;
    p->q = q;
    /* held until the entry goes: rpl_verify_free finishes it, even when
     * the application released it (not in exact mode: no call of ours) */
    if (q && !s->o.exact_calls && s->api.clRetainCommandQueue && s->api.clRetainCommandQueue(q) == CL_SUCCESS)
        p->q_own = 1;
    if (owned) {
        p->buf = buf;
    } else {
        p->buf = rpl_block_alloc(len);
        if (!p->buf)
            return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
        p->src = buf;
        if (x->pitched) {
            p->pitched = 1;
            p->geom = *x->pitched;
        }
    }
    if (ev && !s->o.exact_calls && s->api.clRetainEvent && s->api.clRetainEvent(ev) == CL_SUCCESS) {
        p->ev = ev;
        p->ev_own = 1;
    } else {
        p->ev = ev;
    }
    s->npending++;
    s->pending_bytes += len;
    RPL_TRY(rpl_defined_readback(x, mem, len, &p->undef));
    if (expected)
        RPL_TRY(rpl_keep_expected(s, p, expected));
    if (blocking) {
        /* a blocking command on an in-order queue: what came before is done too */
        rpl_obj *qo = rpl_obj_by_live(s, q);
        if (qo && qo->in_order && !rpl_sched_lanes(s, q))   /* lanes: only its own lane is done */
            RPL_TRY(rpl_verify_queue_done(s, q));
        else
            for (size_t i = s->npending; i-- > 0;)
                if (s->pending[i].seq == x->c->seq)
                    RPL_TRY(rpl_complete(s, i));
    }
    return RPL_OK;
}

int rpl_readback_out(rpl_cx *x, unsigned i, void *buf, size_t len, cl_bool blocking, cl_event ev)
{
    const tf_value *exp = x->c->outs && x->c->outs[i].type != TF_NIL ? &x->c->outs[i] : NULL;
    void *q = NULL;
    rpl_obj *qo = rpl_obj_find(x->s, rpl_arg_id(x, 0));
    if (qo)
        q = qo->live;
    return rpl_readback_submit(x, x->c->sig->params[i].name, rpl_arg_id(x, 1), buf, len, blocking, ev, q, exp);
}

int rpl_verify_data(rpl_session *s, const tf_data *d)
{
    for (size_t i = 0; i < s->npending; i++) {
        rpl_pending *p = &s->pending[i];
        if (p->early || p->seq != d->seq || strcmp(p->what, d->key) || p->have_expected)
            continue;
        if (d->value.type == TF_BOOL
            || (d->value.type != TF_BIN && d->value.type != TF_BLOB && !tf_value_hashref(&d->value, NULL))) {
            /* the command failed or was not captured (or the trace holds
             * something else: an integer, nil): nothing to compare, but the
             * replayed command may still be writing into p->buf, so the
             * entry stays until it is complete (rpl_settle counts it) */
            p->exp = (tf_value){.type = TF_NIL};
            p->have_expected = 1;
            return rpl_settle(s, i);
        }
        RPL_TRY(rpl_keep_expected(s, p, &d->value));
        return rpl_settle(s, i);
    }
    /* no read-back waits for it: the call may not have ended yet (early) */
    if (!rpl_measuring(s) || !s->o.verify)
        return RPL_OK;
    size_t nearly = 0, oldest = SIZE_MAX;
    for (size_t i = 0; i < s->npending; i++)
        if (s->pending[i].early) {
            nearly++;
            if (oldest == SIZE_MAX)
                oldest = i;
        }
    if (nearly >= RPL_EARLY_MAX)
        rpl_pending_remove(s, oldest);
    rpl_pending *a = realloc(s->pending, (s->npending + 1) * sizeof *a);
    if (!a)
        return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
    s->pending = a;
    rpl_pending *p = &a[s->npending++];
    memset(p, 0, sizeof *p);
    p->seq = d->seq;
    p->early = 1;
    snprintf(p->what, sizeof p->what, "%s", d->key);
    if (d->value.type == TF_BIN || d->value.type == TF_BLOB || tf_value_hashref(&d->value, NULL))
        RPL_TRY(rpl_keep_expected(s, p, &d->value));
    else
        p->exp = d->value;   /* "not captured" (bool) or unusable: no bytes to keep */
    return RPL_OK;
}

int rpl_verify_queue_done(rpl_session *s, cl_command_queue q)
{
    rpl_held_queue_done(s, q);
    /* in call order, so that read-backs that differ are reported first one
     * first (rpl_complete removes entry i at most) */
    for (size_t i = 0; i < s->npending;) {
        size_t n = s->npending;
        if (s->pending[i].q == q)
            RPL_TRY(rpl_complete(s, i));
        if (s->npending == n)
            i++;
    }
    return RPL_OK;
}

int rpl_verify_events_done(rpl_session *s, const cl_event *evs, size_t n)
{
    for (size_t i = s->nheld; i-- > 0;)
        for (size_t k = 0; k < n; k++)
            if (s->held[i].ev && evs[k] == s->held[i].ev) {
                rpl_held_release(s, i);
                break;
            }
    for (size_t i = 0; i < s->npending;) {   /* in call order, as above */
        size_t before = s->npending;
        for (size_t k = 0; s->pending[i].ev && k < n; k++)
            if (evs[k] == s->pending[i].ev) {
                RPL_TRY(rpl_complete(s, i));
                break;
            }
        if (s->npending == before)
            i++;
    }
    return RPL_OK;
}

int rpl_verify_flush(rpl_session *s, int wait)
{
    while (wait && s->nheld) {
        rpl_held *h = &s->held[s->nheld - 1];
        if (h->ev && s->api.clWaitForEvents)
            s->api.clWaitForEvents(1, &h->ev);
        else if (h->q && s->api.clFinish)
            s->api.clFinish(h->q);
        rpl_held_release(s, s->nheld - 1);
    }
    while (s->npending) {
        rpl_pending *p = &s->pending[0];
        if (p->early) {   /* its call never ran: not a read-back */
            rpl_pending_remove(s, 0);
            continue;
        }
        if (!p->complete && wait) {
            if (p->ev && s->api.clWaitForEvents)
                s->api.clWaitForEvents(1, &p->ev);
            else if (p->q && s->api.clFinish)
                s->api.clFinish(p->q);
            if (p->have_expected) {
                RPL_TRY(rpl_complete(s, 0));
                continue;
            }
        }
        s->sum.unverified++;
        rpl_pending_remove(s, 0);
    }
    return RPL_OK;
}

void rpl_verify_free(rpl_session *s)
{
    /* the runtime may still read held data: finish the queues first */
    for (size_t i = 0; i < s->nheld && !s->o.exact_calls; i++)
        if (s->held[i].q && s->api.clFinish)
            s->api.clFinish(s->held[i].q);
    while (s->nheld)
        rpl_held_release(s, s->nheld - 1);
    /* ... and may still write into the buffers of pending read-backs (a
     * replay that failed while a non-blocking read was in flight) */
    for (size_t i = 0; i < s->npending; i++) {
        rpl_pending *p = &s->pending[i];
        if (s->o.exact_calls && !p->complete && !p->early) {
            /* exact-calls mode makes no call of its own, but a trace that
             * ends with a read in flight leaves the driver writing into
             * its buffer: its queue, while the application holds it, is
             * finished (one call past the recorded ones); else the buffer
             * is left to the driver (not freed) */
            rpl_obj *qo = p->q ? rpl_obj_by_live(s, p->q) : NULL;
            if (qo && qo->live && s->api.clFinish)
                s->api.clFinish(p->q);
            else
                p->buf = NULL;
            continue;
        }
        rpl_pending_wait(s, p);
        /* an event can answer before the driver is done with its command
         * (PoCL: a read behind a user event set to an error at the end,
         * still copying): the queue is drained too */
        if (s->pending[i].q_own && !s->pending[i].early && s->api.clFinish)
            s->api.clFinish(s->pending[i].q);
    }
    free(s->held);
    s->held = NULL;
    while (s->npending)
        rpl_pending_remove(s, s->npending - 1);
    free(s->pending);
    s->pending = NULL;
}

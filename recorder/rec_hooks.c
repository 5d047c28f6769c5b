/* rec_hooks.c — the recorder's side of plan mode: the hook table a module
 * above registers (recorder/rec.h, "hooks"), called through here by the
 * generated entry points and the hand-written hooks (rec_int.h declares
 * these rec_plan_* and rec_stage_* names), and what the hooks may use of
 * the recorder. The recorder links nothing of plan mode: with no table
 * registered, no run is in plan mode. */
#include "recorder/rec_int.h"

static const rec_hooks *rec_hk;   /* set by a constructor, before any call */

_Static_assert(REC_KARG_INLINE_MAX == REC_INLINE_MAX, "rec.h's REC_KARG_INLINE_MAX is rec_int.h's REC_INLINE_MAX");

void rec_hooks_set(const rec_hooks *h)
{
    rec_hk = h;
}

void rec_hooks_stop(void)
{
    rec_g.plan = 0;
}

int rec_plan_init(tf_writer_opts *o)
{
    if (!rec_hk)
        return 0;
    int call_times = 0;
    int r = rec_hk->init(o, &call_times);
    if (r == 1) {
        rec_g.call_times = call_times;
        rec_g.plan = 1;
    }
    return r;
}

int rec_plan_needs_data(void)
{
    return rec_hk->needs_data();
}

int rec_plan_take(void)
{
    return rec_hk->take();
}

int rec_plan_apply(rec_call *c, void **pa, int skip, int can_skip)
{
    rec_hook_call h = {.fn = c->fn, .seq = c->seq, .ret_override = c->ret_override};
    int r = rec_hk->apply(&h, pa, skip, can_skip);
    c->ret_override = h.ret_override;
    return r;
}

void rec_plan_karg(cl_kernel k, cl_uint index, size_t size, const void *value, uint64_t id)
{
    rec_hk->karg(k, index, size, value, id);
}

void rec_plan_karg_opaque(cl_kernel k)
{
    if (rec_g.plan)
        rec_hk->karg_opaque(k);
}

void rec_plan_released(uint64_t id)
{
    if (rec_g.plan)
        rec_hk->released(id);
}

void rec_plan_event_type(cl_event ev, cl_command_type *type)
{
    if (rec_g.plan)
        rec_hk->event_type(ev, type);
}

void rec_plan_event_released(cl_event ev)
{
    if (rec_g.plan)
        rec_hk->event_released(ev);
}

void rec_plan_program(cl_program prog)
{
    if (rec_g.plan)
        rec_hk->program(prog);
}

void rec_plan_end(void)
{
    if (rec_g.plan)
        rec_hk->end();
}

void rec_plan_time(uint32_t fn, int64_t ns)
{
    rec_hk->time(fn, ns);
}

int rec_stage_on(void)
{
    return rec_g.plan && rec_hk->stage_on();
}

void rec_stage_user_event(void)
{
    if (rec_g.plan || rec_g.stage)
        rec_hk->stage_user_event();
}

void rec_stage_wait(void)
{
    if (rec_g.plan || rec_g.stage)
        rec_hk->stage_wait();
}

void rec_stage_buffer(cl_context ctx, size_t size)
{
    if (rec_g.plan || rec_g.stage)
        rec_hk->stage_buffer(ctx, size);
}

void rec_stage_filling(const void *p, size_t n, cl_event e)
{
    if ((rec_g.plan || rec_g.stage) && rec_hk->stage_filling)
        rec_hk->stage_filling(p, n, e);
}

_Atomic uint64_t rec_n_staged;

void rec_stage_record_init(void)
{
    rec_g.stage = rec_hk && rec_hk->stage_record && rec_hk->stage_record();
}

cl_int rec_xfer_clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size,
                                     const void *ptr, cl_uint nw, const cl_event *wl, cl_event *ev)
{
    cl_int r;
    if (rec_g.stage && rec_hk->stage_write(q, buf, blocking, off, size, ptr, nw, wl, ev, &r)) {
        atomic_fetch_add_explicit(&rec_n_staged, 1, memory_order_relaxed);
        return r;
    }
    return rec_next.clEnqueueWriteBuffer(q, buf, blocking, off, size, ptr, nw, wl, ev);
}

int rec_stage_read_call(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size, void *ptr,
                        cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *ret, const void **bytes, void **hold)
{
    if (hold)
        *hold = NULL;
    if (!rec_g.stage || !rec_hk->stage_read(q, buf, blocking, off, size, ptr, nw, wl, ev, ret, bytes, hold))
        return 0;
    atomic_fetch_add_explicit(&rec_n_staged, 1, memory_order_relaxed);
    return 1;
}

void rec_stage_release(void *hold)
{
    if (hold)
        rec_hk->stage_release(hold);
}

/* ------------------------------------------------------------ for the hooks */

const struct rec_next_table *rec_next_layer(void)
{
    return &rec_next;
}

void *rec_next_fn(const char *name)
{
    void *real = rec_device_real_fn(name);   /* not the device override's: `clrr devices` order */
    return real ? real : rec_gen_next_fn(name);
}

const tf_sig *rec_fn_sig(uint32_t fn)
{
    return fn < REC_FN_COUNT ? &rec_gen_sigs[fn] : NULL;
}

int64_t rec_time_ns(void)
{
    return rec_now_ns();
}

uint64_t rec_handle_id(const void *h)
{
    return rec_obj_id(h);
}

uint64_t rec_handle_mem_id(const void *h)
{
    rec_obj_info oi;
    return h && rec_obj_get(h, &oi) && oi.kind == REC_OBJ_MEM ? oi.id : 0;
}

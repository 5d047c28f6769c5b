/* test_opt_passes.c — the optimizer's passes on traces whose answer is
 * known by construction. Each test writes a small trace with the trace
 * writer (calls as the recorder records them: same signatures, ids, blobs),
 * runs opt_optimize() and checks exactly which calls the plan drops, under
 * which pass: a write overwritten before any read is dead, one overwritten
 * only partly is not; the same bytes written again are redundant (and a
 * write both dead and redundant is dropped once, as dead, so that the other
 * stays); memory the host can see (USE_HOST_PTR) is never dropped; an
 * overwrite on another queue counts only once the host has waited for the
 * first; kernels whose output nobody reads are dead (not with printf);
 * fills; occurrences. Then the matcher (live_exec) on the same trace drops
 * exactly the plan's calls, and on a trace with other data it still drops
 * the dead ones and falls back where the bytes differ. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "live/live.h"
#include "optimizer/opt.h"
#include "trace-format/tf_hot.h"

/* ------------------------------------------------------------ trace builder */

typedef struct sigdesc {
    const char *name, *ret;
    const char *p[10][2];   /* name, type */
    uint8_t kind[10], dir[10];
    unsigned n;
} sigdesc;

static const sigdesc sigs[] = {
    {"clCreateCommandQueueWithProperties", "cl_command_queue",
     {{"context", "cl_context"}, {"device", "cl_device_id"}, {"properties", "const cl_queue_properties *"},
      {"errcode_ret", "cl_int *"}}, {1, 1, 7, 0}, {1, 1, 1, 2}, 4},
    {"clCreateBuffer", "cl_mem",
     {{"context", "cl_context"}, {"flags", "cl_mem_flags"}, {"size", "size_t"}, {"host_ptr", "void *"},
      {"errcode_ret", "cl_int *"}}, {1, 0, 0, 4, 0}, {1, 1, 1, 1, 2}, 5},
    {"clEnqueueWriteBuffer", "cl_int",
     {{"command_queue", "cl_command_queue"}, {"buffer", "cl_mem"}, {"blocking_write", "cl_bool"}, {"offset", "size_t"},
      {"size", "size_t"}, {"ptr", "const void *"}, {"num_events_in_wait_list", "cl_uint"},
      {"event_wait_list", "const cl_event *"}, {"event", "cl_event *"}}, {1, 1, 0, 0, 0, 4, 0, 3, 1},
     {1, 1, 1, 1, 1, 1, 1, 1, 2}, 9},
    {"clEnqueueReadBuffer", "cl_int",
     {{"command_queue", "cl_command_queue"}, {"buffer", "cl_mem"}, {"blocking_read", "cl_bool"}, {"offset", "size_t"},
      {"size", "size_t"}, {"ptr", "void *"}, {"num_events_in_wait_list", "cl_uint"},
      {"event_wait_list", "const cl_event *"}, {"event", "cl_event *"}}, {1, 1, 0, 0, 0, 4, 0, 3, 1},
     {1, 1, 1, 1, 1, 2, 1, 1, 2}, 9},
    {"clEnqueueFillBuffer", "cl_int",
     {{"command_queue", "cl_command_queue"}, {"buffer", "cl_mem"}, {"pattern", "const void *"},
      {"pattern_size", "size_t"}, {"offset", "size_t"}, {"size", "size_t"}, {"num_events_in_wait_list", "cl_uint"},
      {"event_wait_list", "const cl_event *"}, {"event", "cl_event *"}}, {1, 1, 4, 0, 0, 0, 0, 3, 1},
     {1, 1, 1, 1, 1, 1, 1, 1, 2}, 9},
    {"clFinish", "cl_int", {{"command_queue", "cl_command_queue"}}, {1}, {1}, 1},
    {"clReleaseMemObject", "cl_int", {{"memobj", "cl_mem"}}, {1}, {1}, 1},
    {"clCreateProgramWithSource", "cl_program",
     {{"context", "cl_context"}, {"count", "cl_uint"}, {"strings", "const char **"}, {"lengths", "const size_t *"},
      {"errcode_ret", "cl_int *"}}, {1, 0, 4, 3, 0}, {1, 1, 1, 1, 2}, 5},
    {"clBuildProgram", "cl_int",
     {{"program", "cl_program"}, {"num_devices", "cl_uint"}, {"device_list", "const cl_device_id *"},
      {"options", "const char *"}, {"pfn_notify", "void (*)(cl_program, void *)"}, {"user_data", "void *"}},
     {1, 0, 3, 2, 5, 6}, {1, 1, 1, 1, 1, 1}, 6},
    {"clCreateKernel", "cl_kernel",
     {{"program", "cl_program"}, {"kernel_name", "const char *"}, {"errcode_ret", "cl_int *"}}, {1, 2, 0}, {1, 1, 2}, 3},
    {"clSetKernelArg", "cl_int",
     {{"kernel", "cl_kernel"}, {"arg_index", "cl_uint"}, {"arg_size", "size_t"}, {"arg_value", "const void *"}},
     {1, 0, 0, 4}, {1, 1, 1, 1}, 4},
    {"clEnqueueNDRangeKernel", "cl_int",
     {{"command_queue", "cl_command_queue"}, {"kernel", "cl_kernel"}, {"work_dim", "cl_uint"},
      {"global_work_offset", "const size_t *"}, {"global_work_size", "const size_t *"},
      {"local_work_size", "const size_t *"}, {"num_events_in_wait_list", "cl_uint"},
      {"event_wait_list", "const cl_event *"}, {"event", "cl_event *"}}, {1, 1, 0, 3, 3, 3, 0, 3, 1},
     {1, 1, 1, 1, 1, 1, 1, 1, 2}, 9},
    {"clCreateProgramWithBinary", "cl_program",
     {{"context", "cl_context"}, {"num_devices", "cl_uint"}, {"device_list", "const cl_device_id *"},
      {"lengths", "const size_t *"}, {"binaries", "const unsigned char **"}, {"binary_status", "cl_int *"},
      {"errcode_ret", "cl_int *"}}, {1, 0, 3, 3, 4, 3, 0}, {1, 1, 1, 1, 1, 2, 2}, 7},
};
#define NSIGS (sizeof sigs / sizeof sigs[0])

/* A value: 'n' nil, 'u' uint, 'b' bool, 's' string, 'B' blob of (p, n) bytes,
 * 'x' bin of (p, n) bytes, 'a' array of n uints at p. */
typedef struct tv {
    char t;
    uint64_t u;
    const void *p;
    size_t n;
} tv;
#define N_ ((tv){'n', 0, NULL, 0})
#define U_(v) ((tv){'u', (v), NULL, 0})
#define T_ ((tv){'b', 1, NULL, 0})
#define F_ ((tv){'b', 0, NULL, 0})

typedef struct tb {
    tf_writer *w;
    uint64_t seq, ids;
    uint64_t clock;           /* the device's clock (ns) for tb_devtime */
    int written[NSIGS];
    char path[64];
} tb;

static void tb_open(tb *b)
{
    memset(b, 0, sizeof *b);
    snprintf(b->path, sizeof b->path, "/tmp/test_opt_passes.%d.clrr", (int)getpid());
    CU_ASSERT_FATAL(tf_writer_open(&b->w, b->path, NULL) == TF_OK);
    b->ids = 100;
    b->clock = 1000000000;
}

static void tb_close(tb *b)
{
    CU_ASSERT_FATAL(tf_writer_close(b->w) == TF_OK);
}

/* One value into the record being encoded ('r': a stored blob's reference). */
static void tb_enc(tf_enc *e, tf_writer *w, const tv *v)
{
    (void)w;
    switch (v->t) {
    case 'u': tf_enc_uint(e, v->u); break;
    case 'b': tf_enc_bool(e, (int)v->u); break;
    case 's': tf_enc_cstr(e, v->p); break;
    case 'x': tf_enc_bin(e, v->p, v->n); break;
    case 'a':
        tf_enc_array(e, (uint32_t)v->n);
        for (size_t i = 0; i < v->n; i++)
            tf_enc_uint(e, ((const uint64_t *)v->p)[i]);
        break;
    case 'r': tf_enc_blobref(e, v->p); break;
    default: tf_enc_nil(e); break;
    }
}

/* Blobs are stored before the record that names them: 'B' becomes 'r'. */
static void tb_blobs(tb *b, tv *v, unsigned n, tf_blobref *refs)
{
    for (unsigned i = 0; i < n; i++)
        if (v[i].t == 'B') {
            CU_ASSERT_FATAL(tf_writer_blob(b->w, v[i].p, v[i].n, &refs[i]) == TF_OK);
            v[i].t = 'r';
            v[i].p = &refs[i];
        }
}

/* One complete call: returns its seq. */
static uint64_t tb_call(tb *b, const char *fn, const tv *args_in, tv ret, const tv *outs_in)
{
    size_t s = 0;
    while (s < NSIGS && strcmp(sigs[s].name, fn))
        s++;
    CU_ASSERT_FATAL(s < NSIGS);
    const sigdesc *d = &sigs[s];
    tf_enc *e;
    if (!b->written[s]) {
        b->written[s] = 1;
        e = tf_writer_lock(b->w);
        tf_enc_array(e, 5);
        tf_enc_uint(e, 1);
        tf_enc_uint(e, s + 1);
        tf_enc_cstr(e, d->name);
        tf_enc_cstr(e, d->ret);
        tf_enc_array(e, d->n);
        for (unsigned i = 0; i < d->n; i++) {
            tf_enc_array(e, 4);
            tf_enc_cstr(e, d->p[i][0]);
            tf_enc_cstr(e, d->p[i][1]);
            tf_enc_uint(e, d->kind[i]);
            tf_enc_uint(e, d->dir[i]);
        }
        tf_writer_unlock(b->w);
    }
    tv args[10], outs[10];
    tf_blobref ra[10], ro[10];
    for (unsigned i = 0; i < d->n; i++) {
        args[i] = args_in[i];
        outs[i] = outs_in ? outs_in[i] : N_;
    }
    tb_blobs(b, args, d->n, ra);
    tb_blobs(b, outs, d->n, ro);
    uint64_t seq = ++b->seq;
    int64_t t = (int64_t)seq * 1000;
    e = tf_writer_lock(b->w);
    tf_enc_array(e, 7);
    tf_enc_uint(e, 2);
    tf_enc_uint(e, seq);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, s + 1);
    tf_enc_int(e, t);
    tf_enc_array(e, d->n);
    for (unsigned i = 0; i < d->n; i++)
        tb_enc(e, b->w, &args[i]);
    tf_enc_nil(e);
    tf_writer_unlock(b->w);
    e = tf_writer_lock(b->w);
    tf_enc_array(e, 6);
    tf_enc_uint(e, 3);
    tf_enc_uint(e, seq);
    tf_enc_int(e, t + 500);
    tb_enc(e, b->w, &ret);
    tf_enc_array(e, d->n);
    for (unsigned i = 0; i < d->n; i++)
        tb_enc(e, b->w, &outs[i]);
    tf_enc_nil(e);
    tf_writer_unlock(b->w);
    return seq;
}

static uint64_t tb_queue(tb *b)
{
    uint64_t id = ++b->ids;
    tb_call(b, "clCreateCommandQueueWithProperties", (tv[]){U_(1), U_(2), N_, T_}, U_(id), (tv[]){N_, N_, N_, U_(0)});
    return id;
}

/* A queue with CL_QUEUE_PROPERTIES @p props. */
static uint64_t tb_queue_props(tb *b, uint64_t props)
{
    uint64_t id = ++b->ids, list[3] = {0x1093, props, 0};
    tb_call(b, "clCreateCommandQueueWithProperties", (tv[]){U_(1), U_(2), {'a', 0, list, 3}, T_}, U_(id),
            (tv[]){N_, N_, N_, U_(0)});
    return id;
}

/* Call @p seq took @p ns of device time (a DEVTIME record, as the recorder
 * writes it), starting a microsecond after the previous one ended. */
static void tb_devtime(tb *b, uint64_t seq, uint64_t ns)
{
    tf_enc *e = tf_writer_lock(b->w);
    tf_enc_array(e, 6);
    tf_enc_uint(e, 4);
    tf_enc_uint(e, seq);
    tf_enc_uint(e, 0);
    tf_enc_uint(e, 0);
    tf_enc_uint(e, b->clock);
    tf_enc_uint(e, b->clock + ns);
    tf_writer_unlock(b->w);
    b->clock += ns + 1000;
}

static uint64_t tb_buffer(tb *b, uint64_t flags, uint64_t size, const void *host)
{
    uint64_t id = ++b->ids;
    tv hp = host ? (tv){'B', 0, host, size} : U_(0);
    tb_call(b, "clCreateBuffer", (tv[]){U_(1), U_(flags), U_(size), hp, T_}, U_(id), (tv[]){N_, N_, N_, N_, U_(0)});
    return id;
}

static uint64_t tb_write(tb *b, uint64_t q, uint64_t buf, uint64_t off, uint64_t size, const void *data)
{
    return tb_call(b, "clEnqueueWriteBuffer",
                   (tv[]){U_(q), U_(buf), U_(0), U_(off), U_(size), {'B', 0, data, size}, U_(0), N_, F_}, U_(0), NULL);
}

static uint64_t tb_read_b(tb *b, uint64_t q, uint64_t buf, uint64_t off, uint64_t size, const void *data,
                          int blocking)
{
    return tb_call(b, "clEnqueueReadBuffer",
                   (tv[]){U_(q), U_(buf), U_(blocking), U_(off), U_(size), T_, U_(0), N_, F_}, U_(0),
                   (tv[]){N_, N_, N_, N_, N_, {'B', 0, data, size}, N_, N_, N_});
}

static uint64_t tb_read(tb *b, uint64_t q, uint64_t buf, uint64_t off, uint64_t size, const void *data)
{
    return tb_read_b(b, q, buf, off, size, data, 1);
}

static uint64_t tb_fill(tb *b, uint64_t q, uint64_t buf, uint32_t pattern, uint64_t size)
{
    return tb_call(b, "clEnqueueFillBuffer",
                   (tv[]){U_(q), U_(buf), {'x', 0, &pattern, 4}, U_(4), U_(0), U_(size), U_(0), N_, F_}, U_(0), NULL);
}

static void tb_finish(tb *b, uint64_t q)
{
    tb_call(b, "clFinish", (tv[]){U_(q)}, U_(0), NULL);
}

static void tb_release(tb *b, uint64_t mem)
{
    tb_call(b, "clReleaseMemObject", (tv[]){U_(mem)}, U_(0), NULL);
}

static uint64_t tb_program(tb *b, const char *src)
{
    uint64_t id = ++b->ids;
    tb_call(b, "clCreateProgramWithSource", (tv[]){U_(1), U_(1), {'B', 0, src, strlen(src)}, N_, T_}, U_(id),
            (tv[]){N_, N_, N_, N_, U_(0)});
    uint64_t dev = 2;
    tb_call(b, "clBuildProgram", (tv[]){U_(id), U_(1), {'a', 0, &dev, 1}, {'s', 0, "", 0}, F_, U_(0)}, U_(0), NULL);
    return id;
}

/* A program made from a device binary (no source in the trace), built. */
static uint64_t tb_program_binary(tb *b)
{
    static const uint8_t bin[16] = "not a real elf";
    uint64_t id = ++b->ids, dev = 2, len = sizeof bin;
    tb_call(b, "clCreateProgramWithBinary",
            (tv[]){U_(1), U_(1), {'a', 0, &dev, 1}, {'a', 0, &len, 1}, {'B', 0, bin, sizeof bin}, T_, T_}, U_(id),
            (tv[]){N_, N_, N_, N_, N_, N_, U_(0)});
    tb_call(b, "clBuildProgram", (tv[]){U_(id), U_(1), {'a', 0, &dev, 1}, {'s', 0, "", 0}, F_, U_(0)}, U_(0), NULL);
    return id;
}

static uint64_t tb_kernel(tb *b, uint64_t prog, const char *name)
{
    uint64_t id = ++b->ids;
    tb_call(b, "clCreateKernel", (tv[]){U_(prog), {'s', 0, name, 0}, T_}, U_(id), (tv[]){N_, N_, U_(0)});
    return id;
}

/* Sets the memory arguments of @p k and launches it over @p n items. */
static uint64_t tb_launch(tb *b, uint64_t q, uint64_t k, const uint64_t *mems, unsigned nmem, uint64_t n)
{
    for (unsigned i = 0; i < nmem; i++)
        tb_call(b, "clSetKernelArg", (tv[]){U_(k), U_(i), U_(8), U_(mems[i])}, U_(0), NULL);
    uint64_t local = 64;
    return tb_call(b, "clEnqueueNDRangeKernel",
                   (tv[]){U_(q), U_(k), U_(1), N_, {'a', 0, &n, 1}, {'a', 0, &local, 1}, U_(0), N_, F_}, U_(0), NULL);
}

/* ------------------------------------------------------------ checks */

static plan_file *optimize_h(tb *b, unsigned passes, int horizontal)
{
    opt_options o = {.passes = passes, .horizontal = horizontal};
    plan_file *p = NULL;
    char err[512] = "";
    plan_status st = opt_optimize(b->path, &o, &p, err, sizeof err);
    if (st != PLAN_OK)
        fprintf(stderr, "opt_optimize: %s\n", err);
    CU_ASSERT_FATAL(st == PLAN_OK && p);
    /* the patterns built from calls are in the reader's canonical form:
     * written out and read back, every key is the same */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_FATAL(f && plan_write(p, f) == PLAN_OK);
    fclose(f);
    plan_file *q = NULL;
    CU_ASSERT_FATAL(plan_parse(buf, len, &q, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_xform_count(q) == plan_xform_count(p));
    for (size_t i = 0; i < plan_xform_count(p) && i < plan_xform_count(q); i++)
        CU_ASSERT(plan_get_xform(p, i)->key == plan_get_xform(q, i)->key &&
                  !strcmp(plan_get_xform(p, i)->pattern, plan_get_xform(q, i)->pattern));
    plan_free(q);
    free(buf);
    return p;
}

static plan_file *optimize(tb *b, unsigned passes)
{
    return optimize_h(b, passes, 0);
}

/* The plan drops exactly the calls @p seqs (0-terminated), each by @p passes[i]. */
static int drops(const plan_file *p, const uint64_t *seqs, const plan_pass *passes)
{
    size_t n = 0;
    while (seqs[n])
        n++;
    if (plan_xform_count(p) != n) {
        fprintf(stderr, "\n  %zu transformations, expected %zu:", plan_xform_count(p), n);
        for (size_t i = 0; i < plan_xform_count(p); i++)
            fprintf(stderr, " #%llu(%s)", (unsigned long long)plan_get_xform(p, i)->seq,
                    plan_pass_name((plan_pass)plan_get_xform(p, i)->pass));
        fprintf(stderr, "\n");
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const plan_xform *x = plan_get_xform(p, i);
        if (x->seq != seqs[i] || x->pass != passes[i]) {
            fprintf(stderr, "\n  transformation %zu: #%llu %s, expected #%llu %s\n", i, (unsigned long long)x->seq,
                    plan_pass_name((plan_pass)x->pass), (unsigned long long)seqs[i], plan_pass_name(passes[i]));
            return 0;
        }
    }
    return 1;
}

#define D PLAN_PASS_DEAD
#define R PLAN_PASS_REDUNDANT

static uint8_t X[4096], Y[4096];

static void init_data(void)
{
    for (int i = 0; i < 4096; i++) {
        X[i] = (uint8_t)(i * 7 + 1);
        Y[i] = (uint8_t)(i * 13 + 5);
    }
}

/* ------------------------------------------------------------ tests */

static void test_overwritten_write(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL);
    uint64_t w1 = tb_write(&b, q, a, 0, 4096, X);
    tb_write(&b, q, a, 0, 4096, Y);
    tb_read(&b, q, a, 0, 4096, Y);
    tb_close(&b);
    plan_file *p = optimize(&b, PLAN_PASSES_ALL);
    CU_ASSERT(drops(p, (uint64_t[]){w1, 0}, (plan_pass[]){D}));
    CU_ASSERT(strstr(plan_get_xform(p, 0)->reason, "overwritten by call #") != NULL);
    CU_ASSERT(plan_get_pass(p, D)->effect.bytes == 4096 && plan_get_pass(p, D)->effect.commands == 1);
    plan_free(p);
    p = optimize(&b, 0);   /* no pass: an empty plan */
    CU_ASSERT(plan_xform_count(p) == 0 && !plan_get_pass(p, D)->enabled);
    plan_free(p);
    unlink(b.path);
}

static void test_partial_overwrite_and_never_read(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL), c = tb_buffer(&b, 1, 4096, NULL);
    tb_write(&b, q, a, 0, 4096, X);          /* half of it survives to the read */
    tb_write(&b, q, a, 0, 2048, Y);
    tb_read(&b, q, a, 0, 4096, X);
    uint64_t wc = tb_write(&b, q, c, 0, 4096, X);   /* c is never read: released */
    tb_release(&b, c);
    uint64_t wa = tb_write(&b, q, a, 1024, 1024, Y);   /* after the last read of a */
    tb_finish(&b, q);
    tb_close(&b);
    plan_file *p = optimize(&b, PLAN_PASSES_ALL);
    CU_ASSERT(drops(p, (uint64_t[]){wc, wa, 0}, (plan_pass[]){D, D}));
    CU_ASSERT(strstr(plan_get_xform(p, 0)->reason, "never read") != NULL);
    plan_free(p);
    unlink(b.path);
}

static void test_redundant_write(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL), c = tb_buffer(&b, 1, 4096, NULL);
    uint64_t w1 = tb_write(&b, q, a, 0, 4096, X);
    tb_read(&b, q, a, 0, 4096, X);
    uint64_t w2 = tb_write(&b, q, a, 0, 4096, X);       /* a holds X: redundant */
    tb_read(&b, q, a, 0, 4096, X);
    tb_write(&b, q, a, 0, 4096, Y);                     /* other bytes: stays */
    tb_read(&b, q, a, 0, 4096, Y);
    uint64_t w4 = tb_write(&b, q, a, 1024, 1024, Y + 1024);   /* a sub-range, not the same content key */
    tb_read(&b, q, a, 0, 4096, Y);
    uint64_t c1 = tb_write(&b, q, c, 0, 4096, X);       /* both dead and redundant-looking: */
    uint64_t c2 = tb_write(&b, q, c, 0, 4096, X);       /* c1 is dead, c2 must stay */
    tb_read(&b, q, c, 0, 4096, X);
    uint64_t c3 = tb_write(&b, q, c, 0, 4096, X);       /* after the read of c2's bytes: redundant */
    tb_read(&b, q, c, 0, 4096, X);
    tb_close(&b);
    (void)w4;
    plan_file *p = optimize(&b, PLAN_PASSES_ALL);
    CU_ASSERT(drops(p, (uint64_t[]){w2, c1, c3, 0}, (plan_pass[]){R, D, R}));
    CU_ASSERT(plan_get_xform(p, 0)->holds_seq == w1);
    CU_ASSERT(plan_get_xform(p, 2)->holds_seq == c2);
    plan_free(p);
    /* redundant alone: c2 is redundant after c1 (which is kept) */
    p = optimize(&b, 1u << R);
    /* c2 and c3: one decision for two occurrences of one pattern (1.11 repeat) */
    CU_ASSERT(drops(p, (uint64_t[]){w2, c2, 0}, (plan_pass[]){R, R}));
    CU_ASSERT(plan_xform_count(p) == 2 && plan_get_xform(p, 1)->repeat == 2 &&
              plan_get_xform(p, 1)->effect.commands == 2 && plan_get_pass(p, R)->effect.commands == 3);
    {   /* written and read back; a range that overlaps another of its pattern is refused */
        char *buf = NULL, err[256] = "";
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        CU_ASSERT_FATAL(f && plan_write(p, f) == PLAN_OK);
        fclose(f);
        plan_file *q = NULL;
        CU_ASSERT(strstr(buf, "\"repeat\":2") != NULL);
        CU_ASSERT_FATAL(plan_parse(buf, len, &q, err, sizeof err) == PLAN_OK);
        CU_ASSERT(plan_get_xform(q, 1)->repeat == 2);
        plan_free(q);
        char *r3 = strstr(buf, "\"repeat\":2");
        r3[9] = '3';   /* past the pattern's occurrences */
        CU_ASSERT(plan_parse(buf, len, &q, err, sizeof err) == PLAN_ERR_PLAN && strstr(err, "repeat") && !q);
        free(buf);
    }
    plan_free(p);
    /* dead alone */
    p = optimize(&b, 1u << D);
    CU_ASSERT(drops(p, (uint64_t[]){c1, 0}, (plan_pass[]){D}));
    plan_free(p);
    unlink(b.path);
}

static void test_host_visible_kept(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), h = tb_buffer(&b, 1 | 8, 4096, X);   /* READ_WRITE | USE_HOST_PTR */
    tb_write(&b, q, h, 0, 4096, X);
    tb_write(&b, q, h, 0, 4096, Y);
    tb_read(&b, q, h, 0, 4096, Y);
    tb_write(&b, q, h, 0, 4096, Y);
    tb_finish(&b, q);
    tb_close(&b);
    plan_file *p = optimize(&b, PLAN_PASSES_ALL);
    CU_ASSERT(plan_xform_count(p) == 0);
    plan_free(p);
    unlink(b.path);
}

static void test_other_queue_needs_sync(void)
{
    tb b;
    tb_open(&b);
    uint64_t q1 = tb_queue(&b), q2 = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL);
    tb_write(&b, q1, a, 0, 4096, X);        /* may run after the write on q2 */
    tb_write(&b, q2, a, 0, 4096, Y);
    tb_read(&b, q2, a, 0, 4096, Y);
    uint64_t w3 = tb_write(&b, q1, a, 0, 4096, X);
    tb_finish(&b, q1);                       /* now the host knows w3 done */
    tb_write(&b, q2, a, 0, 4096, Y);
    tb_read(&b, q2, a, 0, 4096, Y);
    tb_close(&b);
    plan_file *p = optimize(&b, 1u << D);
    CU_ASSERT(drops(p, (uint64_t[]){w3, 0}, (plan_pass[]){D}));
    plan_free(p);
    unlink(b.path);
}

static void test_fills(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL);
    uint64_t f1 = tb_fill(&b, q, a, 0, 4096);
    tb_read(&b, q, a, 0, 4096, Y);
    uint64_t f2 = tb_fill(&b, q, a, 0, 4096);    /* the same pattern: redundant */
    tb_read(&b, q, a, 0, 4096, Y);
    tb_fill(&b, q, a, 1, 4096);                  /* another pattern: stays */
    tb_read(&b, q, a, 0, 4096, Y);
    uint64_t w = tb_write(&b, q, a, 0, 4096, X); /* then overwritten by a fill: dead */
    tb_fill(&b, q, a, 1, 4096);
    tb_read(&b, q, a, 0, 4096, Y);
    tb_close(&b);
    plan_file *p = optimize(&b, PLAN_PASSES_ALL);
    CU_ASSERT(drops(p, (uint64_t[]){f2, w, 0}, (plan_pass[]){R, D}));
    CU_ASSERT(plan_xform_count(p) == 2 && plan_get_xform(p, 0)->holds_seq == f1);
    plan_free(p);
    unlink(b.path);
}

static const char *ksrc =
    "__kernel void set(__global float *o)\n{\n    o[get_global_id(0)] = 1.0f;\n}\n"
    "__kernel void copy(__global const float *i, __global float *o)\n{\n"
    "    size_t g = get_global_id(0);\n    o[g] = i[g];\n}\n";
static const char *psrc =
    "__kernel void talk(__global float *o)\n{\n    printf(\"hi\\n\");\n    o[get_global_id(0)] = 2.0f;\n}\n";

static void test_kernels(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL), c = tb_buffer(&b, 1, 4096, NULL),
             d = tb_buffer(&b, 1, 4096, NULL);
    uint64_t prog = tb_program(&b, ksrc), pp = tb_program(&b, psrc);
    uint64_t kset = tb_kernel(&b, prog, "set"), kcopy = tb_kernel(&b, prog, "copy"), ktalk = tb_kernel(&b, pp, "talk");
    uint64_t k1 = tb_launch(&b, q, kset, (uint64_t[]){d}, 1, 1024);       /* d never read: dead */
    tb_launch(&b, q, ktalk, (uint64_t[]){d}, 1, 1024);                    /* prints: kept */
    tb_write(&b, q, a, 0, 4096, X);
    tb_launch(&b, q, kcopy, (uint64_t[]){a, c}, 2, 1024);                /* c read back: kept */
    tb_read(&b, q, c, 0, 4096, X);
    uint64_t w2 = tb_write(&b, q, a, 0, 4096, X);                        /* copy only reads a: redundant */
    tb_launch(&b, q, kcopy, (uint64_t[]){a, c}, 2, 1024);
    tb_read(&b, q, c, 0, 4096, X);
    tb_launch(&b, q, kset, (uint64_t[]){a}, 1, 1024);                     /* set writes a */
    tb_read(&b, q, a, 0, 4096, Y);
    tb_write(&b, q, a, 0, 4096, X);                                      /* so this one stays */
    tb_read(&b, q, a, 0, 4096, X);
    tb_close(&b);
    plan_file *p = optimize(&b, PLAN_PASSES_ALL);
    if (plan_kernel_count(p) >= 2) {   /* the kernel analysis ran: copy reads a, set writes it */
        CU_ASSERT(drops(p, (uint64_t[]){k1, w2, 0}, (plan_pass[]){D, R}));
    } else {
        fprintf(stderr, "(kernel analysis unavailable: launches write all their arguments) ");
        CU_ASSERT(drops(p, (uint64_t[]){k1, 0}, (plan_pass[]){D}));
    }
    CU_ASSERT(plan_get_pass(p, D)->effect.kernels == 1);
    plan_free(p);
    unlink(b.path);
}

/* Regression (issue 36, hashcat's mask attack): launches of kernels from a
 * program made with clCreateProgramWithBinary (no analysis) writing
 * buffers created CL_MEM_READ_ONLY were dropped as "it writes no memory",
 * their results read back. Without an analysis every memory argument is
 * read and written in full, whatever its flags; a launch whose buffer
 * nobody reads is still dead. */
static void test_dead_binary_kernels(void)
{
    tb b;
    tb_open(&b);
    const uint64_t RO = 1u << 2, WO = 1u << 1;
    uint64_t q = tb_queue(&b), out = tb_buffer(&b, RO, 4096, NULL), acc = tb_buffer(&b, WO, 4096, NULL),
             junk = tb_buffer(&b, RO, 4096, NULL);
    uint64_t prog = tb_program_binary(&b);
    uint64_t kzero = tb_kernel(&b, prog, "gpu_bzero"), kmix = tb_kernel(&b, prog, "combine");
    tb_write(&b, q, acc, 0, 4096, X);                                     /* read by combine: kept */
    tb_launch(&b, q, kzero, (uint64_t[]){out}, 1, 1024);                  /* out read back later: kept */
    uint64_t kj = tb_launch(&b, q, kzero, (uint64_t[]){junk}, 1, 1024);   /* junk never read: dead */
    tb_launch(&b, q, kmix, (uint64_t[]){out, acc}, 2, 1024);              /* writes acc (WRITE_ONLY), reads it too */
    tb_read(&b, q, acc, 0, 4096, Y);
    tb_read(&b, q, out, 0, 4096, Y);
    tb_close(&b);
    plan_file *p = optimize(&b, 1u << D);
    CU_ASSERT(drops(p, (uint64_t[]){kj, 0}, (plan_pass[]){D}));
    plan_free(p);
    unlink(b.path);
}

/* The replay oracle of test_verify: a plan "mismatches" when it changes a
 * call the application observes through something the trace does not show
 * (bad[], 0-terminated); it counts the replays and the lines said. */
typedef struct vcase {
    const uint64_t *bad;
    unsigned replays, lines;
} vcase;

static int vcase_replay(void *user, const plan_file *p, char *err, size_t cap)
{
    (void)err;
    (void)cap;
    vcase *v = user;
    v->replays++;
    for (size_t i = 0; i < plan_xform_count(p); i++)
        for (const uint64_t *b = v->bad; *b; b++)
            if (plan_get_xform(p, i)->seq == *b)
                return 1;
    return 0;
}

static void vcase_line(void *user, const char *line)
{
    vcase *v = user;
    v->lines++;
    CU_ASSERT(strstr(line, "pass ") == line);
}

/* opt_optimize_verified(): of the dead and redundant writes, the one dead
 * write that mismatches is found by bisection and runs as recorded; every
 * other transformation stays; one line says so; a plan that verifies costs
 * one replay; with a bound too small for bisection, what is in doubt goes
 * and the bound holds. */
static void test_verify(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL), c = tb_buffer(&b, 1, 4096, NULL);
    uint64_t dead[8];
    for (int i = 0; i < 8; i++) {
        dead[i] = tb_write(&b, q, a, 0, 4096, i & 1 ? X : Y);   /* overwritten by the next: dead */
        tb_write(&b, q, a, 0, 4096, X);
        tb_read(&b, q, a, 0, 4096, X);
    }
    tb_write(&b, q, c, 0, 4096, Y);
    tb_read(&b, q, c, 0, 4096, Y);
    uint64_t r1 = tb_write(&b, q, c, 0, 4096, Y);                /* redundant */
    tb_read(&b, q, c, 0, 4096, Y);
    tb_close(&b);
    opt_options o = {.passes = (1u << D) | (1u << R)};
    char err[512] = "";
    plan_file *p = NULL;
    opt_verify_result res;
    /* nothing mismatches: one replay, the plan as it is */
    vcase v0 = {(const uint64_t[]){0}, 0, 0};
    opt_verify h0 = {.replay = vcase_replay, .on_removed = vcase_line, .user = &v0, .max_replays = 24};
    CU_ASSERT_FATAL(opt_optimize_verified(b.path, &o, &h0, &p, &res, err, sizeof err) == PLAN_OK);
    size_t all = plan_xform_count(p);
    CU_ASSERT(all >= 9 && v0.replays == 1 && res.replays == 1 && !res.removed && !v0.lines);
    plan_free(p);
    /* dead[4] is observed after all: it alone goes */
    vcase v1 = {(const uint64_t[]){dead[4], 0}, 0, 0};
    opt_verify h1 = {.replay = vcase_replay, .on_removed = vcase_line, .user = &v1, .max_replays = 24};
    CU_ASSERT_FATAL(opt_optimize_verified(b.path, &o, &h1, &p, &res, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_xform_count(p) == all - 1 && res.removed == 1 && v1.lines == 1 && v1.replays <= 24);
    int has5 = 0, hasr = 0;
    for (size_t i = 0; i < plan_xform_count(p); i++) {
        has5 |= plan_get_xform(p, i)->seq == dead[4];
        hasr |= plan_get_xform(p, i)->seq == r1;
    }
    CU_ASSERT(!has5 && hasr);
    CU_ASSERT(plan_get_pass(p, D)->enabled && plan_get_pass(p, R)->enabled);
    plan_free(p);
    /* too few replays to bisect: whatever is still in doubt goes, within the bound */
    vcase v2 = {(const uint64_t[]){dead[4], 0}, 0, 0};
    opt_verify h2 = {.replay = vcase_replay, .on_removed = vcase_line, .user = &v2, .max_replays = 3};
    CU_ASSERT_FATAL(opt_optimize_verified(b.path, &o, &h2, &p, &res, err, sizeof err) == PLAN_OK);
    has5 = 0;
    for (size_t i = 0; i < plan_xform_count(p); i++)
        has5 |= plan_get_xform(p, i)->seq == dead[4];
    CU_ASSERT(!has5 && v2.replays <= 3 && res.replays == v2.replays && plan_xform_count(p) < all);
    plan_free(p);
    unlink(b.path);
}

/* A timing hook whose times depend on which passes the plan has: t[mask]
 * ns for a plan with the dead (bit 0) and redundant (bit 1) passes' drops. */
typedef struct tcase {
    double t[4];
    unsigned timed, lines, final_lines;
    const double *drift, *jitter;   /* optional factors: per pair of runs, per run (cycled, 8 each) */
    const char *want;               /* a line to find (NULL: none); found sets seen */
    int seen;
    unsigned sleep_ms;              /* each replay, timed or not, takes this long */
    unsigned first_ms;              /* ... but the first, which takes this long (a cold build) */
    unsigned replays;               /* replays so far, timed or not */
} tcase;

static void tcase_sleep(tcase *c)
{
    unsigned ms = c->replays++ || !c->first_ms ? c->sleep_ms : c->first_ms;
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    if (ms)
        nanosleep(&ts, NULL);
}

static int tcase_time(void *user, const plan_file *p, double *ns, char *err, size_t cap)
{
    (void)err;
    (void)cap;
    tcase *c = user;
    unsigned m = 0;
    for (size_t i = 0; i < plan_xform_count(p); i++)
        m |= plan_get_xform(p, i)->pass == D ? 1u : plan_get_xform(p, i)->pass == R ? 2u : 0u;
    *ns = c->t[m] * (c->drift ? c->drift[(c->timed / 2) % 8] : 1) * (c->jitter ? c->jitter[c->timed % 8] : 1);
    c->timed++;
    tcase_sleep(c);
    return c->t[m] < 0;   /* as a timed replay that mismatched */
}

static int tcase_replay(void *user, const plan_file *p, char *err, size_t cap)
{
    (void)p;
    (void)err;
    (void)cap;
    tcase_sleep(user);   /* a tcase, or an scase (whose first member is one) */
    return 0;
}

static void tcase_line(void *user, const char *line)
{
    tcase *c = user;
    c->lines++;
    c->final_lines += strstr(line, "final check: ") == line;
    c->seen |= c->want && strstr(line, c->want);
}

/* The measured plan: each pass kept where the plan with it is faster than
 * without it; then the final check, the whole plan against no plan: kept
 * when faster, else a class removed at a time and, with one class left and
 * still not faster, every transformation. */
static void test_measure_final(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL), c = tb_buffer(&b, 1, 4096, NULL);
    tb_write(&b, q, a, 0, 4096, Y);   /* dead: overwritten by the next */
    tb_write(&b, q, a, 0, 4096, X);
    tb_read(&b, q, a, 0, 4096, X);
    tb_write(&b, q, c, 0, 4096, Y);
    tb_read(&b, q, c, 0, 4096, Y);
    tb_write(&b, q, c, 0, 4096, Y);   /* redundant */
    tb_read(&b, q, c, 0, 4096, Y);
    tb_close(&b);
    opt_options o = {.passes = (1u << D) | (1u << R)};
    char err[512] = "";
    plan_file *p = NULL;
    opt_verify_result res;
    /* each pass faster, the whole faster: kept, one final line */
    tcase k = {.t = {100e6, 90e6, 90e6, 80e6}};
    opt_verify hk = {.replay = tcase_replay, .on_removed = tcase_line, .user = &k, .max_replays = 24,
                     .time = tcase_time, .reps = 3};
    CU_ASSERT_FATAL(opt_optimize_verified(b.path, &o, &hk, &p, &res, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_get_pass(p, D)->transformations == 1 && plan_get_pass(p, R)->transformations == 1);
    CU_ASSERT(res.final_checked && res.final_kept && !res.final_empty && k.final_lines == 1);
    CU_ASSERT(res.final_gain_ns > 19e6 && res.final_gain_ns < 21e6 && k.timed == 18);
    plan_free(p);
    /* each pass faster than the plan without it, the whole not faster than
     * no plan: dead (the first of equal gains) goes, then redundant alone is
     * not faster either: the plan keeps nothing */
    tcase e = {.t = {80e6, 100e6, 100e6, 90e6}};
    opt_verify he = {.replay = tcase_replay, .on_removed = tcase_line, .user = &e, .max_replays = 24,
                     .time = tcase_time, .reps = 3};
    CU_ASSERT_FATAL(opt_optimize_verified(b.path, &o, &he, &p, &res, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_xform_count(p) == 0 && res.final_empty && res.final_removed == 2 && e.final_lines == 2);
    CU_ASSERT(plan_get_pass(p, D)->enabled && plan_get_pass(p, R)->enabled);
    plan_free(p);
    /* a timed replay that fails: nothing unmeasured is kept */
    tcase f = {.t = {80e6, 100e6, -1, 90e6}};
    opt_verify hf = {.replay = tcase_replay, .on_removed = tcase_line, .user = &f, .max_replays = 24,
                     .time = tcase_time, .reps = 3};
    CU_ASSERT_FATAL(opt_optimize_verified(b.path, &o, &hf, &p, &res, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_xform_count(p) == 0 && res.unmeasured == 2 && f.lines == 1 && !f.final_lines);
    plan_free(p);
    /* the dead pass alone, 5% faster on a machine whose speed drifts by 25%
     * between pairs of replays (the two of a pair alike): the medians are
     * inside the noise, the pairs are not: more pairs are timed until 5 of 5
     * say faster (a sign test at 5%), and it is kept */
    static const double drift[8] = {1.0, 1.3, 0.8, 1.2, 0.9, 1.25, 0.85, 1.1};
    opt_options od = {.passes = 1u << D};
    tcase d = {.t = {100e6, 95e6, 95e6, 95e6}, .drift = drift, .want = "faster in 5 of 5 pairs, median ratio 0.950"};
    opt_verify hd = {.replay = tcase_replay, .on_removed = tcase_line, .user = &d, .max_replays = 24,
                     .time = tcase_time, .reps = 3};
    CU_ASSERT_FATAL(opt_optimize_verified(b.path, &od, &hd, &p, &res, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_get_pass(p, D)->transformations == 1 && d.timed == 10 && d.seen);
    plan_free(p);
    /* the same plan no faster, each run 4% off the next: never kept, and
     * the extra pairs stop once the sign test can no longer pass */
    static const double jitter[8] = {1.0, 1.04, 0.98, 0.96, 1.03, 1.0, 0.97, 1.02};
    tcase eq = {.t = {100e6, 100e6, 100e6, 100e6}, .drift = drift, .jitter = jitter};
    opt_verify hq = {.replay = tcase_replay, .on_removed = tcase_line, .user = &eq, .max_replays = 24,
                     .time = tcase_time, .reps = 3};
    CU_ASSERT_FATAL(opt_optimize_verified(b.path, &od, &hq, &p, &res, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_xform_count(p) == 0 && eq.timed >= 6 && eq.timed <= 2 * OPT_VERIFY_MAX_REPS);
    plan_free(p);
    unlink(b.path);
}

/* The staging decision (opt_vstage, last): on a device without host-unified
 * memory the plan with a staging decision is timed against the plan
 * without; asked for (--stage auto), faster is written in staging, slower
 * in unstaged; by default (OPT_STAGE_DEFAULT) only slower is written (a
 * faster one is left to the layer's rule, with one line), and a device
 * that shares the host's memory is not tried, without a line. */
typedef struct scase {
    tcase t;
    double factor;            /* a plan with a staging decision takes this times as long */
    int unified;
} scase;

static int scase_time(void *user, const plan_file *p, double *ns, char *err, size_t cap)
{
    scase *c = user;
    int r = tcase_time(&c->t, p, ns, err, cap);
    if (plan_stage_count(p))
        *ns *= c->factor;
    return r;
}

static void scase_line(void *user, const char *line)
{
    tcase_line(&((scase *)user)->t, line);
}

static void scase_info(void *user, opt_replay_info *out)
{
    const scase *c = user;
    memset(out, 0, sizeof *out);
    out->min_bytes = 524288;
    out->transfers = 2;
    out->bytes = 2u << 20;
    out->unified = c->unified;
    snprintf(out->device, sizeof out->device, "GPU X");
    snprintf(out->driver, sizeof out->driver, "1.0");
}

static void test_measure_stage(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL);
    tb_write(&b, q, a, 0, 4096, Y);   /* dead: overwritten by the next */
    tb_write(&b, q, a, 0, 4096, X);
    tb_read(&b, q, a, 0, 4096, X);
    tb_close(&b);
    opt_options o = {.passes = 1u << D};
    char err[512] = "";
    static const struct {
        int mode, unified;
        double factor;
        int staging, unstaged;
        const char *want;
    } cases[] = {
        {OPT_STAGE_AUTO, 0, 0.5, 1, 0, "staging kept on GPU X: 2 transfers of 512 KiB or more (2.0 MiB)"},
        {OPT_STAGE_AUTO, 0, 2.0, 0, 1, "staging not kept on GPU X: 2 transfers of 512 KiB or more (2.0 MiB): measured "
                                       "160.000 ms with it, 80.000 ms without"},
        {OPT_STAGE_DEFAULT, 0, 0.5, 0, 0, "staging faster, not written on GPU X"},
        {OPT_STAGE_DEFAULT, 0, 2.0, 0, 1, "written as unstaged: a live run does not stage there"},
        {OPT_STAGE_DEFAULT, 1, 0.5, 0, 0, NULL},
        {OPT_STAGE_AUTO, 1, 0.5, 0, 0, "staging not tried: GPU X shares the host's memory"},
        {OPT_STAGE_ALL, 1, 0.5, 1, 0, "staging kept on GPU X"},
        {OPT_STAGE_OFF, 0, 0.5, 0, 0, NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        scase c = {.t = {.t = {100e6, 80e6, 80e6, 80e6}, .want = cases[k].want}, .factor = cases[k].factor,
                   .unified = cases[k].unified};
        opt_verify h = {.replay = tcase_replay, .on_removed = scase_line, .user = &c, .max_replays = 24,
                        .time = scase_time, .reps = 3, .stage = cases[k].mode, .replay_info = scase_info};
        plan_file *p = NULL;
        opt_verify_result res;
        CU_ASSERT_FATAL(opt_optimize_verified(b.path, &o, &h, &p, &res, err, sizeof err) == PLAN_OK);
        int said = c.t.seen;
        if ((int)plan_stage_count(p) != cases[k].staging || (int)plan_unstaged_count(p) != cases[k].unstaged ||
            (cases[k].want && !said) || plan_get_pass(p, D)->transformations != 1)
            fprintf(stderr, "\nstage case %zu: staging %zu, unstaged %zu, line %s\n", k, plan_stage_count(p),
                    plan_unstaged_count(p), said ? "said" : "not said");
        CU_ASSERT((int)plan_stage_count(p) == cases[k].staging && (int)plan_unstaged_count(p) == cases[k].unstaged);
        CU_ASSERT(!cases[k].want || said);
        CU_ASSERT(plan_get_pass(p, D)->transformations == 1);
        CU_ASSERT(res.stage_kept == (cases[k].staging == 1));
        if (cases[k].unstaged) {
            const plan_stage *u = plan_get_unstaged(p, 0);
            CU_ASSERT(u && !strcmp(u->device, "GPU X") && u->after_ns > u->before_ns && u->reps >= 3);
        }
        plan_free(p);
    }
    unlink(b.path);
}

/* The budget's order: a pass that is the whole plan is timed against no
 * plan without the final check's reserve (that check would time the same
 * again), and before a staging decision's reserve; the unit is a replay
 * without the plan after the first, which built the programs cold: the
 * plan's replay (verified) takes 0.8 s, the others 0.1, in a budget of 2
 * s. The replay without the plan (the unit) ends at 0.9 s, the pass's 3
 * pairs at 1.5 (with the final check's reserve they would not have fitted,
 * 1.2 s of 1.1; nor with the first replay as the unit). The staging's 3
 * pairs then no longer fit. */
static void test_measure_budget(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL);
    tb_write(&b, q, a, 0, 4096, Y);   /* dead: overwritten by the next */
    tb_write(&b, q, a, 0, 4096, X);
    tb_read(&b, q, a, 0, 4096, X);
    tb_close(&b);
    opt_options o = {.passes = 1u << D};
    char err[512] = "";
    for (int staged = 0; staged < 2; staged++) {
        scase c = {.t = {.t = {100e6, 80e6, 80e6, 80e6}, .sleep_ms = 100, .first_ms = 800,
                         .want = staged ? "staging not measured within --budget" :
                                          "final check: the plan is pass dead alone, measured against no plan above"},
                   .factor = 0.5};
        opt_verify h = {.replay = tcase_replay, .on_removed = scase_line, .user = &c, .max_replays = 24,
                        .time = scase_time, .reps = 3, .stage = staged ? OPT_STAGE_DEFAULT : OPT_STAGE_OFF,
                        .replay_info = scase_info};
        plan_file *p = NULL;
        opt_verify_result res;
        h.end_s = opt_now() + 2.0;
        CU_ASSERT_FATAL(opt_optimize_verified(b.path, &o, &h, &p, &res, err, sizeof err) == PLAN_OK);
        if (plan_get_pass(p, D)->transformations != 1 || !c.t.seen || res.replays != 1 || c.t.timed != 7)
            fprintf(stderr, "\nbudget case %d: dead %llu, line %s, replays %u, timed %u\n", staged,
                    (unsigned long long)plan_get_pass(p, D)->transformations, c.t.seen ? "said" : "not said",
                    res.replays, c.t.timed);
        CU_ASSERT(plan_get_pass(p, D)->transformations == 1 && res.final_kept && !res.unmeasured);
        CU_ASSERT(c.t.seen && res.replays == 1 && c.t.timed == 7);
        CU_ASSERT(plan_stage_count(p) == 0 && plan_unstaged_count(p) == 0);
        plan_free(p);
    }
    unlink(b.path);
}

/* Vertical fusion: p's output b read by the next launch at the same element
 * fuses (b no longer stored when nothing reads it later, stored when the
 * host reads it); a consumer reading another element, or a command between
 * the two launches, does not. The matcher answers hold, then fuse. */
static const char *fsrc =
    "__kernel void p(__global const float *a, __global float *b) { size_t i = get_global_id(0); b[i] = a[i] * 2.0f; }\n"
    "__kernel void c(__global const float *b, __global float *o) { size_t i = get_global_id(0); o[i] = b[i] + 1.0f; }\n"
    "__kernel void cs(__global const float *b, __global float *o) { size_t i = get_global_id(0); o[i] = b[i + 1]; }\n";

#define F PLAN_PASS_FUSE

static void test_fuse(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 8192, NULL), m = tb_buffer(&b, 1, 8192, NULL),
             o = tb_buffer(&b, 1, 8192, NULL);
    uint64_t prog = tb_program(&b, fsrc);
    uint64_t kp = tb_kernel(&b, prog, "p"), kc = tb_kernel(&b, prog, "c"), kcs = tb_kernel(&b, prog, "cs");
    tb_write(&b, q, a, 0, 4096, X);
    uint64_t p1 = tb_launch(&b, q, kp, (uint64_t[]){a, m}, 2, 1024);
    uint64_t c1 = tb_launch(&b, q, kc, (uint64_t[]){m, o}, 2, 1024);       /* m written again next: not stored */
    tb_read(&b, q, o, 0, 4096, X);
    tb_launch(&b, q, kp, (uint64_t[]){a, m}, 2, 1024);
    tb_launch(&b, q, kcs, (uint64_t[]){m, o}, 2, 1024);                    /* reads the next element: no */
    tb_read(&b, q, o, 0, 4096, X);
    tb_launch(&b, q, kp, (uint64_t[]){a, m}, 2, 1024);
    tb_finish(&b, q);                                                      /* a command between: no */
    tb_launch(&b, q, kc, (uint64_t[]){m, o}, 2, 1024);
    tb_read(&b, q, o, 0, 4096, X);
    uint64_t p3 = tb_launch(&b, q, kp, (uint64_t[]){a, m}, 2, 1024);
    uint64_t c3 = tb_launch(&b, q, kc, (uint64_t[]){m, o}, 2, 1024);       /* m read back: still stored */
    tb_read(&b, q, o, 0, 4096, X);
    tb_read(&b, q, m, 0, 4096, X);
    tb_close(&b);
    plan_file *p = optimize(&b, 1u << F);
    if (plan_kernel_count(p) < 3) {
        fprintf(stderr, "(kernel analysis unavailable: nothing to fuse) ");
        CU_ASSERT(plan_xform_count(p) == 0);
    } else {
        CU_ASSERT_FATAL(drops(p, (uint64_t[]){p1, c1, p3, c3, 0}, (plan_pass[]){F, F, F, F}));
        static const uint8_t acts[] = {PLAN_ACT_HOLD, PLAN_ACT_FUSE, PLAN_ACT_HOLD, PLAN_ACT_FUSE};
        /* the first pair does not store m: its kernel (2) comes after its
         * storing twin (1), which is also the second pair's kernel */
        static const uint32_t ids[] = {2, 2, 1, 1};
        for (size_t i = 0; i < 4; i++)
            CU_ASSERT(plan_get_xform(p, i)->action == acts[i] && plan_get_xform(p, i)->fused == ids[i]);
        CU_ASSERT_FATAL(plan_fused_count(p) == 2);
        const plan_fused *z1 = plan_get_fused(p, 1), *z2 = plan_get_fused(p, 0);
        CU_ASSERT(!z1->keep_store && z2->keep_store && z1->storing == 1 && z2->storing == 0);
        CU_ASSERT(!strcmp(z1->producer, "p") && !strcmp(z1->consumer, "c") && strstr(z1->source, z1->name));
        CU_ASSERT(!strcmp(z2->producer, "p") && !strcmp(z2->consumer, "c") && strstr(z2->source, z2->name));
        CU_ASSERT(plan_get_pass(p, F)->effect.kernels == 2);   /* the producers; the fused launches still run */
        /* the matcher: hold then fuse, twice */
        live_exec *x = NULL;
        char err[256];
        CU_ASSERT_FATAL(live_exec_open(p, b.path, 0, &x, err, sizeof err) == PLAN_OK);
        tf_reader *r = NULL;
        CU_ASSERT_FATAL(tf_reader_open(&r, b.path, NULL) == TF_OK);
        tf_item it;
        unsigned holds = 0, fuses = 0;
        while (tf_reader_next(r, &it) == TF_OK) {
            int v = live_exec_item(x, &it);
            holds += v == LIVE_HOLD;
            if (v == LIVE_FUSE) {
                fuses++;
                CU_ASSERT(live_exec_fused(x) == plan_get_fused(p, ids[2 * fuses - 1] - 1));
            }
        }
        CU_ASSERT(holds == 2 && fuses == 2);
        tf_reader_close(r);
        live_exec_close(x);
    }
    plan_free(p);
    unlink(b.path);
}

/* Chains (plan 1.5): p -> mid -> c, each reading only what the launch
 * before it wrote at the same element, both intermediates dead after
 * their consumer, become one kernel of three launches (parameters traced
 * back to each); the matcher answers hold, link, fuse. A third launch
 * that writes what the first reads ends the chain: a pair, then a launch
 * alone. */
static const char *csrc =
    "__kernel void p(__global const float *a, __global float *b) { size_t i = get_global_id(0); b[i] = a[i] * 2.0f; }\n"
    "__kernel void mid(__global const float *b, __global float *m) { size_t i = get_global_id(0); "
    "if (i < 1000) m[i] = b[i] + 1.0f; }\n"
    "__kernel void c(__global const float *m, __global float *o) { size_t i = get_global_id(0); o[i] = m[i] * m[i]; }\n";

/* The letter of a fusion verdict (hold, link, fuse), else 0. */
static char fuse_letter(int v)
{
    return v == LIVE_HOLD ? 'h' : v == LIVE_LINK ? 'l' : v == LIVE_FUSE ? 'f' : 0;
}

/* What the matcher answered in a replay of @p p over the calls of trace
 * @p path. */
typedef struct replay_seen {
    char got[16];             /* fusion verdicts, in order (a specialized launch: 'f') */
    unsigned specs;           /* LIVE_FUSE answers with a specialized kernel (launches 1) */
    const plan_fused *spec;    /* ... the last one's */
    live_exec_stats st;
} replay_seen;

static void replay_run(const plan_file *p, const char *path, replay_seen *o)
{
    live_exec *x = NULL;
    char err[256];
    size_t ng = 0;
    memset(o, 0, sizeof *o);
    CU_ASSERT_FATAL(live_exec_open(p, path, 0, &x, err, sizeof err) == PLAN_OK);
    tf_reader *r = NULL;
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    tf_item it;
    while (tf_reader_next(r, &it) == TF_OK) {
        int v = live_exec_item(x, &it);
        char l = fuse_letter(v);
        if (l && ng + 1 < sizeof o->got)
            o->got[ng++] = l;
        if (v == LIVE_FUSE && live_exec_fused(x)->launches == 1) {
            o->specs++;
            o->spec = live_exec_fused(x);
        }
    }
    live_exec_get_stats(x, &o->st);
    tf_reader_close(r);
    live_exec_close(x);
}

/* What a live run of @p p over the calls of trace @p path answered. */
typedef struct live_seen {
    char got[16];             /* fusion verdicts, in order */
    size_t ng;
    size_t forced;            /* kept calls run first, in all */
    int first_two;            /* answers that ran exactly launches s0, s1 first, in order */
    uint64_t s0, s1;
    const plan_fused *used[4]; /* the fused kernel of each fuse */
    uint32_t keep[4];         /* and its keep_held */
    unsigned nused;
    live_exec_stats st;
} live_seen;

static void live_run(const plan_file *p, const char *path, live_seen *o)
{
    live_exec *x = NULL;
    char err[256];
    CU_ASSERT_FATAL(live_exec_open_live(p, &x, err, sizeof err) == PLAN_OK);
    tf_reader *r = NULL;
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    tf_item it;
    while (tf_reader_next(r, &it) == TF_OK) {
        if (it.type != TF_ITEM_CALL)
            continue;
        live_answer ans;
        CU_ASSERT_FATAL(live_exec_begin(x, &it.u.call, &ans) == PLAN_OK);
        o->forced += ans.nforce;
        o->first_two += ans.nforce == 2 && ans.force[0] == o->s0 && ans.force[1] == o->s1;
        char l = fuse_letter(ans.verdict);
        if (l && o->ng + 1 < sizeof o->got)
            o->got[o->ng++] = l;
        if (ans.verdict == LIVE_FUSE && o->nused < 4) {
            o->keep[o->nused] = ans.keep_held;
            o->used[o->nused++] = live_exec_fused(x);
        } else {
            CU_ASSERT(ans.keep_held == 0);
        }
        CU_ASSERT(live_exec_item(x, &it) >= 0);
    }
    live_exec_get_stats(x, &o->st);
    tf_reader_close(r);
    live_exec_close(x);
}

/* A live run of the chain plan where the first iteration reads t1 between
 * mid and c: the two held launches run first, in order (the answer's
 * force list), c runs as made, and the second iteration is fused again. */
static void chain_broken_live(const plan_file *p, uint64_t a, uint64_t t1, uint64_t t2, uint64_t o)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b);
    CU_ASSERT_FATAL(tb_buffer(&b, 1, 8192, NULL) == a && tb_buffer(&b, 1, 8192, NULL) == t1 &&
                    tb_buffer(&b, 1, 8192, NULL) == t2 && tb_buffer(&b, 1, 8192, NULL) == o);
    uint64_t prog = tb_program(&b, csrc);
    uint64_t kp = tb_kernel(&b, prog, "p"), km = tb_kernel(&b, prog, "mid"), kc = tb_kernel(&b, prog, "c");
    live_seen seen = {0};
    for (int it = 0; it < 2; it++) {
        tb_write(&b, q, a, 0, 4096, X);
        uint64_t sp = tb_launch(&b, q, kp, (uint64_t[]){a, t1}, 2, 1024);
        uint64_t sm = tb_launch(&b, q, km, (uint64_t[]){t1, t2}, 2, 1024);
        if (!it) {
            seen.s0 = sp;
            seen.s1 = sm;
            tb_read(&b, q, t1, 0, 4096, X);   /* the application reads what the plan thought dead */
        }
        tb_launch(&b, q, kc, (uint64_t[]){t2, o}, 2, 1024);
        tb_read(&b, q, o, 0, 4096, X);
    }
    tb_close(&b);
    live_run(p, b.path, &seen);
    CU_ASSERT_STRING_EQUAL(seen.got, "hlhlf");
    CU_ASSERT(seen.first_two == 1);   /* at the read of t1 */
    CU_ASSERT(seen.st.fusions == 1 && seen.st.fell_back >= 3);
    unlink(b.path);
}

/* The chain's own trace run live: t1 and t2 stay (not released), and the
 * next iteration's write of a overwrites what the kept p reads, so p and
 * mid run after all; from then on the chain runs as its storing twin @p zt
 * (no held launch kept), still one launch. The last pair's p3 is kept,
 * and runs when c overwrites a. */
static void chain_twin_live(const plan_file *p, const char *path, const plan_fused *zt)
{
    live_seen seen = {0};
    live_run(p, path, &seen);
    CU_ASSERT_STRING_EQUAL(seen.got, "hlfhlfhf");
    CU_ASSERT(seen.nused == 3 && seen.used[0] != zt && seen.used[1] == zt);
    /* kept after each fused launch: p and mid the first time, none with
     * the twin, p3 after the last pair (another fused kernel) */
    CU_ASSERT(seen.keep[0] == 3 && seen.keep[1] == 0 && seen.keep[2] == 1);
    CU_ASSERT(seen.forced == 3);   /* the first iteration's p and mid; p3 when c overwrites a */
}

static void test_fuse_chain(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 8192, NULL), t1 = tb_buffer(&b, 1, 8192, NULL),
             t2 = tb_buffer(&b, 1, 8192, NULL), o = tb_buffer(&b, 1, 8192, NULL);
    uint64_t prog = tb_program(&b, csrc);
    uint64_t kp = tb_kernel(&b, prog, "p"), km = tb_kernel(&b, prog, "mid"), kc = tb_kernel(&b, prog, "c");
    uint64_t s[6];
    for (int it = 0; it < 2; it++) {
        tb_write(&b, q, a, 0, 4096, X);
        s[3 * it] = tb_launch(&b, q, kp, (uint64_t[]){a, t1}, 2, 1024);
        s[3 * it + 1] = tb_launch(&b, q, km, (uint64_t[]){t1, t2}, 2, 1024);
        s[3 * it + 2] = tb_launch(&b, q, kc, (uint64_t[]){t2, o}, 2, 1024);
        tb_read(&b, q, o, 0, 4096, X);
    }
    /* the third launch writes a, which the first reads: not a link */
    tb_write(&b, q, a, 0, 4096, X);
    uint64_t p3 = tb_launch(&b, q, kp, (uint64_t[]){a, t1}, 2, 1024);
    uint64_t m3 = tb_launch(&b, q, km, (uint64_t[]){t1, t2}, 2, 1024);
    tb_launch(&b, q, kc, (uint64_t[]){t2, a}, 2, 1024);
    tb_read(&b, q, a, 0, 4096, X);
    tb_close(&b);
    plan_file *p = optimize(&b, 1u << F);
    if (plan_kernel_count(p) < 3) {
        fprintf(stderr, "(kernel analysis unavailable: nothing to fuse) ");
        CU_ASSERT(plan_xform_count(p) == 0);
    } else {
        CU_ASSERT_FATAL(drops(p, (uint64_t[]){s[0], s[1], s[2], s[3], s[4], s[5], p3, m3, 0},
                              (plan_pass[]){F, F, F, F, F, F, F, F}));
        static const uint8_t acts[] = {PLAN_ACT_HOLD, PLAN_ACT_HOLD, PLAN_ACT_FUSE, PLAN_ACT_HOLD,
                                       PLAN_ACT_HOLD, PLAN_ACT_FUSE, PLAN_ACT_HOLD, PLAN_ACT_FUSE};
        for (size_t i = 0; i < 8; i++)
            CU_ASSERT(plan_get_xform(p, i)->action == acts[i]);
        const plan_fused *z = plan_get_fused(p, plan_get_xform(p, 0)->fused - 1);
        const plan_fused *w = plan_get_fused(p, plan_get_xform(p, 7)->fused - 1);
        CU_ASSERT_FATAL(z && w);
        CU_ASSERT(z->launches == 3 && !z->keep_store && z->storing && !strcmp(z->producer, "p") &&
                  !strcmp(z->consumer, "c"));
        const plan_fused *zt = z->storing ? plan_get_fused(p, z->storing - 1) : NULL;   /* its storing twin */
        CU_ASSERT(zt && zt->launches == 3 && zt->keep_store && !zt->storing);
        CU_ASSERT(w->launches == 2 && !strcmp(w->producer, "p") && !strcmp(w->consumer, "mid"));
        /* p's a; mid's t1 (read where p did not store: never, but the
         * rewriter cannot know); c's t2 (mid's store is guarded) and o */
        static const uint8_t want[][2] = {{0, 0}, {2, 0}, {2, 1}};
        unsigned seen = 0;
        for (unsigned i = 0; i < z->nparams; i++) {
            CU_ASSERT(z->params[i][0] < 3);
            for (unsigned k = 0; k < 3; k++)
                seen |= (z->params[i][0] == want[k][0] && z->params[i][1] == want[k][1]) << k;
        }
        CU_ASSERT(seen == 7);
        /* the matcher: hold, link, fuse, twice; then hold, fuse */
        replay_seen rs;
        replay_run(p, b.path, &rs);
        CU_ASSERT_STRING_EQUAL(rs.got, "hlfhlfhf");
        CU_ASSERT(rs.st.fusions == 3 && rs.st.applied == 8 && rs.st.fell_back == 0);
        chain_twin_live(p, b.path, zt);
        chain_broken_live(p, a, t1, t2, o);   /* (its trace takes the same path) */
    }
    plan_free(p);
    unlink(b.path);
}

/* Gathers (plan 1.6): gx and gy both read a and each write one
 * intermediate that c reads at the same element; neither reads what the
 * other writes. The three launches become one kernel (gx's, gy's, then c's
 * body), into = {2, 2}, parameters traced back to each launch; the matcher
 * answers hold, link, fuse. When gx's output is read later, only the pair
 * gy -> c fuses. */
static const char *gsrc =
    "__kernel void gx(__global const float *a, __global float *g) { size_t i = get_global_id(0); g[i] = a[i] - 1.0f; }\n"
    "__kernel void gy(__global const float *a, __global float *g) { size_t i = get_global_id(0); g[i] = a[i] + 1.0f; }\n"
    "__kernel void c(__global const float *x, __global const float *y, __global float *o) "
    "{ size_t i = get_global_id(0); o[i] = x[i] * y[i]; }\n"
    "__kernel void gyo(__global const float *a, __global const float *x, __global float *g) "
    "{ size_t i = get_global_id(0); g[i] = a[i] + x[i + 1]; }\n";

static void test_fuse_gather(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 8192, NULL), g1 = tb_buffer(&b, 1, 8192, NULL),
             g2 = tb_buffer(&b, 1, 8192, NULL), o = tb_buffer(&b, 1, 8192, NULL);
    uint64_t prog = tb_program(&b, gsrc);
    uint64_t kx = tb_kernel(&b, prog, "gx"), ky = tb_kernel(&b, prog, "gy"), kc = tb_kernel(&b, prog, "c");
    uint64_t s[9];
    for (int it = 0; it < 3; it++) {
        tb_write(&b, q, a, 0, 4096, X);
        s[3 * it] = tb_launch(&b, q, kx, (uint64_t[]){a, g1}, 2, 1024);
        s[3 * it + 1] = tb_launch(&b, q, ky, (uint64_t[]){a, g2}, 2, 1024);
        s[3 * it + 2] = tb_launch(&b, q, kc, (uint64_t[]){g1, g2, o}, 3, 1024);
        tb_read(&b, q, o, 0, 4096, X);
    }
    tb_read(&b, q, g1, 0, 4096, X);   /* the last gx's output is read: no gather there */
    tb_close(&b);
    plan_file *p = optimize(&b, 1u << F);
    if (plan_kernel_count(p) < 3) {
        fprintf(stderr, "(kernel analysis unavailable: nothing to fuse) ");
        CU_ASSERT(plan_xform_count(p) == 0);
    } else {
        CU_ASSERT_FATAL(drops(p, (uint64_t[]){s[0], s[1], s[2], s[3], s[4], s[5], s[7], s[8], 0},
                              (plan_pass[]){F, F, F, F, F, F, F, F}));
        static const uint8_t acts[] = {PLAN_ACT_HOLD, PLAN_ACT_HOLD, PLAN_ACT_FUSE, PLAN_ACT_HOLD,
                                       PLAN_ACT_HOLD, PLAN_ACT_FUSE, PLAN_ACT_HOLD, PLAN_ACT_FUSE};
        for (size_t i = 0; i < 8; i++)
            CU_ASSERT(plan_get_xform(p, i)->action == acts[i]);
        const plan_fused *z = plan_get_fused(p, plan_get_xform(p, 0)->fused - 1);
        const plan_fused *w = plan_get_fused(p, plan_get_xform(p, 7)->fused - 1);
        CU_ASSERT_FATAL(z && w);
        CU_ASSERT(z->launches == 3 && z->gather && z->into[0] == 2 && z->into[1] == 2 && !z->keep_store &&
                  !strcmp(z->producer, "gx") && !strcmp(z->consumer, "c"));
        const plan_fused *zt = z->storing ? plan_get_fused(p, z->storing - 1) : NULL;   /* its storing twin */
        CU_ASSERT(zt && zt->launches == 3 && zt->gather && zt->keep_store);
        CU_ASSERT(w->launches == 2 && !w->gather && !strcmp(w->producer, "gy") && !strcmp(w->consumer, "c"));
        /* gx's a, gy's a, c's o; the stores are unconditional: no
         * intermediate is a parameter */
        static const uint8_t want[][2] = {{0, 0}, {1, 0}, {2, 2}};
        unsigned seen = 0;
        CU_ASSERT(z->nparams == 3);
        for (unsigned i = 0; i < z->nparams; i++)
            for (unsigned k = 0; k < 3; k++)
                seen |= (z->params[i][0] == want[k][0] && z->params[i][1] == want[k][1]) << k;
        CU_ASSERT(seen == 7);
        /* the bodies in command order */
        char head[80];
        snprintf(head, sizeof head, "void %s(", z->name);   /* not a step's kernel */
        const char *body = strstr(z->source, head);
        CU_ASSERT_FATAL(body != NULL);
        const char *px = strstr(body, "- 1.0f"), *py = strstr(body, "+ 1.0f"), *pc = strstr(body, "* (");
        CU_ASSERT(px && py && px < py && (!pc || py < pc));
        /* the matcher: hold, link, fuse, twice; then hold, fuse */
        replay_seen rs;
        replay_run(p, b.path, &rs);
        CU_ASSERT_STRING_EQUAL(rs.got, "hlfhlfhf");
        CU_ASSERT(rs.st.fusions == 3 && rs.st.applied == 8 && rs.st.fell_back == 0);
        /* live: the first gather's gx and gy are kept, and run after all
         * when the next write overwrites a; then the twin, every time */
        live_seen ls = {0};
        live_run(p, b.path, &ls);
        CU_ASSERT_STRING_EQUAL(ls.got, "hlfhlfhf");
        CU_ASSERT(ls.nused == 3 && ls.used[0] == z && ls.used[1] == zt && ls.keep[0] == 3);
    }
    plan_free(p);
    unlink(b.path);

    /* gyo also reads gx's output (another element: no pair with gx): gx
     * cannot join, only gyo -> c fuses */
    tb_open(&b);
    q = tb_queue(&b);
    a = tb_buffer(&b, 1, 8192, NULL);
    g1 = tb_buffer(&b, 1, 8192, NULL);
    g2 = tb_buffer(&b, 1, 8192, NULL);
    o = tb_buffer(&b, 1, 8192, NULL);
    prog = tb_program(&b, gsrc);
    kx = tb_kernel(&b, prog, "gx");
    uint64_t ko = tb_kernel(&b, prog, "gyo");
    kc = tb_kernel(&b, prog, "c");
    tb_write(&b, q, a, 0, 4096, X);
    tb_launch(&b, q, kx, (uint64_t[]){a, g1}, 2, 1024);
    s[0] = tb_launch(&b, q, ko, (uint64_t[]){a, g1, g2}, 3, 1024);
    s[1] = tb_launch(&b, q, kc, (uint64_t[]){g1, g2, o}, 3, 1024);
    tb_read(&b, q, o, 0, 4096, X);
    tb_close(&b);
    p = optimize(&b, 1u << F);
    if (plan_kernel_count(p) >= 3) {
        CU_ASSERT(drops(p, (uint64_t[]){s[0], s[1], 0}, (plan_pass[]){F, F}));
        const plan_fused *z = plan_get_fused(p, plan_fused_count(p) - 1);
        CU_ASSERT(z && z->launches == 2 && !z->gather && !strcmp(z->producer, "gyo"));
    }
    plan_free(p);
    unlink(b.path);
}

/* Specialization (plan 1.7): `window` loops over its third argument m; a
 * trace that launches it with m = 8 every time gets one specialized kernel
 * (constant: argument 2, bytes 08000000) and every launch a `specialize`
 * that the matcher answers as a fused launch of one; `guard` uses its
 * scalar only in a branch (no loop): nothing. With m = 8 then 9, nothing
 * either; and the first plan on that trace specializes the two launches
 * that pass m = 8, not the third. */
static const char *ssrc =
    "__kernel void window(__global const float *a, __global float *o, uint m) {\n"
    "    size_t i = get_global_id(0); float s = 0.0f;\n"
    "    for (uint k = 0; k < m; k++) s += a[i + k];\n"
    "    o[i] = s; }\n"
    "__kernel void guard(__global const float *a, __global float *o, uint m) {\n"
    "    size_t i = get_global_id(0); if (i < m) o[i] = a[i]; }\n";

/* Launches @p k over 1024 items with arguments a, o and the uint @p m. */
static uint64_t spec_launch(tb *b, uint64_t q, uint64_t k, uint64_t a, uint64_t o, uint32_t m)
{
    tb_call(b, "clSetKernelArg", (tv[]){U_(k), U_(2), U_(4), {'x', 0, &m, 4}}, U_(0), NULL);
    return tb_launch(b, q, k, (uint64_t[]){a, o}, 2, 1024);
}

/* A kernel whose loop bound parameter is named through a macro: the
 * rewriter refuses to specialize it (it would rename a name it cannot
 * see), the launches stay as they are, and the optimizer says why
 * (opt_options.rw_note). */
static void test_specialize_refused(void)
{
    static const char *msrc =
        "#define BOUND uint m\n"
        "__kernel void window(__global const float *a, __global float *o, BOUND) {\n"
        "    size_t i = get_global_id(0); float s = 0.0f;\n"
        "    for (uint k = 0; k < m; k++) s += a[i + k];\n"
        "    o[i] = s; }\n";
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 8192, NULL), o = tb_buffer(&b, 1, 8192, NULL);
    uint64_t kw = tb_kernel(&b, tb_program(&b, msrc), "window");
    tb_write(&b, q, a, 0, 4096, X);
    tb_write(&b, q, a, 4096, 4096, Y);
    for (int it = 0; it < 2; it++) {
        spec_launch(&b, q, kw, a, o, 8);
        tb_read(&b, q, o, 0, 4096, X);
    }
    tb_close(&b);
    char note[512] = "x", err[512] = "";
    opt_options op = {.passes = 1u << PLAN_PASS_SPECIALIZE, .rw_note = note, .rw_note_cap = sizeof note};
    plan_file *p = NULL;
    CU_ASSERT_FATAL(opt_optimize(b.path, &op, &p, err, sizeof err) == PLAN_OK && p);
    if (plan_kernel_count(p) < 1) {
        fprintf(stderr, "(kernel analysis unavailable: nothing to specialize) ");
    } else {
        CU_ASSERT(plan_spec_count(p) == 0 && plan_xform_count(p) == 0);
        if (!strstr(note, "window not specialized: "))
            fprintf(stderr, "\n  rw_note: '%s'\n", note);
        CU_ASSERT(strstr(note, "window not specialized: ") == note && strstr(note, "macro"));
    }
    plan_free(p);
    unlink(b.path);
}

static void test_specialize(void)
{
    plan_file *p0 = NULL;
    for (int varied = 0; varied < 2; varied++) {
        tb b;
        tb_open(&b);
        uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 8192, NULL), o = tb_buffer(&b, 1, 8192, NULL);
        uint64_t prog = tb_program(&b, ssrc);
        uint64_t kw = tb_kernel(&b, prog, "window"), kg = tb_kernel(&b, prog, "guard");
        uint64_t s[3];
        tb_write(&b, q, a, 0, 4096, X);
        tb_write(&b, q, a, 4096, 4096, Y);
        for (int it = 0; it < 3; it++) {
            s[it] = spec_launch(&b, q, kw, a, o, varied && it == 2 ? 9 : 8);
            tb_read(&b, q, o, 0, 4096, X);
            spec_launch(&b, q, kg, a, o, 8);
            tb_read(&b, q, o, 0, 4096, X);
        }
        tb_close(&b);
        plan_file *p = optimize(&b, 1u << PLAN_PASS_SPECIALIZE);
        if (plan_kernel_count(p) < 2) {
            fprintf(stderr, "(kernel analysis unavailable: nothing to specialize) ");
            CU_ASSERT(plan_xform_count(p) == 0);
        } else if (varied) {
            CU_ASSERT(plan_xform_count(p) == 0 && plan_spec_count(p) == 0);
            replay_seen rs;
            if (p0) {
                replay_run(p0, b.path, &rs);
                CU_ASSERT(rs.specs == 2);   /* m = 8, 8, then 9 */
            }
        } else {
            /* one decision for the shape, written once (its first launch) */
            CU_ASSERT_FATAL(drops(p, (uint64_t[]){s[0], 0}, (plan_pass[]){PLAN_PASS_SPECIALIZE}));
            CU_ASSERT(plan_get_xform(p, 0)->occurrences == 3);
            const plan_spec *z = plan_get_spec(p, 0);
            CU_ASSERT_FATAL(plan_spec_count(p) == 1 && z);
            CU_ASSERT(!strcmp(z->kernel, "window") && z->nargs == 3 && z->nconsts == 1 && z->consts[0].index == 2 &&
                      z->consts[0].size == 4 && z->consts[0].value[0] == 8 && z->consts[0].value[1] == 0);
            CU_ASSERT(strstr(z->source, z->name) != NULL);
            for (size_t i = 0; i < 1; i++) {
                const plan_xform *x = plan_get_xform(p, i);
                /* named by shape: m by its size, not its value */
                CU_ASSERT(x->action == PLAN_ACT_SPECIALIZE && x->spec == 1 && x->effect.commands == 0 &&
                          strstr(x->reason, "loop over k") && strstr(x->pattern, "{\"bytes_size\":4}") &&
                          x->occurrence == i && x->occurrences == 3);
            }
            /* the matcher: each launch of window is a fused launch of one */
            replay_seen rs;
            replay_run(p, b.path, &rs);
            CU_ASSERT(rs.specs == 3 && rs.spec == &z->as && rs.spec->nparams == 3 && rs.spec->params[2][1] == 2);
            CU_ASSERT(rs.st.specs == 3 && rs.st.applied == 1 && rs.st.fell_back == 0);
            p0 = p;
            p = NULL;
        }
        plan_free(p);
        unlink(b.path);
    }
    plan_free(p0);
}

/* Horizontal groups (plan 1.7): hx and hy read a and write each its own
 * output, both read back; neither passes what the other writes. The two
 * are one launch, every store kept (no twin), parameters from both; the
 * matcher answers hold, fuse. When hy also writes a (what hx reads),
 * nothing is grouped; nor without the option (opt_options.horizontal). */
static const char *hsrc =
    "__kernel void hx(__global const float *a, __global float *x) { size_t i = get_global_id(0); x[i] = a[i] * 3.0f; }\n"
    "__kernel void hy(__global const float *a, __global float *y) { size_t i = get_global_id(0); y[i] = a[i] + 3.0f; }\n"
    "__kernel void hw(__global float *a, __global float *y) { size_t i = get_global_id(0); y[i] = a[i]; a[i] = 0.0f; }\n";

static void test_fuse_horizontal(void)
{
    for (int dep = 0; dep < 2; dep++) {
        tb b;
        tb_open(&b);
        uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 8192, NULL), x = tb_buffer(&b, 1, 8192, NULL),
                 y = tb_buffer(&b, 1, 8192, NULL);
        uint64_t prog = tb_program(&b, hsrc);
        uint64_t kx = tb_kernel(&b, prog, "hx"), ky = tb_kernel(&b, prog, dep ? "hw" : "hy");
        uint64_t s[4];
        for (int it = 0; it < 2; it++) {
            tb_write(&b, q, a, 0, 4096, X);
            s[2 * it] = tb_launch(&b, q, kx, (uint64_t[]){a, x}, 2, 1024);
            s[2 * it + 1] = tb_launch(&b, q, ky, (uint64_t[]){a, y}, 2, 1024);
            tb_read(&b, q, x, 0, 4096, X);
            tb_read(&b, q, y, 0, 4096, Y);
        }
        tb_close(&b);
        plan_file *p = optimize(&b, 1u << F);
        CU_ASSERT(plan_fused_count(p) == 0);   /* off by default */
        plan_free(p);
        p = optimize_h(&b, 1u << F, 1);
        if (plan_kernel_count(p) < 2) {
            fprintf(stderr, "(kernel analysis unavailable: nothing to fuse) ");
            CU_ASSERT(plan_xform_count(p) == 0);
        } else if (dep) {
            CU_ASSERT(plan_xform_count(p) == 0 && plan_fused_count(p) == 0);
        } else {
            CU_ASSERT_FATAL(drops(p, (uint64_t[]){s[0], s[1], s[2], s[3], 0}, (plan_pass[]){F, F, F, F}));
            const plan_fused *z = plan_get_fused(p, 0);
            CU_ASSERT_FATAL(plan_fused_count(p) == 1 && z);
            CU_ASSERT(z->horizontal && z->keep_store && !z->storing && z->launches == 2 && z->nparams == 4 &&
                      !strcmp(z->producer, "hx") && !strcmp(z->consumer, "hy"));
            static const uint8_t want[][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
            for (unsigned i = 0; i < z->nparams && i < 4; i++)
                CU_ASSERT(z->params[i][0] == want[i][0] && z->params[i][1] == want[i][1]);
            CU_ASSERT(strstr(plan_get_xform(p, 0)->reason, "independent of each other") != NULL);
            replay_seen rs;
            replay_run(p, b.path, &rs);
            CU_ASSERT_STRING_EQUAL(rs.got, "hfhf");
            CU_ASSERT(rs.st.fusions == 2 && rs.st.applied == 4 && rs.st.fell_back == 0);
            /* live: nothing is kept after the fused launch (every store made) */
            live_seen ls = {0};
            live_run(p, b.path, &ls);
            CU_ASSERT_STRING_EQUAL(ls.got, "hfhf");
            CU_ASSERT(ls.keep[0] == 0 && ls.keep[1] == 0 && ls.forced == 0);
        }
        plan_free(p);
        unlink(b.path);
    }
}

/* The matcher on a trace: how many calls it drops; fallbacks through *fb. */
static uint64_t run_exec(const plan_file *p, const char *path, uint64_t *fb, int *same)
{
    live_exec *x = NULL;
    char err[256];
    CU_ASSERT_FATAL(live_exec_open(p, path, 0, &x, err, sizeof err) == PLAN_OK);
    tf_reader *r = NULL;
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    tf_item it;
    uint64_t dropped = 0;
    while (tf_reader_next(r, &it) == TF_OK) {
        int v = live_exec_item(x, &it);
        CU_ASSERT(v == LIVE_RUN || v == LIVE_DROP);
        dropped += v == LIVE_DROP;
    }
    live_exec_stats s;
    live_exec_get_stats(x, &s);
    CU_ASSERT(s.drops == dropped && s.applied + s.fell_back + s.unmatched == s.transformations);
    *fb = s.fell_back + s.unmatched;
    *same = s.same_trace;
    CU_ASSERT(live_exec_fallback_count(x) == (*fb < 64 ? *fb : 64));
    tf_reader_close(r);
    live_exec_close(x);
    return dropped;
}

static void build_exec_trace(tb *b, const uint8_t *second)
{
    tb_open(b);
    uint64_t q = tb_queue(b), a = tb_buffer(b, 1, 4096, NULL);
    for (int it = 0; it < 3; it++) {
        tb_write(b, q, a, 0, 4096, Y);                /* dead: overwritten next */
        tb_write(b, q, a, 0, 4096, it ? second : X);  /* redundant from the 2nd when second == X */
        tb_read(b, q, a, 0, 4096, it ? second : X);
    }
    tb_close(b);
}

static void test_exec(void)
{
    tb b;
    build_exec_trace(&b, X);
    plan_file *p = optimize(&b, PLAN_PASSES_ALL);
    /* dead: the three Y writes; redundant: none, since each X write follows a dead Y one */
    CU_ASSERT(plan_get_pass(p, D)->transformations == 3);
    uint64_t fb;
    int same;
    CU_ASSERT(run_exec(p, b.path, &fb, &same) == plan_xform_count(p));
    CU_ASSERT(fb == 0 && same);
    plan_free(p);
    p = optimize(&b, 1u << R);   /* redundant only: the Y write kills X each time */
    CU_ASSERT(plan_xform_count(p) == 0);
    plan_free(p);
    unlink(b.path);

    /* a plan with redundant writes, applied to a run with other data */
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL);
    for (int it = 0; it < 3; it++) {
        tb_write(&b, q, a, 0, 4096, X);
        tb_read(&b, q, a, 0, 4096, X);
    }
    tb_close(&b);
    p = optimize(&b, PLAN_PASSES_ALL);
    CU_ASSERT(plan_get_pass(p, R)->transformations == 1 && plan_get_xform(p, 0)->repeat == 2);   /* 1.11 */
    CU_ASSERT(run_exec(p, b.path, &fb, &same) == 2 && fb == 0 && same);
    tb_open(&b);
    q = tb_queue(&b);
    a = tb_buffer(&b, 1, 4096, NULL);
    for (int it = 0; it < 3; it++) {
        tb_write(&b, q, a, 0, 4096, it == 2 ? Y : X);   /* the last write brings other bytes */
        tb_read(&b, q, a, 0, 4096, it == 2 ? Y : X);
    }
    tb_close(&b);
    /* the second occurrence falls back (its transformation, applied at the first, counts applied) */
    CU_ASSERT(run_exec(p, b.path, &fb, &same) == 1 && fb == 0 && same);
    plan_free(p);
    unlink(b.path);
}

/* ------------------------------------------------------------ schedule */

#define S PLAN_PASS_SCHEDULE

static const char *osrc =
    "__kernel void k(__global const float *a, __global const float *b, __global float *c)\n"
    "{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n"
    "__kernel void inc(__global float *a) { size_t i = get_global_id(0); a[i] += 1.0f; }\n";

/* The overlap pattern (tests/apps/overlap): per iteration, 4 of them, a
 * write of a and of b (100 us of device time each), k(a, b -> c) (50 us)
 * and a non-blocking read of c (100 us), on one queue created after
 * @p idle others (out of order: @p ooo); a clFinish after the read of each
 * iteration whose bit is set in @p finish, and one at the end. */
static void sched_trace(tb *b, unsigned idle, unsigned finish, int ooo)
{
    tb_open(b);
    for (unsigned i = 0; i < idle; i++)
        tb_queue(b);
    uint64_t q = ooo ? tb_queue_props(b, 1) : tb_queue(b), a = tb_buffer(b, 1, 4096, NULL),
             bb = tb_buffer(b, 1, 4096, NULL), c = tb_buffer(b, 1, 4096, NULL);
    uint64_t k = tb_kernel(b, tb_program(b, osrc), "k");
    for (int it = 0; it < 4; it++) {
        tb_devtime(b, tb_write(b, q, a, 0, 4096, X), 100000);
        tb_devtime(b, tb_write(b, q, bb, 0, 4096, Y), 100000);
        tb_devtime(b, tb_launch(b, q, k, (uint64_t[]){a, bb, c}, 3, 1024), 50000);
        tb_devtime(b, tb_read_b(b, q, c, 0, 4096, X, 0), 100000);
        if (finish >> it & 1)
            tb_finish(b, q);
    }
    tb_finish(b, q);
    tb_close(b);
}

/* The plan's only schedule entry: its fields and, as the plan writes it, @p json. */
static void sched_check(const plan_file *p, uint64_t queue, uint64_t predicted, const char *json)
{
    const plan_sched *z = plan_get_sched(p, 0);
    CU_ASSERT_FATAL(plan_sched_count(p) == 1 && z != NULL);
    CU_ASSERT(z->id == 1 && z->queue == queue && z->lanes == 3 && z->commands == 16 && z->uploads == 8 &&
              z->downloads == 4 && z->recorded_ns == 1400000);
    CU_ASSERT(z->predicted_ns == predicted);
    if (z->predicted_ns != predicted)
        fprintf(stderr, "\n  predicted %llu ns, expected %llu\n", (unsigned long long)z->predicted_ns,
                (unsigned long long)predicted);
    const plan_pass_result *r = plan_get_pass(p, S);
    CU_ASSERT(r->enabled && r->transformations == 0 && !r->effect.commands && !r->effect.bytes &&
              !r->effect.device_ns && !r->effect.timed);
    for (size_t i = 0; i < plan_xform_count(p); i++)
        CU_ASSERT(plan_get_xform(p, i)->pass != S);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_FATAL(f && plan_write(p, f) == PLAN_OK);
    fclose(f);
    if (!strstr(buf, json))
        fprintf(stderr, "\n  the plan has no %s\n%s\n", json, buf);
    /* 1.9: the plan says it uses the schedule (PLAN.md, "Requires") */
    const char *rq = strstr(buf, "\"version\": \"1.14\",\n\"requires\": [");
    const char *line = rq ? strchr(rq, '\n') + 1 : NULL, *sc = line ? strstr(line, "\"schedule\"]") : NULL;
    CU_ASSERT(strstr(buf, json) != NULL && sc && sc < strchr(line, '\n'));
    free(buf);
}

/* (a) One after another: 4 * (100 + 100 + 50 + 100) = 1400 us. Over the
 * lanes (uploads | kernels | downloads), each command starts after its
 * lane's previous one and after the last command of each other lane it
 * conflicts with:
 *   0: a [0, 100)    b [100, 200)  | k [200, 250) (after b) | c [250, 350) (after k)
 *   1: a [250, 350) (after k0, which read a; c0 is other memory)
 *                    b [350, 450)  | k [450, 500) (after b; c0 ended at 350) | c [500, 600)
 *   2: a [500, 600)  b [600, 700)  | k [700, 750) | c [750, 850)
 *   3: a [750, 850)  b [850, 950)  | k [950, 1000) | c [1000, 1100)
 * 1100 us: 21% less, scheduled. The same on the second queue created is
 * queue 1; on an out-of-order queue, nothing. */
static void test_schedule(void)
{
    static const char *json =
        "{\"id\":1,\"queue\":0,\"lanes\":3,\"commands\":16,\"uploads\":8,\"downloads\":4,\"recorded_ns\":1400000,"
        "\"predicted_ns\":1100000,\"reason\":\"8 uploads and 4 downloads overlap 4 launches: 1.40 ms of device time "
        "one after another, 1.10 ms over 3 lanes\"}";
    tb b;
    sched_trace(&b, 0, 0, 0);
    plan_file *p = optimize(&b, PLAN_PASSES_ALL);
    sched_check(p, 0, 1100000, json);
    plan_free(p);
    unlink(b.path);
    sched_trace(&b, 1, 0, 0);
    p = optimize(&b, 1u << S);
    CU_ASSERT(plan_sched_count(p) == 1 && plan_get_sched(p, 0)->queue == 1 &&
              plan_get_sched(p, 0)->predicted_ns == 1100000);
    plan_free(p);
    unlink(b.path);
    sched_trace(&b, 0, 0, 1);
    p = optimize(&b, PLAN_PASSES_ALL);
    CU_ASSERT(plan_sched_count(p) == 0 && plan_get_pass(p, S)->enabled);
    plan_free(p);
    unlink(b.path);
}

/* (b) A chain: write a, inc(a) in place, read a, each command touching
 * what the one before wrote or read: over the lanes as one after another
 * (1000 us), nothing is scheduled. */
static void test_schedule_chain(void)
{
    tb b;
    tb_open(&b);
    uint64_t q = tb_queue(&b), a = tb_buffer(&b, 1, 4096, NULL);
    uint64_t k = tb_kernel(&b, tb_program(&b, osrc), "inc");
    for (int it = 0; it < 4; it++) {
        tb_devtime(&b, tb_write(&b, q, a, 0, 4096, it & 1 ? X : Y), 100000);
        tb_devtime(&b, tb_launch(&b, q, k, (uint64_t[]){a}, 1, 1024), 50000);
        tb_devtime(&b, tb_read_b(&b, q, a, 0, 4096, X, 0), 100000);
    }
    tb_finish(&b, q);
    tb_close(&b);
    plan_file *p = optimize(&b, 1u << S);
    CU_ASSERT(plan_sched_count(p) == 0 && plan_get_pass(p, S)->enabled);
    plan_free(p);
    unlink(b.path);
}

/* (c) The overlap pattern with a clFinish after every read: each
 * iteration starts when the one before has ended, and within one the
 * commands depend on each other (a, b on one lane, k after b, c after k):
 * 1400 us over the lanes too, nothing scheduled. With a clFinish after the
 * second iteration's read only: iterations 0 and 1 as in (a), ending at
 * 600; then
 *   2: a [600, 700)  b [700, 800)  | k [800, 850) | c [850, 950)
 *   3: a [850, 950) (after k2)  b [950, 1050) | k [1050, 1100) | c [1100, 1200)
 * 1200 us. */
static void test_schedule_finish(void)
{
    tb b;
    sched_trace(&b, 0, 0xf, 0);
    plan_file *p = optimize(&b, PLAN_PASSES_ALL);
    CU_ASSERT(plan_sched_count(p) == 0);
    plan_free(p);
    unlink(b.path);
    sched_trace(&b, 0, 0x2, 0);
    p = optimize(&b, PLAN_PASSES_ALL);
    sched_check(p, 0, 1200000, "\"predicted_ns\":1200000,\"reason\":\"8 uploads and 4 downloads overlap 4 launches: "
                               "1.40 ms of device time one after another, 1.20 ms over 3 lanes\"}");
    plan_free(p);
    unlink(b.path);
}

/* (d) Without the pass (clrr optimize --no-schedule): no schedule, the pass
 * listed as not run. */
static void test_schedule_off(void)
{
    tb b;
    sched_trace(&b, 0, 0, 0);
    plan_file *p = optimize(&b, PLAN_PASSES_ALL & ~(1u << S));
    CU_ASSERT(plan_sched_count(p) == 0 && !plan_get_pass(p, S)->enabled);
    plan_free(p);
    unlink(b.path);
}

/* LeakSanitizer's tracer crashes at exit in this program ("Tracer caught
 * signal 11", a garbage DTLS range: it reads a dynamic-TLS entry the
 * analysis's dlopen'ed LLVM left behind), depending on the memory layout.
 * Its TLS scan is turned off here only; leaks are still checked. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return "use_tls=0";
}

int main(void)
{
    init_data();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("opt_passes", NULL, NULL);
    CU_add_test(s, "a write overwritten before any read is dead", test_overwritten_write);
    CU_add_test(s, "partial overwrites, writes never read", test_partial_overwrite_and_never_read);
    CU_add_test(s, "the same bytes again are redundant; dead first", test_redundant_write);
    CU_add_test(s, "host-visible memory is never dropped", test_host_visible_kept);
    CU_add_test(s, "an overwrite on another queue needs the host's wait", test_other_queue_needs_sync);
    CU_add_test(s, "fills: redundant patterns, overwriting fills", test_fills);
    CU_add_test(s, "kernels: unread output, printf, read-only arguments", test_kernels);
    CU_add_test(s, "dead: kernels from a binary write their arguments whatever the flags (hashcat)",
                test_dead_binary_kernels);
    CU_add_test(s, "verify: the transformation that mismatches is found and left out", test_verify);
    CU_add_test(s, "measure: each pass, then the whole plan against no plan", test_measure_final);
    CU_add_test(s, "measure: staging written when faster (asked), unstaged when slower, the default's win left to the rule",
                test_measure_stage);
    CU_add_test(s, "measure: a pass that is the whole plan fits without the final check's or the staging's reserve",
                test_measure_budget);
    CU_add_test(s, "the matcher drops the plan's calls, falls back on other bytes", test_exec);
    CU_add_test(s, "fuse: same element fuses, other elements or commands between do not", test_fuse);
    CU_add_test(s, "fuse: a chain of three launches is one kernel; a link that writes an input ends it", test_fuse_chain);
    CU_add_test(s, "fuse: two producers of one consumer are one gather; a read of one output ends it", test_fuse_gather);
    CU_add_test(s, "fuse: independent launches that read the same memory are one launch; a dependence ends it",
                test_fuse_horizontal);
    CU_add_test(s, "specialize: the rewriter's refusal leaves the launches alone and says why",
                test_specialize_refused);
    CU_add_test(s, "specialize: a loop bound set alike in every launch is a constant; a branch or two values are not",
                test_specialize);
    CU_add_test(s, "schedule: the overlap pattern over three lanes, as predicted; another queue; out of order",
                test_schedule);
    CU_add_test(s, "schedule: a chain of conflicting commands is not scheduled", test_schedule_chain);
    CU_add_test(s, "schedule: clFinish holds the queue; after every read nothing overlaps", test_schedule_finish);
    CU_add_test(s, "schedule: --no-schedule", test_schedule_off);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

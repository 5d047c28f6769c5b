/* test_ana_graph.c — the pure parts of the dependency graph
 * (analyzer/ana_graph_int.h): the access history that finds RAW, WAR and
 * WAW dependencies on overlapping byte ranges (intersections, a later
 * write hiding the bytes it covers, straddling writes split, no
 * self-dependencies, whole-object stand-ins), and the marking of edges
 * that a two-edge path already implies. Then the model as a consumer of
 * untrusted traces: well-formed trace files full of OpenCL calls with
 * hostile values (wrong types, huge sizes, dangling ids, bad arrays) go
 * through the model, the graph and every export; the oracle is "no crash,
 * no sanitizer report, ANA_OK or ANA_ERR_TRACE with a message".
 * ANA_TEST_ROUNDS=N runs N hostile traces (default 150); ANA_TEST_VERBOSE=1
 * prints why each refused trace was refused. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/ana_graph_int.h"
#include "trace-format/tf_hot.h"

#define MAXDEP 256

typedef struct dep {
    uint32_t from;
    ana_edge_kind kind;
    uint64_t lo, hi;
    int whole;
    const char *why;
} dep;

typedef struct deps {
    dep d[MAXDEP];
    int n;
} deps;

static int collect(void *ctx, uint32_t from, ana_edge_kind kind, uint64_t lo, uint64_t hi, int whole,
                   const char *why)
{
    deps *s = ctx;
    if (s->n == MAXDEP)
        return -1;
    dep x = { from, kind, lo, hi, whole, why };
    s->d[s->n++] = x;
    return 0;
}

/* Whether s holds exactly one dependency equal to the arguments. */
static int has(const deps *s, uint32_t from, ana_edge_kind kind, uint64_t lo, uint64_t hi)
{
    int k = 0;
    for (int i = 0; i < s->n; i++)
        k += s->d[i].from == from && s->d[i].kind == kind && s->d[i].lo == lo && s->d[i].hi == hi;
    return k == 1;
}

static void rd(ana_hist *h, deps *s, uint32_t cmd, uint64_t lo, uint64_t hi)
{
    s->n = 0;
    CU_ASSERT_FATAL(ana_hist_read(h, cmd, lo, hi, 0, NULL, collect, s) == 0);
}

static void wr(ana_hist *h, deps *s, uint32_t cmd, uint64_t lo, uint64_t hi)
{
    s->n = 0;
    CU_ASSERT_FATAL(ana_hist_write(h, cmd, lo, hi, 0, NULL, collect, s) == 0);
}

static void test_raw_overlap(void)
{
    ana_hist h = { 0 };
    deps s;
    wr(&h, &s, 1, 0, 4096);
    CU_ASSERT(s.n == 0);
    rd(&h, &s, 2, 1000, 5000);          /* overlaps [1000, 4096) */
    CU_ASSERT(s.n == 1 && has(&s, 1, ANA_EDGE_RAW, 1000, 4096));
    rd(&h, &s, 3, 4096, 8192);          /* touches the end: no overlap */
    CU_ASSERT(s.n == 0);
    rd(&h, &s, 4, 10, 10);              /* empty range: nothing */
    CU_ASSERT(s.n == 0);
    ana_hist_free(&h);
}

static void test_halves_independent(void)
{
    /* Helium's example: two writers of the two halves, readers of each */
    ana_hist h = { 0 };
    deps s;
    wr(&h, &s, 1, 0, 4096);
    wr(&h, &s, 2, 4096, 8192);
    CU_ASSERT(s.n == 0);                 /* disjoint halves: independent */
    rd(&h, &s, 3, 0, 4096);
    CU_ASSERT(s.n == 1 && has(&s, 1, ANA_EDGE_RAW, 0, 4096));
    rd(&h, &s, 4, 0, 8192);
    CU_ASSERT(s.n == 2 && has(&s, 1, ANA_EDGE_RAW, 0, 4096) && has(&s, 2, ANA_EDGE_RAW, 4096, 8192));
    wr(&h, &s, 5, 4096, 8192);           /* upper half again: WAW 2, WAR 4; not 3 */
    CU_ASSERT(s.n == 2 && has(&s, 2, ANA_EDGE_WAW, 4096, 8192) && has(&s, 4, ANA_EDGE_WAR, 4096, 8192));
    wr(&h, &s, 6, 0, 4096);              /* lower half: WAW 1, WAR 3 and 4 (cut to [0, 4096)) */
    CU_ASSERT(s.n == 3 && has(&s, 1, ANA_EDGE_WAW, 0, 4096) && has(&s, 3, ANA_EDGE_WAR, 0, 4096) &&
              has(&s, 4, ANA_EDGE_WAR, 0, 4096));
    ana_hist_free(&h);
}

static void test_write_hides_and_splits(void)
{
    ana_hist h = { 0 };
    deps s;
    wr(&h, &s, 1, 0, 100);
    wr(&h, &s, 2, 40, 60);               /* straddled: 1 keeps [0,40) and [60,100) */
    CU_ASSERT(s.n == 1 && has(&s, 1, ANA_EDGE_WAW, 40, 60));
    rd(&h, &s, 3, 0, 100);
    CU_ASSERT(s.n == 3 && has(&s, 1, ANA_EDGE_RAW, 0, 40) && has(&s, 2, ANA_EDGE_RAW, 40, 60) &&
              has(&s, 1, ANA_EDGE_RAW, 60, 100));
    wr(&h, &s, 4, 0, 100);               /* covers everything: later accesses see only 4 */
    CU_ASSERT(has(&s, 3, ANA_EDGE_WAR, 0, 100));
    rd(&h, &s, 5, 50, 70);
    CU_ASSERT(s.n == 1 && has(&s, 4, ANA_EDGE_RAW, 50, 70));
    wr(&h, &s, 6, 0, 10);                /* WAR only on the reader's bytes: none here */
    CU_ASSERT(s.n == 1 && has(&s, 4, ANA_EDGE_WAW, 0, 10));
    ana_hist_free(&h);
}

static void test_no_self_dependency(void)
{
    ana_hist h = { 0 };
    deps s;
    wr(&h, &s, 1, 0, 64);
    rd(&h, &s, 2, 0, 64);                /* a read-write argument: read, then write */
    CU_ASSERT(s.n == 1 && has(&s, 1, ANA_EDGE_RAW, 0, 64));
    wr(&h, &s, 2, 0, 64);
    CU_ASSERT(s.n == 1 && has(&s, 1, ANA_EDGE_WAW, 0, 64));
    rd(&h, &s, 2, 0, 64);                /* the same command again: nothing */
    wr(&h, &s, 2, 0, 64);
    CU_ASSERT(s.n == 0);
    ana_hist_free(&h);
}

static void test_whole_and_reasons(void)
{
    ana_hist h = { 0 };
    deps s = { .n = 0 };
    CU_ASSERT(ana_hist_write(&h, 1, 0, 256, 1, "index loaded from memory", collect, &s) == 0);
    s.n = 0;
    CU_ASSERT(ana_hist_read(&h, 2, 16, 32, 0, NULL, collect, &s) == 0);
    CU_ASSERT(s.n == 1 && s.d[0].whole && s.d[0].why && !strcmp(s.d[0].why, "index loaded from memory"));
    s.n = 0;
    CU_ASSERT(ana_hist_write(&h, 3, 0, 256, 0, NULL, collect, &s) == 0);
    /* WAW on a whole stand-in, WAR on an exact read */
    int whole_waw = 0, exact_war = 0;
    for (int i = 0; i < s.n; i++) {
        whole_waw += s.d[i].kind == ANA_EDGE_WAW && s.d[i].whole;
        exact_war += s.d[i].kind == ANA_EDGE_WAR && !s.d[i].whole && s.d[i].lo == 16 && s.d[i].hi == 32;
    }
    CU_ASSERT(s.n == 2 && whole_waw == 1 && exact_war == 1);
    ana_hist_free(&h);
}

static void test_many_readers(void)
{
    ana_hist h = { 0 };
    deps s;
    wr(&h, &s, 0, 0, 1024);
    for (uint32_t c = 1; c <= 20; c++)
        rd(&h, &s, c, (c - 1) * 8, c * 8 + 8);   /* overlapping reads */
    wr(&h, &s, 100, 0, 1024);
    int war = 0;
    for (int i = 0; i < s.n; i++)
        war += s.d[i].kind == ANA_EDGE_WAR;
    CU_ASSERT(war == 20 && has(&s, 0, ANA_EDGE_WAW, 0, 1024));
    rd(&h, &s, 101, 0, 1024);            /* every earlier read is hidden by 100 */
    CU_ASSERT(s.n == 1 && has(&s, 100, ANA_EDGE_RAW, 0, 1024));
    ana_hist_free(&h);
}

static void test_read_groups(void)
{
    /* a loop that reads the whole buffer and rewrites its interior: the
     * border reads pile up in one group; interior writes never see them */
    ana_hist h = { 0 };
    deps s;
    wr(&h, &s, 0, 0, 100);
    for (uint32_t it = 1; it <= 50; it++) {
        rd(&h, &s, 2 * it, 0, 100);
        wr(&h, &s, 2 * it + 1, 10, 90);
        CU_ASSERT(has(&s, 2 * it, ANA_EDGE_WAR, 10, 90));
        CU_ASSERT(s.n == 2);                   /* WAR from this reader, WAW from the last writer */
    }
    CU_ASSERT(h.nr <= 4);                      /* [0,10) and [90,100) groups, not 100 spans */
    wr(&h, &s, 1000, 0, 100);                  /* every border reader is a WAR */
    int war_lo = 0, war_hi = 0;
    for (int i = 0; i < s.n; i++) {
        war_lo += s.d[i].kind == ANA_EDGE_WAR && s.d[i].lo == 0 && s.d[i].hi == 10;
        war_hi += s.d[i].kind == ANA_EDGE_WAR && s.d[i].lo == 90 && s.d[i].hi == 100;
    }
    CU_ASSERT(war_lo == 50 && war_hi == 50);
    /* straddled readers are split, each part keeps every reader */
    rd(&h, &s, 2000, 0, 100);
    rd(&h, &s, 2001, 0, 100);
    wr(&h, &s, 2002, 40, 60);
    CU_ASSERT(s.n == 3 && has(&s, 2000, ANA_EDGE_WAR, 40, 60) && has(&s, 2001, ANA_EDGE_WAR, 40, 60));
    wr(&h, &s, 2003, 0, 100);
    CU_ASSERT(has(&s, 2000, ANA_EDGE_WAR, 0, 40) && has(&s, 2000, ANA_EDGE_WAR, 60, 100) &&
              has(&s, 2001, ANA_EDGE_WAR, 0, 40) && has(&s, 2001, ANA_EDGE_WAR, 60, 100) &&
              has(&s, 2002, ANA_EDGE_WAW, 40, 60) && has(&s, 1000, ANA_EDGE_WAW, 0, 40));
    ana_hist_free(&h);
}

static ana_edge edge(uint32_t from, uint32_t to, ana_edge_kind kind)
{
    ana_edge e;
    memset(&e, 0, sizeof e);
    e.from = from;
    e.to = to;
    e.kind = (uint8_t)kind;
    return e;
}

static void test_implied(void)
{
    /* sorted by (to, from): 0->1, 0->2, 1->2, 2->3, 2->3 (another kind), 0->3 */
    ana_edge e[] = {
        edge(0, 1, ANA_EDGE_RAW), edge(0, 2, ANA_EDGE_WAW), edge(1, 2, ANA_EDGE_RAW),
        edge(0, 3, ANA_EDGE_WAR), edge(2, 3, ANA_EDGE_RAW), edge(2, 3, ANA_EDGE_WAW),
    };
    CU_ASSERT_FATAL(ana_graph_mark_implied(e, 6, 4) == 0);
    CU_ASSERT(!e[0].implied);   /* 0->1 */
    CU_ASSERT(e[1].implied);    /* 0->2 through 1 */
    CU_ASSERT(!e[2].implied);   /* 1->2 */
    CU_ASSERT(e[3].implied);    /* 0->3 through 2 */
    CU_ASSERT(!e[4].implied && !e[5].implied);   /* two kinds of one pair do not imply each other */
    CU_ASSERT(ana_graph_mark_implied(NULL, 0, 0) == 0);
}


/* ------------------------------------------------------------ hostile traces */

typedef struct fz_param {
    const char *name, *type;
    uint8_t kind, dir;
} fz_param;

typedef struct fz_fn {
    const char *name, *ret;
    fz_param p[10];
} fz_fn;

#define V TF_KIND_VALUE
#define H TF_KIND_HANDLE
#define A TF_KIND_ARRAY
#define BL TF_KIND_BLOB
#define PT TF_KIND_PTR
#define IN TF_DIR_IN
#define OUT TF_DIR_OUT
static const fz_fn fz_fns[] = {
    { "clCreateBuffer", "cl_mem", { { "context", "cl_context", H, IN }, { "flags", "cl_mem_flags", V, IN },
      { "size", "size_t", V, IN }, { "host_ptr", "void *", BL, IN }, { "errcode_ret", "cl_int *", V, OUT } } },
    { "clCreateSubBuffer", "cl_mem", { { "buffer", "cl_mem", H, IN }, { "flags", "cl_mem_flags", V, IN },
      { "buffer_create_type", "cl_uint", V, IN }, { "buffer_create_info", "const void *", TF_KIND_STRUCT, IN },
      { "errcode_ret", "cl_int *", V, OUT } } },
    { "clCreateImage", "cl_mem", { { "context", "cl_context", H, IN }, { "flags", "cl_mem_flags", V, IN },
      { "image_format", "const cl_image_format *", TF_KIND_STRUCT, IN },
      { "image_desc", "const cl_image_desc *", TF_KIND_STRUCT, IN }, { "host_ptr", "void *", BL, IN },
      { "errcode_ret", "cl_int *", V, OUT } } },
    { "clCreateCommandQueueWithProperties", "cl_command_queue", { { "context", "cl_context", H, IN },
      { "device", "cl_device_id", H, IN }, { "properties", "const cl_queue_properties *", TF_KIND_PROPS, IN },
      { "errcode_ret", "cl_int *", V, OUT } } },
    { "clCreateKernel", "cl_kernel", { { "program", "cl_program", H, IN },
      { "kernel_name", "const char *", TF_KIND_STRING, IN }, { "errcode_ret", "cl_int *", V, OUT } } },
    { "clCreateKernelsInProgram", "cl_int", { { "program", "cl_program", H, IN }, { "num_kernels", "cl_uint", V, IN },
      { "kernels", "cl_kernel *", A, OUT }, { "num_kernels_ret", "cl_uint *", V, OUT } } },
    { "clCreateUserEvent", "cl_event", { { "context", "cl_context", H, IN }, { "errcode_ret", "cl_int *", V, OUT } } },
    { "clSetKernelArg", "cl_int", { { "kernel", "cl_kernel", H, IN }, { "arg_index", "cl_uint", V, IN },
      { "arg_size", "size_t", V, IN }, { "arg_value", "const void *", BL, IN } } },
    { "clSetKernelArgSVMPointer", "cl_int", { { "kernel", "cl_kernel", H, IN }, { "arg_index", "cl_uint", V, IN },
      { "arg_value", "const void *", PT, IN } } },
    { "clEnqueueNDRangeKernel", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "kernel", "cl_kernel", H, IN }, { "work_dim", "cl_uint", V, IN },
      { "global_work_offset", "const size_t *", A, IN }, { "global_work_size", "const size_t *", A, IN },
      { "local_work_size", "const size_t *", A, IN }, { "num_events_in_wait_list", "cl_uint", V, IN },
      { "event_wait_list", "const cl_event *", A, IN }, { "event", "cl_event *", H, OUT } } },
    { "clEnqueueReadBuffer", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "buffer", "cl_mem", H, IN }, { "blocking_read", "cl_bool", V, IN }, { "offset", "size_t", V, IN },
      { "size", "size_t", V, IN }, { "ptr", "void *", BL, OUT }, { "num_events_in_wait_list", "cl_uint", V, IN },
      { "event_wait_list", "const cl_event *", A, IN }, { "event", "cl_event *", H, OUT } } },
    { "clEnqueueWriteBufferRect", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "buffer", "cl_mem", H, IN }, { "buffer_origin", "const size_t *", A, IN },
      { "region", "const size_t *", A, IN }, { "buffer_row_pitch", "size_t", V, IN },
      { "buffer_slice_pitch", "size_t", V, IN }, { "event", "cl_event *", H, OUT } } },
    { "clEnqueueCopyBuffer", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "src_buffer", "cl_mem", H, IN }, { "dst_buffer", "cl_mem", H, IN }, { "src_offset", "size_t", V, IN },
      { "dst_offset", "size_t", V, IN }, { "size", "size_t", V, IN },
      { "event_wait_list", "const cl_event *", A, IN }, { "event", "cl_event *", H, OUT } } },
    { "clEnqueueReadImage", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "image", "cl_mem", H, IN }, { "origin", "const size_t *", A, IN }, { "region", "const size_t *", A, IN },
      { "event", "cl_event *", H, OUT } } },
    { "clEnqueueMapBuffer", "void *", { { "command_queue", "cl_command_queue", H, IN },
      { "buffer", "cl_mem", H, IN }, { "blocking_map", "cl_bool", V, IN }, { "map_flags", "cl_map_flags", V, IN },
      { "offset", "size_t", V, IN }, { "size", "size_t", V, IN }, { "errcode_ret", "cl_int *", V, OUT } } },
    { "clEnqueueUnmapMemObject", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "memobj", "cl_mem", H, IN }, { "mapped_ptr", "void *", PT, IN } } },
    { "clEnqueueMarkerWithWaitList", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "event_wait_list", "const cl_event *", A, IN }, { "event", "cl_event *", H, OUT } } },
    { "clEnqueueBarrierWithWaitList", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "event_wait_list", "const cl_event *", A, IN }, { "event", "cl_event *", H, OUT } } },
    { "clEnqueueSVMMemcpy", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "blocking_copy", "cl_bool", V, IN }, { "dst_ptr", "void *", BL, OUT }, { "src_ptr", "const void *", BL, IN },
      { "size", "size_t", V, IN } } },
    { "clEnqueueSVMFree", "cl_int", { { "command_queue", "cl_command_queue", H, IN },
      { "svm_pointers", "void **", A, IN } } },
    { "clSVMAlloc", "void *", { { "context", "cl_context", H, IN }, { "flags", "cl_svm_mem_flags", V, IN },
      { "size", "size_t", V, IN } } },
    { "clSVMFree", "void", { { "context", "cl_context", H, IN }, { "svm_pointer", "void *", PT, IN } } },
    { "clFinish", "cl_int", { { "command_queue", "cl_command_queue", H, IN } } },
    { "clWaitForEvents", "cl_int", { { "num_events", "cl_uint", V, IN }, { "event_list", "const cl_event *", A, IN } } },
    { "clSetUserEventStatus", "cl_int", { { "event", "cl_event", H, IN }, { "execution_status", "cl_int", V, IN } } },
    { "clReleaseMemObject", "cl_int", { { "memobj", "cl_mem", H, IN } } },
    { "clRetainMemObject", "cl_int", { { "memobj", "cl_mem", H, IN } } },
    { "clGetKernelInfo", "cl_int", { { "kernel", "cl_kernel", H, IN }, { "param_name", "cl_uint", V, IN },
      { "param_value", "void *", BL, OUT } } },
};
#undef V
#undef H
#undef A
#undef BL
#undef PT
#undef IN
#undef OUT

static uint64_t fz_rng = 88172645463325252ULL;
static uint64_t fz_next(void)
{
    fz_rng ^= fz_rng << 13;
    fz_rng ^= fz_rng >> 7;
    fz_rng ^= fz_rng << 17;
    return fz_rng;
}

/* A hostile value: mostly small ids and sizes, sometimes anything. */
static void fz_value(tf_enc *e, int depth)
{
    uint64_t r = fz_next();
    switch (r % 16) {
    case 0: tf_enc_nil(e); break;
    case 1: tf_enc_bool(e, (int)(r >> 8) & 1); break;
    case 2: tf_enc_int(e, -(int64_t)(r >> 40)); break;
    case 3: tf_enc_uint(e, r >> 4); break;                   /* huge */
    case 4: tf_enc_str(e, "sum\n\"x\x01", 8); break;
    case 5: {
        char b[12];
        for (int i = 0; i < 12; i++)
            b[i] = (char)fz_next();
        tf_enc_bin(e, b, (r >> 8) % 13);
        break;
    }
    case 6: case 7: {
        unsigned n = depth > 2 ? 0 : (unsigned)((r >> 8) % 5);
        tf_enc_array(e, n);
        for (unsigned i = 0; i < n; i++)
            fz_value(e, depth + 1);
        break;
    }
    case 8: tf_enc_f64(e, -1.5); break;
    case 9: tf_enc_uint(e, UINT64_MAX - (r >> 60)); break;
    default: tf_enc_uint(e, (r >> 8) % 40); break;            /* an id, an index, a small size */
    }
}

static uint64_t fz_ids;   /* handles created so far: ids 100 .. 100 + fz_ids - 1 */

static uint64_t fz_ref(void)
{
    return fz_ids && fz_next() % 8 ? 100 + fz_next() % fz_ids : fz_next() % 40;
}

static uint64_t fz_fresh(void)
{
    return 100 + fz_ids++;
}

/* A value that fits parameter @p p (an output when @p out), or a hostile
 * one one time in @p hostility (0: never). */
static void fz_typed(tf_enc *e, const fz_param *p, int out, unsigned hostility)
{
    uint64_t r = fz_next();
    if (hostility && r % hostility == 0) {
        fz_value(e, 0);
        return;
    }
    int handle = strstr(p->type, "cl_") && !strstr(p->type, "_flags") && strcmp(p->type, "cl_uint") &&
                 strcmp(p->type, "cl_bool") && strcmp(p->type, "cl_int") && !strstr(p->type, "properties");
    if (!strcmp(p->name, "work_dim")) {
        tf_enc_uint(e, 1 + r % 3);
        return;
    }
    switch (p->kind) {
    case TF_KIND_ARRAY: case TF_KIND_STRUCT: case TF_KIND_PROPS: {
        unsigned n = strstr(p->name, "work_") || strstr(p->name, "origin") || !strcmp(p->name, "region")
                     ? 3 : (unsigned)(r >> 8) % 4;
        tf_enc_array(e, n);
        for (unsigned i = 0; i < n; i++)
            tf_enc_uint(e, out && handle ? fz_fresh() : handle ? fz_ref() : 1 + fz_next() % 64);
        break;
    }
    case TF_KIND_HANDLE: tf_enc_uint(e, out ? fz_fresh() : fz_ref()); break;
    case TF_KIND_PTR: tf_enc_uint(e, fz_ref()); break;
    case TF_KIND_STRING: tf_enc_cstr(e, (r >> 8) % 2 ? "sum" : "fill_lo"); break;
    case TF_KIND_BLOB:
        if (out)
            tf_enc_nil(e);
        else if ((r >> 8) % 3 == 0)
            tf_enc_uint(e, fz_ref());                         /* a memory object argument */
        else
            tf_enc_bin(e, "\x01\x02\x03\x04\x05\x06\x07\x08", 1 + (r >> 12) % 8);
        break;
    default: tf_enc_uint(e, (r >> 8) % 64); break;
    }
}

/* Writes a trace of @p ncalls calls to @p path, hostile values one time
 * in @p hostility (0: every value of the right family). */
static void fz_trace(const char *path, unsigned ncalls, unsigned hostility)
{
    tf_writer *w = NULL;
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    fz_ids = 0;
    size_t nf = sizeof fz_fns / sizeof fz_fns[0];
    for (size_t f = 0; f < nf; f++) {
        unsigned np = 0;
        while (np < 10 && fz_fns[f].p[np].name)
            np++;
        tf_enc *e = tf_writer_lock(w);
        tf_enc_array(e, 5);
        tf_enc_uint(e, 1);
        tf_enc_uint(e, f + 1);
        tf_enc_cstr(e, fz_fns[f].name);
        tf_enc_cstr(e, fz_fns[f].ret);
        tf_enc_array(e, np);
        for (unsigned i = 0; i < np; i++) {
            tf_enc_array(e, 4);
            tf_enc_cstr(e, fz_fns[f].p[i].name);
            tf_enc_cstr(e, fz_fns[f].p[i].type);
            tf_enc_uint(e, fz_fns[f].p[i].kind);
            tf_enc_uint(e, fz_fns[f].p[i].dir);
        }
        tf_writer_unlock(w);
    }
    for (unsigned seq = 1; seq <= ncalls; seq++) {
        size_t f = fz_next() % nf;
        unsigned np = 0;
        while (np < 10 && fz_fns[f].p[np].name)
            np++;
        int64_t t = (int64_t)seq * 1000;
        tf_enc *e = tf_writer_lock(w);
        tf_enc_array(e, 7);
        tf_enc_uint(e, 2);
        tf_enc_uint(e, seq);
        tf_enc_uint(e, 1 + fz_next() % 2);
        tf_enc_uint(e, f + 1);
        tf_enc_int(e, t);
        tf_enc_array(e, np);
        for (unsigned i = 0; i < np; i++)
            fz_typed(e, &fz_fns[f].p[i], 0, hostility);
        tf_enc_nil(e);
        tf_writer_unlock(w);
        e = tf_writer_lock(w);
        tf_enc_array(e, 6);
        tf_enc_uint(e, 3);
        tf_enc_uint(e, seq);
        tf_enc_int(e, t + 500);
        if (!strcmp(fz_fns[f].ret, "cl_int"))
            tf_enc_uint(e, fz_next() % 8 ? 0 : 5);            /* mostly CL_SUCCESS */
        else if (!strcmp(fz_fns[f].ret, "void"))
            tf_enc_nil(e);
        else if (!hostility || fz_next() % hostility)
            tf_enc_uint(e, strstr(fz_fns[f].ret, "cl_") ? fz_fresh() : fz_ref());
        else
            tf_enc_uint(e, fz_next());
        tf_enc_array(e, np);
        for (unsigned i = 0; i < np; i++) {
            if (!strcmp(fz_fns[f].p[i].name, "errcode_ret"))
                tf_enc_uint(e, 0);
            else if (fz_fns[f].p[i].dir & TF_DIR_OUT)
                fz_typed(e, &fz_fns[f].p[i], 1, hostility);
            else
                tf_enc_nil(e);
        }
        tf_enc_nil(e);
        tf_writer_unlock(w);
        if (fz_next() % 3 == 0) {                           /* device times, some before their call */
            e = tf_writer_lock(w);
            tf_enc_array(e, 6);
            tf_enc_uint(e, 4);
            tf_enc_uint(e, fz_next() % 2 ? seq : seq + 1);
            tf_enc_uint(e, 0);
            tf_enc_uint(e, 0);
            tf_enc_uint(e, fz_next() % 100000);
            tf_enc_uint(e, fz_next() % 100000);
            tf_writer_unlock(w);
        }
    }
    CU_ASSERT_FATAL(tf_writer_close(w) == TF_OK);
}

static void test_hostile_traces(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/test_ana_graph.%d.clrr", (int)getpid());
    int ok = 0, refused = 0;
    for (int round = 0; round < (getenv("ANA_TEST_ROUNDS") ? atoi(getenv("ANA_TEST_ROUNDS")) : 150); round++) {
        static const unsigned hostility[] = { 0, 0, 200, 50, 10, 2 };
        fz_trace(path, 40 + (unsigned)(fz_next() % 400), hostility[round % 6]);
        tf_reader *r = NULL;
        CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
        ana_model *m = NULL;
        char err[256] = "";
        ana_status st = ana_model_build(r, &m, err, sizeof err);
        CU_ASSERT(st == ANA_OK || st == ANA_ERR_TRACE);
        if (st != ANA_OK && st != ANA_ERR_TRACE)
            fprintf(stderr, "round %d: %s: %s\n", round, ana_strerror(st), err);
        if (st != ANA_OK) {
            CU_ASSERT(err[0] != '\0' && !strchr(err, '\n'));
            if (getenv("ANA_TEST_VERBOSE"))
                fprintf(stderr, "refused: %s\n", err);
            refused++;
            tf_reader_close(r);
            continue;
        }
        ok++;
        CU_ASSERT(ana_model_analyze(m) == ANA_OK);
        ana_graph *g = NULL;
        CU_ASSERT_FATAL(ana_graph_build(m, &g) == ANA_OK);
        FILE *f = fopen("/dev/null", "w");
        CU_ASSERT_FATAL(f != NULL);
        ana_graph_view v = { 0, UINT64_MAX, 1 };
        CU_ASSERT(ana_graph_write_dot(m, g, &v, f) == ANA_OK);
        CU_ASSERT(ana_graph_write_json(m, g, NULL, f) == ANA_OK);
        v.collapse = 0;
        v.seq_lo = 10;
        v.seq_hi = 100;
        CU_ASSERT(ana_graph_write_dot(m, g, &v, f) == ANA_OK);
        ana_stats *s = NULL;
        CU_ASSERT(ana_stats_compute(m, &s) == ANA_OK);
        ana_stats_free(s);
        CU_ASSERT(ana_timeline_write(r, m, g, f, err, sizeof err) == ANA_OK);
        fclose(f);
        ana_graph_free(g);
        ana_model_free(m);
        tf_reader_close(r);
    }
    unlink(path);
    if (getenv("ANA_TEST_VERBOSE"))
        fprintf(stderr, "hostile traces: %d modelled, %d refused\n", ok, refused);
    CU_ASSERT(ok > 10 && refused > 10);   /* both paths exercised */
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("ana_graph", NULL, NULL);
    CU_add_test(s, "RAW on overlapping bytes only", test_raw_overlap);
    CU_add_test(s, "halves of one buffer are independent", test_halves_independent);
    CU_add_test(s, "a write hides and splits earlier spans", test_write_hides_and_splits);
    CU_add_test(s, "no dependency on itself", test_no_self_dependency);
    CU_add_test(s, "whole stand-ins carry their reason", test_whole_and_reasons);
    CU_add_test(s, "many readers, one writer", test_many_readers);
    CU_add_test(s, "readers of one range gather", test_read_groups);
    CU_add_test(s, "implied edges", test_implied);
    CU_add_test(s, "hostile traces through the model and exports", test_hostile_traces);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

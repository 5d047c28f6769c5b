/* test_rpl_lanes.c — lanes of an in-order queue (rpl_lanes, replayer/rpl.h)
 * on the OpenCL device here (PoCL in CI). Routing: which earlier commands a
 * command waits for (the newest conflicting one per other lane, none on
 * its own lane, everything for a marker), sub-buffers resolved to their
 * buffer's bytes. Execution, made observable with user events: a kernel
 * whose input write is held back does not run before it; a write that
 * conflicts with nothing completes while the queue itself is held back
 * (the overlap lanes exist for); a command the queue runs without a
 * route is waited for by the lanes (a marker stands for it); many commands
 * through one lane (folding) keep the last write's bytes; an out-of-order
 * queue is refused. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <CUnit/Basic.h>

#include "replayer/rpl.h"

/* PoCL's compiler (LLVM, in this process) leaves allocations behind
 * whenever it builds a kernel that is not in its cache, at the build or at
 * a launch of a new shape: the sanitizer flavour failed whenever it was the
 * first to build (a cold cache, as in CI). The driver's allocations are not
 * the replayer's leaks (as for fuzz_replay_pocl). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;
static cl_program prog;
static cl_kernel k_inc;

static const char src[] = "__kernel void inc(__global const int *a, __global int *c) {\n"
                          "    size_t i = get_global_id(0);\n"
                          "    c[i] = a[i] + 1;\n"
                          "}\n";

static void *lookup(void *user, const char *name)
{
    (void)user;
    return dlsym(RTLD_DEFAULT, name);
}

static int setup(void)
{
    cl_platform_id plat;
    cl_int e;
    if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return 1;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    q = ctx ? clCreateCommandQueue(ctx, dev, 0, &e) : NULL;
    const char *s = src;
    prog = q ? clCreateProgramWithSource(ctx, 1, &s, NULL, &e) : NULL;
    if (!prog || clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
        return 1;
    k_inc = clCreateKernel(prog, "inc", &e);
    return !k_inc;
}

static int teardown(void)
{
    clReleaseKernel(k_inc);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}

static cl_mem buffer(size_t n)
{
    cl_int e;
    return clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, NULL, &e);
}

static rpl_lanes *lanes(void)
{
    char err[256];
    rpl_lanes *L = rpl_lanes_new(lookup, NULL, q, 3, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(L);
    return L;
}

/* Routes and "enqueues" a marker on the routed queue standing for the
 * command (routing does not look at what runs). @return its event. */
static cl_event fake(rpl_lanes *L, unsigned lane, const rpl_access *acc, unsigned n, cl_uint *nwait)
{
    rpl_lane_cmd c;
    cl_event ev = NULL;
    CU_ASSERT_EQUAL_FATAL(rpl_lanes_route(L, lane, acc, n, 0, NULL, &c), 0);
    *nwait = c.nwait;
    CU_ASSERT_EQUAL(clEnqueueMarkerWithWaitList(c.q, c.nwait, c.wait, &ev), CL_SUCCESS);
    CU_ASSERT_EQUAL(rpl_lanes_done(L, &c, ev), 0);
    return ev;
}

static void test_routing(void)
{
    rpl_lanes *L = lanes();
    if (!L)
        return;
    cl_mem a = buffer(4096), c = buffer(4096);
    rpl_access wa, kr[2], rc, wa_hi;
    rpl_lanes_mem(L, a, 0, 4096, 1, &wa);
    rpl_lanes_mem(L, a, 0, UINT64_MAX, 1, &kr[0]);
    rpl_lanes_mem(L, c, 0, UINT64_MAX, 1, &kr[1]);
    rpl_lanes_mem(L, c, 0, 4096, 0, &rc);
    cl_uint n;
    cl_event e[8];
    e[0] = fake(L, 1, &wa, 1, &n);
    CU_ASSERT_EQUAL(n, 0);                 /* nothing before it */
    e[1] = fake(L, 0, kr, 2, &n);
    CU_ASSERT_EQUAL(n, 1);                 /* the write of a */
    e[2] = fake(L, 2, &rc, 1, &n);
    CU_ASSERT_EQUAL(n, 1);                 /* the kernel (writes c); not the write of a */
    e[3] = fake(L, 1, &wa, 1, &n);
    CU_ASSERT_EQUAL(n, 1);                 /* the kernel reads a; the read of c is no conflict */
    e[4] = fake(L, 1, &wa, 1, &n);
    CU_ASSERT_EQUAL(n, 1);                 /* own lane: in order; still the kernel on lane 0 */
    e[5] = fake(L, 0, NULL, 0, &n);
    CU_ASSERT_EQUAL(n, 2);                 /* a marker: the newest of each other lane */
    /* two reads of the same bytes do not conflict; bytes apart do not either */
    rpl_access ra;
    rpl_lanes_mem(L, a, 0, 4096, 0, &ra);
    rpl_lanes_mem(L, c, 0, 4096, 0, &rc);
    clFinish(q);
    rpl_lanes_finish(L);
    e[6] = fake(L, 2, &ra, 1, &n);
    CU_ASSERT_EQUAL(n, 0);
    rpl_lanes_mem(L, a, 8192, 12288, 1, &wa_hi);
    e[7] = fake(L, 1, &wa_hi, 1, &n);
    CU_ASSERT_EQUAL(n, 0);
    for (int i = 0; i < 8; i++)
        clReleaseEvent(e[i]);
    CU_ASSERT(rpl_lanes_get_stats(L)->waits >= 5);
    rpl_lanes_free(L);
    clReleaseMemObject(a);
    clReleaseMemObject(c);
}

static void test_sub_buffer(void)
{
    rpl_lanes *L = lanes();
    if (!L)
        return;
    cl_uint align = 0;
    clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align, &align, NULL);
    size_t off = align / 8 ? align / 8 : 128;
    cl_mem a = buffer(off * 4);
    cl_buffer_region r = {off, off};
    cl_int e;
    cl_mem sub = clCreateSubBuffer(a, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
    rpl_access x;
    rpl_lanes_mem(L, sub, 4, 8, 1, &x);
    CU_ASSERT(x.root == (const void *)a && x.lo == off + 4 && x.hi == off + 8 && x.write);
    rpl_lanes_mem(L, a, 4, 8, 0, &x);
    CU_ASSERT(x.root == (const void *)a && x.lo == 4 && x.hi == 8 && !x.write);
    rpl_lanes_free(L);
    clReleaseMemObject(sub);
    clReleaseMemObject(a);
}

/* Polls @p ev for up to @p ms milliseconds. @return its status. */
static cl_int poll_event(cl_event ev, int ms)
{
    cl_int st = CL_QUEUED;
    for (int i = 0; i <= ms; i++) {
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        if (st <= CL_COMPLETE)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return st;
}

/* Enqueues a real command through a route and reports it. */
static cl_event write_routed(rpl_lanes *L, cl_mem m, const int *src_, size_t n, cl_uint nw, const cl_event *w)
{
    rpl_access acc;
    rpl_lanes_mem(L, m, 0, n * sizeof *src_, 1, &acc);
    rpl_lane_cmd c;
    cl_event ev = NULL;
    CU_ASSERT_EQUAL_FATAL(rpl_lanes_route(L, 1, &acc, 1, nw, w, &c), 0);
    CU_ASSERT_EQUAL(clEnqueueWriteBuffer(c.q, m, CL_FALSE, 0, n * sizeof *src_, src_, c.nwait, c.wait, &ev),
                    CL_SUCCESS);
    rpl_lanes_done(L, &c, ev);
    return ev;
}

static cl_event launch_routed(rpl_lanes *L, cl_mem a, cl_mem c_, size_t n, cl_uint nw, const cl_event *w)
{
    rpl_access acc[2];
    rpl_lanes_mem(L, a, 0, UINT64_MAX, 1, &acc[0]);
    rpl_lanes_mem(L, c_, 0, UINT64_MAX, 1, &acc[1]);
    rpl_lane_cmd c;
    cl_event ev = NULL;
    clSetKernelArg(k_inc, 0, sizeof a, &a);
    clSetKernelArg(k_inc, 1, sizeof c_, &c_);
    CU_ASSERT_EQUAL_FATAL(rpl_lanes_route(L, 0, acc, 2, nw, w, &c), 0);
    CU_ASSERT_EQUAL(clEnqueueNDRangeKernel(c.q, k_inc, 1, NULL, &n, NULL, c.nwait, c.wait, &ev), CL_SUCCESS);
    rpl_lanes_done(L, &c, ev);
    return ev;
}

/* Waits for the lanes and the queue; then reads @p bytes of @p m into @p y
 * (m NULL: nothing). */
static void drain(rpl_lanes *L, cl_mem m, void *y, size_t bytes)
{
    rpl_lanes_finish(L);
    clFinish(q);
    if (m)
        clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, y, 0, NULL, NULL);
}

/* 1 when y[i] == mul * i + add for every i < n. */
static int affine(const int *y, int n, int mul, int add)
{
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= y[i] == mul * i + add;
    return ok;
}

/* Releases the events, the lanes, then the buffers (NULL-terminated lists). */
static void release(rpl_lanes *L, const cl_event *ev, const cl_mem *m)
{
    for (; *ev; ev++)
        clReleaseEvent(*ev);
    rpl_lanes_free(L);
    for (; *m; m++)
        clReleaseMemObject(*m);
}

static void test_order_kept(void)
{
    enum { N = 1024 };
    static int x[N], y[N];
    rpl_lanes *L = lanes();
    if (!L)
        return;
    cl_int e;
    cl_event u = clCreateUserEvent(ctx, &e);
    cl_mem a = buffer(sizeof x), c = buffer(sizeof y);
    for (int i = 0; i < N; i++)
        x[i] = i * 3;
    cl_event w = write_routed(L, a, x, N, 1, &u);   /* held back by u */
    cl_event k = launch_routed(L, a, c, N, 0, NULL);
    clFlush(q);
    CU_ASSERT(poll_event(k, 50) > CL_COMPLETE);     /* waits for the write on the other lane */
    clSetUserEventStatus(u, CL_COMPLETE);
    CU_ASSERT_EQUAL(poll_event(k, 5000), CL_COMPLETE);
    drain(L, c, y, sizeof y);
    CU_ASSERT(affine(y, N, 3, 1));
    release(L, (cl_event[]){w, k, u, NULL}, (cl_mem[]){a, c, NULL});
}

static void test_overlap(void)
{
    enum { N = 1024 };
    static int x[N], y[N];
    rpl_lanes *L = lanes();
    if (!L)
        return;
    cl_int e;
    cl_event u = clCreateUserEvent(ctx, &e);
    cl_mem a = buffer(sizeof x), c = buffer(sizeof y), b = buffer(sizeof x);
    for (int i = 0; i < N; i++)
        x[i] = i;
    cl_event k = launch_routed(L, a, c, N, 1, &u);  /* the queue is held back by u */
    cl_event w = write_routed(L, b, x, N, 0, NULL); /* b: no conflict with the launch */
    CU_ASSERT_EQUAL(poll_event(w, 5000), CL_COMPLETE);
    CU_ASSERT(poll_event(k, 0) > CL_COMPLETE);
    cl_event w2 = write_routed(L, a, x, N, 0, NULL); /* a: the launch reads it, so it waits */
    CU_ASSERT(poll_event(w2, 50) > CL_COMPLETE);
    clSetUserEventStatus(u, CL_COMPLETE);
    CU_ASSERT_EQUAL(poll_event(w2, 5000), CL_COMPLETE);
    drain(L, b, y, sizeof y);
    CU_ASSERT(!memcmp(x, y, sizeof y));
    release(L, (cl_event[]){w, w2, k, u, NULL}, (cl_mem[]){a, b, c, NULL});
}

/* More commands than a lane keeps: the last write's bytes win, and the
 * launch that follows reads them. */
static void test_many(void)
{
    enum { N = 256, K = 300 };
    static int x[K][N], y[N];
    rpl_lanes *L = lanes();
    if (!L)
        return;
    cl_mem a = buffer(sizeof y), c = buffer(sizeof y);
    cl_int e;
    cl_event u = clCreateUserEvent(ctx, &e);
    for (int j = 0; j < K; j++) {
        for (int i = 0; i < N; i++)
            x[j][i] = j * 1000 + i;
        cl_event w = write_routed(L, a, x[j], N, j ? 0 : 1, &u);   /* all held back: nothing completes */
        clReleaseEvent(w);
    }
    cl_event k = launch_routed(L, a, c, N, 0, NULL);
    clSetUserEventStatus(u, CL_COMPLETE);
    drain(L, c, y, sizeof y);
    CU_ASSERT(affine(y, N, 1, (K - 1) * 1000 + 1));
    CU_ASSERT(rpl_lanes_get_stats(L)->folded > 0);
    release(L, (cl_event[]){k, u, NULL}, (cl_mem[]){a, c, NULL});
}

/* A command enqueued on the queue without a route (the plan's fused
 * launches), with every lane still empty: the marker after it stands for
 * it, so the read of what it writes waits for it. */
static void test_unrouted(void)
{
    enum { N = 512 };
    static int x[N], y[N];
    rpl_lanes *L = lanes();
    if (!L)
        return;
    cl_int e;
    cl_event u = clCreateUserEvent(ctx, &e);
    cl_mem a = buffer(sizeof x), c = buffer(sizeof y);
    for (int i = 0; i < N; i++)
        x[i] = 7 * i;
    clEnqueueWriteBuffer(q, a, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL);
    CU_ASSERT_EQUAL(rpl_lanes_join(L), 0);
    clSetKernelArg(k_inc, 0, sizeof a, &a);
    clSetKernelArg(k_inc, 1, sizeof c, &c);
    size_t n = N;
    CU_ASSERT_EQUAL(clEnqueueNDRangeKernel(q, k_inc, 1, NULL, &n, NULL, 1, &u, NULL), CL_SUCCESS);
    CU_ASSERT_EQUAL(rpl_lanes_joined(L), 0);
    rpl_access acc;
    rpl_lanes_mem(L, c, 0, sizeof y, 0, &acc);
    rpl_lane_cmd cmd;
    cl_event r = NULL;
    CU_ASSERT_EQUAL_FATAL(rpl_lanes_route(L, 2, &acc, 1, 0, NULL, &cmd), 0);
    CU_ASSERT_EQUAL(cmd.nwait, 1);
    CU_ASSERT_EQUAL(clEnqueueReadBuffer(cmd.q, c, CL_FALSE, 0, sizeof y, y, cmd.nwait, cmd.wait, &r), CL_SUCCESS);
    rpl_lanes_done(L, &cmd, r);
    CU_ASSERT(poll_event(r, 50) > CL_COMPLETE);
    clSetUserEventStatus(u, CL_COMPLETE);
    CU_ASSERT_EQUAL(poll_event(r, 5000), CL_COMPLETE);
    CU_ASSERT(affine(y, N, 7, 1));
    drain(L, NULL, NULL, 0);
    release(L, (cl_event[]){r, u, NULL}, (cl_mem[]){a, c, NULL});
}

static void test_refusals(void)
{
    char err[256] = "";
    cl_int e;
    cl_command_queue ooo = clCreateCommandQueue(ctx, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    if (ooo) {   /* a device without out-of-order queues has nothing to refuse */
        CU_ASSERT_PTR_NULL(rpl_lanes_new(lookup, NULL, ooo, 3, err, sizeof err));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "out of order"));
        clReleaseCommandQueue(ooo);
    }
    /* two lanes: a download goes to the uploads' lane, a launch stays on q */
    rpl_lanes *L = rpl_lanes_new(lookup, NULL, q, 2, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    rpl_lane_cmd c;
    CU_ASSERT_EQUAL_FATAL(rpl_lanes_route(L, 2, NULL, 0, 0, NULL, &c), 0);
    CU_ASSERT(c.lane == 1 && c.q != q);
    rpl_lanes_done(L, &c, NULL);
    CU_ASSERT_EQUAL_FATAL(rpl_lanes_route(L, 0, NULL, 0, 0, NULL, &c), 0);
    CU_ASSERT(c.lane == 0 && c.q == q);
    rpl_lanes_done(L, &c, NULL);
    rpl_lanes_free(L);
    rpl_lanes_free(NULL);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rpl_lanes", setup, teardown);
    CU_add_test(s, "routing: the newest conflict per other lane", test_routing);
    CU_add_test(s, "a sub-buffer's bytes are its buffer's", test_sub_buffer);
    CU_add_test(s, "a conflicting command waits across lanes", test_order_kept);
    CU_add_test(s, "a write that conflicts with nothing overlaps the held queue", test_overlap);
    CU_add_test(s, "more commands than a lane keeps", test_many);
    CU_add_test(s, "a command on the queue without a route, lanes empty", test_unrouted);
    CU_add_test(s, "out-of-order queues, two lanes", test_refusals);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}

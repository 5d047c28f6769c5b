/* helium.c — a small OpenCL program whose command dependencies are known
 * by construction (after Helium's example: kernels over the halves of one
 * buffer, some independent, some dependent by region), for the graph test
 * tests/e2e/ana_graph.sh. Buffer x holds 2n floats; xs is the sub-buffer
 * of its upper half.
 *
 * In-order queue q0:
 *   a  fill_lo(x)          writes x[0, n)
 *   b  fill_lo(xs)         writes x[n, 2n) through the sub-buffer: independent of a
 *   c  scale_lo(x -> z)    reads x[0, n): after a only
 *   d  sum(x -> y)         reads x[0, 2n): after a and b
 *   e  fill_hi(x)          writes x[n, 2n): after d (WAR), not after c
 *   f  read y, blocking    after d; the host waits
 * Out-of-order queue q1 with events:
 *   g  write w                         -> E1
 *   h  copy(w -> v), waits E1          -> E2
 *   i  fill_lo(u)                      -> E3 (independent)
 *   j  marker, waits E2 E3             -> E4
 *   k  read v, waits E4                -> E5
 *   l  clWaitForEvents(E5)
 *   m  write x[0, n) on q0             after c, d (WAR)
 *   n  clFinish(q0)
 *   o  fill_lo(u) on q1                after i (WAW)
 *   t  barrier on q1 (no wait list)    after o
 *   p  clFinish(q1)
 *   q  write w on q0, waits user event U
 *   r  clSetUserEventStatus(U)         q runs after it
 *   s  clFinish(q0)
 * Exit status 0 when every result is right, 1 otherwise (one message). */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024

static const char *source =
    "__kernel void fill_lo(__global float *dst)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    dst[i] = (float)i;\n"
    "}\n"
    "__kernel void fill_hi(__global float *hi, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    hi[i + n] = 2.0f * (float)i;\n"
    "}\n"
    "__kernel void scale_lo(__global const float *lo, __global float *z)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    z[i] = 3.0f * lo[i];\n"
    "}\n"
    "__kernel void sum(__global const float *both, __global float *y, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = both[i] + both[i + n];\n"
    "}\n"
    "__kernel void copy(__global const float *src, __global float *dst)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    dst[i] = src[i];\n"
    "}\n";

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "helium: %s failed: %d\n", what, (int)err);
    exit(1);
}

#define CHECK(call) do { cl_int e_ = (call); if (e_ != CL_SUCCESS) die(#call, e_); } while (0)
#define CREATE(lhs, call) do { cl_int err_ = CL_SUCCESS; (lhs) = (call); \
    if (err_ != CL_SUCCESS) die(#call, err_); } while (0)

static cl_kernel kern(cl_program p, const char *name)
{
    cl_kernel k;
    CREATE(k, clCreateKernel(p, name, &err_));
    return k;
}

static void arg_mem(cl_kernel k, cl_uint i, cl_mem m)
{
    CHECK(clSetKernelArg(k, i, sizeof m, &m));
}

static void launch(cl_command_queue q, cl_kernel k, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    size_t g = N, l = 64;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, nwait, wait, ev));
}

int main(void)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_uint n = N;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx;
    CREATE(ctx, clCreateContext(NULL, 1, &dev, NULL, NULL, &err_));
    cl_command_queue q0, q1;
    cl_queue_properties ooo[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0 };
    CREATE(q0, clCreateCommandQueueWithProperties(ctx, dev, NULL, &err_));
    CREATE(q1, clCreateCommandQueueWithProperties(ctx, dev, ooo, &err_));
    cl_program prog;
    CREATE(prog, clCreateProgramWithSource(ctx, 1, &source, NULL, &err_));
    CHECK(clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL));
    cl_kernel fill_lo = kern(prog, "fill_lo"), fill_hi = kern(prog, "fill_hi");
    cl_kernel scale_lo = kern(prog, "scale_lo"), sum = kern(prog, "sum"), copy = kern(prog, "copy");

    size_t half = N * sizeof(float);
    cl_mem x, xs, y, z, w, v, u;
    CREATE(x, clCreateBuffer(ctx, CL_MEM_READ_WRITE, 2 * half, NULL, &err_));
    cl_buffer_region upper = { half, half };
    CREATE(xs, clCreateSubBuffer(x, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &upper, &err_));
    CREATE(y, clCreateBuffer(ctx, CL_MEM_READ_WRITE, half, NULL, &err_));
    CREATE(z, clCreateBuffer(ctx, CL_MEM_READ_WRITE, half, NULL, &err_));
    CREATE(w, clCreateBuffer(ctx, CL_MEM_READ_WRITE, half, NULL, &err_));
    CREATE(v, clCreateBuffer(ctx, CL_MEM_READ_WRITE, half, NULL, &err_));
    CREATE(u, clCreateBuffer(ctx, CL_MEM_READ_WRITE, half, NULL, &err_));
    static float host_y[N], host_v[N], host_w[N], host_w2[N], host_x[N];
    for (int i = 0; i < N; i++) {
        host_w[i] = (float)(i % 7);
        host_w2[i] = (float)(i % 5);
        host_x[i] = 1.0f;
    }

    /* q0, in order: a b c d e f */
    arg_mem(fill_lo, 0, x);
    launch(q0, fill_lo, 0, NULL, NULL);                        /* a */
    arg_mem(fill_lo, 0, xs);
    launch(q0, fill_lo, 0, NULL, NULL);                        /* b */
    arg_mem(scale_lo, 0, x);
    arg_mem(scale_lo, 1, z);
    launch(q0, scale_lo, 0, NULL, NULL);                       /* c */
    arg_mem(sum, 0, x);
    arg_mem(sum, 1, y);
    CHECK(clSetKernelArg(sum, 2, sizeof n, &n));
    launch(q0, sum, 0, NULL, NULL);                            /* d */
    arg_mem(fill_hi, 0, x);
    CHECK(clSetKernelArg(fill_hi, 1, sizeof n, &n));
    launch(q0, fill_hi, 0, NULL, NULL);                        /* e */
    CHECK(clEnqueueReadBuffer(q0, y, CL_TRUE, 0, half, host_y, 0, NULL, NULL));   /* f */

    /* q1, out of order, with events: g h i j k l */
    cl_event e1, e2, e3, e4, e5, waits[2];
    CHECK(clEnqueueWriteBuffer(q1, w, CL_FALSE, 0, half, host_w, 0, NULL, &e1));  /* g */
    arg_mem(copy, 0, w);
    arg_mem(copy, 1, v);
    launch(q1, copy, 1, &e1, &e2);                             /* h */
    arg_mem(fill_lo, 0, u);
    launch(q1, fill_lo, 0, NULL, &e3);                         /* i */
    waits[0] = e2;
    waits[1] = e3;
    CHECK(clEnqueueMarkerWithWaitList(q1, 2, waits, &e4));     /* j */
    CHECK(clEnqueueReadBuffer(q1, v, CL_FALSE, 0, half, host_v, 1, &e4, &e5));    /* k */
    CHECK(clWaitForEvents(1, &e5));                            /* l */

    CHECK(clEnqueueWriteBuffer(q0, x, CL_FALSE, 0, half, host_x, 0, NULL, NULL)); /* m */
    CHECK(clFinish(q0));                                       /* n */
    launch(q1, fill_lo, 0, NULL, NULL);                        /* o */
    CHECK(clEnqueueBarrierWithWaitList(q1, 0, NULL, NULL));    /* t */
    CHECK(clFinish(q1));                                       /* p */

    cl_event user;
    CREATE(user, clCreateUserEvent(ctx, &err_));
    CHECK(clEnqueueWriteBuffer(q0, w, CL_FALSE, 0, half, host_w2, 1, &user, NULL)); /* q */
    CHECK(clSetUserEventStatus(user, CL_COMPLETE));           /* r */
    CHECK(clFinish(q0));                                       /* s */

    for (int i = 0; i < N; i++) {
        if (host_y[i] != (float)i + (float)i || host_v[i] != host_w[i]) {
            fprintf(stderr, "helium: wrong result at %d: y %g v %g\n", i, host_y[i], host_v[i]);
            return 1;
        }
    }
    cl_event evs[] = { e1, e2, e3, e4, e5, user };
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        clReleaseEvent(evs[i]);
    cl_mem mems[] = { xs, x, y, z, w, v, u };
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        clReleaseMemObject(mems[i]);
    cl_kernel ks[] = { fill_lo, fill_hi, scale_lo, sum, copy };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        clReleaseKernel(ks[i]);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q0);
    clReleaseCommandQueue(q1);
    clReleaseContext(ctx);
    return 0;
}

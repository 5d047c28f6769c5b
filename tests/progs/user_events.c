/* user_events.c — commands gated by user events, each released before a
 * blocking call waits for it, for tests/e2e/replay_user_events.sh (which
 * moves every clSetUserEventStatus after that blocking call in the trace,
 * as a second thread's set can be recorded after the wait it released):
 *   1. in-order queue A: a kernel waits for U1; U1 set; a blocking read of
 *      its output on A (waits through the queue's order);
 *   2. queue B (out-of-order when the device has it): a write waits for U2,
 *      a marker waits for the write; U2 set; clWaitForEvents on the marker;
 *   3. queue A: a kernel waits for U3; U3 set; clFinish(A);
 *   4. in-order queue C: a kernel reading y waits for U4; y is written by a
 *      blocking write on A (a blocking call that does not wait for U4: the
 *      replay must not set U4 before it); U4 set; clFinish(C).
 * Every result is checked (exit 1 when one is wrong).
 * Usage: user_events [--size ELEMS] */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "__kernel void twice(__global const int *x, __global int *y) {\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = 2 * x[i] + 1;\n"
    "}\n";

#define CHECK(e)                                                                  \
    do {                                                                          \
        cl_int err_ = (e);                                                        \
        if (err_ != CL_SUCCESS) {                                                 \
            fprintf(stderr, "user_events: %s failed: %d (line %d)\n", #e, err_, __LINE__); \
            exit(2);                                                              \
        }                                                                         \
    } while (0)

static int expect(const char *what, const int *got, const int *in, size_t n, int twice)
{
    for (size_t i = 0; i < n; i++) {
        int want = twice ? 2 * in[i] + 1 : in[i];
        if (got[i] != want) {
            fprintf(stderr, "user_events: %s: element %zu is %d, expected %d\n", what, i, got[i], want);
            return 1;
        }
    }
    printf("ok  %s\n", what);
    return 0;
}

int main(int argc, char **argv)
{
    size_t n = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            n = strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: user_events [--size ELEMS]\n");
            return 2;
        }
    }
    if (!n)
        n = 1;
    size_t bytes = n * sizeof(int);
    int *in = malloc(bytes), *in2 = malloc(bytes), *out = malloc(bytes);
    if (!in || !in2 || !out)
        return 2;
    for (size_t i = 0; i < n; i++) {
        in[i] = (int)(i * 7 % 1000) - 300;
        in2[i] = (int)(i * 13 % 777) + 5;
    }

    cl_platform_id plats[8];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    cl_int err;
    CHECK(clGetPlatformIDs(8, plats, &np));
    for (cl_uint i = 0; i < np && i < 8 && !dev; i++)   /* the first platform with a device */
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
            dev = NULL;
    if (!dev) {
        fprintf(stderr, "user_events: no OpenCL device\n");
        return 2;
    }
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue_properties qp = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof qp, &qp, NULL));
    cl_command_queue qa = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    cl_command_queue qb = clCreateCommandQueue(ctx, dev, qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    CHECK(err);
    cl_command_queue qc = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    CHECK(err);
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in, &err);
    CHECK(err);
    cl_mem y = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    cl_mem z = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    int bad = 0;

    /* 1. through the order of queue A */
    cl_event u1 = clCreateUserEvent(ctx, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof x, &x));
    CHECK(clSetKernelArg(k, 1, sizeof y, &y));
    CHECK(clEnqueueNDRangeKernel(qa, k, 1, NULL, &n, NULL, 1, &u1, NULL));
    CHECK(clFlush(qa));
    CHECK(clSetUserEventStatus(u1, CL_COMPLETE));
    CHECK(clEnqueueReadBuffer(qa, y, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    bad |= expect("1 in-order queue, blocking read", out, in, n, 1);

    /* 2. through a wait list and a marker */
    cl_event u2 = clCreateUserEvent(ctx, &err), wev, mev;
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(qb, z, CL_FALSE, 0, bytes, in2, 1, &u2, &wev));
    CHECK(clEnqueueMarkerWithWaitList(qb, 1, &wev, &mev));
    CHECK(clSetUserEventStatus(u2, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &mev));
    CHECK(clEnqueueReadBuffer(qb, z, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    bad |= expect("2 wait list and marker, clWaitForEvents", out, in2, n, 0);

    /* 3. through clFinish */
    cl_event u3 = clCreateUserEvent(ctx, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof z, &z));
    CHECK(clSetKernelArg(k, 1, sizeof y, &y));
    CHECK(clEnqueueNDRangeKernel(qa, k, 1, NULL, &n, NULL, 1, &u3, NULL));
    CHECK(clSetUserEventStatus(u3, CL_COMPLETE));
    CHECK(clFinish(qa));
    CHECK(clEnqueueReadBuffer(qa, y, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    bad |= expect("3 clFinish", out, in2, n, 1);

    /* 4. a blocking call on another queue does not wait for U4 */
    cl_event u4 = clCreateUserEvent(ctx, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof y, &y));
    CHECK(clSetKernelArg(k, 1, sizeof z, &z));
    CHECK(clEnqueueNDRangeKernel(qc, k, 1, NULL, &n, NULL, 1, &u4, NULL));
    CHECK(clFlush(qc));
    CHECK(clEnqueueWriteBuffer(qa, y, CL_TRUE, 0, bytes, in, 0, NULL, NULL));
    CHECK(clSetUserEventStatus(u4, CL_COMPLETE));
    CHECK(clFinish(qc));
    CHECK(clEnqueueReadBuffer(qc, z, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    bad |= expect("4 not set by an unrelated blocking write", out, in, n, 1);

    cl_event evs[] = {u1, u2, u3, u4, wev, mev};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        CHECK(clReleaseEvent(evs[i]));
    CHECK(clReleaseMemObject(x));
    CHECK(clReleaseMemObject(y));
    CHECK(clReleaseMemObject(z));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(qa));
    CHECK(clReleaseCommandQueue(qb));
    CHECK(clReleaseCommandQueue(qc));
    CHECK(clReleaseContext(ctx));
    free(in);
    free(in2);
    free(out);
    return bad;
}

/* nbread.c — a non-blocking read completed by a later blocking command
 * (as Parboil's mri-gridding does), for tests/e2e/record_nbread.sh.
 *
 *   nbread MODE [--n N]
 *     read  a non-blocking clEnqueueReadBuffer of buffer A (no event asked
 *           for, no clFinish), then a blocking clEnqueueReadBuffer of
 *           buffer B on the same in-order queue
 *     map   the same, the blocking command a blocking read map of B
 *     write the same, the blocking command a blocking clEnqueueWriteBuffer
 *           of A's host memory (still the target of the pending read) into
 *           buffer C, read back blocking afterwards: C must hold A's bytes
 *     uevent the same as write, but the read of A waits for a user event and
 *           the write is non-blocking; the event is set after the write's
 *           call (a recorder that waited for the read there would hang)
 *
 * After the blocking command returns, the first read has completed too (an
 * in-order queue), so the program checks A's bytes, overwrites them, waits
 * 150 ms and frees them (N floats: 4 MiB by default, memory malloc gives
 * back to the system at once). A recorder that captured A's read-back only
 * later records the overwritten bytes or reads freed memory. Exit 0 unless
 * a call fails or a value is wrong. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "nbread: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char src[] =
    "__kernel void fill(__global float *o, float k) { size_t i = get_global_id(0); o[i] = (float)i * k; }\n";

int main(int argc, char **argv)
{
    size_t n = 1u << 20;
    if (argc < 2 || (strcmp(argv[1], "read") && strcmp(argv[1], "map") && strcmp(argv[1], "write") &&
                      strcmp(argv[1], "uevent"))) {
        fprintf(stderr, "usage: nbread read|map|write|uevent [--n N]\n");
        return 2;
    }
    if (argc == 4 && !strcmp(argv[2], "--n"))
        n = strtoul(argv[3], NULL, 10);
    int map = !strcmp(argv[1], "map"), ue = !strcmp(argv[1], "uevent"), wr = ue || !strcmp(argv[1], "write");
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    const char *s = src;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "fill", &err);
    CHECK(err);
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
    CHECK(err);
    float ka = 0.5f, kb = 2.0f;
    CHECK(clSetKernelArg(k, 0, sizeof a, &a));
    CHECK(clSetKernelArg(k, 1, sizeof ka, &ka));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clSetKernelArg(k, 0, sizeof b, &b));
    CHECK(clSetKernelArg(k, 1, sizeof kb, &kb));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));

    float *ha = malloc(n * sizeof(float)), *hb = malloc(n * sizeof(float));
    if (!ha || !hb)
        return 2;
    cl_event uev = NULL;
    if (ue) {
        uev = clCreateUserEvent(ctx, &err);
        CHECK(err);
    }
    CHECK(clEnqueueReadBuffer(q, a, CL_FALSE, 0, n * sizeof(float), ha, ue, ue ? &uev : NULL, NULL));
    if (map) {
        float *m = clEnqueueMapBuffer(q, b, CL_TRUE, CL_MAP_READ, 0, n * sizeof(float), 0, NULL, NULL, &err);
        CHECK(err);
        memcpy(hb, m, n * sizeof(float));
        CHECK(clEnqueueUnmapMemObject(q, b, m, 0, NULL, NULL));
    } else if (wr) {
        cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
        CHECK(err);
        /* in order: the write reads ha after the read has filled it */
        CHECK(clEnqueueWriteBuffer(q, c, ue ? CL_FALSE : CL_TRUE, 0, n * sizeof(float), ha, 0, NULL, NULL));
        if (ue) {
            CHECK(clSetUserEventStatus(uev, CL_COMPLETE));
            CHECK(clReleaseEvent(uev));
        }
        CHECK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, n * sizeof(float), hb, 0, NULL, NULL));
        clReleaseMemObject(c);
        for (size_t i = 0; i < n; i++)
            hb[i] *= kb / ka;       /* C held A's bytes: the check below */
    } else {
        CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, n * sizeof(float), hb, 0, NULL, NULL));
    }
    for (size_t i = 0; i < n; i++)
        if (ha[i] != (float)i * ka || hb[i] != (float)i * kb) {
            fprintf(stderr, "nbread: element %zu: %g %g\n", i, ha[i], hb[i]);
            return 1;
        }
    memset(ha, 0xEE, n * sizeof(float));   /* the application's memory again */
    struct timespec ts = {0, 150000000};
    nanosleep(&ts, NULL);
    free(ha);
    nanosleep(&ts, NULL);
    CHECK(clFinish(q));
    free(hb);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("nbread %s: %zu floats ok\n", argv[1], n);
    return 0;
}

/* rec_probe.c — exercises what the recorder must capture or keep invisible:
 * prints everything the application can observe, so that a run under
 * `clrr record` can be compared byte for byte with a plain run, and leaves
 * known data in the trace for tests/e2e/recorder_probe.sh to find:
 *   - a queue without profiling: its properties and CL_PROFILING_INFO_NOT_AVAILABLE
 *   - a queue made with a property list: CL_QUEUE_PROPERTIES_ARRAY as given
 *   - a non-blocking read completed by clFinish (captured as late DATA)
 *   - a write map (captured at unmap) and a read map
 *   - a USE_HOST_PTR buffer changed by the host between two kernels (and
 *     a kernel that took it as an argument released in between)
 *   - the same 1 MiB written 8 times (stored once)
 *   - 12 buffers made and released in turn, each written between: a driver
 *     that hands out a released buffer's address again must not make the
 *     trace name the new buffer by the old one's id (the recorder's
 *     per-thread id cache); how many addresses came back goes to stderr */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "rec_probe: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char *src =
    "__kernel void add1(__global int *a) { size_t i = get_global_id(0); a[i] += 1; }\n";

int main(void)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, 0, 0};
    cl_command_queue q2 = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
    CHECK(err);

    cl_command_queue_properties qp = 0;
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof qp, &qp, NULL));
    printf("queue properties: 0x%llx\n", (unsigned long long)qp);
    size_t n = 0;
    CHECK(clGetCommandQueueInfo(q2, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &n));
    printf("property array bytes: %zu\n", n);
    cl_queue_properties back[8] = {0};
    if (n && n <= sizeof back)
        CHECK(clGetCommandQueueInfo(q2, CL_QUEUE_PROPERTIES_ARRAY, n, back, NULL));
    printf("property array: %llu %llu %llu\n", (unsigned long long)back[0],
           (unsigned long long)back[1], (unsigned long long)back[2]);

    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "add1", &err);
    CHECK(err);

    enum { N = 1024 };
    int *host = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        host[i] = i;
    cl_mem hb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, N * sizeof(int), host, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof hb, &hb));
    size_t gws = N;
    cl_event kev;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, &kev));
    CHECK(clFinish(q));
    cl_ulong t = 0;
    err = clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL);
    printf("profiling query: %d\n", err);
    CHECK(clReleaseEvent(kev));
    /* another kernel takes the buffer as an argument and is released: the
     * recorder's count of kernels with host-pointer arguments goes back to
     * one, and the launch below still snapshots the host memory */
    cl_kernel k2 = clCreateKernel(prog, "add1", &err);
    CHECK(err);
    CHECK(clSetKernelArg(k2, 0, sizeof hb, &hb));
    CHECK(clReleaseKernel(k2));
    /* the host changes the USE_HOST_PTR memory, then a second kernel reads it */
    int *m = clEnqueueMapBuffer(q, hb, CL_TRUE, CL_MAP_WRITE, 0, N * sizeof(int), 0, NULL, NULL, &err);
    CHECK(err);
    for (int i = 0; i < N; i++)
        m[i] = 1000 + i;
    CHECK(clEnqueueUnmapMemObject(q, hb, m, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
    m = clEnqueueMapBuffer(q, hb, CL_TRUE, CL_MAP_READ, 0, N * sizeof(int), 0, NULL, NULL, &err);
    CHECK(err);
    printf("after map/unmap and kernel: %d %d\n", m[0], m[N - 1]);
    CHECK(clEnqueueUnmapMemObject(q, hb, m, 0, NULL, NULL));

    /* repeated data, then a non-blocking read completed by clFinish */
    size_t big = 1 << 20;
    unsigned char *same = malloc(big);
    for (size_t i = 0; i < big; i++)
        same[i] = (unsigned char)(i * 7);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big, NULL, &err);
    CHECK(err);
    for (int i = 0; i < 8; i++)
        CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, big, same, 0, NULL, NULL));
    unsigned char *back_data = calloc(1, big);
    CHECK(clEnqueueReadBuffer(q, b, CL_FALSE, 0, big, back_data, 0, NULL, NULL));
    CHECK(clFinish(q));
    printf("read back matches: %d\n", memcmp(same, back_data, big) == 0);

    /* buffers made and released in turn: their addresses may come back */
    cl_mem prev = NULL;
    int reused = 0;
    for (int i = 0; i < 12; i++) {
        cl_mem t = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        CHECK(err);
        reused += t == prev;
        CHECK(clEnqueueWriteBuffer(q, t, CL_TRUE, 0, 4, &i, 0, NULL, NULL));
        CHECK(clReleaseMemObject(t));
        prev = t;
    }
    fprintf(stderr, "rec_probe: %d of 11 buffer addresses reused\n", reused);

    CHECK(clReleaseMemObject(b));
    CHECK(clReleaseMemObject(hb));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(q2));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    free(host);
    free(same);
    free(back_data);
    return 0;
}

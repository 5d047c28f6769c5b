/* bigupload.c — one big upload right at the start: a context, a queue, a
 * buffer of SIZE MiB (default 256) and one blocking clEnqueueWriteBuffer of
 * bytes that do not compress away (a xorshift sequence), then a read of its
 * first 4 KiB. The calls before the upload are few and quick, so a kill
 * during the upload tests that records never wait behind blob pieces
 * (tests/e2e/record_killupload.sh).
 *
 *   bigupload [SIZE_MIB]
 *
 * Prints "bigupload: uploading" on stderr right before the write; exit 0
 * when the read-back matches. */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "bigupload: %s failed: %d\n", #x, e_); exit(2); } } while (0)

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
    size_t n = mib << 20;
    uint64_t *host = malloc(n), back[512], x = 0x9e3779b97f4a7c15ull;
    if (!host || n < sizeof back)
        return 2;
    for (size_t i = 0; i < n / 8; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        host[i] = x;
    }
    cl_platform_id plat;
    cl_device_id dev;
    cl_int e;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(e);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
    CHECK(e);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, NULL, &e);
    CHECK(e);
    fprintf(stderr, "bigupload: uploading\n");
    CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, n, host, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    int ok = !memcmp(back, host, sizeof back);
    clReleaseMemObject(b);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(host);
    printf("bigupload: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

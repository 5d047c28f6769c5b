/* usehost_pingpong.c — kernels ping-ponging between two CL_MEM_USE_HOST_PTR
 * buffers with non-blocking enqueues, then a read map of the last output
 * (issue 33, item 3: "a torn snapshot"). The host writes its memory once,
 * before the first launch, and never again: every later change of that
 * memory is the device's. tests/e2e/replay_defined.sh records it several
 * times and replays each recording verified.
 *
 *   usehost_pingpong [--n N] [--launches L] [--work W] [--quiet]
 *
 * Each launch computes out[i] = f(in[i]) with W rounds of integer mixing
 * (slow enough that a launch is still running when the next is enqueued);
 * no call between the first launch and the final map waits for anything
 * (no clFinish, no event, no blocking call). The map's bytes are checked
 * against the same computation on the host: exit 1 when they differ. */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "usehost_pingpong: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char src[] =
    "__kernel void pingpong(__global const uint *in, __global uint *out, uint rounds, uint salt)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    uint v = in[i] ^ salt;\n"
    "    for (uint r = 0; r < rounds; r++)\n"
    "        v = (v ^ (v >> 13)) * 0x9E3779B1u + r;\n"
    "    out[i] = v;\n"
    "}\n";

static uint32_t step(uint32_t v, uint32_t rounds, uint32_t salt)
{
    v ^= salt;
    for (uint32_t r = 0; r < rounds; r++)
        v = (v ^ (v >> 13)) * 0x9E3779B1u + r;
    return v;
}

int main(int argc, char **argv)
{
    unsigned n = 1u << 16, launches = 8, work = 400;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--launches") && i + 1 < argc)
            launches = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--work") && i + 1 < argc)
            work = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else {
            fprintf(stderr, "usage: usehost_pingpong [--n N] [--launches L] [--work W] [--quiet]\n");
            return 2;
        }
    }
    if (n == 0 || n > (1u << 24) || launches == 0 || launches > 1000) {
        fprintf(stderr, "usehost_pingpong: --n 1..16777216, --launches 1..1000\n");
        return 2;
    }

    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    const char *s = src;
    cl_program p = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(p, "pingpong", &err);
    CHECK(err);

    /* page-aligned host memory, as USE_HOST_PTR prefers */
    size_t bytes = (size_t)n * 4;
    uint32_t *ha = NULL, *hb = NULL, *ref = malloc(bytes);
    if (posix_memalign((void **)&ha, 4096, bytes) || posix_memalign((void **)&hb, 4096, bytes) || !ref)
        return 2;
    for (unsigned i = 0; i < n; i++) {
        ha[i] = i * 2654435761u;
        hb[i] = 0;
        ref[i] = ha[i];
    }
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, ha, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, hb, &err);
    CHECK(err);

    size_t gws = n;
    cl_uint rounds = work;
    for (unsigned l = 0; l < launches; l++) {
        cl_mem in = l % 2 ? b : a, out = l % 2 ? a : b;
        cl_uint salt = l + 1;
        CHECK(clSetKernelArg(k, 0, sizeof in, &in));
        CHECK(clSetKernelArg(k, 1, sizeof out, &out));
        CHECK(clSetKernelArg(k, 2, sizeof rounds, &rounds));
        CHECK(clSetKernelArg(k, 3, sizeof salt, &salt));
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
        for (unsigned i = 0; i < n; i++)
            ref[i] = step(ref[i], rounds, salt);
    }
    cl_mem last = launches % 2 ? b : a;
    uint32_t *m = clEnqueueMapBuffer(q, last, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
    CHECK(err);
    unsigned bad = 0;
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        bad += m[i] != ref[i];
        sum += m[i];
    }
    CHECK(clEnqueueUnmapMemObject(q, last, m, 0, NULL, NULL));
    CHECK(clFinish(q));
    if (!quiet || bad)
        printf("usehost_pingpong: %u launches, %u elements, %u wrong, checksum %llu\n", launches, n, bad,
               (unsigned long long)sum);
    CHECK(clReleaseMemObject(a));
    CHECK(clReleaseMemObject(b));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    free(ha);
    free(hb);
    free(ref);
    return bad ? 1 : 0;
}

/* undefined.c — read-backs of bytes nobody defined (issue 33, item 3), for
 * tests/e2e/replay_defined.sh.
 *
 *   undefined MODE [--n N] [--quiet]
 *     unwritten  a buffer created without host data and never written,
 *                read back whole
 *     half       a kernel writes the first half of an int buffer (the
 *                launch covers n/2 work-items), the whole buffer is read
 *     float3     a buffer filled with a pattern, then a kernel stores
 *                float3 values through a float3 pointer (16 bytes a
 *                element, the 4th float is padding); read back whole.
 *                Prints how many padding floats still hold the pattern.
 *     vstore3    the same values written with vstore3 on a float pointer
 *                (12 bytes an element, packed): every byte defined
 *     host       a host write of the first half of a buffer, a fill of
 *                its third quarter, the last quarter never written
 *     copy       a host write of the first half of buffer A (4n bytes),
 *                all of A copied into buffer B (8n bytes) at offset n:
 *                B read whole (defined: A's first half, moved by n)
 *     map        a write map of the second quarter of a buffer (the host
 *                writes it, unmaps), then a read map of the whole buffer
 *     svm        a coarse-grained SVM allocation: an SVM copy from the host
 *                into its first half, then an SVM copy of all of it to the
 *                host and an SVM read map of all of it (prints "no SVM"
 *                and exits 0 on a device without coarse-grained SVM)
 *
 * Before each buffer is made, a buffer of the same size is written with
 * a recognizable pattern and released, so that the memory the driver
 * hands out next is likely to hold it (the "garbage" of an unwritten
 * buffer is then not zeros). Exit 0 unless a call fails or a defined
 * element is wrong. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "undefined: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char src[] =
    "__kernel void firsthalf(__global int *o) { size_t i = get_global_id(0); o[i] = (int)i * 3 + 1; }\n"
    "__kernel void f3(__global float3 *o) { size_t i = get_global_id(0);\n"
    "    o[i] = (float3)((float)i, (float)i + 0.5f, -(float)i); }\n"
    "__kernel void vs3(__global float *o) { size_t i = get_global_id(0);\n"
    "    vstore3((float3)((float)i, (float)i + 0.5f, -(float)i), i, o); }\n";

static cl_context ctx;
static cl_command_queue q;
static cl_program prog;

/* leaves a pattern where the next buffer of @p bytes is likely to be */
static void dirty(size_t bytes)
{
    cl_int err;
    unsigned char *p = malloc(bytes);
    if (!p)
        exit(2);
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)(0x5A ^ (i * 7));
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, p, 0, NULL, NULL));
    CHECK(clFinish(q));
    CHECK(clReleaseMemObject(m));
    free(p);
}

static cl_mem fresh(size_t bytes)
{
    cl_int err;
    dirty(bytes);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    return m;
}

static void launch(const char *name, cl_mem m, size_t gws)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
    CHECK(clReleaseKernel(k));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    size_t n = 4096;
    int quiet = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else
            mode = "";
    }
    if (n < 4 || n > (1u << 22) || (strcmp(mode, "unwritten") && strcmp(mode, "half") && strcmp(mode, "float3")
                                    && strcmp(mode, "vstore3") && strcmp(mode, "host") && strcmp(mode, "copy")
                                    && strcmp(mode, "map") && strcmp(mode, "svm"))) {
        fprintf(stderr, "usage: undefined unwritten|half|float3|vstore3|host|copy|map|svm [--n 4..4194304] [--quiet]\n");
        return 2;
    }
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    const char *s = src;
    prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));

    int bad = 0;
    if (!strcmp(mode, "unwritten")) {
        size_t bytes = n * 4;
        cl_mem m = fresh(bytes);
        unsigned char *out = malloc(bytes);
        CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
        size_t nz = 0;
        for (size_t i = 0; i < bytes; i++)
            nz += out[i] != 0;
        if (!quiet)
            printf("undefined: unwritten: %zu of %zu bytes not zero\n", nz, bytes);
        free(out);
        CHECK(clReleaseMemObject(m));
    } else if (!strcmp(mode, "half")) {
        cl_mem m = fresh(n * 4);
        launch("firsthalf", m, n / 2);
        int *out = malloc(n * 4);
        CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * 4, out, 0, NULL, NULL));
        for (size_t i = 0; i < n / 2; i++)
            bad += out[i] != (int)i * 3 + 1;
        if (!quiet)
            printf("undefined: half: %zu ints written of %zu\n", n / 2, n);
        free(out);
        CHECK(clReleaseMemObject(m));
    } else if (!strcmp(mode, "float3") || !strcmp(mode, "vstore3")) {
        int packed = !strcmp(mode, "vstore3");
        size_t bytes = n * (packed ? 12 : 16);
        cl_mem m = fresh(bytes);
        cl_uint pat = 0x7fc0dead;   /* a NaN nobody computes */
        CHECK(clEnqueueFillBuffer(q, m, &pat, sizeof pat, 0, bytes, 0, NULL, NULL));
        launch(packed ? "vs3" : "f3", m, n);
        float *out = malloc(bytes);
        CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
        size_t kept = 0, stride = packed ? 3 : 4;
        for (size_t i = 0; i < n; i++) {
            bad += out[i * stride] != (float)i || out[i * stride + 1] != (float)i + 0.5f
                   || out[i * stride + 2] != -(float)i;
            if (!packed) {
                cl_uint v;
                memcpy(&v, &out[i * 4 + 3], 4);
                kept += v == pat;
            }
        }
        if (!quiet && !packed)
            printf("undefined: float3: %zu of %zu padding floats still hold the fill pattern "
                   "(element 1's: %g, element 2's: %g)\n", kept, n, out[7], out[11]);
        else if (!quiet)
            printf("undefined: vstore3: %zu elements of 12 bytes\n", n);
        free(out);
        CHECK(clReleaseMemObject(m));
    } else if (!strcmp(mode, "copy")) {
        size_t bytes = n * 4;
        cl_mem a = fresh(bytes), b = fresh(2 * bytes);
        unsigned char *in = malloc(bytes), *out = malloc(2 * bytes);
        for (size_t i = 0; i < bytes; i++)
            in[i] = (unsigned char)(i * 29 + 3);
        CHECK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, bytes / 2, in, 0, NULL, NULL));
        CHECK(clEnqueueCopyBuffer(q, a, b, 0, bytes / 4, bytes, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 2 * bytes, out, 0, NULL, NULL));
        bad += memcmp(in, out + bytes / 4, bytes / 2) != 0;
        if (!quiet)
            printf("undefined: copy: %zu defined bytes of %zu copied to offset %zu of %zu\n", bytes / 2, bytes,
                   bytes / 4, 2 * bytes);
        free(in);
        free(out);
        CHECK(clReleaseMemObject(a));
        CHECK(clReleaseMemObject(b));
    } else if (!strcmp(mode, "svm")) {
        cl_device_svm_capabilities caps = 0;
        size_t bytes = n * 4;
        if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL) != CL_SUCCESS
            || !(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
            printf("undefined: no SVM\n");
        } else {
            unsigned char *in = malloc(bytes), *out = malloc(bytes);
            void *junk = clSVMAlloc(ctx, CL_MEM_READ_WRITE, bytes, 0);
            if (!junk || !in || !out)
                return 2;
            for (size_t i = 0; i < bytes; i++)
                in[i] = (unsigned char)(0x5A ^ (i * 11));
            CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, junk, in, bytes, 0, NULL, NULL));
            clSVMFree(ctx, junk);
            unsigned char *p = clSVMAlloc(ctx, CL_MEM_READ_WRITE, bytes, 0);
            if (!p)
                return 2;
            for (size_t i = 0; i < bytes; i++)
                in[i] = (unsigned char)(i * 3 + 1);
            CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, p, in, bytes / 2, 0, NULL, NULL));
            CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, out, p, bytes, 0, NULL, NULL));
            bad += memcmp(in, out, bytes / 2) != 0;
            CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, p, bytes, 0, NULL, NULL));
            bad += memcmp(in, p, bytes / 2) != 0;
            CHECK(clEnqueueSVMUnmap(q, p, 0, NULL, NULL));
            CHECK(clFinish(q));
            clSVMFree(ctx, p);
            if (!quiet)
                printf("undefined: svm: %zu of %zu bytes copied in, read back twice\n", bytes / 2, bytes);
            free(in);
            free(out);
        }
    } else if (!strcmp(mode, "map")) {
        size_t bytes = n * 4;
        cl_mem m = fresh(bytes);
        unsigned char *p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, bytes / 4, bytes / 4, 0,
                                              NULL, NULL, &err);
        CHECK(err);
        for (size_t i = 0; i < bytes / 4; i++)
            p[i] = (unsigned char)(i * 5 + 7);
        CHECK(clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL));
        unsigned char *r = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
        CHECK(err);
        for (size_t i = 0; i < bytes / 4; i++)
            bad += r[bytes / 4 + i] != (unsigned char)(i * 5 + 7);
        CHECK(clEnqueueUnmapMemObject(q, m, r, 0, NULL, NULL));
        CHECK(clFinish(q));
        if (!quiet)
            printf("undefined: map: %zu bytes written through a map of %zu\n", bytes / 4, bytes);
        CHECK(clReleaseMemObject(m));
    } else {   /* host */
        size_t bytes = n * 4;
        cl_mem m = fresh(bytes);
        unsigned char *in = malloc(bytes), *out = malloc(bytes);
        for (size_t i = 0; i < bytes; i++)
            in[i] = (unsigned char)(i * 13 + 1);
        CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes / 2, in, 0, NULL, NULL));
        cl_uchar pat = 0xC3;
        CHECK(clEnqueueFillBuffer(q, m, &pat, 1, bytes / 2, bytes / 4, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
        bad += memcmp(in, out, bytes / 2) != 0;
        for (size_t i = bytes / 2; i < bytes / 2 + bytes / 4; i++)
            bad += out[i] != pat;
        if (!quiet)
            printf("undefined: host: %zu bytes written, %zu filled, %zu never written\n", bytes / 2, bytes / 4,
                   bytes - bytes / 2 - bytes / 4);
        free(in);
        free(out);
        CHECK(clReleaseMemObject(m));
    }
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    if (bad)
        fprintf(stderr, "undefined: %d defined elements wrong\n", bad);
    return bad ? 1 : 0;
}

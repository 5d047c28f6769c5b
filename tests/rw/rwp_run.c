/* rwp_run.c — rwp-run, the device half of the partition tests' oracle
 * (tests/rw/rwp.h): builds a program on the first OpenCL device, fills
 * the buffers with fixed random data, runs the launches in order, each
 * with its own shape and global offset, and writes every buffer, one
 * after the other, to OUT. rwt-run (rwt_run.c) runs launches of one shape
 * and no offset; this one runs the parts of a split launch.
 *
 *   rwp-run SOURCE OUT OPTIONS BUF... [-- KERNEL DIMS O0 O1 O2 G0 G1 G2 L0 L1 L2 ARG...]...
 *
 * BUF is f32:BYTES or i32:BYTES (random floats in [0, 1), ints in
 * [0, 1000)); ARG is bN (buffer N), iV (int), uV (uint), lV (ulong),
 * fX (a float's bits in hex), sN (N bytes of __local memory) or xN:X
 * (a scalar of N bytes, 1 to 8: the low N bytes of hex X, little-endian);
 * O: the global offset; L0 = 0: no local size, the driver picks it.
 * Exit status 0, 2 usage, 3 OpenCL failure (one line on stderr).
 * It links only OpenCL: PoCL's LLVM must not meet libclang's. */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RWP_MAX_BUFS 8

static int fail(const char *what, cl_int e)
{
    fprintf(stderr, "rwp-run: %s: %d\n", what, e);
    return 3;
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fill(unsigned char *d, size_t bytes, int ints, unsigned which)
{
    uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)(which + 1) * 0x100000001b3ull);
    size_t i;

    for (i = 0; i + 4 <= bytes; i += 4) {
        uint32_t r = (uint32_t)(next(&s) >> 11);
        if (ints) {
            int32_t v = (int32_t)(r % 1000u);
            memcpy(d + i, &v, 4);
        } else {
            float v = (float)(r & 0xffffff) / 16777216.0f;
            memcpy(d + i, &v, 4);
        }
    }
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        s = malloc((size_t)n + 1);
        if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
            free(s);
            s = NULL;
        }
        if (s) {
            s[n] = '\0';
            *len = (size_t)n;
        }
    }
    fclose(f);
    return s;
}

static int set_arg(cl_kernel k, cl_uint i, const char *a, const cl_mem *mems, unsigned nbufs)
{
    const char *v = a + 1;
    cl_int e;

    switch (a[0]) {
    case 'b': {
        unsigned n = (unsigned)strtoul(v, NULL, 10);
        if (n >= nbufs)
            return -1;
        e = clSetKernelArg(k, i, sizeof(cl_mem), &mems[n]);
        break;
    }
    case 's':
        e = clSetKernelArg(k, i, (size_t)strtoull(v, NULL, 10), NULL);
        break;
    case 'i': {
        cl_int x = (cl_int)strtol(v, NULL, 10);
        e = clSetKernelArg(k, i, sizeof x, &x);
        break;
    }
    case 'u': {
        cl_uint x = (cl_uint)strtoul(v, NULL, 10);
        e = clSetKernelArg(k, i, sizeof x, &x);
        break;
    }
    case 'l': {
        cl_ulong x = (cl_ulong)strtoull(v, NULL, 10);
        e = clSetKernelArg(k, i, sizeof x, &x);
        break;
    }
    case 'f': {
        uint32_t bits = (uint32_t)strtoul(v, NULL, 16);
        cl_float x;
        memcpy(&x, &bits, sizeof x);
        e = clSetKernelArg(k, i, sizeof x, &x);
        break;
    }
    case 'x': {
        char *colon;
        size_t n = (size_t)strtoul(v, &colon, 10), b;
        unsigned long long bits;
        unsigned char x[8];
        if (n < 1 || n > 8 || *colon != ':')
            return -1;
        bits = strtoull(colon + 1, NULL, 16);
        for (b = 0; b < n; b++)
            x[b] = (unsigned char)(bits >> (8 * b));
        e = clSetKernelArg(k, i, n, x);
        break;
    }
    default:
        return -1;
    }
    return e == CL_SUCCESS ? 0 : -1;
}

/* One launch from argv[*a] (the kernel's name) to the next "--" or the end. */
static int launch(cl_program prog, cl_command_queue q, int argc, char **argv, int *a,
                  const cl_mem *mems, unsigned nbufs)
{
    size_t off[3], global[3], local[3];
    cl_uint dims, n = 0;
    cl_kernel k;
    cl_int e;
    int i;

    if (*a + 11 > argc)
        return 2;
    k = clCreateKernel(prog, argv[*a], &e);
    if (!k) {
        fprintf(stderr, "rwp-run: clCreateKernel(%s): %d\n", argv[*a], e);
        return 3;
    }
    dims = (cl_uint)strtoul(argv[*a + 1], NULL, 10);
    for (i = 0; i < 3; i++) {
        off[i] = strtoul(argv[*a + 2 + i], NULL, 10);
        global[i] = strtoul(argv[*a + 5 + i], NULL, 10);
        local[i] = strtoul(argv[*a + 8 + i], NULL, 10);
    }
    for (*a += 11; *a < argc && strcmp(argv[*a], "--"); (*a)++, n++)
        if (set_arg(k, n, argv[*a], mems, nbufs) < 0) {
            fprintf(stderr, "rwp-run: argument %u (%s) of %s\n", n, argv[*a], "the kernel");
            clReleaseKernel(k);
            return 3;
        }
    e = clEnqueueNDRangeKernel(q, k, dims, off, global, local[0] ? local : NULL, 0, NULL, NULL);
    clReleaseKernel(k);
    return e == CL_SUCCESS ? 0 : fail("clEnqueueNDRangeKernel", e);
}

int main(int argc, char **argv)
{
    cl_platform_id plats[8];
    cl_uint np = 0, p, nd;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q = NULL;
    cl_mem mems[RWP_MAX_BUFS] = { 0 };
    size_t bytes[RWP_MAX_BUFS], len = 0;
    unsigned nbufs = 0, i;
    cl_program prog = NULL;
    cl_int e;
    char *src;
    const char *s;
    FILE *out;
    int a, rc = 3;

    if (argc < 4)
        return 2;
    src = slurp(argv[1], &len);
    if (!src)
        return 2;
    if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || np == 0)
        return fail("clGetPlatformIDs", CL_INVALID_PLATFORM);
    for (p = 0; p < np && p < 8; p++)
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) == CL_SUCCESS)
            break;
    if (p == np || p == 8)
        return fail("clGetDeviceIDs", CL_DEVICE_NOT_FOUND);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    if (!ctx)
        return fail("clCreateContext", e);
    q = clCreateCommandQueue(ctx, dev, 0, &e);
    if (!q) {
        rc = fail("clCreateCommandQueue", e);
        goto out;
    }
    s = src;
    prog = clCreateProgramWithSource(ctx, 1, &s, &len, &e);
    if (!prog) {
        rc = fail("clCreateProgramWithSource", e);
        goto out;
    }
    e = clBuildProgram(prog, 1, &dev, argv[3], NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "rwp-run: clBuildProgram: %d: %s\n", e, log);
        goto out;
    }
    for (a = 4; a < argc && strcmp(argv[a], "--"); a++) {
        int ints = !strncmp(argv[a], "i32:", 4);
        unsigned char *init;
        if (nbufs == RWP_MAX_BUFS || (!ints && strncmp(argv[a], "f32:", 4))) {
            rc = 2;
            goto out;
        }
        bytes[nbufs] = strtoul(argv[a] + 4, NULL, 10);
        init = calloc(1, bytes[nbufs] ? bytes[nbufs] : 1);
        if (!init)
            goto out;
        fill(init, bytes[nbufs], ints, nbufs);
        mems[nbufs] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes[nbufs],
                                     init, &e);
        free(init);
        if (!mems[nbufs]) {
            rc = fail("clCreateBuffer", e);
            goto out;
        }
        nbufs++;
    }
    while (a < argc) {   /* at "--" */
        a++;
        rc = launch(prog, q, argc, argv, &a, mems, nbufs);
        if (rc != 0)
            goto out;
        rc = 3;
    }
    out = fopen(argv[2], "wb");
    if (!out)
        goto out;
    for (i = 0; i < nbufs; i++) {
        unsigned char *d = malloc(bytes[i] ? bytes[i] : 1);
        e = d ? clEnqueueReadBuffer(q, mems[i], CL_TRUE, 0, bytes[i], d, 0, NULL, NULL)
              : CL_OUT_OF_HOST_MEMORY;
        if (e != CL_SUCCESS || fwrite(d, 1, bytes[i], out) != bytes[i]) {
            free(d);
            fclose(out);
            rc = fail("clEnqueueReadBuffer", e);
            goto out;
        }
        free(d);
    }
    rc = fclose(out) == 0 ? 0 : 3;
out:
    for (i = 0; i < nbufs; i++)
        clReleaseMemObject(mems[i]);
    if (prog)
        clReleaseProgram(prog);
    if (q)
        clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(src);
    return rc;
}

/* binprog.c — an OpenCL program that, as hashcat does, builds its kernels
 * once from source, keeps the device binary in a file, and on later runs
 * creates the program from that binary (clCreateProgramWithBinary): a trace
 * of such a run holds no program source, so the kernel analysis has
 * nothing to analyze. Its kernels write buffers created CL_MEM_READ_ONLY
 * (as hashcat's bzero and memset kernels do): the flags are hints about how
 * the device will use the memory, not what a kernel of unknown code does.
 * Per iteration, on one in-order queue:
 *   fill(out, v)       out[i] = v + i                 (out: CL_MEM_READ_ONLY)
 *   gpu_bzero(acc)        acc[i] = 0                     (acc: CL_MEM_READ_ONLY)
 *   combine(in, out, acc)  acc[i] = out[i] * 3 + in[i]
 *   read acc back, checked on the host
 * Every launch's result is read back: no pass may drop one
 * (tests/e2e/opt_dead_binary.sh).
 * --where also zeroes a scratch buffer nobody reads (dead work), and reads
 * back the device addresses of a buffer's elements (where(addr)): what a
 * replay reads there differs from the recording (another allocation), so
 * the trace never replays verified, with or without a plan.
 * Usage: binprog --save FILE      build from source, write the binary to FILE
 *        binprog --load FILE [--iters K] [--size N] [--where] [--quiet]
 * Exit status 0 when every result is right, 1 otherwise (one message),
 * 2 usage. */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "__kernel void fill(__global uint *out, uint v)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = v + (uint)i;\n"
    "}\n"
    "__kernel void gpu_bzero(__global uint *acc)\n"
    "{\n"
    "    acc[get_global_id(0)] = 0;\n"
    "}\n"
    "__kernel void combine(__global const uint *in, __global const uint *out, __global uint *acc)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    acc[i] += out[i] * 3u + in[i];\n"
    "}\n"
    "__kernel void where(__global ulong *addr)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    addr[i] = (ulong)(&addr[i]);\n"
    "}\n";

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "binprog: %s failed: %d\n", what, (int)err);
    exit(1);
}

#define CHECK(call) do { cl_int e_ = (call); if (e_ != CL_SUCCESS) die(#call, e_); } while (0)
#define CREATE(lhs, call) do { cl_int err_ = CL_SUCCESS; (lhs) = (call); \
    if (err_ != CL_SUCCESS) die(#call, err_); } while (0)

static int usage(void)
{
    fprintf(stderr, "usage: binprog --save FILE | --load FILE [--iters K] [--size N] [--where] [--quiet]\n");
    return 2;
}

static int save(cl_context ctx, cl_device_id dev, const char *path)
{
    cl_program p;
    CREATE(p, clCreateProgramWithSource(ctx, 1, &source, NULL, &err_));
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    size_t n = 0;
    CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL));
    unsigned char *bin = malloc(n ? n : 1);
    if (!bin)
        die("malloc", -1);
    CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bin, 1, n, f) != n || fclose(f)) {
        fprintf(stderr, "binprog: cannot write %s\n", path);
        return 1;
    }
    free(bin);
    clReleaseProgram(p);
    return 0;
}

int main(int argc, char **argv)
{
    const char *save_path = NULL, *load_path = NULL;
    cl_uint iters = 2, n = 4096;
    int quiet = 0, where = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--save") && i + 1 < argc)
            save_path = argv[++i];
        else if (!strcmp(argv[i], "--load") && i + 1 < argc)
            load_path = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = (cl_uint)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            n = (cl_uint)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else if (!strcmp(argv[i], "--where"))
            where = 1;
        else
            return usage();
    }
    if (!save_path == !load_path || !n || !iters)
        return usage();
    cl_platform_id plat;
    cl_device_id dev;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx;
    CREATE(ctx, clCreateContext(NULL, 1, &dev, NULL, NULL, &err_));
    if (save_path) {
        int rc = save(ctx, dev, save_path);
        clReleaseContext(ctx);
        return rc;
    }
    FILE *f = fopen(load_path, "rb");
    if (!f) {
        fprintf(stderr, "binprog: cannot read %s\n", load_path);
        return 1;
    }
    static unsigned char bin[64 << 20];
    size_t blen = fread(bin, 1, sizeof bin, f);
    fclose(f);
    const unsigned char *bp = bin;
    cl_int bst = CL_SUCCESS;
    cl_program p;
    CREATE(p, clCreateProgramWithBinary(ctx, 1, &dev, &blen, &bp, &bst, &err_));
    CHECK(bst);
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    cl_command_queue q;
    CREATE(q, clCreateCommandQueueWithProperties(ctx, dev, NULL, &err_));
    cl_kernel kfill, kzero, kmix;
    CREATE(kfill, clCreateKernel(p, "fill", &err_));
    CREATE(kzero, clCreateKernel(p, "gpu_bzero", &err_));
    CREATE(kmix, clCreateKernel(p, "combine", &err_));
    size_t bytes = (size_t)n * sizeof(cl_uint);
    cl_uint *host = malloc(bytes), *res = malloc(bytes);
    if (!host || !res)
        die("malloc", -1);
    for (cl_uint i = 0; i < n; i++)
        host[i] = i * 7u + 1u;
    cl_mem in, out, acc;
    CREATE(in, clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host, &err_));
    CREATE(out, clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &err_));
    CREATE(acc, clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &err_));
    size_t g = n;
    int bad = 0;
    for (cl_uint it = 0; it < iters && !bad; it++) {
        cl_uint v = 1000u * (it + 1);
        CHECK(clSetKernelArg(kfill, 0, sizeof out, &out));
        CHECK(clSetKernelArg(kfill, 1, sizeof v, &v));
        CHECK(clSetKernelArg(kzero, 0, sizeof acc, &acc));
        CHECK(clSetKernelArg(kmix, 0, sizeof in, &in));
        CHECK(clSetKernelArg(kmix, 1, sizeof out, &out));
        CHECK(clSetKernelArg(kmix, 2, sizeof acc, &acc));
        CHECK(clEnqueueNDRangeKernel(q, kfill, 1, NULL, &g, NULL, 0, NULL, NULL));
        CHECK(clEnqueueNDRangeKernel(q, kzero, 1, NULL, &g, NULL, 0, NULL, NULL));
        CHECK(clEnqueueNDRangeKernel(q, kmix, 1, NULL, &g, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, acc, CL_TRUE, 0, bytes, res, 0, NULL, NULL));
        for (cl_uint i = 0; i < n && !bad; i++)
            if (res[i] != (v + i) * 3u + host[i]) {
                fprintf(stderr, "binprog: iteration %u: acc[%u] = %u, not %u\n", it, i, res[i],
                        (v + i) * 3u + host[i]);
                bad = 1;
            }
    }
    if (where && !bad) {
        cl_kernel kwhere;
        cl_mem addr, scratch;
        CREATE(kwhere, clCreateKernel(p, "where", &err_));
        CREATE(addr, clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)n * sizeof(cl_ulong), NULL, &err_));
        CREATE(scratch, clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err_));
        CHECK(clSetKernelArg(kzero, 0, sizeof scratch, &scratch));
        CHECK(clEnqueueNDRangeKernel(q, kzero, 1, NULL, &g, NULL, 0, NULL, NULL));   /* never read: dead */
        CHECK(clSetKernelArg(kwhere, 0, sizeof addr, &addr));
        CHECK(clEnqueueNDRangeKernel(q, kwhere, 1, NULL, &g, NULL, 0, NULL, NULL));
        cl_ulong *a = malloc((size_t)n * sizeof *a);
        if (!a)
            die("malloc", -1);
        CHECK(clEnqueueReadBuffer(q, addr, CL_TRUE, 0, (size_t)n * sizeof *a, a, 0, NULL, NULL));
        for (cl_uint i = 1; i < n && !bad; i++)
            if (a[i] != a[0] + i * sizeof *a) {
                fprintf(stderr, "binprog: addr[%u] = %#llx, not consecutive\n", i, (unsigned long long)a[i]);
                bad = 1;
            }
        free(a);
        clReleaseMemObject(addr);
        clReleaseMemObject(scratch);
        clReleaseKernel(kwhere);
    }
    if (!bad && !quiet)
        printf("binprog: %u iterations of %u elements right\n", iters, n);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(acc);
    clReleaseKernel(kfill);
    clReleaseKernel(kzero);
    clReleaseKernel(kmix);
    clReleaseCommandQueue(q);
    clReleaseProgram(p);
    clReleaseContext(ctx);
    free(host);
    free(res);
    return bad;
}

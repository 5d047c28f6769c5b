/* include_prog.c — a program whose OpenCL source includes headers beside
 * it, for tests/e2e/record_includes.sh: "./inc.h", "sub/other.h" (which
 * includes "deep.h" beside itself and "../inc.h" again) and <angled.h>
 * through -Isub, built with "-I. -Isub". Run it from
 * tests/progs/include_prog/, where the headers are. It computes
 * a[i] = SCALE*i + (i % 7) + DEEP + ANGLED on the first device, reads the
 * result back and checks it: exit 0 when right, 1 otherwise (one line).
 *   --compile     compiles the same source with clCompileProgram, with
 *                 one more header given as an input header program
 *                 ("emb.h", not a file), links it, and checks the same;
 *   --tiny NAME   builds, instead, the one-line source
 *                 `#include "NAME"` + a kernel writing a[0] (under 64
 *                 bytes, stored inline in the trace: a test edits it). */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024

static const char *source =
    "#include \"./inc.h\"\n"
    "#include \"sub/other.h\"\n"
    "#include <angled.h>\n"
    "#ifdef EMBEDDED\n"
    "#include \"emb.h\"\n"
    "#else\n"
    "#define EMB 0\n"
    "#endif\n"
    "__kernel void fill(__global int *a)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = SCALE * (scale_t)i + other_add(i) + ANGLED + EMB;\n"
    "}\n";

static const char *embedded = "#define EMB 5\n";

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "include_prog: %s failed (%d)\n", what, (int)err);
    exit(1);
}

#define CK(call) do { cl_int e_ = (call); if (e_ != CL_SUCCESS) die(#call, e_); } while (0)

int main(int argc, char **argv)
{
    char tiny[128];
    const char *src = source, *opts = "-I. -Isub";
    size_t n = N;
    int compile = argc == 2 && !strcmp(argv[1], "--compile");
    if (compile) {
        opts = "-I. -Isub -DEMBEDDED";
    } else if (argc == 3 && !strcmp(argv[1], "--tiny")) {
        snprintf(tiny, sizeof tiny, "#include \"%s\"\nkernel void fill(global int*a){a[0]=T;}", argv[2]);
        src = tiny;
        opts = "";
        n = 1;
    } else if (argc != 1) {
        fprintf(stderr, "usage: include_prog [--compile | --tiny NAME]\n");
        return 2;
    }
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CK(clGetPlatformIDs(1, &plat, NULL));
    CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CK(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CK(err);
    if (compile) {
        cl_program hp = clCreateProgramWithSource(ctx, 1, &embedded, NULL, &err);
        CK(err);
        const char *names[1] = {"emb.h"};
        err = clCompileProgram(p, 1, &dev, opts, 1, &hp, names, NULL, NULL);
        if (err == CL_SUCCESS) {
            cl_program linked = clLinkProgram(ctx, 1, &dev, "", 1, &p, NULL, NULL, &err);
            clReleaseProgram(p);
            p = linked;
        }
        clReleaseProgram(hp);
    } else {
        err = clBuildProgram(p, 1, &dev, opts, NULL, NULL);
    }
    if (err != CL_SUCCESS) {
        char log[2048] = "";
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "include_prog: build failed (%d): %s\n", (int)err, log);
        return 1;
    }
    cl_kernel k = clCreateKernel(p, "fill", &err);
    CK(err);
    cl_mem a = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof(cl_int), NULL, &err);
    CK(err);
    CK(clSetKernelArg(k, 0, sizeof a, &a));
    CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    cl_int *h = malloc(n * sizeof *h);
    if (!h)
        die("malloc", -1);
    CK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, n * sizeof *h, h, 0, NULL, NULL));
    int bad = 0;
    for (size_t i = 0; i < n && src == source; i++)
        bad += h[i] != (cl_int)(3 * i + i % 7 + 11 - 2 + (compile ? 5 : 0));
    if (bad) {
        fprintf(stderr, "include_prog: %d wrong elements\n", bad);
        return 1;
    }
    printf("include_prog: ok (%d)\n", (int)h[0]);
    free(h);
    clReleaseMemObject(a);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}

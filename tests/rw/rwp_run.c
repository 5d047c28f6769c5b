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
 * rwp-run --serve: one run per request from stdin (tests/rw/rwh.h).
 * It links only OpenCL: PoCL's LLVM must not meet libclang's. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/rw/rwh.h"

#define NAME "rwp-run"

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
        fprintf(stderr, NAME ": clCreateKernel(%s): %d\n", argv[*a], e);
        return 3;
    }
    dims = (cl_uint)strtoul(argv[*a + 1], NULL, 10);
    for (i = 0; i < 3; i++) {
        off[i] = strtoul(argv[*a + 2 + i], NULL, 10);
        global[i] = strtoul(argv[*a + 5 + i], NULL, 10);
        local[i] = strtoul(argv[*a + 8 + i], NULL, 10);
    }
    for (*a += 11; *a < argc && strcmp(argv[*a], "--"); (*a)++, n++)
        if (rwh_set_arg(k, n, argv[*a], mems, nbufs) < 0) {
            fprintf(stderr, NAME ": argument %u (%s) of %s\n", n, argv[*a], "the kernel");
            clReleaseKernel(k);
            return 3;
        }
    e = clEnqueueNDRangeKernel(q, k, dims, off, global, local[0] ? local : NULL, 0, NULL, NULL);
    clReleaseKernel(k);
    return e == CL_SUCCESS ? 0 : rwh_fail(NAME, "clEnqueueNDRangeKernel", e);
}

static int run(int argc, char **argv)
{
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    cl_mem mems[RWH_MAX_BUFS] = { 0 };
    size_t bytes[RWH_MAX_BUFS], len = 0;
    unsigned nbufs = 0;
    cl_program prog = NULL;
    char *src;
    int a = 4, rc;

    if (argc < 4)
        return 2;
    src = rwh_slurp(argv[1], &len);
    if (!src)
        return 2;
    if ((rc = rwh_device(NAME, &dev, &ctx, &q)) != 0)
        goto out;
    rc = 3;
    if ((prog = rwh_build(NAME, src, len, argv[3])) == NULL)
        goto out;
    if ((rc = rwh_buffers(NAME, argc, argv, &a, mems, bytes, &nbufs)) != 0)
        goto out;
    while (a < argc) {   /* at "--" */
        a++;
        rc = launch(prog, q, argc, argv, &a, mems, nbufs);
        if (rc != 0)
            goto out;
    }
    rc = rwh_write_out(NAME, argv[2], mems, bytes, nbufs);
out:
    rwh_release(prog, mems, nbufs);
    free(src);
    return rc;
}

int main(int argc, char **argv)
{
    return rwh_main(argc, argv, run);
}

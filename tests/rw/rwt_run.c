/* rwt_run.c — rwt-run, the device half of the rewriter tests' oracle
 * (tests/rw/rwt.h): builds a program on the first OpenCL device, fills the
 * buffers with fixed random data, runs the launches in order, and writes
 * every buffer, one after the other, to OUT.
 *
 *   rwt-run SOURCE OUT OPTIONS DIMS G0 G1 L0 L1 BUF... -- KERNEL ARG... [-- KERNEL ARG...]
 *
 * BUF is f32:BYTES or i32:BYTES (random floats in [0, 1), ints in
 * [0, 1000)); ARG is bN (buffer N), iV (int), uV (uint), lV (ulong),
 * fX (a float's bits in hex) and the others of rwh_set_arg (rwh.h);
 * L0 = 0: the driver picks the local size.
 * Exit status 0, 2 usage, 3 OpenCL failure (one line on stderr).
 * rwt-run --serve: one run per request from stdin (tests/rw/rwh.h). */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/rw/rwh.h"

#define NAME "rwt-run"

static int run(int argc, char **argv)
{
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    cl_mem mems[RWH_MAX_BUFS] = { 0 };
    size_t bytes[RWH_MAX_BUFS], global[2], local[2], len = 0;
    unsigned nbufs = 0, dims;
    cl_program prog = NULL;
    cl_int e;
    char *src;
    int a = 9, rc = 3;

    if (argc < 10)
        return 2;
    src = rwh_slurp(argv[1], &len);
    if (!src)
        return 2;
    dims = (unsigned)atoi(argv[4]);
    global[0] = strtoul(argv[5], NULL, 10);
    global[1] = strtoul(argv[6], NULL, 10);
    local[0] = strtoul(argv[7], NULL, 10);
    local[1] = strtoul(argv[8], NULL, 10);
    if ((rc = rwh_device(NAME, &dev, &ctx, &q)) != 0)
        goto out;
    rc = 3;
    if ((prog = rwh_build(NAME, src, len, argv[3])) == NULL)
        goto out;
    if ((rc = rwh_buffers(NAME, argc, argv, &a, mems, bytes, &nbufs)) != 0)
        goto out;
    rc = 3;
    while (a < argc) {   /* at "--" */
        cl_kernel k;
        cl_uint n = 0;
        if (++a >= argc) {
            rc = 2;
            goto out;
        }
        k = clCreateKernel(prog, argv[a], &e);
        if (!k) {
            fprintf(stderr, NAME ": clCreateKernel(%s): %d\n", argv[a], e);
            goto out;
        }
        for (a++; a < argc && strcmp(argv[a], "--"); a++, n++)
            if (rwh_set_arg(k, n, argv[a], mems, nbufs) < 0) {
                fprintf(stderr, NAME ": argument %u (%s) of %s\n", n, argv[a], "the kernel");
                clReleaseKernel(k);
                goto out;
            }
        e = clEnqueueNDRangeKernel(q, k, dims, NULL, global, local[0] ? local : NULL, 0, NULL,
                                   NULL);
        clReleaseKernel(k);
        if (e != CL_SUCCESS) {
            rc = rwh_fail(NAME, "clEnqueueNDRangeKernel", e);
            goto out;
        }
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

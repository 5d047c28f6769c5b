/* waves.c — how does one kernel's time grow with its number of work-groups?
 *
 * Times nbody_step (tests/apps/nbody.cl, all bodies heavy: every work-item
 * loops over the same N bodies, so every work-group costs the same) at
 * FROM, FROM+STEP, ..., TO work-groups of 64 on one device, by the device's
 * own timestamps (the median of 5 launches per point). A GPU runs as many
 * work-groups at once as its compute units hold; past that count a launch
 * takes another round ("wave"), and a part of a launch split over devices
 * pays for its last, partly filled round as a whole launch pays for its own.
 * This is the curve behind the four-GPU N-body figures in
 * bench/results/nvidia-h200-x4-nbody.md.
 *
 * Usage: waves SOURCE N FROM TO STEP [DEVICE]. DEVICE: an index over all
 * devices of the first platform (default 0). Prints a header line and one
 * "groups<TAB>ms<TAB>us_per_group" line per point. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOCAL 64
#define REPS 5

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "waves: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static unsigned long arg_ul(const char *s, const char *what)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v == 0 || v > (1ul << 26)) {
        fprintf(stderr, "waves: bad %s '%s'\n", what, s);
        exit(2);
    }
    return v;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    long len;
    char *s;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "waves: cannot read %s\n", path);
        exit(2);
    }
    s = malloc((size_t)len + 1);
    if (!s || fread(s, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "waves: cannot read %s\n", path);
        exit(2);
    }
    s[len] = '\0';
    fclose(f);
    return s;
}

/* One launch of `groups` work-groups; returns its device time in ms. */
static double launch_ms(cl_command_queue q, cl_kernel k, cl_uint groups)
{
    size_t global = (size_t)groups * LOCAL, local = LOCAL;
    cl_uint end = groups * LOCAL;
    cl_ulong t0, t1;
    cl_event ev;
    CHECK(clSetKernelArg(k, 6, sizeof end, &end));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &ev));
    CHECK(clWaitForEvents(1, &ev));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
    CHECK(clReleaseEvent(ev));
    return (double)(t1 - t0) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 6 || argc > 7) {
        fprintf(stderr, "usage: waves SOURCE N FROM TO STEP [DEVICE]\n");
        return 2;
    }
    char *src = read_file(argv[1]);
    cl_uint n = (cl_uint)arg_ul(argv[2], "N");
    unsigned long from = arg_ul(argv[3], "FROM"), to = arg_ul(argv[4], "TO");
    unsigned long step = arg_ul(argv[5], "STEP");
    unsigned long want = argc > 6 ? strtoul(argv[6], NULL, 10) : 0;
    cl_platform_id plat;
    cl_device_id devs[16], dev;
    cl_uint ndev, cus;
    cl_int err;
    char name[256];

    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 16, devs, &ndev));
    if (want >= ndev || from > to) {
        fprintf(stderr, "waves: no device %lu (%u here), or FROM > TO\n", want, ndev);
        return 2;
    }
    dev = devs[want];
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, qp, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "nbody_step", &err);
    CHECK(err);

    /* Bodies for the largest launch's work-items and for the N read. */
    size_t bodies = to * LOCAL > n ? to * LOCAL : n;
    float *h = malloc(bodies * 4 * sizeof *h);
    if (!h) {
        fprintf(stderr, "waves: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < bodies * 4; i++) /* positions in [0, 1), masses 1e-6 */
        h[i] = i % 4 == 3 ? 1e-6f : (float)((i * 2654435761u) % 1000) / 1000.0f;
    cl_mem b[4];
    for (int i = 0; i < 4; i++) {
        b[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              bodies * 4 * sizeof *h, h, &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, (cl_uint)i, sizeof b[i], &b[i]));
    }
    cl_uint first = 0, win = 0;
    cl_float heavy = 20.0f, eps2 = 0.01f, dt = 0.005f;
    CHECK(clSetKernelArg(k, 4, sizeof n, &n));
    CHECK(clSetKernelArg(k, 5, sizeof first, &first));
    CHECK(clSetKernelArg(k, 7, sizeof win, &win));
    CHECK(clSetKernelArg(k, 8, sizeof n, &n)); /* the window is every body */
    CHECK(clSetKernelArg(k, 9, sizeof heavy, &heavy));
    CHECK(clSetKernelArg(k, 10, sizeof eps2, &eps2));
    CHECK(clSetKernelArg(k, 11, sizeof dt, &dt));

    printf("# %s, %u compute units, n=%u, work-groups of %d, median of %d\n", name, cus, n,
           LOCAL, REPS);
    printf("groups\tms\tus_per_group\n");
    for (unsigned long g = from; g <= to; g += step) {
        double t[REPS];
        for (int r = 0; r < REPS; r++)
            t[r] = launch_ms(q, k, (cl_uint)g);
        qsort(t, REPS, sizeof *t, cmp_d);
        printf("%lu\t%.3f\t%.2f\n", g, t[REPS / 2], t[REPS / 2] * 1e3 / (double)g);
        fflush(stdout);
    }
    for (int i = 0; i < 4; i++)
        CHECK(clReleaseMemObject(b[i]));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    free(h);
    free(src);
    return 0;
}

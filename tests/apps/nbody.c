/*
 * nbody — K steps of a softened gravitational N-body simulation (float4
 * positions with the base mass in w, float4 velocities, semi-implicit
 * Euler), with a heavy cluster whose membership drifts from step to step.
 *
 * At step s the bodies whose index lies in the window
 * [win_s, win_s + N/8) (mod N) form the heavy cluster: their mass is
 * HEAVY times their base mass, and win_s advances by N/16 every step.
 * A heavy body feels every body (N interactions); a light body is a test
 * particle that feels only the heavy ones (N/8 interactions). So the cost
 * of a work-group depends on whether it covers the cluster, and the
 * expensive range moves at every launch: a split that was balanced for
 * one launch is unbalanced for the next (the case for adaptive
 * partitioning refined over repeated launches). The window start is a
 * scalar argument that changes at every launch, the other scalars never do.
 * Base masses follow a Pareto law (non-uniform), normalised to sum 1.
 *
 * What it is for clrr: a compute-bound, naturally iterative workload on
 * device-resident data: positions and velocities are double-buffered
 * (step s reads buffer s % 2 and writes the other), the initial state is
 * written once and the state is read back once after the last step.
 * Reads of positions cover the whole array, writes are contiguous.
 * --iters K is the number of steps (default 10); inputs are generated once.
 *
 * --devices M splits the bodies into M equal contiguous ranges, one per
 * device (own context, queue and full-size buffers each; the range's
 * first body is a kernel argument rather than a global work offset: PoCL
 * 5.0 aborts at release when two of its devices ran the same kernel, one
 * with a non-zero offset);
 * after every step but the last, each device's new positions are read back
 * and written to every other device (host-staged all-gather).
 *
 * Verification: the last step is recomputed on the host in double from
 * the state before it (as read back; every body for N <= 16384, else a
 * spread sample); and when N * N * K <= 2^29 and K <= 200, the whole
 * trajectory is also simulated on the host in double from the initial
 * state (after several hundred steps, the float and double trajectories
 * of close pairs drift apart by more than any useful tolerance).
 *
 * --uniform makes every body heavy: all N bodies feel all N (O(N^2) per
 * step, the same cost for every work-item, nothing drifts), the classic
 * compute-bound N-body for measuring splits at large sizes (issue 8).
 *
 * Usage: nbody [--size N] [--iters K] [--device SPEC] [--devices M]
 *              [--seed S] [--uniform] [--quiet]
 *   --size N   number of bodies (default 4096)
 */
#include <CL/cl.h>
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define APP "nbody"
#define DEFAULT_SIZE ((size_t)4096)
#define DEFAULT_ITERS 10u
#define MAX_DEVICES 64u
#define SIZE_HELP "number of bodies"
#define ITERS_HELP "number of simulation steps"
#define APP_FLAG "uniform"
#define APP_FLAG_HELP "every body is heavy: all-pairs, the same cost for every body, no drift"
#define LOCAL_SIZE 64u

#define HEAVY 20.0f     /* mass factor of the bodies in the cluster */
#define EPS2 0.01f      /* softening length squared */
#define DT 0.005f       /* time step */
#define PARETO_ALPHA 1.5
#define PARETO_CAP 20.0 /* largest raw base mass (smallest is 1) */

#define FULL_CHECK_BUDGET ((double)(1u << 29)) /* N * N * K for the trajectory */
#define FULL_CHECK_MAX_STEPS 200u
#define STEP_CHECK_BUDGET ((size_t)1 << 28)    /* N * bodies for the last step */

/* Last step, from the same state: float vs double differ by rounding of
 * sums of at most N terms. Up to about 10^6 bodies that stays below 1e-5
 * of the magnitudes (about 1; measured: under 2% of the tolerance at
 * 4096). For larger N the device's running float sum of an acceleration
 * component may be off by a rounding step of its partial sums at every
 * term: at most u * S per term, where S is the sum of the terms' absolute
 * values (the host computes it), and as a random walk about sqrt(N) * u * S
 * over the N terms; the check adds SUM_K times that (through dt) to
 * TOL_STEP. A wrong body, term or step is off by the order of S or of the
 * magnitudes, far above it (2^21 bodies: 3.5e-4 of S * dt).
 * Whole trajectory: rounding differences grow step after step, so a looser
 * 1e-3 (measured: under 6% of it up to 200 steps). Both relative plus
 * absolute. */
#define TOL_STEP 1e-5
#define TOL_TRAJ 1e-3
#define SUM_K 4.0

/* The kernels live in tests/apps/nbody.cl; the build turns that file into
 * a C string literal (build/gen/apps/nbody_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/nbody_cl.h"
    ;

/* Options, errors, random numbers, devices: the same in every workload
 * program of this kind. */
#include "tests/apps/app_common.h"

/* ===================================================================== */
/* The workload                                                          */
/* ===================================================================== */

/* The simulation's fixed parameters; state arrays hold 4 floats per body
 * (x, y, z, base mass for positions; x, y, z, 0 for velocities). */
struct sim {
    size_t n;
    unsigned steps;
    cl_uint win0, win_len, win_shift;
    int uniform;   /* --uniform: every body heavy */
};

static cl_uint window_at(const struct sim *s, unsigned step)
{
    return (cl_uint)((s->win0 + (uint64_t)step * s->win_shift) % s->n);
}

/* One device's share: bodies [first, first + count); buffers hold all n. */
struct lane {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel kernel;
    cl_mem pos[2], vel[2];
    size_t first, count;
};

static void lane_open(struct lane *l, size_t n)
{
    int b;
    open_device(l->dev, &l->ctx, &l->queue, &l->prog);
    l->kernel = make_kernel(l->prog, l->dev, "nbody_step", LOCAL_SIZE);
    for (b = 0; b < 2; b++) {
        l->pos[b] = make_buffer(l->ctx, CL_MEM_READ_WRITE, n * 4 * sizeof(float));
        l->vel[b] = make_buffer(l->ctx, CL_MEM_READ_WRITE, n * 4 * sizeof(float));
    }
}

static void lane_close(struct lane *l)
{
    int b;
    for (b = 0; b < 2; b++) {
        CHECK("clReleaseMemObject", clReleaseMemObject(l->pos[b]));
        CHECK("clReleaseMemObject", clReleaseMemObject(l->vel[b]));
    }
    CHECK("clReleaseKernel", clReleaseKernel(l->kernel));
    CHECK("clReleaseProgram", clReleaseProgram(l->prog));
    CHECK("clReleaseCommandQueue", clReleaseCommandQueue(l->queue));
    CHECK("clReleaseContext", clReleaseContext(l->ctx));
}

/* Bodies [first, first + count) of a 4-float-per-body array. */
static void write_bodies(struct lane *l, cl_mem m, size_t first, size_t count,
                         const float *host)
{
    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, m, CL_FALSE,
          first * 4 * sizeof(float), count * 4 * sizeof(float), host + first * 4,
          0, NULL, NULL));
}

static void read_bodies(struct lane *l, cl_mem m, size_t first, size_t count,
                        float *host)
{
    CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(l->queue, m, CL_FALSE,
          first * 4 * sizeof(float), count * 4 * sizeof(float), host + first * 4,
          0, NULL, NULL));
}

/* Enqueues step `step` (buffers step % 2 -> the other) on this lane. */
static void lane_step(struct lane *l, const struct sim *s, unsigned step)
{
    int in = step % 2, out = 1 - in;
    size_t global = round_up(l->count, LOCAL_SIZE), local = LOCAL_SIZE;
    cl_uint n = (cl_uint)s->n, first = (cl_uint)l->first;
    cl_uint end = (cl_uint)(l->first + l->count);
    cl_uint win = window_at(s, step);
    cl_float heavy = HEAVY, eps2 = EPS2, dt = DT;
    cl_kernel k = l->kernel;

    CHECK("clSetKernelArg", clSetKernelArg(k, 0, sizeof(cl_mem), &l->pos[in]));
    CHECK("clSetKernelArg", clSetKernelArg(k, 1, sizeof(cl_mem), &l->vel[in]));
    CHECK("clSetKernelArg", clSetKernelArg(k, 2, sizeof(cl_mem), &l->pos[out]));
    CHECK("clSetKernelArg", clSetKernelArg(k, 3, sizeof(cl_mem), &l->vel[out]));
    CHECK("clSetKernelArg", clSetKernelArg(k, 4, sizeof n, &n));
    CHECK("clSetKernelArg", clSetKernelArg(k, 5, sizeof first, &first));
    CHECK("clSetKernelArg", clSetKernelArg(k, 6, sizeof end, &end));
    CHECK("clSetKernelArg", clSetKernelArg(k, 7, sizeof win, &win));
    CHECK("clSetKernelArg", clSetKernelArg(k, 8, sizeof s->win_len, &s->win_len));
    CHECK("clSetKernelArg", clSetKernelArg(k, 9, sizeof heavy, &heavy));
    CHECK("clSetKernelArg", clSetKernelArg(k, 10, sizeof eps2, &eps2));
    CHECK("clSetKernelArg", clSetKernelArg(k, 11, sizeof dt, &dt));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, k, 1,
          NULL, &global, &local, 0, NULL, NULL));
}

/* Runs all the steps on all lanes. pos0/vel0: initial state; stage[2]:
 * host staging for the exchange of positions (alternating, so that a
 * device still writing the previous step's positions to its buffers never
 * sees them overwritten); prev_* and last_*: states K-1 and K read back. */
static void run(struct lane *lanes, unsigned m, const struct sim *s,
                const float *pos0, const float *vel0, float *stage[2],
                float *prev_pos, float *prev_vel, float *last_pos, float *last_vel)
{
    unsigned step, d, e;

    for (d = 0; d < m; d++) {
        write_bodies(&lanes[d], lanes[d].pos[0], 0, s->n, pos0);
        write_bodies(&lanes[d], lanes[d].vel[0], 0, s->n, vel0);
    }
    for (step = 0; step < s->steps; step++) {
        int out = 1 - step % 2;
        float *x = stage[step % 2];
        int exchange = m > 1 && step + 1 < s->steps;
        for (d = 0; d < m; d++) {
            lane_step(&lanes[d], s, step);
            if (exchange)
                read_bodies(&lanes[d], lanes[d].pos[out], lanes[d].first,
                            lanes[d].count, x);
            CHECK("clFlush", clFlush(lanes[d].queue));
        }
        if (!exchange)
            continue;
        for (d = 0; d < m; d++)
            CHECK("clFinish", clFinish(lanes[d].queue));
        for (d = 0; d < m; d++) {
            for (e = 0; e < m; e++)
                if (e != d)
                    write_bodies(&lanes[d], lanes[d].pos[out], lanes[e].first,
                                 lanes[e].count, x);
            CHECK("clFlush", clFlush(lanes[d].queue));
        }
    }
    for (d = 0; d < m; d++) {
        struct lane *l = &lanes[d];
        int last = s->steps % 2;
        read_bodies(l, l->pos[1 - last], l->first, l->count, prev_pos);
        read_bodies(l, l->vel[1 - last], l->first, l->count, prev_vel);
        read_bodies(l, l->pos[last], l->first, l->count, last_pos);
        read_bodies(l, l->vel[last], l->first, l->count, last_vel);
        CHECK("clFlush", clFlush(l->queue));
    }
    for (d = 0; d < m; d++)
        CHECK("clFinish", clFinish(lanes[d].queue));
}

/* Positions in the cube [-1, 1)^3, Pareto base masses normalised to sum
 * 1, small random velocities. */
static void generate(uint64_t seed, struct sim *s, float *pos, float *vel)
{
    uint64_t r = rng_seed(seed, 0);
    double total = 0.0;
    size_t i, n = s->n;

    for (i = 0; i < n; i++) {
        double u = rng_float(&r, 0.0f, 1.0f);
        double mass = pow(1.0 - u, -1.0 / PARETO_ALPHA);
        pos[4 * i + 0] = rng_float(&r, -1.0f, 1.0f);
        pos[4 * i + 1] = rng_float(&r, -1.0f, 1.0f);
        pos[4 * i + 2] = rng_float(&r, -1.0f, 1.0f);
        pos[4 * i + 3] = (float)(mass < PARETO_CAP ? mass : PARETO_CAP);
        total += pos[4 * i + 3];
        vel[4 * i + 0] = rng_float(&r, -0.05f, 0.05f);
        vel[4 * i + 1] = rng_float(&r, -0.05f, 0.05f);
        vel[4 * i + 2] = rng_float(&r, -0.05f, 0.05f);
        vel[4 * i + 3] = 0.0f;
    }
    for (i = 0; i < n; i++)
        pos[4 * i + 3] = (float)(pos[4 * i + 3] / total);
    s->win_len = (cl_uint)(n / 8 > 0 ? n / 8 : 1);
    s->win_shift = (cl_uint)(n / 16 > 0 ? n / 16 : 1);
    s->win0 = (cl_uint)(rng_next(&r) % n);
    if (s->uniform) {   /* --uniform: the window is every body, so it never moves */
        s->win_len = (cl_uint)n;
        s->win_shift = 0;
    }
}

/* ------------------------------------------------------- host reference */

static int host_in_window(size_t j, size_t n, size_t win, size_t len)
{
    size_t d = j >= win ? j - win : j + n - win;
    return d < len;
}

/* One step of body i in double: p and v hold the state before the step
 * (4 per body), np and nv receive body i's new position and velocity;
 * sabs, when not NULL, the sum of the absolute values of each acceleration
 * component's terms. */
static void host_step_body(const struct sim *s, unsigned step, size_t i,
                           const double *p, const double *v, double np[3],
                           double nv[3], double sabs[3])
{
    size_t n = s->n, win = window_at(s, step), len = s->win_len, t, j, c;
    int heavy_i = host_in_window(i, n, win, len);
    double acc[3] = {0, 0, 0}, mag[3] = {0, 0, 0};

    for (t = 0; t < (heavy_i ? n : len); t++) {
        double d[3], r2, inv, mj;
        j = heavy_i ? t : (win + t) % n;
        mj = p[4 * j + 3] * (host_in_window(j, n, win, len) ? HEAVY : 1.0);
        for (c = 0; c < 3; c++)
            d[c] = p[4 * j + c] - p[4 * i + c];
        r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + EPS2;
        inv = 1.0 / sqrt(r2);
        for (c = 0; c < 3; c++) {
            double term = d[c] * (mj * inv * inv * inv);
            acc[c] += term;
            mag[c] += fabs(term);
        }
    }
    for (c = 0; c < 3; c++) {
        nv[c] = v[4 * i + c] + acc[c] * DT;
        np[c] = p[4 * i + c] + nv[c] * DT;
        if (sabs)
            sabs[c] = mag[c];
    }
}

static void to_double(const float *f, double *d, size_t count)
{
    size_t i;
    for (i = 0; i < count; i++)
        d[i] = f[i];
}

/* extra[c], when not NULL: an absolute allowance added to component c's. */
static void check_body(const char *what, size_t i, const float *got,
                       const double want[3], double tol, const double extra[3])
{
    int c;
    for (c = 0; c < 3; c++) {
        double allow = tol + tol * fabs(want[c]) + (extra ? extra[c] : 0.0);
        if (!(fabs(got[4 * i + c] - want[c]) <= allow)) {
            fprintf(stderr, APP ": FAILED: %s of body %zu, component %d = %.9g, "
                    "expected %.9g (allowed difference %.3g)\n", what, i, c,
                    got[4 * i + c], want[c], allow);
            exit(1);
        }
    }
}

/* Recomputes the last step from the state before it, for every body or a
 * spread sample. */
static void verify_last_step(const struct sim *s, const float *prev_pos,
                             const float *prev_vel, const float *pos,
                             const float *vel)
{
    size_t n = s->n, count = n, k;
    double *p = xmalloc(4 * n, sizeof *p), *v = xmalloc(4 * n, sizeof *v);

    if (n * n > STEP_CHECK_BUDGET)
        count = STEP_CHECK_BUDGET / n;
    to_double(prev_pos, p, 4 * n);
    to_double(prev_vel, v, 4 * n);
    for (k = 0; k < count; k++) {
        size_t i = count == n ? k : k * n / count + k % LOCAL_SIZE;
        double np[3], nv[3], sabs[3], ev[3], ep[3];
        int c;
        i = i < n ? i : n - 1;
        host_step_body(s, s->steps - 1, i, p, v, np, nv, sabs);
        for (c = 0; c < 3; c++) {
            ev[c] = SUM_K * sqrt((double)n) * (FLT_EPSILON / 2) * sabs[c] * DT;
            ep[c] = ev[c] * DT;
        }
        check_body("last-step position", i, pos, np, TOL_STEP, ep);
        check_body("last-step velocity", i, vel, nv, TOL_STEP, ev);
    }
    free(p);
    free(v);
}

/* Simulates all the steps in double from the initial state. */
static void verify_trajectory(const struct sim *s, const float *pos0,
                              const float *vel0, const float *pos,
                              const float *vel)
{
    size_t n = s->n, i;
    double *p = xmalloc(4 * n, sizeof *p), *v = xmalloc(4 * n, sizeof *v);
    double *np = xmalloc(4 * n, sizeof *np), *nv = xmalloc(4 * n, sizeof *nv);
    unsigned step;

    to_double(pos0, p, 4 * n);
    to_double(vel0, v, 4 * n);
    for (step = 0; step < s->steps; step++) {
        double *t;
        for (i = 0; i < n; i++) {
            host_step_body(s, step, i, p, v, np + 4 * i, nv + 4 * i, NULL);
            np[4 * i + 3] = p[4 * i + 3];
            nv[4 * i + 3] = 0.0;
        }
        t = p, p = np, np = t;
        t = v, v = nv, nv = t;
    }
    for (i = 0; i < n; i++) {
        check_body("position", i, pos, p + 4 * i, TOL_TRAJ, NULL);
        check_body("velocity", i, vel, v + 4 * i, TOL_TRAJ, NULL);
    }
    free(p);
    free(v);
    free(np);
    free(nv);
}

int main(int argc, char **argv)
{
    struct options o;
    cl_device_id ids[MAX_DEVICES];
    struct lane lanes[MAX_DEVICES];
    struct sim s;
    char names[1024];
    float *pos0, *vel0, *stage[2], *prev_pos, *prev_vel, *pos, *vel;
    double t0, ms;
    unsigned d;

    parse_options(argc, argv, &o);
    if (o.size > UINT32_MAX / 2)
        die("--size %zu too large (at most %u bodies)", o.size, UINT32_MAX / 2);
    if (o.size < o.devices)
        die("--size %zu too small for %u devices", o.size, o.devices);
    pick_devices(o.device, o.devices, ids, names, sizeof names);

    s.n = o.size;
    s.steps = o.iters;
    s.uniform = o.flag;
    pos0 = xmalloc(4 * s.n, sizeof(float));
    vel0 = xmalloc(4 * s.n, sizeof(float));
    stage[0] = xmalloc(4 * s.n, sizeof(float));
    stage[1] = xmalloc(4 * s.n, sizeof(float));
    prev_pos = xmalloc(4 * s.n, sizeof(float));
    prev_vel = xmalloc(4 * s.n, sizeof(float));
    pos = xmalloc(4 * s.n, sizeof(float));
    vel = xmalloc(4 * s.n, sizeof(float));
    generate(o.seed, &s, pos0, vel0);
    memset(lanes, 0, sizeof lanes);
    for (d = 0; d < o.devices; d++) {
        lanes[d].dev = ids[d];
        lanes[d].first = s.n * d / o.devices;
        lanes[d].count = s.n * (d + 1) / o.devices - lanes[d].first;
        lane_open(&lanes[d], s.n);
    }

    t0 = now_ms();
    run(lanes, o.devices, &s, pos0, vel0, stage, prev_pos, prev_vel, pos, vel);
    ms = now_ms() - t0;
    verify_last_step(&s, prev_pos, prev_vel, pos, vel);
    if ((double)s.n * (double)s.n * s.steps <= FULL_CHECK_BUDGET &&
        s.steps <= FULL_CHECK_MAX_STEPS)
        verify_trajectory(&s, pos0, vel0, pos, vel);

    for (d = 0; d < o.devices; d++)
        lane_close(&lanes[d]);
    free(pos0);
    free(vel0);
    free(stage[0]);
    free(stage[1]);
    free(prev_pos);
    free(prev_vel);
    free(pos);
    free(vel);
    if (!o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n",
               o.size, o.iters, names, ms);
    return 0;
}

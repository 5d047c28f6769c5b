/* crash.c — an application that dies of a fatal signal after some OpenCL
 * calls, for tests/e2e/record_crash.sh.
 * Usage: crash MODE [HANDLER]
 *   MODE     segv (a store to an unmapped address), abort (abort()),
 *            term (raise(SIGTERM)), exit (returns normally: the reference)
 *   HANDLER  none (default): the default action kills the process;
 *            before: its own handler, installed before the first OpenCL call;
 *            after: installed after its OpenCL work, followed by more calls
 *              for 300 ms (the recorder notices the new handler at a call);
 *            last: installed after its last OpenCL call, just before the crash;
 *            temp: none at the crash, but one was installed for a while
 *              (300 ms of calls) and the saved action put back (300 ms more):
 *              the recorder must not chain to the handler that is gone.
 *   The handler writes "app handler: signal N" on stdout and calls _exit(42)
 *   (the temporary one: "temporary handler: signal N", _exit(43)).
 * Prints the result of its kernel and, just before the crash, "calls: N"
 * (the OpenCL calls it made, all complete). */
#include <CL/cl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned ncalls;
#define CHECK(x) do { ncalls++; cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "crash: %s failed: %d\n", #x, e_); exit(2); } } while (0)
#define CHECKH(v, x) do { ncalls++; cl_int e_ = 0; (v) = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "crash: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char *src =
    "__kernel void sq(__global int *a) { size_t i = get_global_id(0); a[i] = a[i] * a[i] + 1; }\n";

static void app_handler(int sig)
{
    char line[64];
    int n = snprintf(line, sizeof line, "app handler: signal %d\n", sig);
    ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
    (void)w;
    _exit(42);
}

static void temp_handler(int sig)
{
    char line[64];
    int n = snprintf(line, sizeof line, "temporary handler: signal %d\n", sig);
    ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
    (void)w;
    _exit(43);
}

static const int handled[3] = {SIGSEGV, SIGABRT, SIGTERM};

/* Installs @p fn for the three signals; the actions replaced go to @p old
 * when not NULL. */
static void install(void (*fn)(int), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(handled[i], &sa, old ? &old[i] : NULL);
}

static void install_handler(void)
{
    install(app_handler, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Kernel launches and clFinish for 300 ms. */
static void work(cl_command_queue q, cl_kernel k, size_t gws)
{
    double t0 = now_s();
    while (now_s() - t0 < 0.3) {
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
        CHECK(clFinish(q));
        struct timespec ms = {0, 5000000};
        nanosleep(&ms, NULL);
    }
}

static int volatile *volatile bad_address = (int *)(uintptr_t)64;

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    const char *when = argc > 2 ? argv[2] : "none";
    if (strcmp(mode, "segv") && strcmp(mode, "abort") && strcmp(mode, "term") && strcmp(mode, "exit")) {
        fprintf(stderr, "usage: crash segv|abort|term|exit [none|before|after|last|temp]\n");
        return 2;
    }
    if (!strcmp(when, "before"))
        install_handler();

    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k;
    cl_mem buf;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    CHECKH(ctx, clCreateContext(NULL, 1, &dev, NULL, NULL, &e_));
    CHECKH(q, clCreateCommandQueueWithProperties(ctx, dev, NULL, &e_));
    CHECKH(prog, clCreateProgramWithSource(ctx, 1, &src, NULL, &e_));
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    CHECKH(k, clCreateKernel(prog, "sq", &e_));
    enum { N = 1024 };
    int host[N];
    for (int i = 0; i < N; i++)
        host[i] = i;
    CHECKH(buf, clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &e_));
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    size_t gws = N;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    CHECK(clFinish(q));
    (void)err;
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += host[i];
    printf("result: %ld\n", sum);

    if (!strcmp(when, "after")) {
        install_handler();
        /* keep working: the recorder sees the handler at a later call */
        work(q, k, gws);
    }
    if (!strcmp(when, "temp")) {
        struct sigaction old[3];
        install(temp_handler, old);
        work(q, k, gws);
        for (int i = 0; i < 3; i++)
            sigaction(handled[i], &old[i], NULL);
        work(q, k, gws);
    }
    if (!strcmp(when, "last"))
        install_handler();
    printf("calls: %u\n", ncalls);
    fflush(stdout);

    if (!strcmp(mode, "segv"))
        *bad_address = 1;
    else if (!strcmp(mode, "abort"))
        abort();
    else if (!strcmp(mode, "term"))
        raise(SIGTERM);
    /* exit, or a fatal signal that did not end the process */
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("exit\n");
    return 0;
}

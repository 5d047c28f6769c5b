/* exit_threads.c — the main thread returns from main while three other
 * threads are still making OpenCL calls (blocking writes, platform
 * queries) in a loop, for tests/e2e/record_exit.sh: the recorder closes
 * its trace at exit while those threads are inside recorded calls.
 * Prints "exit_threads: exiting" and exits 0; exit 2 when set-up fails. */
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static cl_command_queue q;
static cl_mem buf;

static void *body(void *arg)
{
    int v[256] = {0};
    cl_uint n;

    (void)arg;
    for (;;) {
        clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
        clGetPlatformIDs(0, NULL, &n);
    }
    return NULL;
}

int main(void)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    pthread_t th[3];
    struct timespec ts = {0, 30000000};

    if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return 2;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return 2;
    q = clCreateCommandQueue(ctx, dev, 0, &err);
    if (err != CL_SUCCESS)
        return 2;
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    if (err != CL_SUCCESS)
        return 2;
    for (int i = 0; i < 3; i++)
        if (pthread_create(&th[i], NULL, body, NULL) != 0)
            return 2;
    nanosleep(&ts, NULL);
    printf("exit_threads: exiting\n");
    fflush(stdout);
    return 0;   /* exit() with the threads in their calls */
}

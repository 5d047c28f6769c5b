/* hang.c — an OpenCL program whose kernel never ends, for the replay's
 * watchdog on a trace that ends inside a call (tests/e2e/replay_hang.sh):
 * one work-item spins until a flag in a buffer becomes non-zero, and
 * nothing ever sets it (a host thread or another work-group would, in the
 * programs this stands for: Chai's collaborative patterns), so the
 * clFinish after the launch never returns and the program must be killed.
 * Calls: a buffer of one int, written 0; spin(flag) on one work-item;
 * clFinish.
 * Usage: hang. Prints "hang: launched" before the clFinish and never
 * exits by itself; 1 on an OpenCL error. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "hang: %s failed: %d\n", #x, e_); exit(1); } } while (0)

static const char *source =
    "__kernel void spin(__global volatile int *flag)\n"
    "{\n"
    "    while (atomic_add(flag, 0) == 0)\n"
    "        ;\n"
    "}\n";

int main(void)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int e;
    CHECK(clGetPlatformIDs(1, &p, NULL));
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    CHECK(e);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, NULL, &e);
    CHECK(e);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &e);
    CHECK(e);
    CHECK(clBuildProgram(prog, 1, &d, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "spin", &e);
    CHECK(e);
    int zero = 0;
    cl_mem flag = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof zero, NULL, &e);
    CHECK(e);
    CHECK(clEnqueueWriteBuffer(q, flag, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL));
    CHECK(clSetKernelArg(k, 0, sizeof flag, &flag));
    size_t one = 1;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL));
    printf("hang: launched\n");
    fflush(stdout);
    CHECK(clFinish(q));   /* never returns */
    printf("hang: finished?\n");
    return 1;
}

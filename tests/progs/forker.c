/* forker.c — several processes of one OpenCL application, for
 * tests/e2e/record_procs.sh (one trace per process, fork under the
 * recorder). Modes:
 *   work [TAG]     one process: a kernel adds TAG to a buffer, read back
 *                  and checked (the unit the other modes combine)
 *   before         fork before any OpenCL call; parent and child both run
 *                  `work` (tags 1 and 2) and check their results
 *   mid            one OpenCL call (clGetPlatformIDs: the recorder has
 *                  started and written its first records), then as `before`:
 *                  the child starts a trace of its own at its next call
 *   after          `work` in the parent, then fork: the child only calls
 *                  exit(0) (under a recorder whose child's exit waited for
 *                  writer threads that were not forked, this hung); the
 *                  parent runs `work` again once the child is gone
 *   exec PROG ARGS `work`, then fork and exec PROG ARGS (another OpenCL
 *                  program inheriting the recorder through the environment)
 *                  and wait for it
 *   threads [N]    a second thread records calls in a loop (retains and
 *                  releases of a context: the recorder's object table;
 *                  markers with events, waited for: its event queue) while
 *                  the main thread forks N times (default 20); each child
 *                  makes recorded calls (platform queries: the object
 *                  table) and exits (its event queue polled and its trace
 *                  closed: the event locks), the locks the other thread
 *                  may have held at the fork; a child
 *                  that does not end within 20 s is killed (under a
 *                  recorder whose locks a thread that was not forked held,
 *                  it hung)
 * Exit status: 0 when every process computed the right result, 1 when a
 * result or an OpenCL call was wrong, 2 on usage errors, 3 when a child
 * failed or was killed. */
#include <CL/cl.h>
#include <execinfo.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4096

static const char *src =
    "__kernel void add(__global int *a, int tag) {\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = a[i] * 3 + tag;\n"
    "}\n";

#define CHECK(e, what) do { if ((e) != CL_SUCCESS) { \
    fprintf(stderr, "forker[%d]: %s failed: %d\n", (int)getpid(), what, (int)(e)); return 1; } } while (0)

/* One context, one buffer, one kernel, one read-back; all released. */
static int work(int tag)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int e = clGetPlatformIDs(1, &p, NULL);
    CHECK(e, "clGetPlatformIDs");
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL), "clGetDeviceIDs");
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    CHECK(e, "clCreateContext");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, NULL, &e);
    CHECK(e, "clCreateCommandQueueWithProperties");
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    CHECK(e, "clCreateProgramWithSource");
    CHECK(clBuildProgram(prog, 1, &d, "", NULL, NULL), "clBuildProgram");
    cl_kernel k = clCreateKernel(prog, "add", &e);
    CHECK(e, "clCreateKernel");
    static int host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = i ^ (tag * 7919);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &e);
    CHECK(e, "clCreateBuffer");
    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL), "clEnqueueWriteBuffer");
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf), "clSetKernelArg");
    CHECK(clSetKernelArg(k, 1, sizeof tag, &tag), "clSetKernelArg");
    size_t gsz = N;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel");
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL), "clEnqueueReadBuffer");
    for (int i = 0; i < N; i++)
        if (back[i] != host[i] * 3 + tag) {
            fprintf(stderr, "forker[%d]: element %d is %d, expected %d\n", (int)getpid(), i, back[i],
                    host[i] * 3 + tag);
            return 1;
        }
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}

/* Waits for @p pid. @return 0 when it exited 0, else 3. */
static int reap(pid_t pid)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) {
        perror("forker: waitpid");
        return 3;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    fprintf(stderr, "forker: child %d %s %d\n", (int)pid, WIFEXITED(st) ? "exited" : "was killed by signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    return 3;
}

static cl_context spin_ctx;
static cl_command_queue spin_q;
static atomic_int spin_stop, spin_calls;

/* The other thread: recorded calls in a loop, until told to stop. */
static void *spin(void *arg)
{
    (void)arg;
    while (!atomic_load(&spin_stop)) {
        cl_event ev = NULL;
        clRetainContext(spin_ctx);
        clReleaseContext(spin_ctx);
        if (clEnqueueMarkerWithWaitList(spin_q, 0, NULL, &ev) == CL_SUCCESS && ev) {
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
        atomic_fetch_add(&spin_calls, 1);
    }
    return NULL;
}

/* A child's SIGALRM (it hung): where it is, on stderr (addresses in
 * libraries as MODULE(+OFFSET), for addr2line), then the default action,
 * so that the parent still reports the signal. */
static void hung(int sig)
{
    static const char msg[] = "forker: a child hung; its stack:\n";
    void *frames[64];
    int n = backtrace(frames, 64);
    if (write(2, msg, sizeof msg - 1) < 0)
        n = 0;
    backtrace_symbols_fd(frames, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

static int threads(int n)
{
    void *warm[4];
    backtrace(warm, 4);   /* loads what backtrace needs before any fork (not in a signal handler) */
    cl_platform_id p;
    cl_device_id d;
    cl_int e = clGetPlatformIDs(1, &p, NULL);
    CHECK(e, "clGetPlatformIDs");
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL), "clGetDeviceIDs");
    spin_ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    CHECK(e, "clCreateContext");
    spin_q = clCreateCommandQueueWithProperties(spin_ctx, d, NULL, &e);
    CHECK(e, "clCreateCommandQueueWithProperties");
    pthread_t t;
    if (pthread_create(&t, NULL, spin, NULL)) {
        fprintf(stderr, "forker: pthread_create failed\n");
        return 3;
    }
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        while (atomic_load(&spin_calls) < 2 * (i + 1))   /* the other thread is in its loop */
            sched_yield();
        pid_t c = fork();
        if (c < 0) {
            perror("forker: fork");
            rc = 3;
            break;
        }
        if (c == 0) {
            signal(SIGALRM, hung);
            alarm(20);   /* SIGALRM: a hung child is reported (where it hung), not waited for */
            cl_uint np = 0;
            char name[256];
            cl_platform_id cp;
            if (clGetPlatformIDs(1, &cp, &np) != CL_SUCCESS || !np ||
                clGetPlatformInfo(cp, CL_PLATFORM_NAME, sizeof name, name, NULL) != CL_SUCCESS)
                _exit(1);
            /* (nothing of the other thread's objects: PoCL's own lock of
               the context may be held by it, and the driver's state after a
               fork is the driver's) */
            exit(0);   /* atexit: the child's trace closed, its event queue polled */
        }
        rc = reap(c);
    }
    atomic_store(&spin_stop, 1);
    pthread_join(t, NULL);
    clReleaseCommandQueue(spin_q);
    clReleaseContext(spin_ctx);
    if (!rc)
        printf("forker: %d forks while another thread made %d rounds of calls\n", n, atomic_load(&spin_calls));
    return rc;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "work"))
        return work(argc > 2 ? atoi(argv[2]) : 1);
    if (!strcmp(mode, "mid")) {
        cl_uint np = 0;
        if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || !np) {
            fprintf(stderr, "forker: no OpenCL platform\n");
            return 1;
        }
        mode = "before";
    }
    if (!strcmp(mode, "before")) {
        pid_t c = fork();
        if (c < 0) {
            perror("forker: fork");
            return 3;
        }
        if (c == 0)
            exit(work(2));
        int rc = work(1);
        int crc = reap(c);
        return rc ? rc : crc;
    }
    if (!strcmp(mode, "after")) {
        int rc = work(1);
        if (rc)
            return rc;
        pid_t c = fork();
        if (c < 0) {
            perror("forker: fork");
            return 3;
        }
        if (c == 0)
            exit(0);   /* atexit handlers run: the recorder's must not hang */
        int crc = reap(c);
        rc = work(3);
        return rc ? rc : crc;
    }
    if (!strcmp(mode, "exec") && argc > 2) {
        int rc = work(1);
        if (rc)
            return rc;
        pid_t c = fork();
        if (c < 0) {
            perror("forker: fork");
            return 3;
        }
        if (c == 0) {
            execvp(argv[2], argv + 2);
            perror("forker: exec");
            _exit(127);
        }
        return reap(c);
    }
    if (!strcmp(mode, "threads"))
        return threads(argc > 2 ? atoi(argv[2]) : 20);
    fprintf(stderr, "usage: forker work [TAG] | before | mid | after | exec PROG [ARGS...] | threads [N]\n");
    return 2;
}

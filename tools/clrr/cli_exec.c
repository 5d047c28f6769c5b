/* cli_exec.c — running the application under the layer, shared by `clrr
 * record` and `clrr run`: where the layer is, how it is put in the
 * environment, and the child process (signals forwarded, exit status
 * kept). */
#include "tools/clrr/cli.h"

#include <CL/cl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

char *cli_find_layer(char *tried, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(tried, cap, "/proc/self/exe: %s", strerror(errno));
        return NULL;
    }
    exe[n] = 0;   /* canonical: the kernel resolved every symbolic link */
    char *prefix = dirname(dirname(exe));
    snprintf(tried, cap, "%s/lib/libclrr.so", strcmp(prefix, "/") ? prefix : "");
    return realpath(tried, NULL);
}

int cli_env_join(const char *name, const char *add, int append)
{
    const char *old = getenv(name);
    char *val = NULL;
    if (!old || !*old)
        return setenv(name, add, 1);
    if (asprintf(&val, "%s:%s", append ? old : add, append ? add : old) < 0)
        return -1;
    int rc = setenv(name, val, 1);
    free(val);
    return rc;
}

static volatile sig_atomic_t cli_child;

static void cli_forward(int sig)
{
    if (cli_child > 0)
        kill((pid_t)cli_child, sig);
}

int cli_spawn(char **cmd, int *status_out)
{
    return cli_spawn_watch(cmd, status_out, NULL, NULL);
}

/* Waits for @p pid, calling @p tick (when not NULL) every 100 ms meanwhile.
 * @return waitpid()'s result. */
static pid_t cli_wait_ticking(pid_t pid, int *status, void (*tick)(void *user), void *user)
{
    if (!tick)
        return waitpid(pid, status, 0);
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w != 0)
            return w;
        tick(user);
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);   /* a forwarded signal cuts it short: fine */
    }
}

int cli_spawn_watch(char **cmd, int *status_out, void (*tick)(void *user), void *user)
{
    int status = 0;
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        cli_err("pipe: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        cli_err("fork: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return CLI_EXIT_FAIL;
    }
    if (pid == 0) {
        close(pfd[0]);
        execvp(cmd[0], cmd);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    /* The terminal's ^C and ^\ reach CMD directly; clrr waits to report. */
    cli_child = pid;
    struct sigaction ign = { .sa_handler = SIG_IGN }, fwd = { .sa_handler = cli_forward };
    sigemptyset(&ign.sa_mask);
    sigemptyset(&fwd.sa_mask);
    sigaction(SIGINT, &ign, NULL);
    sigaction(SIGQUIT, &ign, NULL);
    sigaction(SIGTERM, &fwd, NULL);
    sigaction(SIGHUP, &fwd, NULL);
    close(pfd[1]);
    int exec_errno = 0;
    ssize_t r;
    do
        r = read(pfd[0], &exec_errno, sizeof exec_errno);
    while (r < 0 && errno == EINTR);
    close(pfd[0]);
    while (cli_wait_ticking(pid, &status, r == (ssize_t)sizeof exec_errno ? NULL : tick, user) < 0) {
        if (errno != EINTR) {
            cli_err("waitpid: %s", strerror(errno));
            return CLI_EXIT_FAIL;
        }
    }
    if (r == (ssize_t)sizeof exec_errno) {
        cli_err("cannot run '%s': %s", cmd[0], strerror(exec_errno));
        return exec_errno == ENOENT ? 127 : 126;
    }
    *status_out = status;
    return CLI_EXIT_OK;
}

int cli_loader_layers(char *path, size_t cap)
{
    const char *env = getenv("CLRR_LOADER");
    Dl_info info;
    if (env && *env)
        snprintf(path, cap, "%s", env);
    else if (dladdr((void *)clGetPlatformIDs, &info) && info.dli_fname && *info.dli_fname == '/')
        snprintf(path, cap, "%s", info.dli_fname);
    else
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* a loader that knows layers reads OPENCL_LAYERS: the name is in it */
    static const char key[] = "OPENCL_LAYERS";
    char buf[65536 + sizeof key];
    size_t keep = 0;
    int found = 0;
    ssize_t n;
    while (!found && (n = read(fd, buf + keep, sizeof buf - keep)) > 0) {
        size_t len = keep + (size_t)n;
        found = memmem(buf, len, key, sizeof key - 1) != NULL;
        keep = len < sizeof key - 1 ? len : sizeof key - 1;
        memmove(buf, buf + len - keep, keep);
    }
    int bad = n < 0;
    close(fd);
    return bad ? -1 : found;
}

int cli_layer_mode(int preload, int quiet, const char *cmd)
{
    char path[PATH_MAX];
    if (preload || cli_loader_layers(path, sizeof path) != 0)
        return preload;
    if (!quiet)
        fprintf(stderr, "clrr: the OpenCL loader %s does not load layers (OPENCL_LAYERS); loading the layer "
                        "into %s with LD_PRELOAD\n", path, cmd);
    return 1;
}

int cli_in_child(int (*fn)(void *arg, char *buf, size_t cap), void *arg, char *buf, size_t cap)
{
    int fd[2];
    if (cap)
        buf[0] = 0;
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        int r = fn(arg, buf, cap);
        size_t n = cap ? strnlen(buf, cap - 1) : 0;
        for (size_t off = 0; off < n;) {
            ssize_t w = write(fd[1], buf + off, n - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        fflush(NULL);
        _exit(r & 255);
    }
    close(fd[1]);
    size_t got = 0;
    for (;;) {
        char tmp[512];
        ssize_t r = read(fd[0], tmp, sizeof tmp);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        for (ssize_t i = 0; i < r && got + 1 < cap; i++)
            buf[got++] = tmp[i];
    }
    if (cap)
        buf[got < cap ? got : cap - 1] = 0;
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

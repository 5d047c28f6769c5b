/* ana_llvm_compile.c — runs clang-16 on a recorded program as a subprocess
 * (source on stdin, bitcode on stdout, diagnostics on stderr; bounded in
 * time and output) with the build options ana_llvm_options.c accepts, and
 * reduces its diagnostics to the first error line. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyzer/ana_llvm_int.h"

#ifndef ANA_CLANG_PATH
#define ANA_CLANG_PATH "/usr/lib/llvm-16/bin/clang"
#endif

#define ANA_MAX_TOKENS 4096u

extern char **environ;
/* ----------------------------------------------------------- subprocess */

/* The first "error:" line of clang's diagnostics, without the "<stdin>:"
 * file prefix; else the first non-empty line. */
static void ana_first_error(const char *diag, size_t len, char *err, size_t cap)
{
    const char *p = diag, *end = diag + len, *pick = NULL, *first = NULL;
    size_t plen = 0, flen = 0;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (l > 0 && !first) {
            first = p;
            flen = l;
        }
        if (!pick && l > 0 && (memmem(p, l, "error:", 6))) {
            pick = p;
            plen = l;
        }
        p += l + 1;
    }
    if (!pick) {
        pick = first;
        plen = flen;
    }
    if (!pick) {
        snprintf(err, cap, "clang failed without a message");
        return;
    }
    if (plen > 8 && !memcmp(pick, "<stdin>:", 8)) {
        pick += 8;
        plen -= 8;
    }
    snprintf(err, cap, "%.*s", (int)(plen > 1000 ? 1000 : plen), pick);
}

static double ana_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int ana_grow_append(unsigned char **buf, size_t *len, size_t *cap, const void *p,
                           size_t n)
{
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 65536;
        unsigned char *d;
        while (c < *len + n)
            c *= 2;
        d = realloc(*buf, c);
        if (!d)
            return -1;
        *buf = d;
        *cap = c;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    return 0;
}

/* Runs argv with @p in on stdin; collects stdout (up to ANA_MAX_BITCODE)
 * and stderr (first ANA_MAX_STDERR bytes). */
static ana_status ana_run(char *const argv[], const char *in, size_t in_len,
                          unsigned char **outp, size_t *out_len, char **diagp,
                          size_t *diag_len, int *wstatus, char *err, size_t err_cap)
{
    ana_status st = ANA_OK;
    int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
    posix_spawn_file_actions_t fa;
    int fa_init = 0, rc, reaped = 0;
    pid_t pid = -1;
    size_t written = 0, out_cap = 0, diag_cap = 0;
    unsigned char *out = NULL, *diag = NULL;
    sigset_t pipe_set, old_set;
    double deadline;
    const char *tenv = getenv("CLRR_ANA_TIMEOUT");
    long timeout = tenv && atol(tenv) > 0 ? atol(tenv) : ANA_COMPILE_TIMEOUT_S;

    /* a write to clang's stdin after it exited must not kill us */
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);

    if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
        snprintf(err, err_cap, "cannot create pipes: %s", strerror(errno));
        st = ANA_ERR_UNAVAILABLE;
        goto out;
    }
    if (posix_spawn_file_actions_init(&fa) != 0) {
        st = ANA_ERR_NOMEM;
        goto out;
    }
    fa_init = 1;
    if (posix_spawn_file_actions_adddup2(&fa, pin[0], 0) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, pout[1], 1) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, perr[1], 2) != 0) {
        st = ANA_ERR_NOMEM;
        goto out;
    }
    rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    if (rc != 0) {
        pid = -1;
        snprintf(err, err_cap, "cannot run %s: %s", argv[0], strerror(rc));
        st = ANA_ERR_UNAVAILABLE;
        goto out;
    }
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    pin[0] = pout[1] = perr[1] = -1;
    fcntl(pin[1], F_SETFL, O_NONBLOCK);
    if (in_len == 0) {
        close(pin[1]);
        pin[1] = -1;
    }
    deadline = ana_now_s() + (double)timeout;
    while (pout[0] >= 0 || perr[0] >= 0) {
        struct pollfd pfd[3];
        nfds_t np = 0;
        int ms;
        double left = deadline - ana_now_s();
        if (left <= 0) {
            snprintf(err, err_cap, "clang did not finish within %ld s", timeout);
            st = ANA_ERR_COMPILE;
            goto out;
        }
        ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
        if (pin[1] >= 0)
            pfd[np++] = (struct pollfd){ pin[1], POLLOUT, 0 };
        if (pout[0] >= 0)
            pfd[np++] = (struct pollfd){ pout[0], POLLIN, 0 };
        if (perr[0] >= 0)
            pfd[np++] = (struct pollfd){ perr[0], POLLIN, 0 };
        if (poll(pfd, np, ms) < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, err_cap, "poll: %s", strerror(errno));
            st = ANA_ERR_UNAVAILABLE;
            goto out;
        }
        for (nfds_t i = 0; i < np; i++) {
            unsigned char buf[65536];
            ssize_t n;
            if (!pfd[i].revents)
                continue;
            if (pfd[i].fd == pin[1]) {
                n = write(pin[1], in + written, in_len - written);
                if (n > 0)
                    written += (size_t)n;
                if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == in_len) {
                    close(pin[1]);   /* EPIPE: clang stopped reading (an error) */
                    pin[1] = -1;
                }
                continue;
            }
            n = read(pfd[i].fd, buf, sizeof buf);
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (n <= 0) {
                if (pfd[i].fd == pout[0]) {
                    close(pout[0]);
                    pout[0] = -1;
                } else {
                    close(perr[0]);
                    perr[0] = -1;
                }
                continue;
            }
            if (pfd[i].fd == pout[0]) {
                if (*out_len + (size_t)n > ANA_MAX_BITCODE) {
                    snprintf(err, err_cap, "clang's output exceeds %zu MiB",
                             ANA_MAX_BITCODE >> 20);
                    st = ANA_ERR_COMPILE;
                    goto out;
                }
                if (ana_grow_append(&out, out_len, &out_cap, buf, (size_t)n) < 0) {
                    st = ANA_ERR_NOMEM;
                    goto out;
                }
            } else if (*diag_len < ANA_MAX_STDERR) {
                size_t take = (size_t)n;
                if (take > ANA_MAX_STDERR - *diag_len)
                    take = ANA_MAX_STDERR - *diag_len;
                if (ana_grow_append(&diag, diag_len, &diag_cap, buf, take) < 0) {
                    st = ANA_ERR_NOMEM;
                    goto out;
                }
            }
        }
    }
    if (waitpid(pid, wstatus, 0) == pid)
        reaped = 1;
out:
    if (pid > 0 && !reaped) {
        kill(pid, SIGKILL);
        waitpid(pid, wstatus, 0);
    }
    if (fa_init)
        posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 2; i++) {
        if (pin[i] >= 0) close(pin[i]);
        if (pout[i] >= 0) close(pout[i]);
        if (perr[i] >= 0) close(perr[i]);
    }
    {
        /* swallow a SIGPIPE raised while it was blocked */
        struct timespec zero = { 0, 0 };
        sigset_t pending;
        if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) &&
            !sigismember(&old_set, SIGPIPE))
            sigtimedwait(&pipe_set, NULL, &zero);
        pthread_sigmask(SIG_SETMASK, &old_set, NULL);
    }
    if (st == ANA_OK) {
        *outp = out;
        *diagp = (char *)diag;
    } else {
        free(out);
        free(diag);
        *outp = NULL;
        *diagp = NULL;
    }
    return st;
}

ana_status ana_compile(const char *source, size_t len, const char *options,
                       ana_compiled *out, char *err, size_t err_cap)
{
    static const char *const fixed[] = {
        "--no-default-config", "-x", "cl", "-target", "spir64",
        "-Xclang", "-finclude-default-header", "-cl-kernel-arg-info",
        "-emit-llvm", "-c", "-O0", "-Xclang", "-disable-O0-optnone",
        "-gline-tables-only", "-fno-discard-value-names", "-fno-color-diagnostics",
        "-fno-caret-diagnostics", "-w", "-o", "-",
    };
    ana_status st = ANA_OK;
    char *args = NULL, *notes = NULL;
    char **argv = NULL;
    char *diag = NULL;
    const char *clang = getenv("CLRR_CLANG");
    size_t nfixed = sizeof fixed / sizeof fixed[0], diag_len = 0, i, a = 0;
    int nopt, has_std = 0, wstatus = 0;
    const char *t;

    memset(out, 0, sizeof *out);
    if (!clang || !*clang)
        clang = ANA_CLANG_PATH;
    if (len > ANA_MAX_SOURCE) {
        snprintf(err, err_cap, "program source too large (%zu bytes)", len);
        return ANA_ERR_ARG;
    }
    if (options && strnlen(options, ANA_MAX_OPTIONS + 1) > ANA_MAX_OPTIONS) {
        snprintf(err, err_cap, "build options too long (over %zu bytes)", ANA_MAX_OPTIONS);
        return ANA_ERR_ARG;
    }
    nopt = ana_options_filter(options, &args, &notes, &has_std);
    if (nopt < 0 || (unsigned)nopt > ANA_MAX_TOKENS) {
        if (nopt < 0) {
            st = ANA_ERR_NOMEM;
        } else {
            snprintf(err, err_cap, "too many build options (%d)", nopt);
            st = ANA_ERR_ARG;
        }
        goto out;
    }
    argv = calloc(nfixed + (size_t)nopt + 4, sizeof *argv);
    if (!argv) {
        st = ANA_ERR_NOMEM;
        goto out;
    }
    argv[a++] = (char *)clang;
    for (i = 0; i < nfixed; i++)
        argv[a++] = (char *)fixed[i];
    if (!has_std)
        argv[a++] = "-cl-std=CL1.2";
    for (t = args, i = 0; i < (size_t)nopt; i++, t += strlen(t) + 1)
        argv[a++] = (char *)t;
    argv[a++] = "-";
    argv[a] = NULL;
    st = ana_run(argv, source, len, &out->bitcode, &out->len, &diag, &diag_len, &wstatus,
                 err, err_cap);
    if (st != ANA_OK)
        goto out;
    if (WIFSIGNALED(wstatus)) {
        snprintf(err, err_cap, "clang was killed by signal %d", WTERMSIG(wstatus));
        st = ANA_ERR_COMPILE;
    } else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || out->len == 0) {
        if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 127 && diag_len == 0)
            snprintf(err, err_cap, "cannot run %s", clang);
        else
            ana_first_error(diag ? diag : "", diag_len, err, err_cap);
        st = ANA_ERR_COMPILE;
    }
out:
    free(diag);
    free(argv);
    free(args);
    if (st == ANA_OK) {
        out->notes = notes;
    } else {
        free(notes);
        free(out->bitcode);
        memset(out, 0, sizeof *out);
    }
    return st;
}

/* rwt.c — the rewriter tests' oracle, test side (tests/rw/rwt.h): runs
 * rwt-run for P then C and for the fused kernel, compares what they leave
 * in the buffers; runs a device program (rwt-run, rwp-run) on a source;
 * runs clang -fsyntax-only on a source. */
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/rw/rwt.h"

#ifndef RW_TEST_CLANG
#define RW_TEST_CLANG "/usr/lib/llvm-16/bin/clang"
#endif

extern char **environ;

static int rwt_err(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int rwt_err(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* Reads up to cap - 1 bytes of @p path into buf as a string. */
static void rwt_read_text(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;

    if (f) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
}

static int rwt_write_temp(char *path, const char *data, size_t len)
{
    int fd = mkstemps(path, 3);
    int ok;

    if (fd < 0)
        return -1;
    ok = write(fd, data, len) == (ssize_t)len;
    close(fd);
    return ok ? 0 : -1;
}

/* Command-line words of one run. */
typedef struct rwt_argv {
    char words[160][48];
    char *v[168];
    unsigned n;
} rwt_argv;

static void rwt_word(rwt_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rwt_word(rwt_argv *a, const char *fmt, ...)
{
    va_list ap;

    if (a->n >= 160)
        return;
    va_start(ap, fmt);
    vsnprintf(a->words[a->n], sizeof a->words[a->n], fmt, ap);
    va_end(ap);
    a->v[a->n] = a->words[a->n];
    a->n++;
}

static void rwt_arg_word(rwt_argv *a, const rwt_arg *x)
{
    uint32_t bits;

    switch (x->kind) {
    case RWT_BUF: rwt_word(a, "b%u", x->buf); break;
    case RWT_INT: rwt_word(a, "i%lld", x->i); break;
    case RWT_UINT: rwt_word(a, "u%lld", x->i); break;
    case RWT_ULONG: rwt_word(a, "l%lld", x->i); break;
    case RWT_FLOAT:
        memcpy(&bits, &x->f, sizeof bits);
        rwt_word(a, "f%08x", bits);
        break;
    default: rwt_word(a, "?"); break;
    }
}

/* The helpers run the OpenCL driver, and PoCL's compiler (LLVM, in its
 * process) leaves allocations behind by design whenever it builds a program
 * that is not in its kernel cache: under LeakSanitizer the helper then
 * exited non-zero, so a sanitizer test failed whenever it was the first to
 * build a kernel (CI: test_rw_coarsen, while the plain flavour's copy was
 * still building it). The helpers' leak reports are off, as for the
 * programs the end-to-end tests run (tests/e2e/lib.sh); the test's own
 * process keeps them (its options were read at its start). */
static void rwt_no_driver_leaks(void)
{
    static int done;
    const char *o = getenv("ASAN_OPTIONS");
    char v[1024];
    if (done)
        return;
    done = 1;
    snprintf(v, sizeof v, "detect_leaks=0%s%s", o && *o ? ":" : "", o ? o : "");
    setenv("ASAN_OPTIONS", v, 1);
}

/* One helper serving the test's runs (rwh.h, --serve): spawned on the
 * first run, kept while it answers, and spawned again after one it did
 * not answer (it crashed or hung up: that run fails with its status). */
typedef struct rwt_server {
    char prog[16];
    pid_t pid;
    FILE *to, *from;
} rwt_server;

static rwt_server rwt_servers[2];

static void rwt_server_stop(rwt_server *s, int *status)
{
    if (s->to)
        fclose(s->to);
    if (s->from)
        fclose(s->from);
    if (s->pid > 0 && waitpid(s->pid, status, 0) != s->pid)
        *status = -1;
    s->to = s->from = NULL;
    s->pid = 0;
}

/* At the test's exit: the helpers see the end of their input and leave. */
static void rwt_servers_stop(void)
{
    int status;

    for (unsigned i = 0; i < sizeof rwt_servers / sizeof rwt_servers[0]; i++)
        rwt_server_stop(&rwt_servers[i], &status);
}

static rwt_server *rwt_server_get(const char *prog, const char *helper)
{
    static int hooked;
    rwt_server *s = NULL;
    posix_spawn_file_actions_t fa;
    char *argv[] = { (char *)helper, "--serve", NULL };
    int in[2], out[2];

    for (unsigned i = 0; i < sizeof rwt_servers / sizeof rwt_servers[0]; i++)
        if (!strcmp(rwt_servers[i].prog, prog) || (!s && !rwt_servers[i].prog[0]))
            s = &rwt_servers[i];
    if (s == NULL || strlen(prog) >= sizeof s->prog)
        return NULL;
    if (s->pid > 0)
        return s;
    if (!hooked) {
        hooked = 1;
        signal(SIGPIPE, SIG_IGN);   /* a helper gone: a failed write, not the test's death */
        atexit(rwt_servers_stop);
    }
    if (pipe2(in, O_CLOEXEC) != 0)
        return NULL;
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return NULL;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    if (posix_spawn(&s->pid, helper, &fa, NULL, argv, environ) != 0)
        s->pid = 0;
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    s->to = s->pid > 0 ? fdopen(in[1], "w") : NULL;
    s->from = s->pid > 0 ? fdopen(out[0], "r") : NULL;
    if (!s->to || !s->from) {
        int status;
        if (!s->to)
            close(in[1]);
        if (!s->from)
            close(out[0]);
        rwt_server_stop(s, &status);
        return NULL;
    }
    snprintf(s->prog, sizeof s->prog, "%s", prog);
    return s;
}

/* Runs @p argv (from word 1, NULL-terminated) in @p prog's server, its
 * stderr to @p lpath. @return its exit status, or -1 with the server's
 * wait status in *status when it did not answer. */
static int rwt_serve(const char *prog, const char *helper, char **argv, const char *lpath,
                     int *status)
{
    rwt_server *s = rwt_server_get(prog, helper);
    unsigned n = 0, i;
    int rc = -1;

    *status = -1;
    if (s == NULL)
        return -1;
    while (argv[n + 1])
        n++;
    fprintf(s->to, "%u\n%s%c", n + 1, lpath, '\0');
    for (i = 1; i <= n; i++)
        fprintf(s->to, "%s%c", argv[i], '\0');
    if (fflush(s->to) != 0 || fscanf(s->from, "%d", &rc) != 1) {
        kill(s->pid, SIGKILL);
        rwt_server_stop(s, status);
        return -1;
    }
    *status = rc << 8;   /* as waitpid(2) would say it */
    return rc;
}

int rwt_spawn(const char *prog, const char *src, size_t len, char **argv, size_t out_bytes,
              unsigned char **out, char *err, size_t cap)
{
    char exe[4096], helper[4200], spath[] = "/tmp/rwt-XXXXXX.cl", opath[] = "/tmp/rwt-XXXXXX.out",
         lpath[] = "/tmp/rwt-XXXXXX.log";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int rc = -1, status = 0, ofd, lfd;
    FILE *f;

    *out = NULL;
    if (n <= 0)
        return rwt_err(err, cap, "cannot find the test binary");
    rwt_no_driver_leaks();
    exe[n] = '\0';
    snprintf(helper, sizeof helper, "%s/%s", dirname(exe), prog);
    if (rwt_write_temp(spath, src, len) < 0)
        return rwt_err(err, cap, "cannot write a temporary file");
    ofd = mkstemps(opath, 4);
    lfd = mkstemps(lpath, 4);
    if (ofd < 0 || lfd < 0) {
        rwt_err(err, cap, "cannot create a temporary file");
        goto out;
    }
    argv[0] = helper;
    argv[1] = spath;
    argv[2] = opath;
    if (rwt_serve(prog, helper, argv, lpath, &status) != 0) {
        char log[1024];
        rwt_read_text(lpath, log, sizeof log);
        rwt_err(err, cap, "%s failed (status %d): %s", prog, status, log);
        goto out;
    }
    *out = malloc(out_bytes ? out_bytes : 1);
    f = fopen(opath, "rb");
    if (!*out || !f || fread(*out, 1, out_bytes, f) != out_bytes) {
        free(*out);
        *out = NULL;
        rwt_err(err, cap, "%s left no buffers", prog);
    } else {
        rc = 0;
    }
    if (f)
        fclose(f);
out:
    argv[0] = argv[1] = argv[2] = NULL;
    if (ofd >= 0)
        close(ofd);
    if (lfd >= 0)
        close(lfd);
    unlink(spath);
    unlink(opath);
    unlink(lpath);
    return rc;
}

/* Runs rwt-run on @p src with the launches in @p a (from its 10th word);
 * the buffers it leaves in *out (malloc'd, every buffer in order). */
static int rwt_exec(const rwt_case *cs, const char *src, size_t len, rwt_argv *a,
                    unsigned char **out, char *err, size_t cap)
{
    size_t total = 0, i;

    for (i = 0; i < cs->nbufs; i++)
        total += cs->bufs[i].bytes;
    a->v[3] = (char *)(cs->options ? cs->options : "");
    a->v[a->n] = NULL;
    return rwt_spawn("rwt-run", src, len, a->v, total, out, err, cap);
}

/* The words every run shares: placeholders for the paths and options, the
 * launch shape, the buffers. */
static void rwt_head(const rwt_case *cs, rwt_argv *a)
{
    unsigned i;

    a->n = 0;
    rwt_word(a, "rwt-run");
    rwt_word(a, "SOURCE");
    rwt_word(a, "OUT");
    rwt_word(a, "OPTIONS");
    rwt_word(a, "%u", cs->dims);
    rwt_word(a, "%zu", cs->global[0]);
    rwt_word(a, "%zu", cs->dims > 1 ? cs->global[1] : (size_t)1);
    rwt_word(a, "%zu", cs->local[0]);
    rwt_word(a, "%zu", cs->dims > 1 ? cs->local[1] : (size_t)1);
    for (i = 0; i < cs->nbufs; i++)
        rwt_word(a, "%s:%zu", cs->bufs[i].fill == RWT_I32 ? "i32" : "f32", cs->bufs[i].bytes);
}

int rwt_compare(const rwt_case *cs, const rw_fuse_out *f, const char *name, int keep_store,
                char *err, size_t cap)
{
    static rwt_argv a;
    unsigned char *two = NULL, *one = NULL;
    size_t off = 0;
    unsigned i;
    int rc = -1;

    rwt_head(cs, &a);
    rwt_word(&a, "--");
    rwt_word(&a, "%s", cs->p);
    for (i = 0; i < cs->np; i++)
        rwt_arg_word(&a, &cs->pa[i]);
    rwt_word(&a, "--");
    rwt_word(&a, "%s", cs->c);
    for (i = 0; i < cs->nc; i++)
        rwt_arg_word(&a, &cs->ca[i]);
    if (rwt_exec(cs, cs->src, cs->len, &a, &two, err, cap) < 0)
        goto out;
    rwt_head(cs, &a);
    rwt_word(&a, "--");
    rwt_word(&a, "%s", name);
    for (i = 0; i < f->nparams; i++)
        rwt_arg_word(&a, f->params[i].from == RW_FROM_PRODUCER ? &cs->pa[f->params[i].index]
                                                               : &cs->ca[f->params[i].index]);
    if (rwt_exec(cs, f->source, f->len, &a, &one, err, cap) < 0)
        goto out;
    rc = 0;
    for (i = 0; i < cs->nbufs && rc == 0; off += cs->bufs[i].bytes, i++) {
        size_t at;
        if (i == cs->b && !keep_store)
            continue;
        for (at = 0; at < cs->bufs[i].bytes && two[off + at] == one[off + at]; at++)
            ;
        if (at < cs->bufs[i].bytes) {
            rc = 1;
            snprintf(err, cap, "buffer %u differs at byte %zu", i, at);
        }
    }
out:
    free(two);
    free(one);
    return rc;
}

int rwt_syntax_ok(const char *src, size_t len, const char *options, char *err, size_t cap)
{
    char path[] = "/tmp/rwt-XXXXXX.cl", log[] = "/tmp/rwt-XXXXXX.log", cmd[1024];
    int lfd, ok = 0, st;

    err[0] = '\0';
    if (rwt_write_temp(path, src, len) < 0) {
        snprintf(err, cap, "cannot write a temporary file");
        return 0;
    }
    lfd = mkstemps(log, 4);
    if (lfd >= 0) {
        snprintf(cmd, sizeof cmd,
                 "%s -fsyntax-only -x cl -cl-std=CL1.2 -target spir64 -Xclang "
                 "-finclude-default-header %s %s 2>%s",
                 RW_TEST_CLANG, options ? options : "", path, log);
        st = system(cmd);
        ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        rwt_read_text(log, err, cap);
        close(lfd);
        unlink(log);
    }
    unlink(path);
    return ok;
}

void *rwt_rw_so(const char *fn, const char *free_fn, void **f, void **g, int *hidden)
{
    static const char *const internals[] = { "rw_walk", "rw_tu_parse", "rw_kernel_find", "rw_reach_check" };
    char exe[4096], path[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    void *h;

    *f = *g = NULL;
    *hidden = 0;
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    snprintf(path, sizeof path, "%s/../lib/libclrr-rw.so", dirname(exe));
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return NULL;
    *f = dlsym(h, fn);
    *g = dlsym(h, free_fn);
    *hidden = dlsym(h, "rw_strerror") != NULL;
    for (size_t i = 0; i < sizeof internals / sizeof internals[0]; i++)
        *hidden &= dlsym(h, internals[i]) == NULL;
    return h;
}

/* cli_out.c — the one way a `clrr` command writes a file (-o OUT, --report
 * FILE): never onto one of its inputs, through a temporary created beside
 * OUT with mkstemp (O_EXCL: a planted name is never followed) and renamed
 * into place only once it is whole; "-" (and an existing FIFO or device)
 * receives the content as a stream instead. */
#include "tools/clrr/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cli_tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    struct stat st;
    if (d && *d == '/' && stat(d, &st) == 0 && S_ISDIR(st.st_mode))
        return d;
    return "/tmp";
}

int cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Temporaries that a signal which ends the command removes (^C, kill):
 * the names of the open cli_outs. */
#define CLI_OUT_SLOTS 4
static char *volatile cli_out_live[CLI_OUT_SLOTS];

static void cli_out_on_signal(int sig)
{
    for (int i = 0; i < CLI_OUT_SLOTS; i++)
        if (cli_out_live[i])
            unlink(cli_out_live[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static const int cli_out_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

/* Installs cli_out_on_signal (once, only where nobody handles or ignores
 * the signal already), then blocks those signals until cli_out_unblock
 * (*@p old: the mask before), so that a temporary is created and
 * registered with no window in which a signal ends the command and leaves
 * it (a signal sent then is handled at cli_out_unblock). */
static void cli_out_block(sigset_t *old)
{
    static int handlers;
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof cli_out_sigs / sizeof cli_out_sigs[0]; i++) {
        sigaddset(&set, cli_out_sigs[i]);
        struct sigaction was, sa = { .sa_handler = cli_out_on_signal };
        sigemptyset(&sa.sa_mask);
        if (!handlers && sigaction(cli_out_sigs[i], NULL, &was) == 0 && was.sa_handler == SIG_DFL)
            sigaction(cli_out_sigs[i], &sa, NULL);
    }
    handlers = 1;
    sigprocmask(SIG_BLOCK, &set, old);
}

static void cli_out_unblock(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

/* Registers (@p on) or forgets the temporary @p name for cli_out_on_signal
 * (registering: between cli_out_block and cli_out_unblock). */
static void cli_out_track(char *name, int on)
{
    for (int i = 0; i < CLI_OUT_SLOTS; i++)
        if (on ? !cli_out_live[i] : cli_out_live[i] == name) {
            cli_out_live[i] = on ? name : NULL;
            return;
        }
}

/* The input among @p inputs that is the file @p st describes, or NULL. */
static const char *cli_out_input_of(const struct stat *st, const char *const *inputs)
{
    for (size_t i = 0; inputs && inputs[i]; i++) {
        struct stat si;
        if (strcmp(inputs[i], "-") && stat(inputs[i], &si) == 0 && si.st_dev == st->st_dev &&
            si.st_ino == st->st_ino)
            return inputs[i];
    }
    return NULL;
}

/* Creates a temporary (mode 0600) from template @p tmpl (ending in XXXXXX;
 * rewritten); *st: what it is. @return its descriptor, or -1 (errno). */
static int cli_out_mkstemp(char *tmpl, struct stat *st)
{
    int fd = mkostemp(tmpl, O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        unlink(tmpl);
        errno = e;
        return -1;
    }
    return fd;
}

/* "DIR/BASE.tmpXXXXXX" beside @p path (malloc'ed), or NULL. */
static char *cli_out_template(const char *path)
{
    size_t n = strlen(path);
    char *t = malloc(n + 16);
    if (t)
        snprintf(t, n + 16, "%s.tmpXXXXXX", path);
    return t;
}

/* A temporary under $TMPDIR for a stream output; unlinked at once unless
 * CLI_OUT_NAMED. @return CLI_EXIT_OK or CLI_EXIT_ERROR (one line). */
static int cli_out_stream_tmp(cli_out *o)
{
    const char *d = cli_tmpdir();
    size_t n = strlen(d) + 32;
    char *t = malloc(n);
    if (!t) {
        cli_err("%s: out of memory", o->path);
        return CLI_EXIT_ERROR;
    }
    snprintf(t, n, "%s/clrr-out.XXXXXX", d);
    sigset_t old;
    cli_out_block(&old);
    if ((o->fd = cli_out_mkstemp(t, &o->tst)) < 0) {
        cli_out_unblock(&old);
        cli_err("cannot create a temporary file in %s: %s", d, strerror(errno));
        free(t);
        return CLI_EXIT_ERROR;
    }
    char fdpath[32];
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", o->fd);
    if (!(o->flags & CLI_OUT_NAMED) && access(fdpath, W_OK) == 0) {
        unlink(t);   /* nameless: nothing is left however the command ends */
        free(t);
    } else {         /* named: another process opens it, or there is no /proc */
        o->tmp = t;
        cli_out_track(t, 1);
    }
    cli_out_unblock(&old);
    return CLI_EXIT_OK;
}

int cli_out_fd(const cli_out *o)
{
    return o->fd >= 0 ? o->fd : o->sfd;
}

int cli_out_open(cli_out *o, const char *path, unsigned flags, const char *const *inputs)
{
    memset(o, 0, sizeof *o);
    o->fd = o->sfd = -1;
    o->flags = flags;
    o->path = path;
    struct stat st;
    const char *same;
    int to_stdout = !strcmp(path, "-") || !strcmp(path, "/dev/stdout"), exists = 0;
    if (!*path)
        return cli_usage_err("the output path is empty");
    if (to_stdout) {
        if (fstat(STDOUT_FILENO, &st) != 0)
            return cli_usage_err("-: stdout is closed");
        if ((same = cli_out_input_of(&st, inputs)))
            return cli_usage_err("stdout is the same file as the input %s", same);
    } else if (stat(path, &st) == 0) {
        exists = 1;
        if ((same = cli_out_input_of(&st, inputs)))
            return cli_usage_err("%s is the same file as the input %s: write to another file", path, same);
        if (S_ISDIR(st.st_mode))
            return cli_usage_err("%s: is a directory", path);
    }
    if (!to_stdout && (!exists || S_ISREG(st.st_mode))) {
        /* a file: a temporary beside it, renamed onto it at the end; an
         * existing file's permissions are kept, a new one gets the umask's.
         * A symlink to a file stays: the file it names is replaced. */
        struct stat lst;
        if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
            o->dst = realpath(path, NULL);
        if (!o->dst)
            o->dst = strdup(path);
        if (exists) {
            o->mode = st.st_mode & 0777;
        } else {
            mode_t um = umask(0);
            umask(um);
            o->mode = 0666 & ~um;
        }
        if (!o->dst || !(o->tmp = cli_out_template(o->dst))) {
            cli_err("%s: out of memory", path);
            cli_out_abort(o);
            return CLI_EXIT_ERROR;
        }
        sigset_t old;
        cli_out_block(&old);
        if ((o->fd = cli_out_mkstemp(o->tmp, &o->tst)) < 0) {
            int e = errno;
            cli_out_unblock(&old);
            cli_err("cannot write %s: %s", path, strerror(e));
            free(o->tmp);
            o->tmp = NULL;
            cli_out_abort(o);
            return CLI_EXIT_ERROR;
        }
        cli_out_track(o->tmp, 1);
        cli_out_unblock(&old);
    } else {
        /* a stream: stdout, a FIFO, a device */
        if (to_stdout) {
            fflush(stdout);
            o->sfd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        } else {
            o->sfd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        }
        if (o->sfd < 0) {
            cli_err("cannot write %s: %s", to_stdout ? "stdout" : path, strerror(errno));
            return CLI_EXIT_ERROR;
        }
        if ((flags & CLI_OUT_BINARY) && isatty(o->sfd)) {
            close(o->sfd);
            o->sfd = -1;
            return cli_usage_err("%s: will not write a binary file to a terminal (redirect it, or give a file)",
                                 to_stdout ? "stdout" : path);
        }
        if ((flags & (CLI_OUT_PATH | CLI_OUT_NAMED)) && cli_out_stream_tmp(o) != CLI_EXIT_OK) {
            close(o->sfd);
            o->sfd = -1;
            return CLI_EXIT_ERROR;
        }
        /* what the command prints on stdout besides OUT goes to stderr */
        if (to_stdout && !(flags & CLI_OUT_SHARED_STDOUT))
            dup2(STDERR_FILENO, STDOUT_FILENO);
    }
    if (o->fd >= 0) {
        snprintf(o->fdpath, sizeof o->fdpath, "/proc/self/fd/%d", o->fd);
        if (access(o->fdpath, W_OK) != 0)   /* no /proc: the temporary's name */
            o->fdpath[0] = '\0';
    }
    if (!(flags & (CLI_OUT_PATH | CLI_OUT_NAMED))) {
        int wfd = fcntl(cli_out_fd(o), F_DUPFD_CLOEXEC, 3);
        if (wfd < 0 || !(o->f = fdopen(wfd, "w"))) {
            cli_err("cannot write %s: %s", path, strerror(errno));
            if (wfd >= 0)
                close(wfd);
            cli_out_abort(o);
            return CLI_EXIT_ERROR;
        }
    }
    return CLI_EXIT_OK;
}

const char *cli_out_path(const cli_out *o)
{
    return o->fdpath[0] ? o->fdpath : o->tmp;
}

void cli_out_fix_msg(const cli_out *o, char *msg, size_t cap)
{
    const char *names[2] = { o->fdpath[0] ? o->fdpath : NULL, o->tmp };
    const char *shown = !strcmp(o->path, "-") ? "stdout" : o->path;
    for (int k = 0; k < 2; k++) {
        char *at;
        size_t nl = names[k] ? strlen(names[k]) : 0;
        if (!nl || !(at = strstr(msg, names[k])))
            continue;
        size_t sl = strlen(shown), tail = strlen(at + nl);
        if ((size_t)(at - msg) + sl + tail + 1 > cap)
            continue;
        memmove(at + sl, at + nl, tail + 1);
        memcpy(at, shown, sl);
    }
}

/* Copies the whole temporary to the stream. @return 0 or -1 (errno). */
static int cli_out_copy(int from, int to)
{
    char buf[1 << 16];
    if (lseek(from, 0, SEEK_SET) != 0)
        return -1;
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        for (ssize_t w = 0; w < n;) {
            ssize_t k = write(to, buf + w, (size_t)(n - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return -1;
            w += k;
        }
    }
}

int cli_out_commit(cli_out *o)
{
    int err = 0;
    const char *what = "write error";
    errno = 0;
    if (o->f) {
        if (fflush(o->f) != 0 || ferror(o->f))
            err = errno ? errno : EIO;
        if (fclose(o->f) != 0 && !err)
            err = errno ? errno : EIO;
        o->f = NULL;
    }
    if (!err && o->sfd >= 0 && o->fd >= 0 && cli_out_copy(o->fd, o->sfd) != 0)
        err = errno ? errno : EIO;
    if (!err && o->sfd < 0) {
        /* the name still holds our temporary (nobody swapped it), then rename */
        struct stat st;
        if (lstat(o->tmp, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != o->tst.st_dev ||
            st.st_ino != o->tst.st_ino) {
            err = EEXIST;
            what = "the temporary file was replaced while it was written";
        } else if (fchmod(o->fd, o->mode) != 0 || rename(o->tmp, o->dst) != 0) {
            err = errno;
            what = NULL;
        } else {
            cli_out_track(o->tmp, 0);
            free(o->tmp);
            o->tmp = NULL;
        }
    }
    if (err) {
        if (what && err != EEXIST)
            cli_err("%s: %s: %s", !strcmp(o->path, "-") ? "stdout" : o->path, what, strerror(err));
        else if (what)
            cli_err("%s: %s", o->path, what);
        else
            cli_err("cannot write %s: %s", o->path, strerror(err));
    }
    cli_out_abort(o);
    return err ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

void cli_out_abort(cli_out *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp) {
        struct stat st;
        /* remove only our own temporary, never what someone put at its name */
        if (lstat(o->tmp, &st) == 0 && st.st_dev == o->tst.st_dev && st.st_ino == o->tst.st_ino)
            unlink(o->tmp);
        cli_out_track(o->tmp, 0);
        free(o->tmp);
    }
    free(o->dst);
    if (o->fd >= 0)
        close(o->fd);
    if (o->sfd >= 0)
        close(o->sfd);
    const char *path = o->path;
    memset(o, 0, sizeof *o);
    o->fd = o->sfd = -1;
    o->path = path;
}

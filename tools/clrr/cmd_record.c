/* cmd_record.c — `clrr record [-o FILE] [options] -- CMD [ARGS...]`: runs
 * CMD with the recorder layer (libclrr.so) loaded through OPENCL_LAYERS, or
 * through LD_PRELOAD with --preload, and exits with CMD's exit status.
 *
 * The options are generated from the recorder's control table
 * (rec_control_table() in recorder/rec.h): each one sets its CLRR_*
 * variable, so the help text, the validation and the layer always agree. */
#include "tools/clrr/cli.h"
#include "tools/clrr/cli_progress.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder/rec.h"
#include "replayer/rpl.h"
#include "tools/clrr/info_int.h"

#define CLI_REC_MAX 64          /* controls the option table has room for */
#define CLI_REC_OPT 0x1000      /* getopt value of control i: CLI_REC_OPT + i */
#define CLI_REC_NO 0x2000       /* --no-<bool control i>: CLI_REC_NO + i */
#define CLI_REC_PRELOAD 0x3000
#define CLI_REC_FORCE 0x3001

static const char *cli_rec_metavar(const rec_control_desc *d)
{
    if (!strcmp(d->option, "output")) return "FILE";
    if (!strcmp(d->option, "device")) return "SPEC";
    if (!strcmp(d->type, "bool")) return "BOOL";
    if (!strcmp(d->type, "int")) return "INT";
    if (!strcmp(d->type, "u64")) return "N";
    if (!strcmp(d->type, "size")) return "SIZE";
    if (!strcmp(d->type, "stage")) return "MODE";
    return "TEXT";
}

/* Writes @p text indented by @p indent, wrapped at 79 columns. */
static void cli_rec_wrap(FILE *f, const char *text, int indent)
{
    int col = 0;
    const char *p = text;
    while (*p) {
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        int wl = (int)(p - w);
        if (col && col + 1 + wl > 79 - indent) {
            putc('\n', f);
            col = 0;
        }
        if (!col)
            fprintf(f, "%*s", indent, "");
        else
            putc(' ', f);
        fwrite(w, 1, (size_t)wl, f);
        col += wl + (col ? 1 : 0);
        while (*p == ' ')
            p++;
    }
    putc('\n', f);
}

/* "268435456" -> "256M" for size controls, "\"auto\"" -> "auto"; other
 * defaults as they are. */
static const char *cli_rec_default(const rec_control_desc *d, char *buf, size_t cap)
{
    size_t len = strlen(d->def);
    if (len >= 2 && d->def[0] == '"' && d->def[len - 1] == '"') {   /* a string default, as the table spells it */
        snprintf(buf, cap, "%.*s", (int)(len - 2), d->def + 1);
        return buf;
    }
    unsigned long long v = strtoull(d->def, NULL, 10);
    if (strcmp(d->type, "size") || !v)
        return d->def;
    const char *suffix = "";
    if (!(v & ((1ULL << 30) - 1))) { v >>= 30; suffix = "G"; }
    else if (!(v & ((1ULL << 20) - 1))) { v >>= 20; suffix = "M"; }
    else if (!(v & ((1ULL << 10) - 1))) { v >>= 10; suffix = "K"; }
    snprintf(buf, cap, "%llu%s", v, suffix);
    return buf;
}

static void cli_record_help(FILE *f)
{
    size_t n;
    const rec_control_desc *tab = rec_control_table(&n);
    char opt[128], def[64], line[256];
    fputs("Usage: clrr record [-o FILE|DIR/] [--force] [options] -- CMD [ARGS...]\n"
          "Run CMD with the clrr recorder and write every OpenCL call it makes, and the\n"
          "data it moves, into a trace file.\n"
          "\n"
          "One trace per process: the first process of CMD's tree that makes an OpenCL\n"
          "call writes FILE, every other one (children it runs, forks that use OpenCL)\n"
          "FILE's sibling NAME.PID.clrr. With -o DIR/ (the trailing '/' says so) each\n"
          "process writes DIR/COMM.PID.clrr and DIR/index.json lists them (pid, parent,\n"
          "command line, start time). At the end clrr lists the traces when there are\n"
          "several, and `clrr info FILE` or `clrr info DIR` lists the processes.\n"
          "\n"
          "Recorder options (each sets the CLRR_* variable named; such variables already\n"
          "in the environment apply when the option is not given):\n", f);
    for (size_t i = 0; i < n; i++) {
        const rec_control_desc *d = &tab[i];
        int is_bool = !strcmp(d->type, "bool");
        int is_out = !strcmp(d->option, "output");
        snprintf(opt, sizeof opt, "%s--%s%s%s%s%s%s", is_out ? "-o, " : "", d->option,
                 is_bool ? "[=" : "=", cli_rec_metavar(d), is_bool ? "]" : "",
                 is_bool ? ", --no-" : "", is_bool ? d->option : "");
        fprintf(f, "  %s\n", opt);
        cli_rec_wrap(f, d->doc, 8);
        if (is_out)
            snprintf(line, sizeof line, "default: ./<basename of CMD>.clrr; sets %s", d->env);
        else if (!strcmp(d->option, "device"))
            snprintf(line, sizeof line, "default: none (the devices the application chooses); a spec that "
                     "matches no device here is a usage error; sets %s", d->env);
        else
            snprintf(line, sizeof line, "default: %s; sets %s",
                     cli_rec_default(d, def, sizeof def), d->env);
        cli_rec_wrap(f, line, 8);
    }
    fputs("\n"
          "Other options:\n"
          "  --force\n"
          "        replace an earlier recording: without it clrr refuses to start when\n"
          "        FILE or a sibling FILE.PID.clrr exists (or DIR holds traces)\n"
          "  --preload\n"
          "        load the recorder with LD_PRELOAD instead of the OpenCL layer\n"
          "        mechanism (OPENCL_LAYERS), for programs that bypass the ICD loader\n"
          "        (chosen by itself, with one line saying so, when the loader that\n"
          "        programs get from here cannot load layers, as CUDA's libOpenCL)\n"
          "  -h, --help\n"
          "        show this help\n"
          "\n"
          "BOOL is 1/0, yes/no, on/off or true/false; SIZE takes a K, M or G suffix.\n"
          "Exit status: CMD's exit status; 128+N when CMD was killed by signal N;\n"
          "126/127 when CMD cannot be run; 1 when clrr fails or when CMD succeeded but a\n"
          "trace it wrote is unreadable; 2 on usage errors and when an earlier recording\n"
          "is in the way (see --force).\n", f);
}

/* Makes @p path absolute (relative to the current directory). malloc'ed. */
static char *cli_rec_abspath(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    char *out = NULL;
    if (asprintf(&out, "%s/%s", cwd, path) < 0)
        return NULL;
    return out;
}

/* Fails early, with a clear line, when the trace cannot be created: an
 * existing path must be writable (a file, a device such as /dev/null, or
 * a directory named with its trailing '/': -o DIR/), a new one needs a
 * writable directory. */
static int cli_rec_check_output(const char *out)
{
    struct stat st;
    int err = 0;
    char *dir = strdup(out);
    if (!dir)
        err = ENOMEM;
    else if (stat(out, &st) == 0)
        err = S_ISDIR(st.st_mode) && out[strlen(out) - 1] != '/' ? EISDIR   /* DIR/ is -o DIR/ */
              : access(out, W_OK) != 0 ? errno : 0;
    else if (stat(dirname(dir), &st) != 0)
        err = errno;
    else if (!S_ISDIR(st.st_mode))
        err = ENOTDIR;
    else if (access(dir, W_OK) != 0)
        err = errno;
    free(dir);
    /* access() answers for the permissions alone (root passes everywhere):
     * what counts is whether the file can be opened for writing here (a
     * read-only mount, /proc) */
    if (!err) {
        int fd, made = 0, isdir = stat(out, &st) == 0 && S_ISDIR(st.st_mode);
        if (isdir || out[strlen(out) - 1] == '/') {   /* -o DIR/: made by the run when missing */
            char *probe = NULL, *d2 = strdup(out);
            const char *in = isdir ? out : d2 ? dirname(d2) : NULL;
            fd = !in || asprintf(&probe, "%s/.clrr-probe-XXXXXX", in) < 0 ? -1 : mkostemp(probe, O_CLOEXEC);
            free(d2);
            if (fd >= 0)
                unlink(probe);
            free(probe);
        } else if (stat(out, &st) == 0) {
            fd = open(out, O_WRONLY | O_CLOEXEC | O_NONBLOCK);   /* never truncated here */
        } else {
            fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            made = fd >= 0;
        }
        if (fd < 0)
            err = errno;
        else
            close(fd);
        if (made)
            unlink(out);
    }
    if (err)
        cli_err("cannot write the trace %s: %s", out, strerror(err));
    return err ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* The trace's identity before the run, to tell a fresh trace from a stale one. */
typedef struct cli_rec_stamp {
    int exists;
    struct stat st;
} cli_rec_stamp;

static void cli_rec_stat(const char *path, cli_rec_stamp *s)
{
    s->exists = stat(path, &s->st) == 0;
}

static int cli_rec_written(const cli_rec_stamp *before, const cli_rec_stamp *after)
{
    if (!after->exists)
        return 0;
    if (!before->exists)
        return 1;
    return after->st.st_ino != before->st.st_ino ||
           after->st.st_mtim.tv_sec != before->st.st_mtim.tv_sec ||
           after->st.st_mtim.tv_nsec != before->st.st_mtim.tv_nsec ||
           after->st.st_size != before->st.st_size;
}

/* Where the traces go. */
typedef struct cli_rec_out {
    char *path;     /* FILE, or DIR ending in '/' (malloc'ed, absolute) */
    int dir;        /* -o DIR/ */
    int device;     /* an existing non-regular file (/dev/null): one path for all */
} cli_rec_out;

/* DIR/index.json: the processes of the recording, from the traces' ENV. */
static void cli_rec_index(const cli_rec_out *o, const cli_trace_set *set)
{
    char *idx = NULL, *tmp = NULL;
    if (asprintf(&idx, "%sindex.json", o->path) < 0)
        return;
    if (asprintf(&tmp, "%s.tmp%ld", idx, (long)getpid()) < 0) {
        free(idx);
        return;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        cli_err("cannot write %s: %s", idx, strerror(errno));
    } else {
        json_t *o = json_object();
        json_object_set_new(o, "schema", json_string("clrr-record-index/1"));
        json_object_set_new(o, "processes", cli_set_json(set));
        int bad = cli_json_put(f, o) < 0 || putc('\n', f) == EOF;
        if (fclose(f) != 0 || bad || rename(tmp, idx) != 0) {
            cli_err("cannot write %s: %s", idx, strerror(errno));
            unlink(tmp);
        }
    }
    free(tmp);
    free(idx);
}

/* One line per trace (readable member of @p set) with programs built from
 * binaries only (cli_binonly.c), unless quiet. */
static void cli_rec_binonly(const cli_trace_set *set)
{
    const char *quiet = getenv("CLRR_QUIET");
    if (quiet && strcmp(quiet, "0"))
        return;
    for (size_t i = 0; i < set->n; i++) {
        tf_reader *r = NULL;
        if (!set->m[i].ok || tf_reader_open(&r, set->m[i].path, NULL) != TF_OK)
            continue;
        cli_binonly b = {0};
        tf_item it;
        cli_binonly_env(&b, tf_reader_env(r));
        while (tf_reader_next(r, &it) == TF_OK)
            cli_binonly_item(&b, &it);
        if (b.programs) {
            char prefix[PATH_MAX + 32];
            snprintf(prefix, sizeof prefix, "clrr record: %s%s", set->n > 1 ? set->m[i].path : "",
                     set->n > 1 ? ": " : "");
            cli_binonly_line(stderr, prefix, &b);
        }
        cli_binonly_free(&b);
        tf_reader_close(r);
    }
}

/* After the run: finds the traces written, checks that each is readable,
 * lists them when there are several, says which hold programs built from
 * binaries only. @return 1 when one is unreadable. */
static int cli_rec_report(const cli_rec_out *o, int *written)
{
    cli_trace_set set;
    if (cli_set_find(o->path, o->dir, &set)) {
        cli_err("cannot list the traces in %s: %s", o->path, strerror(errno));
        *written = 0;
        return 1;
    }
    *written = set.n > 0;
    size_t bad = set.n ? cli_set_read(&set) : 0;
    for (size_t i = 0; i < set.n; i++)
        if (!set.m[i].ok)
            cli_err("trace %s is unreadable: %s", set.m[i].path, set.m[i].err);
    if (set.n > 1 || (set.n == 1 && isatty(STDERR_FILENO))) {
        const char *quiet = getenv("CLRR_QUIET");
        if (!quiet || !strcmp(quiet, "0") || set.n == 1) {
            if (set.n == 1) {
                char sz[CLI_FMT_CAP];
                fprintf(stderr, "clrr: trace written to %s (%s)\n", set.m[0].path,
                        cli_fmt_size(set.m[0].size, sz));
            } else {
                fprintf(stderr, "clrr: %zu traces written, one per process:\n", set.n);
                cli_set_print_human(stderr, &set);
            }
        }
    }
    if (o->dir && set.n)
        cli_rec_index(o, &set);
    cli_rec_binonly(&set);
    cli_set_free(&set);
    return bad > 0;
}

/* The progress line while CMD runs: what its processes wrote so far, and
 * the compression of their complete chunks (read from the chunk headers
 * that appeared since the last tick: tf_grow_scan(); the app's process is
 * not touched). */
#define CLI_REC_GROW_MAX 64   /* traces whose chunks are followed */

typedef struct cli_rec_watch {
    const cli_rec_out *o;
    cli_progress *prog;
    char *gpath[CLI_REC_GROW_MAX];   /* malloc'ed; the traces followed */
    tf_grow grow[CLI_REC_GROW_MAX];
    size_t ngrow;
} cli_rec_watch;

/* The scan state of trace @p path (a new one when first seen), or NULL. */
static tf_grow *cli_rec_grow(cli_rec_watch *w, const char *path)
{
    for (size_t i = 0; i < w->ngrow; i++)
        if (!strcmp(w->gpath[i], path))
            return &w->grow[i];
    if (w->ngrow == CLI_REC_GROW_MAX || !(w->gpath[w->ngrow] = strdup(path)))
        return NULL;
    memset(&w->grow[w->ngrow], 0, sizeof w->grow[0]);
    return &w->grow[w->ngrow++];
}

static void cli_rec_tick(void *user)
{
    cli_rec_watch *w = user;
    cli_trace_set set;
    if (!cli_progress_due(w->prog) || cli_set_find(w->o->path, w->o->dir, &set))
        return;
    uint64_t bytes = 0, raw = 0, stored = 0;
    struct stat st;
    for (size_t i = 0; i < set.n; i++) {
        if (stat(set.m[i].path, &st) == 0)
            bytes += (uint64_t)st.st_size;
        tf_grow *g = cli_rec_grow(w, set.m[i].path);
        if (g && tf_grow_scan(g, set.m[i].path) == 0) {
            raw += g->raw;
            stored += g->stored;
        }
    }
    char extra[128], sz[CLI_FMT_CAP], ratio[48] = "";
    if (stored)
        snprintf(ratio, sizeof ratio, ", compression %.2fx", (double)raw / (double)stored);
    if (!set.n)
        snprintf(extra, sizeof extra, "no trace yet");
    else if (set.n == 1)
        snprintf(extra, sizeof extra, "%s written%s", cli_fmt_size(bytes, sz), ratio);
    else
        snprintf(extra, sizeof extra, "%s written%s, %zu traces", cli_fmt_size(bytes, sz), ratio, set.n);
    cli_progress_update(w->prog, 0, 0, extra);
    cli_set_free(&set);
}

/* Runs @p cmd; returns the exit status clrr must exit with. */
static int cli_rec_exec(char **cmd, const cli_rec_out *o, int preload)
{
    const char *out = o->path;
    cli_rec_stamp before, after;
    cli_rec_stat(out, &before);
    int status = 0;
    const char *q = getenv("CLRR_QUIET");   /* --quiet sets it */
    cli_rec_watch w = {o, o->device ? NULL : cli_progress_new("record", NULL, 0, q && strcmp(q, "0")), {0}, {{0}}, 0};
    int rc = cli_spawn_watch(cmd, &status, w.prog ? cli_rec_tick : NULL, &w);
    cli_progress_end(w.prog);
    for (size_t i = 0; i < w.ngrow; i++)
        free(w.gpath[i]);
    if (rc != CLI_EXIT_OK)
        return rc;
    int written = 0, bad = 0;
    if (o->device) {
        cli_rec_stat(out, &after);
        written = cli_rec_written(&before, &after);
    } else {
        bad = cli_rec_report(o, &written);
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (written)
            cli_err("%s killed by signal %d (trace kept: %s)", cmd[0], sig, out);
        else
            cli_err("%s killed by signal %d (no trace written)", cmd[0], sig);
        return 128 + sig;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_FAIL;
    if (o->device) {
        /* a device (/dev/null, /dev/full): nothing to tell from its
         * stamp; the layer reported a failed write itself */
    } else if (!written && !preload) {
        /* a loader without layers that cli_layer_mode() did not recognize */
        cli_err("no trace written to %s (did %s make any OpenCL call? if it did, its ICD loader did not load the "
                "recorder as a layer: try --preload)", out, cmd[0]);
    } else if (!written) {
        cli_err("no trace written to %s (did %s make any OpenCL call?)", out, cmd[0]);
    }
    if (bad && code == 0)
        code = CLI_EXIT_FAIL;
    return code;
}

/* What the command line asked for. */
typedef struct cli_rec_args {
    const rec_control_desc *tab;
    size_t n, out_idx;              /* out_idx: the "output" control (n if none) */
    const char *vals[CLI_REC_MAX];  /* value given for control i, or NULL */
    int preload, help, force;
    char **cmd;                     /* NULL-terminated, from argv */
} cli_rec_args;

/* Parses argv into @p a. @return CLI_EXIT_OK, or CLI_EXIT_USAGE (reported). */
static int cli_rec_parse(int argc, char **argv, cli_rec_args *a)
{
    struct option opts[2 * CLI_REC_MAX + 4];
    char *no_names[CLI_REC_MAX] = { 0 };
    size_t k = 0;
    int c, rc = CLI_EXIT_OK;
    a->out_idx = a->n;
    for (size_t i = 0; i < a->n; i++) {
        const rec_control_desc *d = &a->tab[i];
        int is_bool = !strcmp(d->type, "bool");
        opts[k++] = (struct option){ d->option, is_bool ? optional_argument : required_argument,
                                     NULL, CLI_REC_OPT + (int)i };
        if (is_bool && asprintf(&no_names[i], "no-%s", d->option) >= 0)
            opts[k++] = (struct option){ no_names[i], no_argument, NULL, CLI_REC_NO + (int)i };
        if (!strcmp(d->option, "output"))
            a->out_idx = i;
    }
    opts[k++] = (struct option){ "preload", no_argument, NULL, CLI_REC_PRELOAD };
    opts[k++] = (struct option){ "force", no_argument, NULL, CLI_REC_FORCE };
    opts[k++] = (struct option){ "help", no_argument, NULL, 'h' };
    opts[k] = (struct option){ NULL, 0, NULL, 0 };

    opterr = 0;   /* "+": options end at CMD, whose own options are its own */
    while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
        if (c == 'h') {
            a->help = 1;
            goto out;
        } else if (c == 'o' && a->out_idx < a->n) {
            a->vals[a->out_idx] = optarg;
        } else if (c >= CLI_REC_OPT && c < CLI_REC_OPT + (int)a->n) {
            a->vals[c - CLI_REC_OPT] = optarg ? optarg : "1";
        } else if (c >= CLI_REC_NO && c < CLI_REC_NO + (int)a->n) {
            a->vals[c - CLI_REC_NO] = "0";
        } else if (c == CLI_REC_PRELOAD) {
            a->preload = 1;
        } else if (c == CLI_REC_FORCE) {
            a->force = 1;
        } else {
            rc = cli_opt_err(argv, c);
            goto out;
        }
    }
    for (size_t i = 0; i < a->n; i++) {
        if (a->vals[i] && rec_control_parse(&a->tab[i], a->vals[i]) != 0) {
            rc = cli_usage_err("invalid value '%s' for --%s (%s expected)", a->vals[i],
                               a->tab[i].option, cli_rec_metavar(&a->tab[i]));
            goto out;
        }
    }
    if (optind >= argc) {
        rc = cli_usage_err("no command to record");
        goto out;
    }
    a->cmd = argv + optind;
out:
    for (size_t i = 0; i < a->n; i++)
        free(no_names[i]);
    return rc;
}

/* The trace: -o FILE, or <basename of CMD>.clrr here; made absolute so that
 * a CMD that changes directory still writes it here. malloc'ed. */
static char *cli_rec_output(const cli_rec_args *a)
{
    if (a->out_idx < a->n && a->vals[a->out_idx])
        return cli_rec_abspath(a->vals[a->out_idx]);
    char *copy = strdup(a->cmd[0]), *name = NULL, *out = NULL;
    if (copy && asprintf(&name, "%s.clrr", basename(copy)) >= 0)
        out = cli_rec_abspath(name);
    free(copy);
    free(name);
    return out;
}

static void *cli_dev_lookup(void *user, const char *name)
{
    (void)user;
    return dlsym(RTLD_DEFAULT, name);   /* the ICD loader clrr links */
}

/* cli_device_check's work, in a child process (cli_in_child): the
 * drivers it starts must not hold the device while the command runs. */
static int cli_device_check_here(void *arg, char *buf, size_t cap)
{
    const char *spec = arg;
    cl_device_id dev = NULL;
    cl_platform_id plat = NULL;
    char err[320];
    if (rpl_device_pick(cli_dev_lookup, NULL, spec, &dev, &plat, err, sizeof err) != 0) {
        cli_err("--device %s", err);   /* err says "(see 'clrr devices')" */
        return CLI_EXIT_USAGE;
    }
    char name[256] = "", pname[256] = "";
    if (clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS)
        name[0] = 0;
    if (clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL) != CL_SUCCESS)
        pname[0] = 0;
    snprintf(buf, cap, "%s (%s)", name, pname);
    return CLI_EXIT_OK;
}

/* A device the spec named is kept (cli_here.c) with its description: a
 * driver start saved per run (PoCL here: 35 ms of `clrr run --device
 * cpu`'s 97). A stale answer is safe: the layer looks the device up again
 * (rec_device.c) and, when it is gone, says so and lets the application
 * choose. A spec that names none is asked again. */
int cli_device_check(const char *spec, char *desc, size_t cap)
{
    char buf[600], key[320];
    snprintf(key, sizeof key, "device\037%.300s", spec);
    if (cli_here_get(key, buf, sizeof buf) && !strncmp(buf, "ok\t", 3)) {
        if (desc)
            snprintf(desc, cap, "%s", buf + 3);
        return CLI_EXIT_OK;
    }
    int r = cli_in_child(cli_device_check_here, (void *)spec, buf, sizeof buf);
    if (r < 0) {
        cli_err("--device %s: the device check could not run: %s", spec, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (r == CLI_EXIT_OK && desc)
        snprintf(desc, cap, "%s", buf);
    if (r == CLI_EXIT_OK && !strchr(buf, '\n')) {
        char val[sizeof buf + 4];
        snprintf(val, sizeof val, "ok\t%s", buf);
        cli_here_put(key, val);
    }
    return r;
}

/* Sets CLRR_* for every control given, CLRR_OUTPUT, and OPENCL_LAYERS (or
 * LD_PRELOAD). @return CLI_EXIT_OK or an exit status (reported). */
static int cli_rec_environment(const cli_rec_args *a, const char *out, const char *layer)
{
    int bad = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->vals[i] && i != a->out_idx && setenv(a->tab[i].env, a->vals[i], 1) != 0)
            bad = 1;
    if (a->out_idx < a->n && setenv(a->tab[a->out_idx].env, out, 1) != 0)
        bad = 1;
    if (!bad && cli_env_join(a->preload ? "LD_PRELOAD" : "OPENCL_LAYERS", layer, !a->preload))
        bad = 1;
    if (bad) {
        cli_err("cannot set the environment: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    /* Variables that were set before are the user's: the layer reads them
     * too, so check them now rather than let the layer reject them. */
    rec_controls ctl;
    char msg[256];
    if (rec_controls_from_env(&ctl, msg, sizeof msg) != 0)
        return cli_usage_err("%s", msg);
    return CLI_EXIT_OK;
}

/* Decides FILE or DIR/ mode for @p o->path; makes DIR when it is missing;
 * refuses (exit 2) or, with --force, removes an earlier recording: FILE and
 * its siblings FILE.PID.clrr, or DIR's traces and index. */
static int cli_rec_prepare(cli_rec_out *o, int force)
{
    struct stat st;
    size_t n = strlen(o->path);
    int exists = stat(o->path, &st) == 0;
    o->dir = n && o->path[n - 1] == '/';
    if (o->dir && !exists && mkdir(o->path, 0755) != 0) {
        cli_err("cannot create the directory %s: %s", o->path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    char real[PATH_MAX], *p = NULL;
    if (o->dir && realpath(o->path, real) && asprintf(&p, "%s%s", real, strcmp(real, "/") ? "/" : "") >= 0) {
        free(o->path);   /* DIR/../x/ as the traces' names will say it */
        o->path = p;
    }
    if (!o->dir && exists && !S_ISREG(st.st_mode)) {
        o->device = 1;   /* /dev/null: every process writes it as it is */
        return CLI_EXIT_OK;
    }
    cli_trace_set set;
    if (cli_set_find(o->path, o->dir, &set)) {
        cli_err("cannot list %s: %s", o->path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    char *idx = NULL;
    if (o->dir && asprintf(&idx, "%sindex.json", o->path) < 0)
        idx = NULL;
    int has_idx = idx && lstat(idx, &st) == 0;
    int rc = CLI_EXIT_OK;
    if ((set.n || has_idx) && !force) {
        if (o->dir)
            cli_err("%s already holds a recording (%s); --force replaces it", o->path,
                    set.n ? set.m[0].path : idx);
        else
            cli_err("%s exists (an earlier recording); --force replaces it", set.m[0].path);
        rc = CLI_EXIT_USAGE;
    } else {
        for (size_t i = 0; i < set.n && !rc; i++)
            if (unlink(set.m[i].path) != 0) {
                cli_err("cannot remove the earlier trace %s: %s", set.m[i].path, strerror(errno));
                rc = CLI_EXIT_FAIL;
            }
        if (!rc && has_idx && unlink(idx) != 0) {
            cli_err("cannot remove %s: %s", idx, strerror(errno));
            rc = CLI_EXIT_FAIL;
        }
    }
    free(idx);
    cli_set_free(&set);
    return rc;
}

static int cli_record_run(int argc, char **argv)
{
    cli_rec_args a = { 0 };
    a.tab = rec_control_table(&a.n);
    if (a.n > CLI_REC_MAX) {
        cli_err("internal error: %zu recorder controls, room for %d", a.n, CLI_REC_MAX);
        return CLI_EXIT_FAIL;
    }
    int rc = cli_rec_parse(argc, argv, &a);
    if (rc || a.help) {
        if (a.help)
            cli_record_help(stdout);
        return rc;
    }
    if (a.out_idx < a.n && a.vals[a.out_idx] && !strcmp(a.vals[a.out_idx], "-"))   /* stdout is CMD's */
        return cli_usage_err("-o -: the trace cannot go to stdout, the application's own; give a file");
    cli_rec_out o = { cli_rec_output(&a), 0, 0 };
    char *layer = NULL;
    if (!o.path) {
        cli_err("cannot build the output path: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (!((rc = cli_rec_check_output(o.path))))
        rc = cli_rec_prepare(&o, a.force);
    if (rc)
        goto out;
    char tried[PATH_MAX + 64];
    if (!(layer = cli_find_layer(tried, sizeof tried))) {
        cli_err("recorder layer not found: %s (it is installed next to clrr as ../lib/libclrr.so)",
                tried);
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    /* --device (or CLRR_DEVICE) must name a device here: checked before the
     * layer's variables are set, so that clrr's own loader loads no layer */
    const char *spec = getenv("CLRR_DEVICE");
    for (size_t i = 0; i < a.n; i++)
        if (a.vals[i] && !strcmp(a.tab[i].option, "device"))
            spec = a.vals[i];
    if (spec && (rc = cli_device_check(spec, NULL, 0)))
        goto out;
    a.preload = cli_layer_mode(a.preload, 0, a.cmd[0]);
    if ((rc = cli_rec_environment(&a, o.path, layer)))
        goto out;
    if (setenv("CLRR_CLAIM", "1", 1) != 0) {   /* the first process claims FILE (recorder/rec_core.c) */
        cli_err("cannot set the environment: %s", strerror(errno));
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    rc = cli_rec_exec(a.cmd, &o, a.preload);
out:
    free(o.path);
    free(layer);
    return rc;
}

const cli_command cli_cmd_record = {
    "record", "run a program and record its OpenCL calls and data into a trace",
    NULL, cli_record_run, cli_record_help,
};

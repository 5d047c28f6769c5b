/* cmd_record.c — `clrr record [-o FILE] [options] -- CMD [ARGS...]`: runs
 * CMD with the recorder layer (libclrr.so) loaded through OPENCL_LAYERS, or
 * through LD_PRELOAD with --preload, and exits with CMD's exit status.
 *
 * The options are generated from the recorder's control table
 * (rec_control_table() in recorder/rec.h): each one sets its CLRR_*
 * variable, so the help text, the validation and the layer always agree. */
#include "tools/clrr/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder/rec.h"

#define CLI_REC_MAX 64          /* controls the option table has room for */
#define CLI_REC_OPT 0x1000      /* getopt value of control i: CLI_REC_OPT + i */
#define CLI_REC_NO 0x2000       /* --no-<bool control i>: CLI_REC_NO + i */
#define CLI_REC_PRELOAD 0x3000

static const char *cli_rec_metavar(const rec_control_desc *d)
{
    if (!strcmp(d->option, "output")) return "FILE";
    if (!strcmp(d->type, "bool")) return "BOOL";
    if (!strcmp(d->type, "int")) return "INT";
    if (!strcmp(d->type, "u64")) return "N";
    if (!strcmp(d->type, "size")) return "SIZE";
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

/* "268435456" -> "256M" for size controls; other defaults as they are. */
static const char *cli_rec_default(const rec_control_desc *d, char *buf, size_t cap)
{
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
    fputs("Usage: clrr record [-o FILE] [options] -- CMD [ARGS...]\n"
          "Run CMD with the clrr recorder and write every OpenCL call it makes, and the\n"
          "data it moves, into a trace file.\n"
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
        else
            snprintf(line, sizeof line, "default: %s; sets %s",
                     cli_rec_default(d, def, sizeof def), d->env);
        cli_rec_wrap(f, line, 8);
    }
    fputs("\n"
          "Other options:\n"
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
          "126/127 when CMD cannot be run; 1 when clrr fails; 2 on usage errors.\n", f);
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
 * existing path must be a writable non-directory (a file, or a device such
 * as /dev/null), a new one needs a writable directory. */
static int cli_rec_check_output(const char *out)
{
    struct stat st;
    int err = 0;
    char *dir = strdup(out);
    if (!dir)
        err = ENOMEM;
    else if (stat(out, &st) == 0)
        err = S_ISDIR(st.st_mode) ? EISDIR : access(out, W_OK) != 0 ? errno : 0;
    else if (stat(dirname(dir), &st) != 0)
        err = errno;
    else if (!S_ISDIR(st.st_mode))
        err = ENOTDIR;
    else if (access(dir, W_OK) != 0)
        err = errno;
    free(dir);
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

/* Runs @p cmd; returns the exit status clrr must exit with. */
static int cli_rec_exec(char **cmd, const char *out, int preload)
{
    cli_rec_stamp before, after;
    cli_rec_stat(out, &before);
    int status = 0;
    int rc = cli_spawn(cmd, &status);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_rec_stat(out, &after);
    int written = cli_rec_written(&before, &after);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (written)
            cli_err("%s killed by signal %d (trace kept: %s)", cmd[0], sig, out);
        else
            cli_err("%s killed by signal %d (no trace written)", cmd[0], sig);
        return 128 + sig;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_FAIL;
    if (!written && after.exists && !S_ISREG(after.st.st_mode)) {
        /* a device (/dev/null, /dev/full): nothing to tell from its
         * stamp; the layer reported a failed write itself */
    } else if (!written && !preload) {
        /* a loader without layers that cli_layer_mode() did not recognize */
        cli_err("no trace written to %s (did %s make any OpenCL call? if it did, its ICD loader did not load the "
                "recorder as a layer: try --preload)", out, cmd[0]);
    } else if (!written) {
        cli_err("no trace written to %s (did %s make any OpenCL call?)", out, cmd[0]);
    } else if (isatty(STDERR_FILENO)) {
        char sz[CLI_FMT_CAP];
        fprintf(stderr, "clrr: trace written to %s (%s)\n", out,
                cli_fmt_size((uint64_t)after.st.st_size, sz));
    }
    return code;
}

/* What the command line asked for. */
typedef struct cli_rec_args {
    const rec_control_desc *tab;
    size_t n, out_idx;              /* out_idx: the "output" control (n if none) */
    const char *vals[CLI_REC_MAX];  /* value given for control i, or NULL */
    int preload, help;
    char **cmd;                     /* NULL-terminated, from argv */
} cli_rec_args;

/* Parses argv into @p a. @return CLI_EXIT_OK, or CLI_EXIT_USAGE (reported). */
static int cli_rec_parse(int argc, char **argv, cli_rec_args *a)
{
    struct option opts[2 * CLI_REC_MAX + 3];
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
    char *out = cli_rec_output(&a), *layer = NULL;
    if (!out) {
        cli_err("cannot build the output path: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if ((rc = cli_rec_check_output(out)))
        goto out;
    char tried[PATH_MAX + 64];
    if (!(layer = cli_find_layer(tried, sizeof tried))) {
        cli_err("recorder layer not found: %s (it is installed next to clrr as ../lib/libclrr.so)",
                tried);
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    a.preload = cli_layer_mode(a.preload, 0, a.cmd[0]);
    if ((rc = cli_rec_environment(&a, out, layer)))
        goto out;
    rc = cli_rec_exec(a.cmd, out, a.preload);
out:
    free(out);
    free(layer);
    return rc;
}

const cli_command cli_cmd_record = {
    "record", "run a program and record its OpenCL calls and data into a trace",
    NULL, cli_record_run, cli_record_help,
};

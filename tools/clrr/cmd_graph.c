/* cmd_graph.c — `clrr graph FILE -o OUT.(dot|svg|json) [--range A:B]
 * [--collapse]`: the dependency graph of a trace's commands. SVG is made
 * by running Graphviz's `dot -Tsvg` on the DOT text (CLRR_DOT names
 * another program). */
#include "tools/clrr/cli_ana.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char cli_graph_usage[] =
    "Usage: clrr graph FILE -o OUT.(dot|svg|json) [--format FMT] [--range A:B] [--collapse]\n"
    "Write the dependency graph of a trace's commands: kernel launches, transfers,\n"
    "markers and host synchronization points, with edges RAW/WAR/WAW on overlapping\n"
    "bytes of a buffer (regions from the kernel analysis; the whole buffer where it\n"
    "is unknown), explicit event waits, queue order, clFinish and host order.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT  .dot or .gv: Graphviz text; .svg: drawn by Graphviz 'dot'\n"
    "                    (which must be installed); .json: nodes, every edge with its\n"
    "                    reason, object lifetimes (see analyzer/README.md); '-':\n"
    "                    stdout (DOT unless --format). OUT must not be FILE; it\n"
    "                    appears only when whole\n"
    "  --format FMT      dot, svg or json, whatever OUT's name ends in\n"
    "  --range A:B       only commands with A <= seq <= B (A: or :B for open ends)\n"
    "  --collapse        fold repeated iterations (identical runs of commands) into\n"
    "                    one, with a repeat count\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 written, 2 usage error (OUT is FILE, ...), 3 error (one line on\n"
    "stderr; OUT is left as it was).\n";

enum { CLI_G_DOT, CLI_G_SVG, CLI_G_JSON };

static int cli_graph_format(const char *out)
{
    const char *dot = strrchr(out, '.');
    if (!strcmp(out, "-"))
        return CLI_G_DOT;
    if (!dot)
        return -1;
    if (!strcmp(dot, ".dot") || !strcmp(dot, ".gv"))
        return CLI_G_DOT;
    if (!strcmp(dot, ".svg"))
        return CLI_G_SVG;
    if (!strcmp(dot, ".json"))
        return CLI_G_JSON;
    return -1;
}

/* Runs `dot -Tsvg` reading the DOT text from descriptor @p in (rewound)
 * and writing the SVG to descriptor @p out. @return CLI_EXIT_OK, or
 * CLI_EXIT_ERROR with one line printed (dot missing, or its first line of
 * complaint). */
static int cli_run_dot(int in, int out, const char *final)
{
    const char *prog = getenv("CLRR_DOT");
    if (!prog || !*prog)
        prog = "dot";
    int pfd[2];
    if (lseek(in, 0, SEEK_SET) != 0 || pipe(pfd) != 0) {
        cli_err("%s: %s", final, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addclose(&fa, pfd[0]);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
    posix_spawn_file_actions_adddup2(&fa, in, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    char *argv[] = { (char *)prog, "-Tsvg", NULL };
    pid_t pid;
    int e = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (e != 0) {
        close(pfd[0]);
        if (e == ENOENT)
            cli_err("%s: Graphviz '%s' not found (install graphviz, or write .dot and draw it elsewhere)",
                    final, prog);
        else
            cli_err("%s: cannot run %s: %s", final, prog, strerror(e));
        return CLI_EXIT_ERROR;
    }
    char msg[512];
    size_t n = 0;
    ssize_t k;
    while ((k = read(pfd[0], msg + n, sizeof msg - 1 - n)) > 0 || (k < 0 && errno == EINTR))
        if (k > 0 && (n += (size_t)k) == sizeof msg - 1)
            break;
    msg[n] = '\0';
    char drain[256];
    while (read(pfd[0], drain, sizeof drain) > 0)
        ;
    close(pfd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return CLI_EXIT_OK;
    char *nl = strchr(msg, '\n');
    if (nl)
        *nl = '\0';
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        cli_err("%s: Graphviz '%s' not found (install graphviz, or write .dot)", final, prog);
    else
        cli_err("%s: %s failed%s%s", final, prog, msg[0] ? ": " : "", msg);
    return CLI_EXIT_ERROR;
}

static int cli_graph_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "range", required_argument, NULL, 'r' },
        { "collapse", no_argument, NULL, 'c' },
        { "format", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    ana_graph_view view = { 0, UINT64_MAX, 0 };
    const char *outp = NULL, *format = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outp = optarg; break;
        case 'r':
            if (cli_ana_range(optarg, &view.seq_lo, &view.seq_hi))
                return cli_usage_err("invalid range '%s' (expected A:B, A:, :B or N)", optarg);
            break;
        case 'c': view.collapse = 1; break;
        case 'f': format = optarg; break;
        case 'h': fputs(cli_graph_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    int urc = cli_one_file(argc, argv, &path);
    if (urc != CLI_EXIT_OK)
        return urc;
    if (!outp)
        return cli_usage_err("missing -o OUT.(dot|svg|json)");
    int fmt = format ? !strcmp(format, "dot") ? CLI_G_DOT : !strcmp(format, "svg") ? CLI_G_SVG
                       : !strcmp(format, "json") ? CLI_G_JSON : -1
                     : cli_graph_format(outp);
    if (fmt < 0 && format)
        return cli_usage_err("--format takes dot, svg or json, not '%s'", format);
    if (fmt < 0)
        return cli_usage_err("'%s': the output must end in .dot, .gv, .svg or .json (or give --format)", outp);

    tf_reader *r = NULL;
    ana_model *m = NULL;
    ana_graph *g = NULL;
    cli_out o;
    FILE *dotf = NULL;
    const char *inputs[] = { path, NULL };
    int rc = cli_out_open(&o, outp, 0, inputs);
    if (rc != CLI_EXIT_OK)
        return rc;
    if ((rc = cli_ana_load(path, 1, &r, &m)) != CLI_EXIT_OK)
        goto out;
    ana_status st = ana_graph_build(m, &g);
    if (st != ANA_OK) {
        rc = cli_ana_status_err(path, st, NULL);
        goto out;
    }
    if (fmt == CLI_G_JSON) {
        st = ana_graph_write_json(m, g, &view, o.f);
    } else if (fmt == CLI_G_DOT) {
        st = ana_graph_write_dot(m, g, &view, o.f);
    } else {
        /* the DOT text in an unnamed temporary, which dot reads as stdin */
        char tmpl[4096];
        snprintf(tmpl, sizeof tmpl, "%s/clrr-graph.XXXXXX", cli_tmpdir());
        int dfd = mkostemp(tmpl, O_CLOEXEC);
        if (dfd >= 0)
            unlink(tmpl);
        if (dfd < 0 || !(dotf = fdopen(dfd, "w+"))) {
            cli_err("cannot create a temporary file in %s: %s", cli_tmpdir(), strerror(errno));
            if (dfd >= 0)
                close(dfd);
            rc = CLI_EXIT_ERROR;
            goto out;
        }
        st = ana_graph_write_dot(m, g, &view, dotf);
        if (st == ANA_OK && (fflush(dotf) != 0 || ferror(dotf)))
            st = ANA_ERR_IO;
        if (st == ANA_OK) {
            fflush(o.f);
            if ((rc = cli_run_dot(fileno(dotf), cli_out_fd(&o), outp)) != CLI_EXIT_OK)
                goto out;
        }
    }
    if (st != ANA_OK) {
        rc = cli_ana_status_err(outp, st, NULL);
        goto out;
    }
    rc = cli_out_commit(&o);
out:
    cli_out_abort(&o);
    if (dotf)
        fclose(dotf);
    ana_graph_free(g);
    ana_model_free(m);
    tf_reader_close(r);
    return rc;
}

const cli_command cli_cmd_graph = {
    "graph", "write the dependency graph of a trace's commands (DOT, SVG or JSON)",
    cli_graph_usage, cli_graph_run, NULL,
};

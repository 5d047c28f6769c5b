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
    "Usage: clrr graph FILE -o OUT.(dot|svg|json) [--range A:B] [--collapse]\n"
    "Write the dependency graph of a trace's commands: kernel launches, transfers,\n"
    "markers and host synchronization points, with edges RAW/WAR/WAW on overlapping\n"
    "bytes of a buffer (regions from the kernel analysis; the whole buffer where it\n"
    "is unknown), explicit event waits, queue order, clFinish and host order.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT  .dot or .gv: Graphviz text; .svg: drawn by Graphviz 'dot'\n"
    "                    (which must be installed); .json: nodes, every edge with its\n"
    "                    reason, object lifetimes (see analyzer/README.md)\n"
    "  --range A:B       only commands with A <= seq <= B (A: or :B for open ends)\n"
    "  --collapse        fold repeated iterations (identical runs of commands) into\n"
    "                    one, with a repeat count\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 written, 2 usage error, 3 error (one line on stderr).\n";

enum { CLI_G_DOT, CLI_G_SVG, CLI_G_JSON };

static int cli_graph_format(const char *out)
{
    const char *dot = strrchr(out, '.');
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

/* Runs `dot -Tsvg IN -o OUT`. @return CLI_EXIT_OK, or CLI_EXIT_ERROR with
 * one line printed (dot missing, or its first line of complaint). */
static int cli_run_dot(const char *in, const char *out, const char *final)
{
    const char *prog = getenv("CLRR_DOT");
    if (!prog || !*prog)
        prog = "dot";
    int pfd[2];
    if (pipe(pfd) != 0) {
        cli_err("%s: pipe: %s", final, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addclose(&fa, pfd[0]);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    char *argv[] = { (char *)prog, "-Tsvg", (char *)in, "-o", (char *)out, NULL };
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
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    ana_graph_view view = { 0, UINT64_MAX, 0 };
    const char *outp = NULL;
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
    int fmt = cli_graph_format(outp);
    if (fmt < 0)
        return cli_usage_err("'%s': the output must end in .dot, .gv, .svg or .json", outp);

    tf_reader *r = NULL;
    ana_model *m = NULL;
    ana_graph *g = NULL;
    cli_out o = { 0 };
    char *dotp = NULL;
    int rc = cli_ana_load(path, 1, &r, &m);
    if (rc != CLI_EXIT_OK)
        goto out;
    ana_status st = ana_graph_build(m, &g);
    if (st != ANA_OK) {
        rc = cli_ana_status_err(path, st, NULL);
        goto out;
    }
    if ((rc = cli_out_open(&o, outp)) != CLI_EXIT_OK)
        goto out;
    if (fmt == CLI_G_JSON) {
        st = ana_graph_write_json(m, g, &view, o.f);
    } else if (fmt == CLI_G_DOT) {
        st = ana_graph_write_dot(m, g, &view, o.f);
    } else {
        size_t n = strlen(o.tmp) + 8;
        cli_out d;
        dotp = malloc(n);
        if (!dotp) {
            rc = cli_ana_status_err(path, ANA_ERR_NOMEM, NULL);
            goto out;
        }
        snprintf(dotp, n, "%s.dot", o.tmp);
        if ((rc = cli_out_open(&d, dotp)) != CLI_EXIT_OK)
            goto out;
        st = ana_graph_write_dot(m, g, &view, d.f);
        /* keep the DOT text under dotp (renamed) until dot has run */
        if ((rc = cli_out_commit(&d, st == ANA_OK)) != CLI_EXIT_OK)
            goto out;
        if (st == ANA_OK) {
            fclose(o.f);   /* dot writes the temporary SVG itself */
            o.f = NULL;
            rc = cli_run_dot(dotp, o.tmp, outp);
            if (rc == CLI_EXIT_OK && rename(o.tmp, outp) != 0) {
                cli_err("%s: %s", outp, strerror(errno));
                rc = CLI_EXIT_ERROR;
            }
            if (rc != CLI_EXIT_OK)
                unlink(o.tmp);
            free(o.path);
            free(o.tmp);
            memset(&o, 0, sizeof o);
            goto out;
        }
    }
    if (st != ANA_OK) {
        rc = cli_ana_status_err(outp, st, NULL);
        cli_out_commit(&o, 0);
        goto out;
    }
    rc = cli_out_commit(&o, 1);
out:
    if (o.f)
        cli_out_commit(&o, 0);
    if (dotp)
        unlink(dotp);
    free(dotp);
    ana_graph_free(g);
    ana_model_free(m);
    tf_reader_close(r);
    return rc;
}

const cli_command cli_cmd_graph = {
    "graph", "write the dependency graph of a trace's commands (DOT, SVG or JSON)",
    cli_graph_usage, cli_graph_run, NULL,
};

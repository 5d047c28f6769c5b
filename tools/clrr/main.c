/* main.c — the `clrr` command: dispatch over the table of subcommands.
 *
 * Adding a subcommand: write tools/clrr/cmd_<name>.c exporting
 * `const cli_command cli_cmd_<name>` and add X(<name>) to CLI_COMMANDS below,
 * at its place in the list (`clrr --help` prints this order), then run
 * `make docs`: docs/commands.md is generated from the usage strings, and
 * tests/e2e/cli_docs.sh fails until it is. */
#include "tools/clrr/cli.h"

#include <string.h>

#define CLI_COMMANDS(X) \
    X(record)           \
    X(info)             \
    X(dump)             \
    X(show)             \
    X(stats)            \
    X(graph)            \
    X(timeline)         \
    X(report)           \
    X(replay)           \
    X(trim)             \
    X(diff)             \
    X(devices)          \
    X(analyze)          \
    X(profile)          \
    X(optimize)         \
    X(run)              \
    X(plan)             \
    X(model)

#define CLI_DECLARE(name) extern const cli_command cli_cmd_##name;
CLI_COMMANDS(CLI_DECLARE)
#undef CLI_DECLARE

static const cli_command *const cli_commands[] = {
#define CLI_ENTRY(name) &cli_cmd_##name,
    CLI_COMMANDS(CLI_ENTRY)
#undef CLI_ENTRY
};

#define CLI_NCOMMANDS (sizeof cli_commands / sizeof cli_commands[0])

static void cli_main_usage(FILE *f)
{
    fputs("Usage: clrr COMMAND [OPTIONS] [ARGS]\n"
          "Record, analyze, optimize and replay OpenCL applications.\n"
          "\n"
          "Commands:\n", f);
    for (size_t i = 0; i < CLI_NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", cli_commands[i]->name, cli_commands[i]->synopsis);
    fputs("\n"
          "Options:\n"
          "  -h, --help     show this help; 'clrr COMMAND --help' shows a command's options\n"
          "  --version      show the version\n"
          "\n"
          "'clrr help' shows this help, 'clrr help COMMAND' a command's (as\n"
          "'clrr COMMAND --help'); 'man clrr-COMMAND' the same as a manual page.\n"
          "\n"
          "Output files (-o OUT, run --report FILE): OUT is never one of the command's\n"
          "inputs (not through a symlink or a hard link either: exit 2); it is written to\n"
          "a temporary beside it (OUT.tmpXXXXXX, made with mkstemp) and renamed onto OUT\n"
          "only when whole, so a failed command leaves OUT as it was (a symlink OUT\n"
          "stays, the file it names is replaced). '-' writes to stdout (a trace: not to\n"
          "a terminal), and what the command says besides goes to stderr; a FIFO or a\n"
          "device is written in place. record writes its trace itself, as the\n"
          "application runs (docs/recording.md): it takes no '-'.\n"
          "\n"
          "Progress: when stderr is a terminal, record (bytes written, compression\n"
          "ratio), replay, trim, profile and optimize (calls done of the total, ETA)\n"
          "keep one progress line on stderr, cleared when they end; never with -q\n"
          "(record: --quiet) or --json.\n"
          "\n"
          "Exit status (every command; docs/exit-status.md):\n"
          "  0  success (replay, profile: every read-back matched; diff: the same)\n"
          "  1  a negative answer: replay and profile: a read-back differed; diff:\n"
          "     the traces differ\n"
          "  2  usage error: a bad option or operand, OUT is an input, a bad CLRR_*\n"
          "  3  failed: an unreadable or corrupt trace or plan, an I/O error, an\n"
          "     OpenCL call that failed, no usable device (one line on stderr)\n"
          "  4  replay --repeat: the replays disagree among themselves (the program\n"
          "     itself gives different results)\n"
          "record and run exit with CMD's status instead (128+N: killed by signal N;\n"
          "126/127: CMD cannot be run; 1: clrr itself failed).\n", f);
}

static const cli_command *cli_find(const char *name)
{
    for (size_t i = 0; i < CLI_NCOMMANDS; i++)
        if (!strcmp(cli_commands[i]->name, name))
            return cli_commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    cli_mark_start();
    if (argc < 2) {
        cli_main_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *arg = argv[1];
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
        cli_main_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(arg, "--version") || !strcmp(arg, "-V")) {
        printf("clrr %s\n", CLRR_VERSION);
        return CLI_EXIT_OK;
    }
    if (!strcmp(arg, "help")) {   /* clrr help [COMMAND] */
        if (argc < 3) {
            cli_main_usage(stdout);
            return CLI_EXIT_OK;
        }
        const cli_command *c = cli_find(argv[2]);
        if (!c)
            return cli_usage_err("unknown command '%s'", argv[2]);
        cli_print_usage(c, stdout);
        return CLI_EXIT_OK;
    }
    if (arg[0] == '-')
        return cli_usage_err("unknown option '%s'", arg);
    const cli_command *cmd = cli_find(arg);
    if (!cmd)
        return cli_usage_err("unknown command '%s'", arg);
    cli_set_command(cmd->name);
    int rc = cli_check_env();
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = cli_guard_wanted(cmd) ? cli_guard_run(cmd, argc - 1, argv + 1) : cmd->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_err("error writing the output");
        if (rc == CLI_EXIT_OK)   /* record and run: CMD's statuses, 1 is clrr's failure */
            rc = strcmp(cmd->name, "record") && strcmp(cmd->name, "run") ? CLI_EXIT_ERROR
                                                                         : CLI_EXIT_FAIL;
    }
    return rc;
}

/* cli_guard.c — the commands that run a trace's calls on a driver (replay,
 * profile, show, trim, plan verify) run them in a child process, so that a fault there
 * becomes one line and exit 3 instead of a crash of clrr. A trace is code:
 * its kernels run on the device, and on a CPU device (PoCL) inside the
 * replaying process, where a kernel that writes outside its buffers (a
 * stranger's trace, a launch made larger than the buffers it indexes)
 * overwrites the replayer's own memory; drivers also fault on values no
 * check foresees. The parent makes no OpenCL call (on NVIDIA a process
 * forked by one that has made a context sees no GPU): it forks first
 * thing, forwards the signals that ask it to stop, and reports the
 * child's death with where the replay was (rpl_where, in memory the two
 * share). */
#include "tools/clrr/cli.h"

#include "replayer/rpl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t cli_guard_child;

static void cli_guard_forward(int sig)
{
    if (cli_guard_child > 0)
        kill(cli_guard_child, sig);
}

/* A signal that says the process faulted (rather than was asked to stop). */
static int cli_guard_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT || sig == SIGSYS ||
           sig == SIGTRAP;
}

static void cli_guard_report(int sig, const rpl_where *w)
{
    char what[48];
    const char *abbrev = sigabbrev_np(sig);

    snprintf(what, sizeof what, "SIG%s (signal %d)", abbrev ? abbrev : "?", sig);
    if (w->launch)
        cli_err("the replay's process died of %s during or after call #%llu %s%s%s%s, the last launch it started: "
                "a driver fault, or a kernel of the trace that reads or writes outside its buffers (on a CPU "
                "device a trace's kernels run in the replaying process)",
                what, (unsigned long long)w->launch, w->launch_fn, w->kernel[0] ? " (kernel " : "", w->kernel, w->kernel[0] ? ")" : "");
    else if (w->seq)
        cli_err("the replay's process died of %s during call #%llu %s (a driver fault)", what,
                (unsigned long long)w->seq, w->fn);
    else
        cli_err("the replay's process died of %s before its first call", what);
}

int cli_guard_wanted(const cli_command *cmd)
{
    static const char *const replaying[] = {"replay", "profile", "show", "trim", "plan"};

    for (size_t i = 0; i < sizeof replaying / sizeof *replaying; i++)
        if (!strcmp(cmd->name, replaying[i]))
            return 1;
    return 0;
}

int cli_guard_run(const cli_command *cmd, int argc, char **argv)
{
    static const int fwd[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    rpl_where *w = mmap(NULL, sizeof *w, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa, old[4];
    int status = 0;
    pid_t pid;

    if (w == MAP_FAILED)
        return cmd->run(argc, argv);   /* unguarded rather than not at all */
    memset(w, 0, sizeof *w);
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        munmap(w, sizeof *w);
        return cmd->run(argc, argv);
    }
    if (pid == 0) {
        rpl_set_where(w);
        return cmd->run(argc, argv);   /* main() flushes and exits with it */
    }
    cli_guard_child = pid;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cli_guard_forward;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; i++)
        sigaction(fwd[i], &sa, &old[i]);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            cli_err("waiting for the replay's process: %s", strerror(errno));
            return CLI_EXIT_ERROR;
        }
    for (int i = 0; i < 4; i++)
        sigaction(fwd[i], &old[i], NULL);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    if (cli_guard_fault(sig)) {
        cli_guard_report(sig, w);
        return CLI_EXIT_ERROR;
    }
    /* asked to stop (a signal we forwarded, SIGKILL, SIGPIPE): end the same way */
    signal(sig, SIG_DFL);
    raise(sig);
    return 128 + sig;
}

/* cmd_optimize.c — `clrr optimize`: runs the optimizer's passes over a
 * trace and writes the plan (optimizer/opt.h does the work; the plan
 * appears only when whole). */
#include "tools/clrr/cli.h"
#include "tools/clrr/cli_progress.h"
#include "tools/clrr/cli_ana.h"
#include "tools/clrr/cli_opt.h"
#include "tools/clrr/cli_model.h"

#include "costs/cdb.h"
#include "live/live.h"
#include "model/model.h"
#include "replayer/rpl.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char cli_optimize_usage[] =
    "Usage: clrr optimize FILE -o PLAN [--passes LIST] [--split DEVICES] [--costs DB] [--no-verify]\n"
    "                     [--measure[=N]] [--tune[=MODE]] [--budget SECONDS]\n"
    "                     [--tune-force=coarsen:F|vector:F] [--json]\n"
    "Finds work in a trace that can be left out, merged or overlapped without\n"
    "changing anything the application observes, and writes a plan\n"
    "(plan/PLAN.md) that 'clrr replay FILE --plan PLAN' executes, verifying\n"
    "every read-back against the recording. Each change names its call by a\n"
    "pattern (function, kernel and program source hash, launch shape, argument\n"
    "roles and values), so a plan also applies to other runs of the same\n"
    "program.\n"
    "\n"
    "Before it writes the plan, it replays the trace with it here (as 'clrr\n"
    "replay --plan' does) and writes only a plan that replays verified: when\n"
    "the replay mismatches, the transformations that make it mismatch are found\n"
    "(each pass alone, then halves of a pass's calls, at most 24 replays) and\n"
    "left out, one line each. A trace that mismatches here even without a plan\n"
    "gets a plan with no transformation; one that cannot be replayed here, or\n"
    "that was recorded on another device and mismatches here even without a\n"
    "plan, gets the plan unverified, with a warning. A plan that replayed\n"
    "verified is recorded as verified on this machine (a hash of its bytes in\n"
    "~/.cache/clrr/verified), so that 'clrr run --plan' applies it (a plan from\n"
    "elsewhere needs 'clrr plan verify PLAN TRACE' first).\n"
    "\n"
    "Passes:\n"
    "  dead        kernel launches, writes, copies and fills whose results are\n"
    "              never observed: every byte they write is overwritten before\n"
    "              anything reads it, or never read at all\n"
    "  redundant   writes and fills of bytes the memory already holds (the same\n"
    "              data over the same range, written or read back before and not\n"
    "              written since)\n"
    "  fuse        a launch whose output the next launch on its queue reads, each\n"
    "              work-item only the element the same work-item wrote: one\n"
    "              generated kernel does both, the value passed in a register\n"
    "              (the buffer is no longer stored when nothing reads it later);\n"
    "              pairs grow into chains, and independent launches that feed\n"
    "              one consumer go with it (a gather); with --horizontal,\n"
    "              consecutive independent launches that read the same memory\n"
    "              are one launch too\n"
    "  specialize  scalar arguments that every launch of a kernel sets to the\n"
    "              same value, where they bound a loop, become compile-time\n"
    "              constants of a generated copy of the kernel (a run with other\n"
    "              values runs the original)\n"
    "  schedule    an in-order queue's uploads and downloads go to queues of their\n"
    "              own (lanes) beside its kernels, so that copies overlap compute;\n"
    "              each command still waits for every earlier one it conflicts\n"
    "              with (the same memory, one of them writes). A queue is\n"
    "              scheduled where its recorded device times predict at least\n"
    "              5% less\n"
    "  wgsize      (with --tune) each launch shape (kernel, global size, recorded\n"
    "              local size) runs with the local size measured fastest here\n"
    "              that leaves its outputs bit-identical (see --tune); a shape\n"
    "              that keeps its local size may instead run a coarsened kernel,\n"
    "              each work-item doing the work of 2, 4 or 8 along a dimension\n"
    "              over a global size that many times smaller, where the rewriter\n"
    "              proves it safe, its outputs are bit-identical and it is\n"
    "              measured faster (plan 1.12)\n"
    "  split       (with --split) each launch runs as parts, ranges of work-groups\n"
    "              on several devices at once; each device gets only the bytes\n"
    "              its range reads and sends back what it writes\n"
    "\n"
    "Options:\n"
    "  -o, --output PLAN    the plan to write ('-': stdout, the summary then going to\n"
    "                       stderr); it must not be FILE or DB, and it replaces an\n"
    "                       old PLAN only once whole\n"
    "  --passes LIST        passes to run, comma-separated (default and all: every\n"
    "                       pass but split, which needs --split; none)\n"
    "  --no-dead, --no-redundant, --no-fuse, --no-specialize, --no-schedule\n"
    "                       leave a pass out\n"
    "  --schedule           run the schedule pass (the default; with --passes, adds it)\n"
    "  --horizontal         the fuse pass also groups consecutive independent\n"
    "                       launches that read the same memory (off by default:\n"
    "                       holding launches in a live run can cost more than the\n"
    "                       launches it saves)\n"
    "  --split DEVICES      split launches over DEVICES, 'SPEC[:WEIGHT],...': a\n"
    "                       device as 'clrr devices' numbers or names it, and its\n"
    "                       share of the work-groups (default 1), e.g. 'cpu:1,gpu:3'.\n"
    "                       Without weights, and with the launch's costs measured\n"
    "                       ('clrr profile'), each launch gets the devices and\n"
    "                       shares predicted fastest, transfers included: maybe\n"
    "                       one other device, maybe none (it runs whole)\n"
    "  --split-kernel NAME  split only launches of kernel NAME\n"
    "  --costs DB           the cost database (default: this machine's, $CLRR_COSTS\n"
    "                       or ~/.cache/clrr/costs, when it exists)\n"
    "  --no-costs           even shares, whatever was measured\n"
    "  --device SPEC        the device the verification's, --measure's and --tune's\n"
    "                       replays run on (as 'clrr replay --device' takes it;\n"
    "                       default: the first of --split, else as replay picks)\n"
    "  --max-memory N       bytes the trace reader may hold (default 1 GiB or\n"
    "                       CLRR_MAX_MEMORY; K/M/G suffixes)\n"
    "  --no-verify          write the plan without replaying it first\n"
    "  --measure[=N]        after the verification, time each pass that is left: the\n"
    "                       plan with it and without it replayed here alternately, N\n"
    "                       times each (default 5); the pass stays only when the\n"
    "                       median with it is faster beyond the noise (half the\n"
    "                       spread of the runs without it, at least 2%). A pass\n"
    "                       whose timing cannot run (a timed replay mismatched) is\n"
    "                       removed, with those not yet measured. Last (after\n"
    "                       --tune), the final check: the whole plan against no\n"
    "                       plan, the same way; not faster, the class of least\n"
    "                       measured gain (a pass, or the tuning) goes and it runs\n"
    "                       again; with one class left, or not measurable, the plan\n"
    "                       keeps no transformation\n"
    "  --tune[=MODE]        after the verification (and --measure), tune work-group\n"
    "                       sizes: for every launch shape no other pass took, the\n"
    "                       local sizes legal on this device (its and the kernel's\n"
    "                       limits; reqd_work_group_size never retuned; the global\n"
    "                       size divisible) run alternately with the recorded one on\n"
    "                       the launch's recorded inputs, N times each (--measure=N,\n"
    "                       default 5); the fastest that wins beyond the noise (the\n"
    "                       quartiles of their runs apart) and by 3%, and leaves\n"
    "                       every memory argument\n"
    "                       bit-identical, goes into the plan for this device (name\n"
    "                       and driver). MODE: rapid (6 candidates), normal (16, the\n"
    "                       default) or exhaustive (128). Then, for each shape that\n"
    "                       kept its local size, coarsened kernels (rapid: factors\n"
    "                       2 and 4 along dimension 0, blocked, and 4 vector; normal:\n"
    "                       2, 4, 8, blocked and strided, 4, 8, 16 vector; exhaustive:\n"
    "                       every dimension),\n"
    "                       checked and timed the same way\n"
    "  --tune-force=coarsen:F  testing aid: only coarsening by F (2, 4 or 8) along\n"
    "                       dimension 0 is tried, and it is kept wherever its outputs\n"
    "                       are bit-identical, faster or not (the plan says so; the\n"
    "                       blocked form where it qualifies, else the strided);\n"
    "                       vector:F (2, 4, 8 or 16): the same with the vector form\n"
    "  --budget SECONDS     with --measure: the bound of all the measuring (the\n"
    "                       verification's replays, each pass's timing, the tuning,\n"
    "                       the final check; default 60): each stage gets what is\n"
    "                       left, the final check's 3 pairs of replays reserved; one\n"
    "                       that cannot run 3 alternated pairs in it stops and what\n"
    "                       it would measure is removed (\"not measured within\n"
    "                       --budget\"). --tune alone: the tuning's bound (default\n"
    "                       30). Progress on stderr when it is a terminal. Tuned\n"
    "                       local sizes are also added to the cost database (--costs\n"
    "                       DB, default this machine's; --no-costs: not)\n"
    "  --stage MODE         with --measure, last: a staging decision for the device\n"
    "                       of the trace's buffer writes and reads of 512\n"
    "                       KiB or more (through pinned memory, as clrr run stages\n"
    "                       them; making the blocks and the copies counted), timed\n"
    "                       as a pass: kept (staging) only when faster; when not,\n"
    "                       the plan says so (unstaged) and clrr run does not\n"
    "                       stage there by its rule. MODE: auto (devices without\n"
    "                       host-unified memory), all (any device), off. Not given,\n"
    "                       with --measure: auto, but only a slower staging is\n"
    "                       written (a faster one is left to clrr run's rule)\n"
    "  --json               one JSON object on stdout instead of the summary\n"
    "\n"
    "Exit status: 0 plan written, 2 usage error (PLAN is FILE, ...), 3 failed\n"
    "(unreadable trace, plan not writable; PLAN is left as it was).\n";

/* The partitioner's decisions, copied for the summary. */
typedef struct cli_part {
    char kernel[128], verdict[16], why[320];
    uint64_t seq, slices;
    unsigned dim, ndevs;
    char dev[PLAN_SPLIT_MAX_PARTS][64];
    uint64_t count[PLAN_SPLIT_MAX_PARTS];
    double predicted, alone, best, solve;
    unsigned best_i;
} cli_part;
typedef struct cli_parts {
    cli_part *v;
    size_t n;
    int oom;
} cli_parts;

static void cli_on_partition(void *user, const opt_partition_info *in)
{
    cli_parts *ps = user;
    cli_part *v = realloc(ps->v, (ps->n + 1) * sizeof *v);
    if (!v) {
        ps->oom = 1;
        return;
    }
    ps->v = v;
    cli_part *c = &v[ps->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->kernel, sizeof c->kernel, "%s", in->kernel);
    snprintf(c->verdict, sizeof c->verdict, "%s", in->verdict);
    snprintf(c->why, sizeof c->why, "%s", in->why ? in->why : "");
    c->seq = in->seq;
    c->slices = in->slices;
    c->dim = in->dim;
    c->ndevs = in->ndevs < PLAN_SPLIT_MAX_PARTS ? in->ndevs : PLAN_SPLIT_MAX_PARTS;
    for (unsigned i = 0; i < c->ndevs; i++) {
        snprintf(c->dev[i], sizeof c->dev[i], "%s", in->devices[i]);
        c->count[i] = in->count[i];
    }
    c->predicted = in->predicted_ns;
    c->alone = in->alone_ns;
    c->best = in->best_single_ns;
    c->best_i = in->best_single;
    c->solve = in->solve_ns;
}

/* A time in ns computed as a double, as a JSON integer (rounded). */
static json_t *cli_opt_ns_json(double ns)
{
    return isfinite(ns) && fabs(ns) < 9e18 ? json_integer((json_int_t)llround(ns)) : cli_json_f64(ns);
}

/* The partitions as a JSON array. */
static json_t *cli_parts_json(const cli_parts *ps)
{
    json_t *a = json_array();
    for (size_t i = 0; i < ps->n; i++) {
        const cli_part *c = &ps->v[i];
        json_t *o = json_object(), *devs = json_array();
        CLI_JSET(o, "kernel", cli_json_ctext(c->kernel));
        CLI_JSET(o, "seq", cli_json_u64(c->seq));
        CLI_JSET(o, "verdict", json_string(c->verdict));
        CLI_JSET(o, "dim", json_integer(c->dim));
        CLI_JSET(o, "groups", cli_json_u64(c->slices));
        for (unsigned d = 0; d < c->ndevs; d++) {
            json_t *e = json_object();
            CLI_JSET(e, "device", cli_json_ctext(c->dev[d]));
            CLI_JSET(e, "groups", cli_json_u64(c->count[d]));
            json_array_append_new(devs, e);
        }
        CLI_JSET(o, "devices", devs);
        if (!strcmp(c->verdict, "even") || !strcmp(c->verdict, "model")) {
            CLI_JSET(o, "why", cli_json_ctext(c->why));
        } else {
            CLI_JSET(o, "predicted_ns", cli_opt_ns_json(c->predicted));
            CLI_JSET(o, "alone_ns", cli_opt_ns_json(c->alone));
            CLI_JSET(o, "best_single", cli_json_ctext(c->dev[c->best_i]));
            CLI_JSET(o, "best_single_ns", cli_opt_ns_json(c->best));
            CLI_JSET(o, "solve_ns", cli_opt_ns_json(c->solve));
        }
        json_array_append_new(a, o);
    }
    return a;
}

static void cli_parts_print(const cli_parts *ps)
{
    for (size_t i = 0; i < ps->n; i++) {
        const cli_part *c = &ps->v[i];
        printf("partition %s (launch %" PRIu64 ", %" PRIu64 " groups along dim %u): ", c->kernel, c->seq, c->slices,
               c->dim);
        if (!strcmp(c->verdict, "even")) {
            printf("even shares: %s\n", c->why);
            continue;
        }
        if (!strcmp(c->verdict, "model")) {   /* not measured: the device-selection model decided */
            printf("whole on %s, decided by the model: %s\n", c->dev[c->best_i], c->why);
            continue;
        }
        if (!strcmp(c->verdict, "whole"))
            printf("whole on %s", c->dev[0]);
        else
            for (unsigned d = 0, first = 1; d < c->ndevs; d++)
                if (c->count[d]) {
                    printf("%s%s %" PRIu64, first ? "" : ", ", c->dev[d], c->count[d]);
                    first = 0;
                }
        printf("; predicted %.3f ms, the queue's device alone %.3f ms (%.2fx); solved in %.0f us\n",
               c->predicted / 1e6, c->alone / 1e6, c->predicted > 0 ? c->alone / c->predicted : 0, c->solve / 1e3);
    }
}

struct cli_verify;
static uint64_t cli_verify_readbacks(const struct cli_verify *cv);
static unsigned cli_verify_tuned(const struct cli_verify *cv);

/* The scheduled queues as a JSON array (the plan's fields). */
static json_t *cli_sched_json(const plan_file *p)
{
    json_t *a = json_array();
    for (size_t i = 0; i < plan_sched_count(p); i++) {
        const plan_sched *s = plan_get_sched(p, i);
        json_t *o = json_object();
        CLI_JSET(o, "id", json_integer(s->id));
        CLI_JSET(o, "queue", cli_json_u64(s->queue));
        CLI_JSET(o, "lanes", json_integer(s->lanes));
        CLI_JSET(o, "commands", cli_json_u64(s->commands));
        CLI_JSET(o, "uploads", cli_json_u64(s->uploads));
        CLI_JSET(o, "downloads", cli_json_u64(s->downloads));
        CLI_JSET(o, "recorded_ns", cli_json_u64(s->recorded_ns));
        CLI_JSET(o, "predicted_ns", cli_json_u64(s->predicted_ns));
        CLI_JSET(o, "reason", cli_json_ctext(s->reason));
        json_array_append_new(a, o);
    }
    return a;
}

static void cli_optimize_print(const char *path, const char *out, const plan_file *p, int json, const char *note,
                               const char *rw_note, const cli_parts *ps, const char *verify,
                               const opt_verify_result *vr, const struct cli_verify *cv)
{
    const plan_info *in = plan_get_info(p);
    if (json) {
        json_t *o = json_object(), *a = json_array(), *v = json_object();
        char fp[24];
        CLI_JSET(o, "schema", json_string("clrr-optimize/1"));
        CLI_JSET(o, "trace", cli_json_ctext(path));
        CLI_JSET(o, "plan", cli_json_ctext(out));
        CLI_JSET(o, "calls", cli_json_u64(in->trace_calls));
        snprintf(fp, sizeof fp, "%016" PRIx64, in->fingerprint);
        CLI_JSET(o, "fingerprint", json_string(fp));
        CLI_JSET(o, "transformations", cli_json_u64(plan_xform_count(p)));
        for (unsigned i = 0; i < PLAN_PASS_COUNT; i++) {
            const plan_pass_result *r = plan_get_pass(p, (plan_pass)i);
            json_t *e = json_object();
            CLI_JSET(e, "name", json_string(plan_pass_name((plan_pass)i)));
            CLI_JSET(e, "enabled", json_boolean(r->enabled));
            CLI_JSET(e, "transformations", cli_json_u64(r->transformations));
            CLI_JSET(e, "commands", cli_json_u64(r->effect.commands));
            CLI_JSET(e, "kernels", cli_json_u64(r->effect.kernels));
            CLI_JSET(e, "bytes", cli_json_u64(r->effect.bytes));
            CLI_JSET(e, "device_ns", cli_json_u64(r->effect.device_ns));
            CLI_JSET(e, "timed", cli_json_u64(r->effect.timed));
            json_array_append_new(a, e);
        }
        CLI_JSET(o, "passes", a);
        CLI_JSET(o, "splits", cli_json_u64(plan_split_count(p)));
        CLI_JSET(o, "specializations", cli_json_u64(plan_spec_count(p)));
        CLI_JSET(o, "local_sizes", cli_json_u64(plan_local_count(p)));
        CLI_JSET(o, "schedule", cli_sched_json(p));
        CLI_JSET(o, "split_note", cli_json_ctext(note));
        CLI_JSET(o, "rewriter_note", cli_json_ctext(rw_note));
        CLI_JSET(o, "partitions", cli_parts_json(ps));
        CLI_JSET(v, "status", json_string(verify));
        CLI_JSET(v, "replays", json_integer(vr->replays));
        CLI_JSET(v, "removed", cli_json_u64(vr->removed));
        CLI_JSET(v, "readbacks", cli_json_u64(cli_verify_readbacks(cv)));
        CLI_JSET(v, "timed", json_integer(vr->timed));
        CLI_JSET(v, "slower", json_integer(vr->slower));
        CLI_JSET(v, "unmeasured", json_integer(vr->unmeasured));
        CLI_JSET(v, "final", json_string(vr->final_empty ? "emptied" : vr->final_kept ? "kept" : "not run"));
        CLI_JSET(v, "final_removed", json_integer(vr->final_removed));
        CLI_JSET(o, "verify", v);
        if (cli_json_put(stdout, o) < 0)
            cli_err("optimize: out of memory");
        else
            putchar('\n');
        return;
    }
    printf("optimized %s (%" PRIu64 " calls) -> %s\n", path, in->trace_calls, out);
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++) {
        const plan_pass_result *r = plan_get_pass(p, (plan_pass)i);
        printf("pass      %-10s ", plan_pass_name((plan_pass)i));
        if (!r->enabled) {
            printf("off\n");
            continue;
        }
        if (i == PLAN_PASS_SPLIT) {   /* nothing is left out: launches run in parts */
            printf("%" PRIu64 " launches split (%zu distinct splits)\n", r->transformations, plan_split_count(p));
            continue;
        }
        if (i == PLAN_PASS_SPECIALIZE) {   /* nothing is left out: launches run specialized */
            uint64_t nl = 0;   /* one transformation per shape pattern: its launches (occurrences) */
            for (size_t k = 0; k < plan_xform_count(p); k++)
                if (plan_get_xform(p, k)->pass == PLAN_PASS_SPECIALIZE)
                    nl += plan_get_xform(p, k)->occurrences ? plan_get_xform(p, k)->occurrences : 1;
            printf("%" PRIu64 " launches specialized (%zu specialized kernels)\n", nl, plan_spec_count(p));
            continue;
        }
        if (i == PLAN_PASS_WGSIZE) {   /* nothing is left out: launches run with other local sizes */
            printf("%" PRIu64 " launch shape%s tuned\n", r->transformations, r->transformations == 1 ? "" : "s");
            continue;
        }
        if (i == PLAN_PASS_SCHEDULE) {   /* nothing is left out: queues run over lanes */
            printf("%zu queue%s scheduled\n", plan_sched_count(p), plan_sched_count(p) == 1 ? "" : "s");
            continue;
        }
        cli_opt_effect_print(&r->effect);
        printf("\n");
    }
    if (plan_get_pass(p, PLAN_PASS_SPLIT)->enabled && note[0])
        printf("          %s\n", note);
    if (rw_note[0])   /* what the rewriter could not make (the launches run as recorded) */
        printf("          %s\n", rw_note);
    for (size_t i = 0; i < plan_sched_count(p); i++) {
        printf("schedule  ");
        cli_opt_sched_print(plan_get_sched(p, i));
        printf("\n");
    }
    cli_parts_print(ps);
    if (vr->baseline)
        printf("verified  no: the trace mismatches here even without a plan; the plan has no transformation (%"
               PRIu64 " removed)\n", vr->removed);
    else if (!strcmp(verify, "verified") && cli_verify_tuned(cv))
        printf("verified  the plan replayed here with its %u tuned local size%s: %" PRIu64
               " read-backs match the recording\n", cli_verify_tuned(cv), cli_verify_tuned(cv) == 1 ? "" : "s",
               cli_verify_readbacks(cv));
    else if (!strcmp(verify, "verified") && vr->replays)
        printf("verified  the plan replayed here: %" PRIu64 " read-backs match the recording (%u replay%s, %" PRIu64
               " removed)\n", cli_verify_readbacks(cv), vr->replays, vr->replays == 1 ? "" : "s", vr->removed);
    else if (!strcmp(verify, "verified"))
        printf("verified  the plan changes nothing\n");
    printf("plan      %zu transformation%s; run it with: clrr replay %s --plan %s\n", plan_xform_count(p),
           plan_xform_count(p) == 1 ? "" : "s", path, out);
}

/* ------------------------------------------------------------ verification */

typedef struct cli_verify {
    const char *path, *device;
    size_t max_memory;
    uint64_t readbacks, mismatches;   /* the last replay's */
    int json;
    int64_t exec_ns;          /* the last replay's OpenCL time */
    uint64_t calls;           /* the trace's, for the progress line (0: not counted yet) */
    char dev[256];            /* the last replay's device, as a trust record names it */
    unsigned tuned;           /* --tune: local sizes kept after the tuned plan replayed verified */
    opt_replay_info info;     /* the last replay's large transfers (staging) */
    char pcmd[64];            /* the progress line's command ("optimize: final 3/6 20s left", cut to
                                 what cli_progress keeps; empty: "optimize") */
    unsigned timed;           /* timed replays so far (CLRR_TEST_TIMED_MISMATCH) */
} cli_verify;

/* cli_verify_replay()'s work, in the child process. */
static int cli_verify_replay_here(void *user, const plan_file *p, char *err, size_t err_cap)
{
    cli_verify *v = user;
    live_exec *ex = NULL;
    plan_status pst = live_exec_open(p, v->path, v->max_memory, &ex, err, err_cap);
    if (pst != PLAN_OK)
        return -1;
    rpl_plan_hook hook;
    live_exec_replay_hook(ex, &hook);
    if (!plan_xform_count(p))
        hook.on_item = NULL;
    rpl_opts o;
    rpl_opts_init(&o);
    o.max_memory = v->max_memory;
    o.device = v->device;
    o.probe_stage = 1;   /* the large transfers' device, for --stage */
    if (plan_xform_count(p) || plan_sched_count(p) || plan_stage_count(p))
        o.plan = &hook;
    rpl_session *s = NULL;
    int rc = -1;
    cli_progress *prog = cli_progress_new(v->pcmd[0] ? v->pcmd : "optimize", "verifying: call", 0, v->json);
    if (prog) {
        if (!v->calls)
            v->calls = cli_progress_count_calls(v->path);
        cli_progress_total(prog, v->calls);
        o.user = prog;
        o.on_progress = cli_progress_on_call;
    }
    if (rpl_open(&s, v->path, &o) != RPL_OK) {
        cli_progress_end(prog);
        snprintf(err, err_cap, "%s", rpl_open_error());
        goto out;
    }
    rpl_status st = rpl_run(s);
    cli_progress_end(prog);
    rpl_summary sum;
    rpl_get_summary(s, &sum);
    if (st != RPL_OK) {
        snprintf(err, err_cap, "%s", rpl_error(s));
        goto out;
    }
    if (!sum.mismatches)
        v->readbacks = sum.readbacks;
    v->exec_ns = sum.exec_ns;
    v->mismatches = sum.mismatches;
    memset(&v->info, 0, sizeof v->info);
    v->info.min_bytes = RPL_STAGE_PROBE;
    v->info.transfers = sum.large_transfers;
    v->info.bytes = sum.large_bytes;
    v->info.unified = sum.large_unified;
    memcpy(v->info.device, sum.large_device, sizeof v->info.device);
    memcpy(v->info.driver, sum.large_driver, sizeof v->info.driver);
    cli_opt_device_name(sum.device, v->dev, sizeof v->dev);
    rc = !sum.mismatches ? 0 : strcmp(sum.device, sum.recorded_device) ? 2 : 1;
    if (rc == 2)
        snprintf(err, err_cap, "recorded on %.240s, replayed on %.240s", sum.recorded_device, sum.device);
out:
    rpl_close(s);
    live_exec_close(ex);
    return rc;
}

/* What a verification's replay sends back from its process. */
typedef struct cli_vres {
    int32_t rc;
    uint64_t readbacks, mismatches, calls;
    int64_t exec_ns;
    opt_replay_info info;
    char dev[256], err[512];
} cli_vres;

/* opt_verify.replay: the trace replayed here with plan @p p, verified, in a
 * child process (fork) so that this process never starts an OpenCL
 * driver: --tune's workers are processes of its own, and on the H200 a
 * process started by one that has made a context on NVIDIA's OpenCL finds
 * no GPU (its tuning replays all failed: "--device gpu: no gpu device
 * here"). */
static int cli_verify_replay(void *user, const plan_file *p, char *err, size_t err_cap)
{
    cli_verify *v = user;
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) {
        snprintf(err, err_cap, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        static cli_vres r;
        memset(&r, 0, sizeof r);
        r.rc = cli_verify_replay_here(v, p, r.err, sizeof r.err);
        r.readbacks = v->readbacks;
        r.mismatches = v->mismatches;
        r.calls = v->calls;
        r.exec_ns = v->exec_ns;
        r.info = v->info;
        snprintf(r.dev, sizeof r.dev, "%s", v->dev);
        const char *c = (const char *)&r;
        size_t n = sizeof r;
        while (n) {
            ssize_t k = write(fd[1], c, n);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            c += k;
            n -= (size_t)k;
        }
        fflush(NULL);
        _exit(0);
    }
    close(fd[1]);
    if (pid < 0) {
        snprintf(err, err_cap, "fork: %s", strerror(errno));
        close(fd[0]);
        return -1;
    }
    static cli_vres r;
    char *c = (char *)&r;
    size_t n = sizeof r;
    while (n) {
        ssize_t k = read(fd[0], c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        c += k;
        n -= (size_t)k;
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (n) {
        if (WIFSIGNALED(status))
            snprintf(err, err_cap, "the replay died (signal %d)", WTERMSIG(status));
        else
            snprintf(err, err_cap, "the replay's process ended early (exit %d)",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    r.err[sizeof r.err - 1] = r.dev[sizeof r.dev - 1] = 0;
    v->readbacks = r.readbacks;
    v->mismatches = r.mismatches;
    v->calls = r.calls;
    v->exec_ns = r.exec_ns;
    v->info = r.info;
    v->info.device[sizeof v->info.device - 1] = v->info.driver[sizeof v->info.driver - 1] = 0;
    snprintf(v->dev, sizeof v->dev, "%s", r.dev);
    if (r.rc)
        snprintf(err, err_cap, "%s", r.err);
    return r.rc;
}

/* opt_verify.time: the trace replayed with @p p, verified, its OpenCL time. */
static int cli_verify_time(void *user, const plan_file *p, double *ns, char *err, size_t err_cap)
{
    cli_verify *v = user;
    v->exec_ns = 0;
    /* tests: after N timed replays, each one says it mismatched (as a
     * nondeterministic trace's would; tests/e2e/opt_budget.sh) */
    const char *tm = getenv("CLRR_TEST_TIMED_MISMATCH");
    if (tm && *tm && v->timed++ >= (unsigned)atoi(tm)) {
        snprintf(err, err_cap, "a timed replay mismatched (CLRR_TEST_TIMED_MISMATCH)");
        *ns = 0;
        return 1;
    }
    int r = cli_verify_replay(user, p, err, err_cap);
    v->pcmd[0] = 0;
    if (r > 0)
        snprintf(err, err_cap, "a timed replay mismatched");
    *ns = (double)v->exec_ns;
    return r != 0;
}

static unsigned cli_verify_tuned(const struct cli_verify *cv)
{
    return cv->tuned;
}

static uint64_t cli_verify_readbacks(const struct cli_verify *cv)
{
    return cv->readbacks;
}

/* opt_verify.replay_info: the last replay's large transfers. */
static void cli_verify_info(void *user, opt_replay_info *out)
{
    *out = ((const cli_verify *)user)->info;
}

static void cli_verify_removed(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "clrr optimize: verify: %s\n", line);
}

/* opt_verify.on_stage: the next timed replay's progress line says which
 * stage and which replay (on a terminal; the replay draws it). */
static void cli_verify_stage(void *user, const char *stage, unsigned done, unsigned total, double left)
{
    cli_verify *v = user;
    if (left >= 0)
        snprintf(v->pcmd, sizeof v->pcmd, "optimize: %.10s %u/%u %.0fs left", stage, done, total, left);
    else
        snprintf(v->pcmd, sizeof v->pcmd, "optimize: %.10s %u/%u", stage, done, total);
}

/* ------------------------------------------------------------ tuning */

typedef struct cli_tune {
    cli_verify *cv;
    int progress;             /* stderr is a terminal */
} cli_tune;

/* Each measurement runs in a process of its own (this program again, as a
 * worker: CLRR_TUNE_WORKER names the descriptor it answers on), so that a
 * local size a kernel does not take — writing past a buffer sized for the
 * recorded number of work-groups, on a CPU device the host's memory —
 * costs that candidate, not the optimizer. */
#define CLI_TUNE_MAXC 132
enum { CLI_TUNE_PROBE = 1, CLI_TUNE_TIME = 2, CLI_TUNE_HASH = 3, CLI_TUNE_CO_HASH = 4, CLI_TUNE_CO_TIME = 5 };
#define CLI_TUNE_CO_MAX ((size_t)4 << 20)   /* a coarsened program's source, at most */
typedef struct cli_treq {
    uint32_t mode, n, reps, has_lsz, has_device;
    uint64_t seq, max_memory;
    uint64_t lsz[3];
    char path[4096], device[256];
    uint64_t rows[CLI_TUNE_MAXC][3];
    /* CO_HASH, CO_TIME: the coarsened kernel; co_len bytes of its program follow */
    uint32_t co_dim, co_factor, co_has_lsz;
    uint64_t co_lsz[3], co_len;
    char co_name[64], co_options[65536];
} cli_treq;
typedef struct cli_tres {
    int32_t rc;
    char err[512];
    rpl_tune_limits lim;
    uint8_t hash[16];
    int64_t ns[CLI_TUNE_MAXC * OPT_VERIFY_MAX_REPS];
} cli_tres;

static int cli_tune_io(int fd, void *p, size_t n, int wr)
{
    char *c = p;
    while (n) {
        ssize_t k = wr ? write(fd, c, n) : read(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The worker: one request on stdin, its answer on descriptor @p fd. */
static int cli_tune_worker(int fd)
{
    static cli_treq rq;
    static cli_tres rs;
    memset(&rs, 0, sizeof rs);
    if (cli_tune_io(0, &rq, sizeof rq, 0))
        return CLI_EXIT_ERROR;
    rq.path[sizeof rq.path - 1] = rq.device[sizeof rq.device - 1] = 0;
    rq.co_name[sizeof rq.co_name - 1] = rq.co_options[sizeof rq.co_options - 1] = 0;
    char *co_src = NULL;
    if (rq.mode == CLI_TUNE_CO_HASH || rq.mode == CLI_TUNE_CO_TIME) {
        if (!rq.co_len || rq.co_len > CLI_TUNE_CO_MAX || !(co_src = malloc(rq.co_len + 1)) ||
            cli_tune_io(0, co_src, rq.co_len, 0)) {
            free(co_src);
            return CLI_EXIT_ERROR;
        }
        co_src[rq.co_len] = 0;
    }
    rpl_coarse co = {1, rq.co_name, co_src, rq.co_options, rq.co_dim, rq.co_factor, (int)rq.co_has_lsz,
                     {(size_t)rq.co_lsz[0], (size_t)rq.co_lsz[1], (size_t)rq.co_lsz[2]}};
    rpl_opts o;
    rpl_opts_init(&o);
    o.max_memory = (size_t)rq.max_memory;
    o.device = rq.has_device ? rq.device : NULL;
    rpl_status st = RPL_ERR_ARG;
    if (rq.mode == CLI_TUNE_PROBE) {
        st = rpl_tune_probe(rq.path, &o, rq.seq, &rs.lim, rs.err, sizeof rs.err);
    } else if (rq.mode == CLI_TUNE_TIME && rq.n && rq.n <= CLI_TUNE_MAXC && rq.reps && rq.reps <= OPT_VERIFY_MAX_REPS) {
        size_t rows[CLI_TUNE_MAXC][3];
        for (unsigned i = 0; i < rq.n; i++)
            for (unsigned d = 0; d < 3; d++)
                rows[i][d] = (size_t)rq.rows[i][d];
        st = rpl_tune_time(rq.path, &o, rq.seq, (const size_t(*)[3])rows, rq.n, rq.reps, rs.ns, rs.err,
                           sizeof rs.err);
    } else if (rq.mode == CLI_TUNE_HASH) {
        size_t l[3] = {(size_t)rq.lsz[0], (size_t)rq.lsz[1], (size_t)rq.lsz[2]};
        st = rpl_tune_hash(rq.path, &o, rq.seq, rq.has_lsz ? l : NULL, rs.hash, rs.err, sizeof rs.err);
    } else if (rq.mode == CLI_TUNE_CO_HASH) {
        st = rpl_tune_coarse_hash(rq.path, &o, rq.seq, &co, rs.hash, rs.err, sizeof rs.err);
    } else if (rq.mode == CLI_TUNE_CO_TIME && rq.reps && rq.reps <= OPT_VERIFY_MAX_REPS) {
        st = rpl_tune_coarse_time(rq.path, &o, rq.seq, &co, rq.reps, rs.ns, rs.err, sizeof rs.err);
    } else {
        snprintf(rs.err, sizeof rs.err, "a bad tuning request");
    }
    free(co_src);
    rs.rc = st == RPL_OK ? 0 : 1;
    return cli_tune_io(fd, &rs, sizeof rs, 1) ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

/* Reads @p n bytes from @p fd by @p until (CLOCK_MONOTONIC seconds).
 * @return 0, -1 (closed or an error), -2 (out of time). */
static int cli_tune_read_by(int fd, void *p, size_t n, double until)
{
    char *c = p;
    while (n) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double left = until - ((double)ts.tv_sec + ts.tv_nsec / 1e9);
        if (left <= 0)
            return -2;
        struct pollfd pf = {fd, POLLIN, 0};
        int r = poll(&pf, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (!r)
            continue;
        ssize_t k = read(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* When a measurement must end (CLOCK_MONOTONIC seconds): set by --tune
 * (its budget's end, plus 5 s), at least 5 s from each call's start. */
static double cli_tune_until;

/* Runs request @p rq in a worker; 0 with *rs, or -1 with one line in err.
 * A worker still running at cli_tune_until is killed (a local size that
 * makes the kernel loop or the driver hang). */
static int cli_tune_call_src(const cli_treq *rq, const char *src, cli_tres *rs, char *err, size_t cap);
static int cli_tune_call(const cli_treq *rq, cli_tres *rs, char *err, size_t cap)
{
    return cli_tune_call_src(rq, NULL, rs, err, cap);
}

/* cli_tune_call() with @p src (rq->co_len bytes) sent after the request. */
static int cli_tune_call_src(const cli_treq *rq, const char *src, cli_tres *rs, char *err, size_t cap)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC)) {
        snprintf(err, cap, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(out, O_CLOEXEC)) {
        snprintf(err, cap, "pipe: %s", strerror(errno));
        close(in[0]);
        close(in[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(in[0], 0) < 0 || dup2(out[1], 3) < 0 || setenv("CLRR_TUNE_WORKER", "3", 1))
            _exit(127);
        char *args[] = {(char *)"clrr", (char *)"optimize", NULL};
        execv("/proc/self/exe", args);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    int rc = -1;
    if (pid < 0) {
        snprintf(err, cap, "fork: %s", strerror(errno));
        close(in[1]);
        close(out[0]);
        return -1;
    }
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    int wrote = !cli_tune_io(in[1], (void *)rq, sizeof *rq, 1) &&
                (!src || !cli_tune_io(in[1], (void *)src, (size_t)rq->co_len, 1));
    close(in[1]);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double t = (double)now.tv_sec + now.tv_nsec / 1e9, until = cli_tune_until > t + 5 ? cli_tune_until : t + 5;
    int rd = wrote ? cli_tune_read_by(out[0], rs, sizeof *rs, until) : -1, got = rd == 0;
    if (rd == -2)
        kill(pid, SIGKILL);
    close(out[0]);
    signal(SIGPIPE, old);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rd == -2)
        snprintf(err, cap, "the replay took longer than %.0f s: stopped", until - t);
    else if (WIFSIGNALED(status))
        snprintf(err, cap, "the replay died (signal %d)", WTERMSIG(status));
    else if (!got)
        snprintf(err, cap, "the tuning process ended early (exit %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    else if (rs->rc)
        snprintf(err, cap, "%s", rs->err);
    else
        rc = 0;
    return rc;
}

static void cli_tune_req(const cli_tune *t, cli_treq *rq, uint32_t mode, uint64_t seq)
{
    memset(rq, 0, sizeof *rq);
    rq->mode = mode;
    rq->seq = seq;
    rq->max_memory = t->cv->max_memory;
    snprintf(rq->path, sizeof rq->path, "%s", t->cv->path);
    if (t->cv->device) {
        rq->has_device = 1;
        snprintf(rq->device, sizeof rq->device, "%s", t->cv->device);
    }
}

static int cli_tune_probe(void *user, uint64_t seq, opt_wg_limits *out, char *err, size_t err_cap)
{
    cli_tune *t = user;
    static cli_treq rq;
    static cli_tres rs;
    cli_tune_req(t, &rq, CLI_TUNE_PROBE, seq);
    if (cli_tune_call(&rq, &rs, err, err_cap))
        return -1;
    const rpl_tune_limits *L = &rs.lim;
    memset(out, 0, sizeof *out);
    out->dim = L->dim;
    out->has_local = L->has_local;
    for (unsigned d = 0; d < 3; d++) {
        out->global[d] = L->global[d];
        out->local[d] = L->local[d];
        out->dev_max_items[d] = L->dev_max_items[d];
        out->reqd[d] = L->reqd[d];
    }
    out->dev_max_wg = L->dev_max_wg;
    out->kernel_wg = L->kernel_wg;
    out->pref_multiple = L->pref_multiple;
    out->hashable = L->hashable;
    snprintf(out->device, sizeof out->device, "%.255s", L->device);
    snprintf(out->driver, sizeof out->driver, "%.127s", L->driver);
    snprintf(out->identity, sizeof out->identity, "%.511s", L->identity);
    return 0;
}

static int cli_tune_time(void *user, uint64_t seq, const uint64_t (*cands)[3], unsigned n, unsigned reps, int64_t *ns,
                         char *err, size_t err_cap)
{
    cli_tune *t = user;
    static cli_treq rq;
    static cli_tres rs;
    if (n > CLI_TUNE_MAXC || reps > OPT_VERIFY_MAX_REPS) {
        snprintf(err, err_cap, "%u candidates, %u runs each: too many", n, reps);
        return -1;
    }
    cli_tune_req(t, &rq, CLI_TUNE_TIME, seq);
    rq.n = n;
    rq.reps = reps;
    memcpy(rq.rows, cands, n * sizeof *cands);
    if (cli_tune_call(&rq, &rs, err, err_cap))
        return -1;
    memcpy(ns, rs.ns, (size_t)n * reps * sizeof *ns);
    return 0;
}

static int cli_tune_hash(void *user, uint64_t seq, const uint64_t *lsz, uint8_t h[16], char *err, size_t err_cap)
{
    cli_tune *t = user;
    static cli_treq rq;
    static cli_tres rs;
    cli_tune_req(t, &rq, CLI_TUNE_HASH, seq);
    if (lsz) {
        rq.has_lsz = 1;
        memcpy(rq.lsz, lsz, sizeof rq.lsz);
    }
    if (cli_tune_call(&rq, &rs, err, err_cap))
        return -1;
    memcpy(h, rs.hash, 16);
    return 0;
}

/* A coarsening request (opt_tune.co_hash, co_time). */
static int cli_tune_co_req(const cli_tune *t, cli_treq *rq, uint32_t mode, uint64_t seq, const opt_coarse_cand *c,
                           char *err, size_t err_cap)
{
    cli_tune_req(t, rq, mode, seq);
    if (!c->len || c->len > CLI_TUNE_CO_MAX || strlen(c->name) >= sizeof rq->co_name ||
        strlen(c->options ? c->options : "") >= sizeof rq->co_options) {
        snprintf(err, err_cap, "the coarsened program is too large to measure");
        return -1;
    }
    rq->co_dim = c->dim;
    rq->co_factor = c->factor;
    rq->co_has_lsz = (uint32_t)c->has_local;
    memcpy(rq->co_lsz, c->local, sizeof rq->co_lsz);
    rq->co_len = c->len;
    snprintf(rq->co_name, sizeof rq->co_name, "%s", c->name);
    snprintf(rq->co_options, sizeof rq->co_options, "%s", c->options ? c->options : "");
    return 0;
}

static int cli_tune_co_hash(void *user, uint64_t seq, const opt_coarse_cand *c, uint8_t h[16], char *err,
                            size_t err_cap)
{
    cli_tune *t = user;
    static cli_treq rq;
    static cli_tres rs;
    if (cli_tune_co_req(t, &rq, CLI_TUNE_CO_HASH, seq, c, err, err_cap) ||
        cli_tune_call_src(&rq, c->source, &rs, err, err_cap))
        return -1;
    memcpy(h, rs.hash, 16);
    return 0;
}

static int cli_tune_co_time(void *user, uint64_t seq, const opt_coarse_cand *c, unsigned reps, int64_t *ns,
                            char *err, size_t err_cap)
{
    cli_tune *t = user;
    static cli_treq rq;
    static cli_tres rs;
    if (reps > OPT_VERIFY_MAX_REPS) {
        snprintf(err, err_cap, "%u runs each: too many", reps);
        return -1;
    }
    if (cli_tune_co_req(t, &rq, CLI_TUNE_CO_TIME, seq, c, err, err_cap))
        return -1;
    rq.reps = reps;
    if (cli_tune_call_src(&rq, c->source, &rs, err, err_cap))
        return -1;
    memcpy(ns, rs.ns, (size_t)2 * reps * sizeof *ns);
    return 0;
}

static int cli_tune_replay(void *user, const plan_file *p, char *err, size_t err_cap)
{
    cli_tune *t = user;
    return cli_verify_replay(t->cv, p, err, err_cap);
}

static void cli_tune_line(void *user, const char *line)
{
    cli_tune *t = user;
    if (t->progress)
        fputs("\r\033[K", stderr);
    fprintf(stderr, "clrr optimize: tune: %s\n", line);
}

static void cli_tune_progress(void *user, unsigned done, unsigned total, double elapsed)
{
    cli_tune *t = user;
    if (!t->progress)
        return;
    fprintf(stderr, "\r\033[Kclrr optimize: tune: %u/%u launch shapes, %.1f s", done, total, elapsed);
    if (done == total)
        fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* --tune, as opt_verify.after: the wgsize pass within what the budget left. */
typedef struct cli_after {
    cli_verify *cv;
    const char *path;
    size_t max_memory;
    opt_tune_mode mode;
    unsigned reps;
    cdb *costs;
    unsigned force_factor;
} cli_after;
static cli_after cli_after_ctx;

static plan_status cli_tune_after(void *user, plan_file *p, double budget, char *err, size_t err_cap)
{
    (void)user;
    cli_after *a = &cli_after_ctx;
    cli_tune ct = {a->cv, isatty(2)};
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    cli_tune_until = (double)now.tv_sec + now.tv_nsec / 1e9 + budget + 5;
    opt_tune t = {a->mode, budget, a->reps, cli_tune_probe, cli_tune_time, cli_tune_hash, cli_tune_replay,
                  cli_tune_line, cli_tune_progress, &ct, a->costs, cli_tune_co_hash, cli_tune_co_time,
                  a->force_factor};
    opt_tune_result tr;
    plan_status st = opt_tune_plan(a->path, p, &t, a->max_memory, &tr, err, err_cap);
    if (st != PLAN_OK)
        return st;
    if (!tr.removed)
        a->cv->tuned = tr.tuned + tr.coarsened;
    fprintf(stderr, "clrr optimize: tune: %u launch shape%s coarsened, %u with coarsenings measured, %u "
            "where a coarsening changed the outputs, %u refused by the rewriter\n", tr.coarsened,
            tr.coarsened == 1 ? "" : "s", tr.co_measured, tr.co_differ, tr.co_refused);
    fprintf(stderr, "clrr optimize: tune: %u launch shape%s, %u measured, %u tuned, %u kept because a "
            "faster local size changed the outputs, %u skipped, %u out of budget (%.1f s of %.1f)\n", tr.shapes,
            tr.shapes == 1 ? "" : "s", tr.measured, tr.tuned, tr.differ, tr.skipped, tr.left, tr.seconds, budget);
    char cerr[512] = "";
    if (a->costs && tr.recorded && cdb_flush(a->costs, cerr, sizeof cerr) != CDB_OK)
        cli_err("warning: the tuned local sizes are not kept in %s: %s", cdb_path(a->costs), cerr);
    else if (a->costs && tr.recorded)
        fprintf(stderr, "clrr optimize: tune: %u tuned local size%s added to %s\n", tr.recorded,
                tr.recorded == 1 ? "" : "s", cdb_path(a->costs));
    return PLAN_OK;
}

static int cli_optimize_run(int argc, char **argv)
{
    enum { O_PASSES = 256, O_NO_VERIFY, O_MEASURE, O_NO_DEAD, O_NO_REDUNDANT, O_NO_FUSE, O_NO_SPECIALIZE, O_NO_SCHEDULE, O_SCHEDULE, O_HORIZONTAL, O_MAXMEM, O_JSON, O_SPLIT, O_SPLIT_KERNEL, O_COSTS,
           O_NO_COSTS, O_DEVICE, O_TUNE, O_BUDGET, O_TUNE_FORCE, O_STAGE };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"passes", required_argument, NULL, O_PASSES},
        {"no-verify", no_argument, NULL, O_NO_VERIFY}, {"measure", optional_argument, NULL, O_MEASURE}, {"no-dead", no_argument, NULL, O_NO_DEAD}, {"no-redundant", no_argument, NULL, O_NO_REDUNDANT},
        {"no-fuse", no_argument, NULL, O_NO_FUSE}, {"no-specialize", no_argument, NULL, O_NO_SPECIALIZE},
        {"no-schedule", no_argument, NULL, O_NO_SCHEDULE}, {"schedule", no_argument, NULL, O_SCHEDULE},
        {"horizontal", no_argument, NULL, O_HORIZONTAL},
        {"split", required_argument, NULL, O_SPLIT},
        {"split-kernel", required_argument, NULL, O_SPLIT_KERNEL}, {"costs", required_argument, NULL, O_COSTS},
        {"no-costs", no_argument, NULL, O_NO_COSTS}, {"device", required_argument, NULL, O_DEVICE},
        {"max-memory", required_argument, NULL, O_MAXMEM}, {"json", no_argument, NULL, O_JSON},
        {"tune", optional_argument, NULL, O_TUNE}, {"budget", required_argument, NULL, O_BUDGET},
        {"tune-force", required_argument, NULL, O_TUNE_FORCE}, {"stage", required_argument, NULL, O_STAGE},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    const char *worker = getenv("CLRR_TUNE_WORKER");   /* a measurement of --tune's (cli_tune_call) */
    if (worker && *worker)
        return cli_tune_worker(atoi(worker));
    char note[512] = "";
    char rw_note[1024] = "", limit_note[512] = "";
    opt_options o = {PLAN_PASSES_DEFAULT, NULL, cli_max_memory(), NULL, NULL, note, sizeof note, NULL, NULL, NULL, NULL, 0,
                     rw_note, sizeof rw_note, NULL, 0, limit_note, sizeof limit_note, 0, NULL};
    cli_parts ps = {NULL, 0, 0};
    const char *out = NULL, *costs = NULL;
    int no_costs = 0, no_verify = 0;
    unsigned measure = 0;
    int tune = 0;
    opt_tune_mode tune_mode = OPT_TUNE_NORMAL;
    double budget = 0;   /* 0: the default (60 s with --measure, 30 s for --tune alone) */
    unsigned force_factor = 0;
    int stage = OPT_STAGE_OFF, stage_set = 0;
    unsigned off = 0, on = 0;
    int json = 0, c;
    uint64_t v;
    char err[512];
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case O_PASSES:
            if (plan_passes_parse(optarg, &o.passes, err, sizeof err) < 0)
                return cli_usage_err("--passes: %s", err);
            break;
        case O_NO_VERIFY: no_verify = 1; break;
        case O_MEASURE:
            measure = 5;
            if (optarg && (cli_parse_u64(optarg, &v, 0) < 0 || v < 3 || v > OPT_VERIFY_MAX_REPS))
                return cli_usage_err("--measure takes the timed replays per plan, 3 to %d, not '%s'",
                                     OPT_VERIFY_MAX_REPS, optarg);
            if (optarg)
                measure = (unsigned)v;
            break;
        case O_NO_DEAD: off |= 1u << PLAN_PASS_DEAD; break;
        case O_NO_REDUNDANT: off |= 1u << PLAN_PASS_REDUNDANT; break;
        case O_NO_FUSE: off |= 1u << PLAN_PASS_FUSE; break;
        case O_NO_SPECIALIZE: off |= 1u << PLAN_PASS_SPECIALIZE; break;
        case O_NO_SCHEDULE: off |= 1u << PLAN_PASS_SCHEDULE; break;
        case O_SCHEDULE: on |= 1u << PLAN_PASS_SCHEDULE; break;
        case O_HORIZONTAL: o.horizontal = 1; break;
        case O_MAXMEM:
            if (cli_parse_u64(optarg, &v, 1) < 0 || v < 4096)
                return cli_usage_err("--max-memory takes a byte count (at least 4096; K, M, G suffixes), not '%s'",
                                     optarg);
            o.max_memory = (size_t)v;
            break;
        case O_JSON: json = 1; break;
        case O_SPLIT:
            if (!*optarg)
                return cli_usage_err("--split takes devices, 'SPEC[:WEIGHT],...' (see 'clrr devices')");
            o.split = optarg;
            break;
        case O_SPLIT_KERNEL: o.split_kernel = optarg; break;
        case O_COSTS: costs = optarg; break;
        case O_NO_COSTS: no_costs = 1; break;
        case O_DEVICE: o.device = optarg; break;
        case O_TUNE:
            tune = 1;
            if (optarg && opt_tune_mode_parse(optarg, &tune_mode) < 0)
                return cli_usage_err("--tune takes rapid, normal or exhaustive, not '%s'", optarg);
            break;
        case O_BUDGET: {
            char *end = NULL;
            budget = strtod(optarg, &end);
            if (!end || *end || end == optarg || !(budget > 0) || budget > 86400)
                return cli_usage_err("--budget takes seconds, more than 0 and at most 86400, not '%s'", optarg);
            break;
        }
        case O_TUNE_FORCE:
            if (!strcmp(optarg, "coarsen:2") || !strcmp(optarg, "coarsen:4") || !strcmp(optarg, "coarsen:8"))
                force_factor = (unsigned)(optarg[8] - '0');
            else if (!strcmp(optarg, "vector:2") || !strcmp(optarg, "vector:4") || !strcmp(optarg, "vector:8") ||
                     !strcmp(optarg, "vector:16"))
                force_factor = (unsigned)atoi(optarg + 7) | OPT_TUNE_FORCE_VECTOR;
            else
                return cli_usage_err("--tune-force takes coarsen:2, coarsen:4, coarsen:8 or vector:2, vector:4, "
                                     "vector:8, vector:16, not '%s'", optarg);
            break;
        case O_STAGE:
            if (!strcmp(optarg, "auto") || !strcmp(optarg, "all") || !strcmp(optarg, "off"))
                stage = optarg[1] == 'u' ? OPT_STAGE_AUTO : optarg[1] == 'l' ? OPT_STAGE_ALL : OPT_STAGE_OFF;
            else
                return cli_usage_err("--stage takes auto, all or off, not '%s'", optarg);
            stage_set = 1;
            break;
        case 'h': fputs(cli_optimize_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    if (o.passes >> PLAN_PASS_WGSIZE & 1)   /* --passes wgsize: --tune */
        tune = 1;
    o.passes = (o.passes | on) & ~off & ~(1u << PLAN_PASS_WGSIZE);
    if (no_verify && measure)
        return cli_usage_err("--measure times a verified plan: it excludes --no-verify");
    if (no_verify && tune)
        return cli_usage_err("--tune measures a verified plan: it excludes --no-verify");
    if (force_factor && !tune)
        return cli_usage_err("--tune-force needs --tune");
    if (stage_set && !measure)
        return cli_usage_err("--stage decides by timed replays: it needs --measure");
    if (!stage_set && measure)
        stage = OPT_STAGE_DEFAULT;   /* auto, without the line where it is not tried */
    if (budget > 0 && !tune && !measure)
        return cli_usage_err("--budget bounds --measure and --tune: it needs one of them");
    if (o.split)
        o.passes |= 1u << PLAN_PASS_SPLIT;
    else if (o.split_kernel)
        return cli_usage_err("--split-kernel needs --split DEVICES");
    else if ((o.device && !tune && !measure) || (costs && !tune))
        return cli_usage_err("%s needs --split DEVICES", o.device ? "--device (without --tune or --measure)" : "--costs");
    if (costs && no_costs)
        return cli_usage_err("--costs and --no-costs exclude each other");
    int drc;   /* --tune/--measure on a device that is not here: one line, before any replay
                  (with --split the partitioner says what it does without it) */
    if (o.device && !o.split && (drc = cli_device_check(o.device, NULL, 0)) != CLI_EXIT_OK)
        return drc;
    const char *path;
    int rc = cli_one_file(argc, argv, &path);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!out)
        return cli_usage_err("missing -o PLAN");
    if (json && !strcmp(out, "-"))
        return cli_usage_err("--json and -o - would both write to stdout");
    /* the measured costs: --costs, else this machine's database when there is one */
    char dpath[4096];
    if (o.split && !no_costs && !costs && cdb_default_path(dpath, sizeof dpath) && !access(dpath, F_OK))
        costs = dpath;
    if (tune && !no_costs && !costs && cdb_default_path(dpath, sizeof dpath))
        costs = dpath;   /* tuned local sizes are kept there (made when missing) */
    if (costs) {
        cdb_status cs = cdb_open(costs, &o.costs, err, sizeof err);
        if (cs != CDB_OK) {
            cli_err("%s", err[0] ? err : cdb_strerror(cs));
            return CLI_EXIT_ERROR;
        }
        if (o.split) {
            o.on_partition = cli_on_partition;
            o.user = &ps;
            o.model = cli_model_open_beside(costs);
        }
    }
    /* PLAN replaces the old one only once whole (and is never an input) */
    cli_out f;
    const char *inputs[] = { path, costs, NULL };
    if ((rc = cli_out_open(&f, out, 0, inputs)) != CLI_EXIT_OK) {
        model_free(o.model);
        cdb_close(o.costs);
        return rc;
    }
    plan_file *p = NULL;
    plan_status st;
    cli_verify cv = {path, o.device, o.max_memory, 0, 0, json, 0, 0, "*", 0, {0}, "", 0};
    opt_verify_result vr;
    memset(&vr, 0, sizeof vr);
    if (no_verify) {
        st = opt_optimize(path, &o, &p, err, sizeof err);
    } else {
        /* --measure: --budget bounds every measurement from here (default
         * 60 s); --tune alone: the tuning (default 30 s) */
        double budget_s = budget > 0 ? budget : measure ? 60 : 30;
        cli_after_ctx = (cli_after){&cv, path, o.max_memory, tune_mode, measure ? measure : 5, o.costs, force_factor};
        opt_verify v = {cli_verify_replay, cli_verify_removed, &cv, 24, measure ? cli_verify_time : NULL, measure,
                        measure ? opt_now() + budget_s : 0, tune ? cli_tune_after : NULL, budget_s,
                        measure ? cli_verify_stage : NULL, stage, measure ? cli_verify_info : NULL};
        st = opt_optimize_verified(path, &o, &v, &p, &vr, err, sizeof err);
        if (st == PLAN_OK && vr.unverified)
            cli_err("warning: %s: the plan is not verified here: %s", path, vr.why);
        if (st == PLAN_OK && tune && (vr.unverified || vr.baseline))
            cli_err("warning: %s: not tuned: the trace does not replay verified here", path);
        if (st == PLAN_OK && !plan_local_count(p))
            cv.tuned = 0;   /* the final check removed them */
    }
    /* never slower live: what was measured against what the layer costs
     * (not with --tune-force, whose decisions are kept unmeasured on purpose) */
    if (st == PLAN_OK && !no_verify && (measure || tune) && !force_factor && !vr.unverified && !vr.baseline) {
        cdb *lc = o.costs;
        char lpath[1024], lerr[512];
        if (!lc && !no_costs && cdb_default_path(lpath, sizeof lpath) && cdb_open(lpath, &lc, lerr, sizeof lerr))
            lc = NULL;
        opt_live_result lr;
        st = opt_live_check(path, &o, &vr, lc, cli_verify_removed, &cv, &p, &lr, err, sizeof err);
        if (st == PLAN_OK && lr.dropped)
            cv.tuned = 0;
        if (lc != o.costs)
            cdb_close(lc);
    }
    model_free(o.model);
    cdb_close(o.costs);
    if (st == PLAN_OK && limit_note[0])   /* a plan clrr would refuse is never written */
        cli_err("warning: %s: %s", path, limit_note);
    if (ps.oom && st == PLAN_OK) {
        plan_free(p);
        p = NULL;
        st = PLAN_ERR_NOMEM;
    }
    if (st != PLAN_OK) {
        free(ps.v);
        cli_out_abort(&f);
    }
    if (st == PLAN_ERR_ARG)
        return cli_usage_err("%s", err);
    if (st != PLAN_OK) {
        cli_err("%s: %s", path, err[0] ? err : plan_strerror(st));
        return CLI_EXIT_ERROR;
    }
    /* the plan's bytes, kept to record it as verified here (PLAN.md, "Trust") */
    char *bytes = NULL;
    size_t nbytes = 0;
    FILE *mf = open_memstream(&bytes, &nbytes);
    st = mf ? plan_write(p, mf) : PLAN_ERR_NOMEM;
    if (mf && fclose(mf) && st == PLAN_OK)
        st = PLAN_ERR_NOMEM;
    if (st == PLAN_OK && fwrite(bytes, 1, nbytes, f.f) != nbytes)
        st = PLAN_ERR_IO;
    if (st != PLAN_OK) {
        cli_err("%s: %s", out, plan_strerror(st));
        cli_out_abort(&f);
        rc = CLI_EXIT_ERROR;
    } else {
        rc = cli_out_commit(&f);
    }
    if (rc == CLI_EXIT_OK && !no_verify && !vr.unverified) {
        char key[PLAN_TRUST_KEY_CAP];
        plan_trust_key(bytes, nbytes, key);
        if (plan_trust_record(key, cv.dev, err, sizeof err) != PLAN_OK)
            cli_err("warning: %s: 'clrr run --plan' will not apply it without --trust-plan: %s", out, err);
    }
    free(bytes);
    if (rc == CLI_EXIT_OK)
        cli_optimize_print(path, out, p, json, note, rw_note, &ps,
                           no_verify ? "off" : vr.unverified ? "unverified" : vr.baseline ? "baseline-mismatch" : "verified",
                           &vr, &cv);
    free(ps.v);
    plan_free(p);
    return rc;
}

const cli_command cli_cmd_optimize = {
    "optimize", "find work a trace can leave out and write a plan", cli_optimize_usage, cli_optimize_run, NULL,
};

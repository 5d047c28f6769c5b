/* cmd_run.c — `clrr run --plan PLAN [options] -- CMD [ARGS...]`: runs the
 * application with the layer in plan mode (recorder/rec_plan.c), which
 * applies the plan to the live calls, then says what the plan did; exits
 * with CMD's exit status. */
#include "tools/clrr/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CL/cl.h>
#include <jansson.h>

#include "costs/cdb.h"
#include "optimizer/opt.h"

static const char cli_run_usage[] =
    "Usage: clrr run --plan PLAN [options] -- CMD [ARGS...]\n"
    "       clrr run --device SPEC [--preload] [-q] -- CMD [ARGS...]\n"
    "Run CMD with a plan (from `clrr optimize`) applied to its OpenCL calls as they\n"
    "happen: redundant transfers are dropped, dead work is deferred (and run after all\n"
    "if the run reads its results), producer/consumer launches run as one fused kernel,\n"
    "split launches run in parts over the plan's devices.\n"
    "What CMD observes is what it observes without clrr; where the run differs from\n"
    "the recording, the calls concerned run as the application made them.\n"
    "With --device and no plan, CMD runs as it is, on the device SPEC names.\n"
    "\n"
    "Options:\n"
    "  --plan PLAN       the plan to apply (required unless --device is given): one\n"
    "                    verified on this machine (written by 'clrr optimize' here,\n"
    "                    or checked by 'clrr plan verify PLAN TRACE'); the layer\n"
    "                    applies its generated kernels only on a device it verified on\n"
    "  --trust-plan      apply PLAN unverified: its generated kernels run as they are\n"
    "                    (regions, offsets and shares are still bounded)\n"
    "  --device SPEC     present this device as CMD's first platform and device\n"
    "                    (an index of `clrr devices`, cpu, gpu, gpu1, or part of a\n"
    "                    device or platform name), for programs that take the first\n"
    "                    one: platforms and devices are listed with it first, and\n"
    "                    contexts made from a type get it (docs/recording.md, \"The\n"
    "                    device you choose\"); a SPEC that matches no device here is\n"
    "                    a usage error\n"
    "  --report FILE     write what the plan did as JSON to FILE, with the time spent\n"
    "                    in each OpenCL function (call_us); '-': stdout, after CMD's\n"
    "                    own output. FILE must not be PLAN or DB; an old FILE is\n"
    "                    replaced once CMD is done\n"
    "  --split-fixed     split launches keep the plan's proportions (default: refined\n"
    "                    launch by launch from each part's measured time)\n"
    "  --split-method M  how adapted proportions are refined: fixed-point (default) or\n"
    "                    broyden (as 'clrr replay --split-method')\n"
    "  --costs DB        the cost database that split launches add their parts' measured\n"
    "                    times to (default: this machine's, $CLRR_COSTS or\n"
    "                    ~/.cache/clrr/costs)\n"
    "  --no-learn        add nothing to the cost database\n"
    "  --preload         load the layer with LD_PRELOAD instead of OPENCL_LAYERS (chosen\n"
    "                    by itself when the ICD loader cannot load layers)\n"
    "  --stage MODE      staged transfers: buffer writes and reads of at least 512 KiB\n"
    "                    go through pinned memory of the layer's, copied by several\n"
    "                    threads. Not given: the plan's measured decisions (its\n"
    "                    staging and unstaged sections) for the devices they name,\n"
    "                    auto for the others. auto: on devices without host-unified\n"
    "                    memory, when 2 or more threads; writes (the same, but\n"
    "                    reads run as made: a non-blocking read staged becomes\n"
    "                    blocking), all (every device), off. A non-blocking write is\n"
    "                    enqueued before its copy, done while the application goes\n"
    "                    on, until waits find such copies unfinished (with little of\n"
    "                    the application's work done meanwhile) more often than not\n"
    "                    (CLRR_STAGE_ASYNC=0: every write copies first; 2: none\n"
    "                    does); copies into the pinned blocks use streaming stores\n"
    "                    (CLRR_STAGE_NT=0: plain ones); a read of 2 MiB or more whose\n"
    "                    event the application did not ask for goes in 1 MiB pieces,\n"
    "                    each copied out while the device sends the next\n"
    "                    (CLRR_STAGE_READ_PIECE=BYTES; 0: whole)\n"
    "  --stage-threads N copy threads for staged transfers (1..16; default half the\n"
    "                    processors, at most 8)\n"
    "  -q, --quiet       no summary on stderr\n"
    "  -h, --help        this help\n"
    "\n"
    "Exit status: CMD's (128+N when a signal N killed it); 1 when the plan cannot be\n"
    "read or is not verified here (CMD does not run) or the report cannot be\n"
    "written; 2 for a bad command line (FILE is PLAN, a --device SPEC that matches\n"
    "no device, ...).\n";

enum { CLI_RUN_PLAN = 0x100, CLI_RUN_REPORT, CLI_RUN_PRELOAD, CLI_RUN_STAGE, CLI_RUN_STAGE_THREADS,
       CLI_RUN_SPLIT_FIXED, CLI_RUN_COSTS, CLI_RUN_NO_LEARN, CLI_RUN_SPLIT_METHOD, CLI_RUN_DEVICE,
       CLI_RUN_TRUST_PLAN };

static unsigned long long cli_run_num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) >= 0 ? (unsigned long long)json_integer_value(v) : 0;
}

/* The summary line(s) from the layer's report. @return 0, or -1 when the
 * report is missing or unreadable. */
static int cli_run_summary(const char *report, const char *plan, int quiet, double process_us)
{
    json_error_t je;
    json_t *r = json_load_file(report, 0, &je);
    if (!r || !json_is_object(r)) {
        json_decref(r);
        return -1;
    }
    /* the whole process's wall time, measured here, goes into the report */
    if (json_object_set_new(r, "process_us", json_integer((json_int_t)process_us)) ||
        json_dump_file(r, report, JSON_COMPACT))
        cli_err("warning: cannot add the process time to the report %s", report);
    if (!quiet) {
        fprintf(stderr,
                "clrr run: plan %s: %llu of %llu transformations applied (%llu fell back, %llu matched no call)\n",
                plan, cli_run_num(r, "applied"), cli_run_num(r, "transformations"), cli_run_num(r, "fell_back"),
                cli_run_num(r, "unmatched"));
        char blank[64] = "";
        if (cli_run_num(r, "fused_blank"))
            snprintf(blank, sizeof blank, " (%llu with a blank intermediate)", cli_run_num(r, "fused_blank"));
        fprintf(stderr,
                "clrr run: %llu fused launches%s, %llu commands deferred (%llu ran after all, %llu never needed), "
                "%llu transfers dropped\n",
                cli_run_num(r, "fused_launches"), blank, cli_run_num(r, "deferred"), cli_run_num(r, "ran_after_all"),
                cli_run_num(r, "never_ran"), cli_run_num(r, "dropped"));
        if (cli_run_num(r, "local_size_launches"))
            fprintf(stderr, "clrr run: %llu launches ran with a tuned local size (wgsize)\n",
                    cli_run_num(r, "local_size_launches"));
        if (cli_run_num(r, "local_size_unmeasured"))
            fprintf(stderr, "clrr run: %llu launches ran with their own local size: the plan did not measure their "
                    "device\n", cli_run_num(r, "local_size_unmeasured"));
        if (cli_run_num(r, "local_size_refused"))
            fprintf(stderr, "clrr run: %llu launches ran with their own local size: the driver refused the tuned "
                    "one\n", cli_run_num(r, "local_size_refused"));
        if (cli_run_num(r, "specialized_launches"))
            fprintf(stderr, "clrr run: %llu launches ran specialized (scalar arguments as compile-time constants)\n",
                    cli_run_num(r, "specialized_launches"));
        if (cli_run_num(r, "schedules_not_applied"))   /* replayer/README.md, "Schedules": why */
            fprintf(stderr, "clrr run: the plan's schedule (%llu queues over lanes) applies to replays only; here "
                    "staged transfers overlap copies with the application's work\n",
                    cli_run_num(r, "schedules_not_applied"));
        if (cli_run_num(r, "steady"))
            fprintf(stderr,
                    "clrr run: %llu calls came after the recording's last transformed occurrence of their pattern "
                    "and got that transformation (a longer run than the recording)\n",
                    cli_run_num(r, "steady"));
        fprintf(stderr, "clrr run: %.1f ms building fused kernels, %.1f ms matching calls against the plan%s\n",
                cli_run_num(r, "fused_build_us") / 1e3, cli_run_num(r, "match_us") / 1e3,
                json_is_true(json_object_get(r, "data_hashed")) ? " (transfers hashed)" : "");
        const json_t *fb = json_object_get(r, "fallbacks");
        size_t i;
        const json_t *e;
        json_array_foreach(fb, i, e) {
            if (i == 8) {
                fprintf(stderr, "clrr run:   ... %zu more\n", json_array_size(fb) - 8);
                break;
            }
            const json_t *why = json_object_get(e, "reason");
            fprintf(stderr, "clrr run:   transformation %llu fell back: %s\n", cli_run_num(e, "id"),
                    json_is_string(why) ? json_string_value(why) : "?");
        }
        if (cli_run_num(r, "staged_writes") + cli_run_num(r, "staged_reads") + cli_run_num(r, "stage_no_block"))
            fprintf(stderr,
                    "clrr run: %llu writes and %llu reads staged through pinned memory (%.1f MiB, %llu threads)%s\n",
                    cli_run_num(r, "staged_writes"), cli_run_num(r, "staged_reads"),
                    cli_run_num(r, "staged_bytes") / 1048576.0, cli_run_num(r, "stage_threads"),
                    cli_run_num(r, "stage_no_block") ? "; some found no free block and ran as made" : "");
        if (cli_run_num(r, "split") + cli_run_num(r, "split_fallback") + cli_run_num(r, "split_declined")) {
            fprintf(stderr,
                    "clrr run: %llu launches split into %llu parts (%.1f MiB sent, %.1f MiB back, %.1f MiB already "
                    "there); %llu ran whole (%llu measured faster whole); %.1f ms building partition-ready "
                    "kernels\n",
                    cli_run_num(r, "split"), cli_run_num(r, "split_parts"), cli_run_num(r, "split_bytes_out") / 1048576.0,
                    cli_run_num(r, "split_bytes_in") / 1048576.0, cli_run_num(r, "split_resident") / 1048576.0,
                    cli_run_num(r, "split_fallback") + cli_run_num(r, "split_declined"),
                    cli_run_num(r, "split_declined"), cli_run_num(r, "split_build_us") / 1e3);
            const json_t *note = json_object_get(r, "split_note"), *shares = json_object_get(r, "split_shares");
            if (json_is_string(note) && *json_string_value(note))
                fprintf(stderr, "clrr run:   first launch run whole: %s\n", json_string_value(note));
            if (json_is_string(shares) && *json_string_value(shares))
                fprintf(stderr, "clrr run:   adapted shares: %s\n", json_string_value(shares));
            const json_t *db = json_object_get(r, "costs");
            if (cli_run_num(r, "split_learned") && json_is_string(db))
                fprintf(stderr, "clrr run: %llu part times added to %s\n", cli_run_num(r, "split_learned"),
                        json_string_value(db));
        }
        fprintf(stderr, "clrr run: whole process %.1f ms; its %llu OpenCL calls %.1f ms (the driver's work and "
                "the layer's, of which the layer's own about %.1f ms, and %.1f ms setting up)\n", process_us / 1e3,
                cli_run_num(r, "ocl_calls"), cli_run_num(r, "ocl_us") / 1e3, cli_run_num(r, "layer_us") / 1e3,
                cli_run_num(r, "layer_init_us") / 1e3);
        const json_t *kc = json_object_get(r, "kernel_cache");
        if (cli_run_num(kc, "hits") + cli_run_num(kc, "misses") + cli_run_num(kc, "rebuilt"))
            fprintf(stderr, "clrr run: kernel binary cache: %llu generated programs loaded from it (%.1f ms of "
                    "builds saved), %llu built from source (%llu kept), %llu rebuilt (an entry that was not one)%s\n",
                    cli_run_num(kc, "hits"), cli_run_num(kc, "saved_us") / 1e3,
                    cli_run_num(kc, "misses") + cli_run_num(kc, "rebuilt"), cli_run_num(kc, "stored"),
                    cli_run_num(kc, "rebuilt"), cli_run_num(kc, "store_errors") ? "; the cache cannot be written" : "");
        if (json_is_true(json_object_get(r, "stopped")))
            fprintf(stderr, "clrr run: plan mode stopped during the run (see the line above)\n");
    }
    json_decref(r);
    return 0;
}

static double cli_run_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* `clrr run --device SPEC -- CMD`: the layer presents the device and does
 * nothing else (CLRR_DEVICE_ONLY: no trace, no plan). */
static int cli_run_device_only(char **cmd, int preload, int quiet, const char *desc)
{
    char tried[PATH_MAX + 64];
    char *layer = cli_find_layer(tried, sizeof tried);
    if (!layer) {
        cli_err("the layer is not found: %s (it is installed next to clrr as ../lib/libclrr.so)", tried);
        return CLI_EXIT_FAIL;
    }
    preload = cli_layer_mode(preload, quiet, cmd[0]);
    int bad = setenv("CLRR_DEVICE_ONLY", "1", 1) || cli_env_join(preload ? "LD_PRELOAD" : "OPENCL_LAYERS", layer, !preload);
    free(layer);
    if (bad) {
        cli_err("cannot set the environment: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (!quiet)
        fprintf(stderr, "clrr run: %s is %s's first platform and device\n", desc, cmd[0]);
    int status = 0, rc;
    if ((rc = cli_spawn(cmd, &status)) != CLI_EXIT_OK)
        return rc;
    if (WIFSIGNALED(status)) {
        cli_err("%s killed by signal %d", cmd[0], WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_FAIL;
}

/* 1 when a device here (its name and driver) is one plan @p arg measured
 * a local size or a staging on, else 0; in a child process (cli_in_child), so that
 * the drivers it starts do not hold a device the application then needs. */
static int cli_run_local_here(void *arg, char *buf, size_t cap)
{
    const plan_file *p = arg;
    (void)buf;
    (void)cap;
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)
        np = 0;
    for (cl_uint i = 0; i < np && i < 16; i++) {
        cl_device_id devs[64];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 64, devs, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && d < 64; d++) {
            char name[257] = "", drv[257] = "";
            if (clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS ||
                clGetDeviceInfo(devs[d], CL_DRIVER_VERSION, sizeof drv - 1, drv, NULL) != CL_SUCCESS)
                continue;
            if (plan_stage_for(p, name, drv))
                return 1;
            for (size_t k = 0; k < plan_local_count(p); k++)
                if (plan_local_for(plan_get_local(p, k), name, drv))
                    return 1;
        }
    }
    return 0;
}

/* 1 when something of plan @p p applies to a live run here: a
 * transformation other than local_size, or a local_size measured on a
 * device present (name and driver; the answer kept, above). Else 0, with
 * why in @p why and the local_size transformations in *nlocal. Schedules
 * apply to replays only. */
static int cli_run_applies(const plan_file *p, const char *key, char *why, size_t cap, size_t *nlocal)
{
    size_t n = plan_xform_count(p), nl = 0;
    *nlocal = 0;
    for (size_t i = 0; i < n; i++) {
        if (plan_get_xform(p, i)->action != PLAN_ACT_LOCAL_SIZE)
            return 1;
        nl++;
    }
    *nlocal = nl;
    size_t ns = plan_stage_count(p);
    if (!nl && !ns) {
        snprintf(why, cap, "it has no transformation%s", plan_sched_count(p) ? "; its schedule applies to replays only" : "");
        return 0;
    }
    /* the answer kept (cli_here.c: asking costs a start of every OpenCL
     * driver, 30-100 ms of PoCL's before the application starts) */
    char buf[8], kept[4];
    int yes = cli_here_get(key, kept, sizeof kept) ? kept[0] == '1' : -1;
    if (yes < 0) {
        yes = cli_in_child(cli_run_local_here, (void *)p, buf, sizeof buf) == 1;
        cli_here_put(key, yes ? "1" : "0");
    }
    if (yes)
        return 1;
    const plan_local *l = plan_get_local(p, 0);
    const plan_stage *g = plan_get_stage(p, 0);
    if (nl)
        snprintf(why, cap, "its %zu local size%s %s measured on %s (driver %s), not on a device here", nl,
                 nl == 1 ? "" : "s", nl == 1 ? "was" : "were", l && l->ntuned ? l->tuned[0].device : "?",
                 l && l->ntuned ? l->tuned[0].driver : "?");
    else
        snprintf(why, cap, "its staging was measured on %s (driver %s), not on a device here", g->device, g->driver);
    return 0;
}

/* The report of a run without the layer (nothing of the plan applied here). */
static int cli_run_direct_report(const char *path, const plan_file *p, size_t nlocal, const char *why)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    json_t *o = json_pack("{s:I,s:i,s:i,s:I,s:b,s:s,s:i,s:I,s:i,s:[]}", "transformations",
                          (json_int_t)plan_xform_count(p), "applied", 0, "fell_back", 0, "unmatched",
                          (json_int_t)plan_xform_count(p), "layer", 0, "not_applied", why, "local_size_launches", 0,
                          "local_size_not_measured_here", (json_int_t)nlocal, "local_size_refused", 0, "fallbacks");
    int rc = o && !json_dumpf(o, f, JSON_COMPACT) ? 0 : -1;
    json_decref(o);
    fputc('\n', f);
    return fclose(f) || rc ? -1 : 0;
}

static int cli_run_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"plan", required_argument, NULL, CLI_RUN_PLAN},
        {"report", required_argument, NULL, CLI_RUN_REPORT},
        {"preload", no_argument, NULL, CLI_RUN_PRELOAD},
        {"stage", required_argument, NULL, CLI_RUN_STAGE},
        {"stage-threads", required_argument, NULL, CLI_RUN_STAGE_THREADS},
        {"split-fixed", no_argument, NULL, CLI_RUN_SPLIT_FIXED},
        {"costs", required_argument, NULL, CLI_RUN_COSTS},
        {"no-learn", no_argument, NULL, CLI_RUN_NO_LEARN},
        {"split-method", required_argument, NULL, CLI_RUN_SPLIT_METHOD},
        {"device", required_argument, NULL, CLI_RUN_DEVICE},
        {"trust-plan", no_argument, NULL, CLI_RUN_TRUST_PLAN},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *plan = NULL, *report = NULL, *stage = NULL, *stage_threads = NULL;
    int preload = 0, quiet = 0, split_fixed = 0, no_learn = 0, trust = 0, c;
    const char *costs = NULL, *method = NULL, *device = NULL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:qh", opts, NULL)) != -1) {
        switch (c) {
        case CLI_RUN_PLAN: plan = optarg; break;
        case CLI_RUN_REPORT: report = optarg; break;
        case CLI_RUN_PRELOAD: preload = 1; break;
        case CLI_RUN_STAGE: stage = optarg; break;
        case CLI_RUN_STAGE_THREADS: stage_threads = optarg; break;
        case CLI_RUN_SPLIT_FIXED: split_fixed = 1; break;
        case CLI_RUN_COSTS: costs = optarg; break;
        case CLI_RUN_NO_LEARN: no_learn = 1; break;
        case CLI_RUN_DEVICE: device = optarg; break;
        case CLI_RUN_SPLIT_METHOD:
            if (cli_split_method(optarg) < 0)
                return cli_usage_err("--split-method takes fixed-point or broyden, not '%s'", optarg);
            method = optarg;
            break;
        case CLI_RUN_TRUST_PLAN: trust = 1; break;
        case 'q': quiet = 1; break;
        case 'h': fputs(cli_run_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    if (!plan && !device)
        return cli_usage_err("--plan PLAN is required (or --device SPEC, to run CMD on a device)");
    if (!plan && (report || stage || stage_threads || split_fixed || costs || no_learn || method))
        return cli_usage_err("without --plan only --device, --preload and --quiet apply");
    if (stage && strcmp(stage, "auto") && strcmp(stage, "writes") && strcmp(stage, "all") && strcmp(stage, "off"))
        return cli_usage_err("--stage takes auto, writes, all or off, not '%s'", stage);
    if (stage_threads) {
        char *end;
        unsigned long t = strtoul(stage_threads, &end, 10);
        if (*end || !*stage_threads || t < 1 || t > 16)
            return cli_usage_err("--stage-threads takes a number from 1 to 16, not '%s'", stage_threads);
    }
    int writes = stage && !strcmp(stage, "writes");
    if ((stage && (setenv("CLRR_STAGE", writes ? "auto" : stage, 1) || setenv("CLRR_STAGE_READS", writes ? "0" : "1", 1))) || (stage_threads && setenv("CLRR_STAGE_THREADS", stage_threads, 1))) {
        cli_err("cannot set the environment: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (optind >= argc)
        return cli_usage_err("no command to run");
    if (cli_check_env())
        return CLI_EXIT_USAGE;
    /* checked here, before the layer's variables are set (clrr's own
     * loader must load no layer): one line and exit 2 when it matches none */
    char desc[600];
    int drc;
    const char *env_device = getenv("CLRR_DEVICE");   /* the user's, which the layer reads too */
    if ((device || (env_device && *env_device)) && (drc = cli_device_check(device ? device : env_device, desc, sizeof desc)))
        return drc;
    if (device && setenv("CLRR_DEVICE", device, 1)) {
        cli_err("cannot set the environment: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (!plan)
        return cli_run_device_only(argv + optind, preload, quiet, desc);

    /* the plan is checked here, so that a bad one is one clear error
     * rather than a line from inside the application */
    char err[512], key[PLAN_TRUST_KEY_CAP];
    plan_file *p = NULL;
    plan_status st = plan_read_keyed(plan, &p, key, err, sizeof err);
    if (st != PLAN_OK) {
        if (st == PLAN_ERR_IO)
            cli_err("cannot read plan %s: %s", plan, strerror(errno));
        else
            cli_err("%s: %s", plan, err);
        return CLI_EXIT_FAIL;
    }
    /* the trust gate (PLAN.md, "Trust"): the layer checks again, by the
     * bytes it reads itself */
    if (!trust && !plan_trust_lookup(key, NULL, NULL, 0)) {
        cli_err("plan %s not verified here: run clrr plan verify %s TRACE, or pass --trust-plan", plan, plan);
        plan_free(p);
        return CLI_EXIT_FAIL;
    }
    if (trust ? setenv("CLRR_TRUST_PLAN", "1", 1) : unsetenv("CLRR_TRUST_PLAN")) {
        cli_err("cannot set the environment: %s", strerror(errno));
        plan_free(p);
        return CLI_EXIT_FAIL;
    }
    /* a plan with nothing that applies here: the application runs without
     * the layer, which would only cost (its matching, its staging) */
    char why[512] = "";
    size_t nlocal = 0;
    int direct = !cli_run_applies(p, key, why, sizeof why, &nlocal);

    char tried[PATH_MAX + 64], tmp_report[PATH_MAX];
    char *layer = direct ? NULL : cli_find_layer(tried, sizeof tried), *plan_abs = realpath(plan, NULL),
         *report_abs = NULL;
    int rc = CLI_EXIT_FAIL, tmp = -1, orc;
    cli_out rep;
    memset(&rep, 0, sizeof rep);
    rep.fd = rep.sfd = -1;
    if (direct) {
        if (report) {
            const char *inputs[] = { plan, costs, NULL };
            if ((orc = cli_out_open(&rep, report, CLI_OUT_NAMED | CLI_OUT_SHARED_STDOUT, inputs)) != CLI_EXIT_OK) {
                rc = orc == CLI_EXIT_USAGE ? orc : CLI_EXIT_FAIL;
                goto out;
            }
            if (cli_run_direct_report(rep.tmp, p, nlocal, why)) {
                cli_err("cannot write the report %s: %s", report, strerror(errno));
                goto out;
            }
        }
        int chosen = device || (env_device && *env_device);
        if (!quiet)
            fprintf(stderr, "clrr run: plan %s: nothing in it applies here (%s): %s runs without %s\n", plan,
                    why, argv[optind], chosen ? "the plan (the layer only presents the device)" : "the layer");
        int status = 0;
        if (chosen) {   /* --device still holds: the layer in its device-only mode */
            rc = cli_run_device_only(argv + optind, preload, quiet, desc);
        } else if ((rc = cli_spawn(argv + optind, &status)) != CLI_EXIT_OK) {
            goto out;
        } else if (WIFSIGNALED(status)) {
            cli_err("%s killed by signal %d", argv[optind], WTERMSIG(status));
            rc = 128 + WTERMSIG(status);
        } else {
            rc = WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_FAIL;
        }
        if (rep.tmp && cli_out_commit(&rep) != CLI_EXIT_OK && rc == CLI_EXIT_OK)
            rc = CLI_EXIT_FAIL;
        goto out;
    }
    if (!layer) {
        cli_err("the layer is not found: %s (it is installed next to clrr as ../lib/libclrr.so)", tried);
        goto out;
    }
    if (!report) {
        snprintf(tmp_report, sizeof tmp_report, "%s/clrr-run-XXXXXX", cli_tmpdir());
        if ((tmp = mkostemp(tmp_report, O_CLOEXEC)) < 0) {
            cli_err("cannot create a report file in %s: %s", cli_tmpdir(), strerror(errno));
            goto out;
        }
        close(tmp);
        report = tmp_report;
    } else {
        /* the layer writes a temporary (by its name), which replaces REPORT
         * (or goes to stdout) once CMD is done */
        const char *inputs[] = { plan, costs, NULL };
        if ((orc = cli_out_open(&rep, report, CLI_OUT_NAMED | CLI_OUT_SHARED_STDOUT, inputs)) != CLI_EXIT_OK) {
            rc = orc == CLI_EXIT_USAGE ? orc : CLI_EXIT_FAIL;
            goto out;
        }
        report = rep.tmp;
    }
    report_abs = realpath(report, NULL);
    preload = cli_layer_mode(preload, quiet, argv[optind]);
    if (!plan_abs || !report_abs || setenv("CLRR_PLAN", plan_abs, 1) || setenv("CLRR_PLAN_REPORT", report_abs, 1) ||
        (split_fixed && setenv("CLRR_SPLIT_FIXED", "1", 1)) || (no_learn && setenv("CLRR_NO_LEARN", "1", 1)) ||
        (costs && setenv("CLRR_COSTS", costs, 1)) || (method && setenv("CLRR_SPLIT_METHOD", method, 1)) ||
        cli_env_join(preload ? "LD_PRELOAD" : "OPENCL_LAYERS", layer, !preload)) {
        cli_err("cannot set the environment: %s", strerror(errno));
        goto out;
    }
    int status = 0;
    double t0 = cli_run_now_us();
    /* what clrr run took before CMD starts (the plain program does not pay
       it): the layer adds it to the run's fixed cost in the cost database */
    char pre[32];
    snprintf(pre, sizeof pre, "%lld", (long long)(t0 * 1e3) - (long long)cli_started_ns());
    if (setenv("CLRR_RUN_PRE_NS", pre, 1)) {
        cli_err("cannot set the environment: %s", strerror(errno));
        goto out;
    }
    if ((rc = cli_spawn(argv + optind, &status)) != CLI_EXIT_OK)
        goto out;
    if (cli_run_summary(report_abs, plan, quiet, cli_run_now_us() - t0) != 0)
        cli_err("the plan was not applied: %s made no OpenCL call, or its ICD loader did not load the layer%s",
                argv[optind], preload ? "" : " (try --preload)");
    if (WIFSIGNALED(status)) {
        cli_err("%s killed by signal %d", argv[optind], WTERMSIG(status));
        rc = 128 + WTERMSIG(status);
    } else {
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_FAIL;
    }
    if (rep.tmp && cli_out_commit(&rep) != CLI_EXIT_OK && rc == CLI_EXIT_OK)
        rc = CLI_EXIT_FAIL;
out:
    plan_free(p);
    cli_out_abort(&rep);
    if (tmp >= 0)
        unlink(tmp_report);
    free(layer);
    free(plan_abs);
    free(report_abs);
    return rc;
}

const cli_command cli_cmd_run = {
    "run", "run a program with a plan applied to its OpenCL calls", cli_run_usage, cli_run_run, NULL,
};

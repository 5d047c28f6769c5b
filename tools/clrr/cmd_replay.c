/* cmd_replay.c — `clrr replay`: re-executes a trace here and verifies every
 * read-back (replayer/rpl.h does the work; this file parses options and
 * prints). --compare runs two sessions side by side and names the first
 * read-back where the two devices disagree. */
#include "tools/clrr/cli.h"
#include "tools/clrr/cli_ana.h"
#include "tools/clrr/cli_progress.h"

#include <jansson.h>
#include "live/live.h"
#include "optimizer/opt.h"
#include "replayer/rpl.h"
#include "costs/cdb.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static const char cli_replay_usage[] =
    "Usage: clrr replay FILE [options]\n"
    "Re-executes the recorded OpenCL calls here and compares every read-back\n"
    "(reads, read maps, SVM copies to the host) with the recorded bytes.\n"
    "\n"
    "Options:\n"
    "  --device SPEC     where to run: an index from 'clrr devices', cpu, gpu,\n"
    "                    accelerator (gpu1: the second GPU), or part of a device\n"
    "                    or platform name\n"
    "                    (default: the recorded device, else the closest one)\n"
    "  --range A:B       verify and time calls A..B (calls before A set up the\n"
    "                    state; after B only releases run)\n"
    "  --kernel ID       one kernel launch (call number ID) with exactly the\n"
    "                    inputs it had; the read-backs that follow it, up to the\n"
    "                    next command that may change memory, verify its outputs\n"
    "  --loop N          run the range (or kernel) N times, for timing; results\n"
    "                    are verified in the first iteration\n"
    "  --timing          per-command and per-kernel device and host times\n"
    "  --tolerance SPEC  compare floats within a tolerance: rel=X, abs=X, ulp=N,\n"
    "                    f32 or f64, comma-separated (default: exact bytes)\n"
    "  --compare DEVICE  also replay on DEVICE, side by side, and name the first\n"
    "                    read-back where the two devices differ\n"
    "  --repeat N        replay N times (2 to 16) side by side and compare the\n"
    "                    replays' read-backs with each other as well as with the\n"
    "                    recording: where the replays disagree among themselves the\n"
    "                    program itself gives different results (a data race, an\n"
    "                    order of atomics: exit 4), else a difference from the\n"
    "                    recording is the replay's (exit 1)\n"
    "  --plan PLAN       execute the trace with the changes of PLAN ('clrr optimize')\n"
    "                    applied: each is checked against its call first, and runs\n"
    "                    unoptimized where it does not match (the summary counts\n"
    "                    both); every read-back is still verified against the\n"
    "                    recording (not with --range, --kernel, --compare,\n"
    "                    --exact-calls)\n"
    "  --split-fixed     split launches keep the plan's proportions (by default a\n"
    "                    split launched again takes proportions from the time each\n"
    "                    device's part took)\n"
    "  --split-method M  how those proportions are refined: fixed-point (default:\n"
    "                    each part's share in proportion to the rate it ran at) or\n"
    "                    broyden (Newton steps, each part's slope learned from its\n"
    "                    last two launches)\n"
    "  --lanes WHEN      the plan's scheduled queues run their transfers on lanes,\n"
    "                    from and to pinned memory of the replay's: auto (default:\n"
    "                    on devices that do not share the host's memory, where\n"
    "                    copies are the device's), always, or off\n"
    "  --pinned N        bytes of pinned memory those transfers may hold at once\n"
    "                    (default 1 GiB, never more than --max-memory; K/M/G\n"
    "                    suffixes): past it a free block of another size is\n"
    "                    released, else the transfer uses ordinary memory\n"
    "  --costs DB        split launches add their parts' measured kernel times to\n"
    "                    this cost database (default: this machine's, $CLRR_COSTS\n"
    "                    or ~/.cache/clrr/costs), which 'clrr optimize' reads\n"
    "  --no-learn        add nothing to the cost database\n"
    "  --exact-calls     make exactly the recorded calls and no others (no\n"
    "                    device discovery, no events of its own); read-backs are\n"
    "                    verified at the application's own synchronization\n"
    "  --no-verify       execute without comparing read-backs\n"
    "  --strict          compare every byte of a read-back, also bytes nothing\n"
    "                    defined (by default they are counted, not compared:\n"
    "                    a buffer never written, the part of it a kernel does\n"
    "                    not write, the padding of 3-component vectors)\n"
    "  --max-memory N    bytes of data held at once (default 1 GiB or CLRR_MAX_MEMORY;\n"
    "                    K/M/G suffixes)\n"
    "  --timeout S       end the replay after S seconds in all (0: never); by\n"
    "                    default each call may take 60 s (a build 600 s) plus 20\n"
    "                    times as long as it took when recorded (100 times on\n"
    "                    another device; the final waits: 60 s plus as many times\n"
    "                    the recording's span); past it one line and exit 3\n"
    "  --json            one JSON object on stdout instead of the summary\n"
    "  -q, --quiet       print nothing but errors and mismatches\n"
    "\n"
    "Exit status: 0 every read-back matched, 1 a read-back differed (or the two\n"
    "devices of --compare disagreed), 2 usage error, 3 the replay failed\n"
    "(unreadable trace, a call that failed here, no usable device), 4 the\n"
    "replays of --repeat disagreed among themselves (the program is\n"
    "nondeterministic by itself).\n";

#define CLI_EXIT_SELF 4       /* --repeat: the program itself gives different results */
#define CLI_REPEAT_MAX 16

#define CLI_MAX_REPORTS 20

typedef struct cli_ktime {
    char name[128];
    uint64_t n;
    int64_t host, dev, rec;
    int have_rec;
} cli_ktime;

typedef struct cli_replay {
    int json, quiet, timing, progress;
    int inexact;              /* --tolerance other than exact */
    unsigned loops;           /* --loop: the timing lines name their iteration */
    uint64_t reported;
    cli_progress *prog;       /* the progress line (NULL: off) */
    rpl_session *sess;        /* ... and the session whose counts it shows */
    FILE *out;
    cli_ktime *k;
    size_t nk;
    struct json_t *mism_json; /* the JSON array of mismatches (--json), or NULL */
    /* --compare: the outcome, printed with the summary */
    const char *cmp_dev;      /* NULL: no --compare */
    uint64_t cmp_n;           /* read-backs compared */
    int cmp_state;            /* 0 same, 1 a read-back differs, 2 the replays diverged,
                                 3 different numbers of read-backs */
    rpl_readback cmp_a;       /* the first differing read-back (data not kept) */
    char cmp_fn[64], cmp_what[16];
    uint64_t cmp_b_seq;
    rpl_cmp cmp;
    char cmp_b_device[256];
    uint64_t cmp_b_readbacks, cmp_b_mismatches;
    int cmp_b_matched;
    /* --plan */
    const char *plan_path;
    live_exec *plan_exec;
    /* --repeat: the outcome, printed with the summary */
    unsigned rep_n;           /* 0: no --repeat */
    uint64_t rep_compared;    /* read-backs compared among the replays */
    int rep_state;            /* 0 the replays agree, 1 a read-back differs between them,
                                 2 they diverged (other calls), 3 different numbers of read-backs */
    unsigned rep_k;           /* the replay (from 2) that disagreed with the first */
    rpl_readback rep_a;       /* the first read-back where they disagree (data not kept) */
    char rep_fn[64], rep_what[16];
    uint64_t rep_b_seq;
    rpl_cmp rep_cmp;
} cli_replay;


static void cli_on_mismatch(void *user, const rpl_mismatch *m)
{
    cli_replay *r = user;
    cli_progress_clear(r->prog);
    if (r->json) {   /* names come from the trace: jansson escapes them */
        json_t *o = json_object();
        json_object_set_new(o, "call", cli_json_u64(m->seq));
        json_object_set_new(o, "function", cli_json_ctext(m->function));
        json_object_set_new(o, "what", cli_json_ctext(m->what));
        json_object_set_new(o, "object", cli_json_u64(m->object));
        json_object_set_new(o, "bytes", cli_json_u64(m->size));
        json_object_set_new(o, "elements", cli_json_u64(m->cmp.elems));
        json_object_set_new(o, "differ", cli_json_u64(m->cmp.differ));
        json_object_set_new(o, "first_offset", cli_json_u64(m->cmp.first));
        json_object_set_new(o, "written_by", cli_json_ctext(m->writers));
        json_object_set_new(o, "by_hash", json_boolean(m->by_hash));
        if (r->reported < 1000 && (r->mism_json || (r->mism_json = json_array())))
            json_array_append_new(r->mism_json, o);
        else
            json_decref(o);
        r->reported++;
        return;
    }
    if (r->reported++ >= CLI_MAX_REPORTS) {
        if (r->reported == CLI_MAX_REPORTS + 1)
            printf("(further mismatches are counted, not listed)\n");
        return;
    }
    cli_mismatch_print(m);
}

static void cli_on_time(void *user, const rpl_cmd_time *t)
{
    cli_replay *r = user;
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP], c[CLI_FMT_CAP];
    if (!r->json && !r->quiet) {
        if (r->loops > 1)
            printf("  loop %-4u", t->loop + 1);
        printf("  #%-8" PRIu64 " %-28s %-20s host %9s  device %9s  recorded %9s\n", t->seq, t->function,
               t->kernel ? t->kernel : "", cli_fmt_ns(t->host_ns, a), t->device_ns >= 0 ? cli_fmt_ns(t->device_ns, b)
               : "-", t->recorded_device_ns >= 0 ? cli_fmt_ns(t->recorded_device_ns, c) : "-");
    }
    if (!t->kernel)
        return;
    cli_ktime *k = NULL;
    for (size_t i = 0; i < r->nk && !k; i++)
        if (!strcmp(r->k[i].name, t->kernel))
            k = &r->k[i];
    if (!k) {
        cli_ktime *p = realloc(r->k, (r->nk + 1) * sizeof *p);
        if (!p)
            return;
        r->k = p;
        k = &r->k[r->nk++];
        memset(k, 0, sizeof *k);
        snprintf(k->name, sizeof k->name, "%s", t->kernel);
    }
    k->n++;
    k->host += t->host_ns;
    if (t->device_ns > 0)
        k->dev += t->device_ns;
    if (t->recorded_device_ns >= 0) {
        k->rec += t->recorded_device_ns;
        k->have_rec = 1;
    }
}

static void cli_on_progress(void *user, uint64_t seq, uint64_t last)
{
    (void)last;
    cli_replay *r = user;
    if (!cli_progress_due(r->prog))
        return;
    rpl_summary sm;
    uint64_t bytes = 0;
    if (r->sess) {
        rpl_get_summary(r->sess, &sm);
        bytes = sm.bytes_in + sm.bytes_out;
    }
    cli_progress_update(r->prog, seq, bytes, NULL);
}

static int cli_parse_range(const char *s, uint64_t *a, uint64_t *b)
{
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *end != ':')
        return -1;
    const char *t = end + 1;
    unsigned long long y = strtoull(t, &end, 10);
    if (end == t || *end || !x || y < x)
        return -1;
    *a = x;
    *b = y;
    return 0;
}


/* --compare: step both sessions to their next read-back and compare them;
 * the outcome goes to r (cli_print_compare prints it). */
static int cli_compare(rpl_session *a, rpl_session *b, const rpl_tolerance *tol, cli_replay *r)
{
    for (;;) {
        rpl_readback ra, rb;
        int ha = 0, hb = 0;
        rpl_status sa = RPL_OK, sb = RPL_OK;
        while (!ha && (sa = rpl_step(a, &ra, &ha)) == RPL_OK)
            ;
        while (!hb && (sb = rpl_step(b, &rb, &hb)) == RPL_OK)
            ;
        if (sa < 0 || sb < 0) {
            cli_err("%s", sa < 0 ? rpl_error(a) : rpl_error(b));
            return CLI_EXIT_ERROR;
        }
        if (!ha || !hb) {
            r->cmp_state = ha != hb ? 3 : 0;
            return ha != hb ? CLI_EXIT_DIFFERENT : CLI_EXIT_OK;
        }
        r->cmp_n++;
        memset(&r->cmp, 0, sizeof r->cmp);
        int shape = ra.seq == rb.seq && ra.size == rb.size;
        /* bytes nothing defined (the same in both sessions) compare equal */
        void *bcopy = NULL;
        if (shape && ra.undef && (bcopy = malloc(rb.size ? rb.size : 1)) != NULL) {
            memcpy(bcopy, rb.data, rb.size);
            rpl_readback_undefined(&ra, bcopy, ra.data);
            rb.data = bcopy;
        }
        int same = shape && rpl_compare(ra.data, rb.data, ra.size, tol, &r->cmp);
        free(bcopy);
        if (same)
            continue;
        r->cmp_state = shape ? 1 : 2;
        r->cmp_a = ra;
        r->cmp_a.data = NULL;
        snprintf(r->cmp_fn, sizeof r->cmp_fn, "%s", ra.function);
        snprintf(r->cmp_what, sizeof r->cmp_what, "%s", ra.what);
        r->cmp_a.function = r->cmp_fn;
        r->cmp_a.what = r->cmp_what;
        r->cmp_b_seq = rb.seq;
        r->cmp_b_matched = rb.matched;
        return CLI_EXIT_DIFFERENT;
    }
}

/* --compare's outcome, for --json. */
static json_t *cli_compare_json(const cli_replay *r)
{
    const rpl_readback *a = &r->cmp_a;
    json_t *o = json_object();
    CLI_JSET(o, "device", cli_json_ctext(r->cmp_b_device));
    CLI_JSET(o, "compared", cli_json_u64(r->cmp_n));
    CLI_JSET(o, "same", json_boolean(!r->cmp_state));
    CLI_JSET(o, "b_readbacks", cli_json_u64(r->cmp_b_readbacks));
    CLI_JSET(o, "b_mismatches", cli_json_u64(r->cmp_b_mismatches));
    if (r->cmp_state == 3)
        CLI_JSET(o, "reason", json_string("different numbers of read-backs"));
    if (r->cmp_state == 1 || r->cmp_state == 2) {
        json_t *d = json_object();
        CLI_JSET(d, "seq", cli_json_u64(a->seq));
        CLI_JSET(d, "function", cli_json_ctext(a->function));
        CLI_JSET(d, "what", cli_json_ctext(a->what));
        CLI_JSET(d, "object", cli_json_u64(a->object));
        if (r->cmp_state == 1) {
            CLI_JSET(d, "differ", cli_json_u64(r->cmp.differ));
            CLI_JSET(d, "elements", cli_json_u64(r->cmp.elems));
            CLI_JSET(d, "elem_size", cli_json_u64(r->cmp.elem_size));
            CLI_JSET(d, "first_byte", cli_json_u64(r->cmp.first));
            CLI_JSET(d, "a_matches_recording", json_boolean(a->matched));
            CLI_JSET(d, "b_matches_recording", json_boolean(r->cmp_b_matched));
        } else {
            CLI_JSET(d, "b_seq", cli_json_u64(r->cmp_b_seq));
        }
        CLI_JSET(o, "first_difference", d);
    }
    return o;
}

static void cli_print_compare(const cli_replay *r)
{
    const rpl_readback *a = &r->cmp_a;
    if (r->cmp_state == 0 && !r->quiet)
        printf("compare   %" PRIu64 " read-backs identical on both devices (within the tolerance)\n", r->cmp_n);
    if (r->cmp_state == 3)
        printf("compare   the two replays produced different numbers of read-backs\n");
    if (r->cmp_state == 1 || r->cmp_state == 2) {
        printf("compare   first difference between the devices at call #%" PRIu64 " %s %s", a->seq, a->function, a->what);
        if (a->object)
            printf(" (object #%" PRIu64 ")", a->object);
        if (r->cmp_state == 1)
            printf(": %" PRIu64 " of %" PRIu64 " %s differ, first at byte %" PRIu64 " (A: %s, B: %s)\n", r->cmp.differ,
                   r->cmp.elems, r->cmp.elem_size == 1 ? "bytes" : "elements", r->cmp.first,
                   a->matched ? "matches the recording" : "differs from the recording",
                   r->cmp_b_matched ? "matches the recording" : "differs from the recording");
        else
            printf(": the replays diverged (B at call #%" PRIu64 ")\n", r->cmp_b_seq);
    }
    if (!r->quiet || r->cmp_state)
        printf("B         %s: %" PRIu64 " read-backs, %" PRIu64 " mismatches with the recording\n", r->cmp_b_device,
               r->cmp_b_readbacks, r->cmp_b_mismatches);
}

/* --repeat: steps the @p n sessions of @p ss to their next read-back in
 * turn and compares each one's with the first's, up to the first
 * disagreement; then runs every session to its end. The outcome goes to
 * @p r (cli_print_repeat). CLI_EXIT_OK, CLI_EXIT_SELF, or CLI_EXIT_ERROR
 * (said on stderr). */
static int cli_repeat(rpl_session **ss, unsigned n, const rpl_tolerance *tol, cli_replay *r)
{
    int agree = 1;
    while (agree) {
        rpl_readback ra, rb;
        int ha = 0, hb = 0;
        rpl_status sa = RPL_OK, sb = RPL_OK;
        while (!ha && (sa = rpl_step(ss[0], &ra, &ha)) == RPL_OK)
            ;
        if (sa < 0) {
            cli_err("%s", rpl_error(ss[0]));
            return CLI_EXIT_ERROR;
        }
        for (unsigned k = 1; agree && k < n; k++) {
            hb = 0;
            while (!hb && (sb = rpl_step(ss[k], &rb, &hb)) == RPL_OK)
                ;
            if (sb < 0) {
                cli_err("replay %u of %u: %s", k + 1, n, rpl_error(ss[k]));
                return CLI_EXIT_ERROR;
            }
            int shape = ha && hb && ra.seq == rb.seq && ra.size == rb.size;
            memset(&r->rep_cmp, 0, sizeof r->rep_cmp);
            if ((!ha && !hb) || (shape && rpl_compare(ra.data, rb.data, ra.size, tol, &r->rep_cmp)))
                continue;
            agree = 0;
            r->rep_state = ha != hb ? 3 : shape ? 1 : 2;
            r->rep_k = k + 1;
            if (ha) {
                r->rep_a = ra;
                r->rep_a.data = NULL;
                snprintf(r->rep_fn, sizeof r->rep_fn, "%s", ra.function);
                snprintf(r->rep_what, sizeof r->rep_what, "%s", ra.what);
                r->rep_a.function = r->rep_fn;
                r->rep_a.what = r->rep_what;
            }
            r->rep_b_seq = hb ? rb.seq : 0;
        }
        if (!ha)
            break;
        if (agree)
            r->rep_compared++;
    }
    /* every session to its end: the first one's summary is the replay's */
    for (unsigned k = 0; k < n; k++) {
        rpl_status st;
        while ((st = rpl_step(ss[k], NULL, NULL)) == RPL_OK)
            ;
        if (st < 0) {
            cli_err("%s%s", k ? "a later replay: " : "", rpl_error(ss[k]));
            return CLI_EXIT_ERROR;
        }
    }
    return r->rep_state ? CLI_EXIT_SELF : CLI_EXIT_OK;
}

/* --repeat's outcome, for --json. */
static json_t *cli_repeat_json(const cli_replay *r)
{
    const rpl_readback *a = &r->rep_a;
    json_t *o = json_object();
    CLI_JSET(o, "replays", json_integer(r->rep_n));
    CLI_JSET(o, "compared", cli_json_u64(r->rep_compared));
    CLI_JSET(o, "agree", json_boolean(!r->rep_state));
    if (r->rep_state) {
        json_t *d = json_object();
        CLI_JSET(d, "seq", cli_json_u64(a->seq));
        CLI_JSET(d, "function", cli_json_ctext(a->function));
        CLI_JSET(d, "what", cli_json_ctext(a->what));
        CLI_JSET(d, "object", cli_json_u64(a->object));
        CLI_JSET(d, "replay", json_integer(r->rep_k));
        CLI_JSET(d, "reason", json_string(r->rep_state == 1 ? "different bytes" : r->rep_state == 2 ? "other calls"
                                                                               : "different numbers of read-backs"));
        if (r->rep_state == 1) {
            CLI_JSET(d, "differ", cli_json_u64(r->rep_cmp.differ));
            CLI_JSET(d, "elements", cli_json_u64(r->rep_cmp.elems));
            CLI_JSET(d, "first_byte", cli_json_u64(r->rep_cmp.first));
        }
        CLI_JSET(o, "nondeterministic", d);
    }
    return o;
}

static void cli_print_repeat(const cli_replay *r, const rpl_summary *s)
{
    const rpl_readback *a = &r->rep_a;
    if (r->rep_state) {
        printf("repeat    the program itself gives different results at call #%" PRIu64 " %s %s (%u replays disagree",
               a->seq, a->function ? a->function : "?", a->what ? a->what : "", r->rep_n);
        if (r->rep_state == 1)
            printf(": replay %u differs from replay 1 in %" PRIu64 " of %" PRIu64 " %s, first at byte %" PRIu64 ")\n",
                   r->rep_k, r->rep_cmp.differ, r->rep_cmp.elems, r->rep_cmp.elem_size == 1 ? "bytes" : "elements",
                   r->rep_cmp.first);
        else if (r->rep_state == 2)
            printf(": replay %u read back at call #%" PRIu64 " instead)\n", r->rep_k, r->rep_b_seq);
        else
            printf(": replay %u made a different number of read-backs)\n", r->rep_k);
        return;
    }
    if (s->mismatches)
        printf("repeat    %u replays agree with each other in all %" PRIu64 " read-backs: the replay diverged from "
               "the recording (not the program's nondeterminism)\n", r->rep_n, r->rep_compared);
    else if (!r->quiet)
        printf("repeat    %u replays agree with each other and with the recording in all %" PRIu64 " read-backs\n",
               r->rep_n, r->rep_compared);
}

/* What the plan did, for --json. */
static json_t *cli_plan_json(const rpl_summary *s, const cli_replay *r)
{
    live_exec_stats ps;
    live_exec_get_stats(r->plan_exec, &ps);
    size_t nfb = live_exec_fallback_count(r->plan_exec);
    json_t *o = json_object(), *t = json_object(), *a;
    char fp[24];
    CLI_JSET(o, "file", cli_json_ctext(r->plan_path));
    CLI_JSET(o, "same_trace", json_boolean(ps.same_trace));
    snprintf(fp, sizeof fp, "%016" PRIx64, ps.fingerprint);
    CLI_JSET(o, "fingerprint", json_string(fp));
    CLI_JSET(o, "transformations", cli_json_u64(ps.transformations));
    CLI_JSET(o, "applied", cli_json_u64(ps.applied));
    CLI_JSET(o, "fell_back", cli_json_u64(ps.fell_back));
    CLI_JSET(o, "unmatched", cli_json_u64(ps.unmatched));
    CLI_JSET(o, "dropped", cli_json_u64(s->plan_dropped));
    CLI_JSET(o, "markers", cli_json_u64(s->plan_markers));
    CLI_JSET(o, "fused", cli_json_u64(s->plan_fused));
    CLI_JSET(o, "specialized", cli_json_u64(s->plan_specialized));
    CLI_JSET(o, "unheld", cli_json_u64(s->plan_unheld));
    CLI_JSET(o, "split", cli_json_u64(s->split.launches));
    CLI_JSET(o, "split_parts", cli_json_u64(s->split.parts));
    CLI_JSET(o, "split_bytes_out", cli_json_u64(s->split.bytes_out));
    CLI_JSET(o, "split_bytes_in", cli_json_u64(s->split.bytes_in));
    CLI_JSET(o, "split_resident", cli_json_u64(s->split.resident));
    CLI_JSET(o, "split_fallback", cli_json_u64(s->split.fallback));
    CLI_JSET(t, "wait", json_integer(s->split.wait_ns));
    CLI_JSET(t, "send", json_integer(s->split.send_ns));
    CLI_JSET(t, "parts", json_integer(s->split.parts_ns));
    CLI_JSET(t, "merge", json_integer(s->split.merge_ns));
    CLI_JSET(o, "split_ns", t);
    t = json_object();
    CLI_JSET(t, "commands", cli_json_u64(ps.effect.commands));
    CLI_JSET(t, "kernels", cli_json_u64(ps.effect.kernels));
    CLI_JSET(t, "bytes", cli_json_u64(ps.effect.bytes));
    CLI_JSET(t, "device_ns", cli_json_u64(ps.effect.device_ns));
    CLI_JSET(o, "expected", t);
    CLI_JSET(o, "fallbacks", a = json_array());
    for (size_t i = 0; i < nfb; i++) {
        const live_fallback *f = live_exec_fallback(r->plan_exec, i);
        json_t *e = json_object();
        CLI_JSET(e, "id", json_integer(f->xform));
        CLI_JSET(e, "seq", cli_json_u64(f->seq));
        CLI_JSET(e, "reason", cli_json_ctext(f->reason));
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "unbuilt", cli_json_ctext(s->plan_unbuilt));
    CLI_JSET(o, "split_note", cli_json_ctext(s->split.note));
    CLI_JSET(o, "split_adapted", cli_json_u64(s->split.adapted));
    CLI_JSET(o, "split_declined", cli_json_u64(s->split.declined));
    CLI_JSET(o, "split_learned", cli_json_u64(s->split.learned));
    CLI_JSET(o, "split_built_ahead", cli_json_u64(s->split.built_ahead));
    CLI_JSET(o, "split_built_late", cli_json_u64(s->split.built_late));
    CLI_JSET(o, "split_programs", cli_json_u64(s->split.programs));
    CLI_JSET(o, "split_launch_ns", a = json_array());
    for (unsigned i = 0; i < s->split.nlaunch_ns; i++)
        json_array_append_new(a, json_integer(s->split.launch_ns[i]));
    CLI_JSET(o, "split_shares", cli_json_ctext(s->split.shares));
    t = json_object();
    CLI_JSET(t, "queues", cli_json_u64(s->plan_lane_queues));
    CLI_JSET(t, "moved", cli_json_u64(s->plan_lane_moved));
    CLI_JSET(t, "waits", cli_json_u64(s->plan_lane_waits));
    CLI_JSET(t, "joins", cli_json_u64(s->plan_lane_joins));
    CLI_JSET(t, "pinned", cli_json_u64(s->plan_lane_pinned));
    CLI_JSET(t, "unpinned", cli_json_u64(s->plan_lane_unpinned));
    CLI_JSET(t, "pin_evicted", cli_json_u64(s->plan_lane_pin_evicted));
    CLI_JSET(t, "note", cli_json_ctext(s->plan_lane_note));
    CLI_JSET(o, "lanes", t);
    t = json_object();
    CLI_JSET(t, "transfers", cli_json_u64(s->plan_staged));
    CLI_JSET(t, "bytes", cli_json_u64(s->plan_staged_bytes));
    CLI_JSET(t, "unpinned", cli_json_u64(s->plan_stage_unpinned));
    CLI_JSET(t, "ahead", cli_json_u64(s->plan_stage_ahead));
    CLI_JSET(t, "block_bytes", cli_json_u64(s->plan_stage_block_bytes));
    CLI_JSET(o, "staged", t);
    t = json_object();
    CLI_JSET(t, "applied", cli_json_u64(s->plan_local));
    CLI_JSET(t, "unmeasured_device", cli_json_u64(s->plan_local_unmeasured));
    CLI_JSET(t, "refused", cli_json_u64(s->plan_local_refused));
    CLI_JSET(o, "local_size", t);
    t = json_object();
    CLI_JSET(t, "applied", cli_json_u64(s->plan_coarsened));
    CLI_JSET(t, "fallback", cli_json_u64(s->plan_coarsen_fallback));
    CLI_JSET(o, "coarsen", t);
    return o;
}

static void cli_print_plan(const rpl_summary *s, cli_replay *r)
{
    live_exec_stats ps;
    live_exec_get_stats(r->plan_exec, &ps);
    size_t nfb = live_exec_fallback_count(r->plan_exec);
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP];
    if (r->quiet)
        return;
    printf("plan      %s: %" PRIu64 " transformations, %" PRIu64 " applied, %" PRIu64 " fell back",
           r->plan_path, ps.transformations, ps.applied, ps.fell_back + ps.unmatched);
    if (ps.unmatched)
        printf(" (%" PRIu64 " matched no call)", ps.unmatched);
    printf("\n          %" PRIu64 " commands not executed (%" PRIu64 " replaced by markers for their events); "
           "expected to save %s of transfers, %s recorded device time\n",
           s->plan_dropped, s->plan_markers, cli_fmt_size(ps.effect.bytes, a), cli_fmt_ns((int64_t)ps.effect.device_ns, b));
    if (s->plan_fused || s->plan_unheld)
        printf("          %" PRIu64 " fused launches ran, each in place of a pair or chain of launches; %" PRIu64 " held launches ran as recorded\n",
               s->plan_fused, s->plan_unheld);
    if (s->plan_specialized)
        printf("          %" PRIu64 " launches ran specialized (scalar arguments as compile-time constants)\n",
               s->plan_specialized);
    if (s->plan_unbuilt[0])
        printf("          not built here, its launches ran as recorded: %s\n", s->plan_unbuilt);
    if (s->plan_local)
        printf("          %" PRIu64 " launches ran with a tuned local size (wgsize)\n", s->plan_local);
    if (s->plan_coarsened || s->plan_coarsen_fallback)
        printf("          %" PRIu64 " launches ran as a coarsened kernel (wgsize); %" PRIu64 " as recorded: it does "
               "not build or fit here\n", s->plan_coarsened, s->plan_coarsen_fallback);
    if (s->plan_local_unmeasured)
        printf("          %" PRIu64 " launches ran with their recorded local size: the plan did not measure this "
               "device (%s)\n", s->plan_local_unmeasured, s->device);
    if (s->plan_local_refused)
        printf("          %" PRIu64 " launches ran with their recorded local size: the tuned one is not legal here\n",
               s->plan_local_refused);
    if (s->plan_lane_queues)
        printf("          %" PRIu64 " queues over lanes (schedule): %" PRIu64 " transfers on their own lanes, "
               "%" PRIu64 " conflicts waited for across lanes, %" PRIu64 " transfers through pinned memory\n",
               s->plan_lane_queues, s->plan_lane_moved, s->plan_lane_waits, s->plan_lane_pinned);
    if (s->plan_lane_note[0])
        printf("          schedule not applied: %s\n", s->plan_lane_note);
    if (s->plan_staged || s->plan_stage_unpinned) {
        char c2[CLI_FMT_CAP];
        printf("          %" PRIu64 " transfers staged through pinned memory (%s; staging; %" PRIu64 " blocks made "
               "ahead at buffer creation)%s%s\n", s->plan_staged, cli_fmt_size(s->plan_staged_bytes, c2),
               s->plan_stage_ahead, s->plan_stage_unpinned ? ", not: " : "",
               s->plan_stage_unpinned ? "found no pinned block" : "");
    }
    if (s->split.launches || s->split.fallback) {
        char c2[CLI_FMT_CAP];
        printf("          %" PRIu64 " launches ran split (%" PRIu64 " parts): %s sent to other devices, %s back, "
               "%s already there\n", s->split.launches, s->split.parts, cli_fmt_size(s->split.bytes_out, a),
               cli_fmt_size(s->split.bytes_in, b), cli_fmt_size(s->split.resident, c2));
    }
    if (s->split.launches) {
        char w[CLI_FMT_CAP], x[CLI_FMT_CAP], y[CLI_FMT_CAP], z[CLI_FMT_CAP];
        printf("          split time: waiting %s, sending %s, parts %s, results back %s\n",
               cli_fmt_ns(s->split.wait_ns, w), cli_fmt_ns(s->split.send_ns, x), cli_fmt_ns(s->split.parts_ns, y),
               cli_fmt_ns(s->split.merge_ns, z));
    }
    if (s->split.adapted || s->split.declined)
        printf("          %" PRIu64 " split launches at measured proportions, %" PRIu64 " run whole (the queue's "
               "device alone measured faster); last %s\n", s->split.adapted, s->split.declined, s->split.shares);
    if (s->split.fallback)
        printf("          %" PRIu64 " split launches ran whole: %s\n", s->split.fallback, s->split.note);
    for (size_t i = 0; i < nfb && i < 5; i++) {
        const live_fallback *f = live_exec_fallback(r->plan_exec, i);
        printf("          fell back: #%u", f->xform);
        if (f->seq)
            printf(" at call #%" PRIu64, f->seq);
        printf(": %s\n", f->reason);
    }
    if (nfb > 5)
        printf("          (%zu more fell back)\n", nfb - 5);
}

static void cli_print_summary(const char *path, const rpl_summary *s, cli_replay *r, int status_ok)
{
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP], c[CLI_FMT_CAP];
    if (r->json) {
        json_t *o = json_object(), *k;
        CLI_JSET(o, "schema", json_string("clrr-replay/1"));
        CLI_JSET(o, "trace", cli_json_ctext(path));
        CLI_JSET(o, "recorded_device", cli_json_ctext(s->recorded_device));
        CLI_JSET(o, "device", cli_json_ctext(s->device));
        CLI_JSET(o, "calls", cli_json_u64(s->calls));
        CLI_JSET(o, "commands", cli_json_u64(s->commands));
        CLI_JSET(o, "kernels", cli_json_u64(s->kernels));
        CLI_JSET(o, "skipped", cli_json_u64(s->skipped));
        CLI_JSET(o, "bytes_in", cli_json_u64(s->bytes_in));
        CLI_JSET(o, "bytes_out", cli_json_u64(s->bytes_out));
        CLI_JSET(o, "readbacks", cli_json_u64(s->readbacks));
        CLI_JSET(o, "mismatches", cli_json_u64(s->mismatches));
        CLI_JSET(o, "unverified", cli_json_u64(s->unverified));
        CLI_JSET(o, "undefined_bytes", cli_json_u64(s->undefined_bytes));
        CLI_JSET(o, "undefined_readbacks", cli_json_u64(s->undefined_readbacks));
        CLI_JSET(o, "hashed", cli_json_u64(s->hashed));
        CLI_JSET(o, "call_diffs", cli_json_u64(s->call_diffs));
        CLI_JSET(o, "user_events_early", cli_json_u64(s->user_events_early));
        CLI_JSET(o, "wall_ns", json_integer(s->wall_ns));
        CLI_JSET(o, "exec_ns", json_integer(s->exec_ns));
        CLI_JSET(o, "exec_ns_loop_median", json_integer(s->exec_ns_loop_median));
        CLI_JSET(o, "loops", json_integer(s->loops));
        CLI_JSET(o, "device_ns", json_integer(s->device_ns));
        CLI_JSET(o, "truncated", json_boolean(s->truncated));
        CLI_JSET(o, "ok", json_boolean(status_ok && !s->mismatches && !r->cmp_state && !r->rep_state));
        CLI_JSET(o, "mismatch_list", r->mism_json ? json_incref(r->mism_json) : json_array());
        if (r->cmp_dev)
            CLI_JSET(o, "compare", cli_compare_json(r));
        if (r->rep_n)
            CLI_JSET(o, "repeat", cli_repeat_json(r));
        if (r->plan_exec)
            CLI_JSET(o, "plan", cli_plan_json(s, r));
        CLI_JSET(o, "kernels_timing", k = json_array());
        for (size_t i = 0; i < r->nk; i++) {
            json_t *e = json_object();
            CLI_JSET(e, "name", cli_json_ctext(r->k[i].name));
            CLI_JSET(e, "launches", cli_json_u64(r->k[i].n));
            CLI_JSET(e, "host_ns", json_integer(r->k[i].host));
            CLI_JSET(e, "device_ns", json_integer(r->k[i].dev));
            if (r->k[i].have_rec)
                CLI_JSET(e, "recorded_device_ns", json_integer(r->k[i].rec));
            json_array_append_new(k, e);
        }
        if (cli_json_put(stdout, o) < 0)
            cli_err("replay: out of memory");
        else
            putchar('\n');
        return;
    }
    if (r->cmp_dev)
        cli_print_compare(r);
    if (r->rep_n && (r->quiet || !status_ok))
        cli_print_repeat(r, s);
    if (r->quiet)
        return;
    printf("replayed  %s\n", path);
    printf("device    %s (recorded on %s)\n", s->device, s->recorded_device);
    printf("calls     %" PRIu64 " executed: %" PRIu64 " commands, %" PRIu64 " kernel launches",
           s->calls, s->commands, s->kernels);
    if (s->skipped)
        printf("; %" PRIu64 " skipped (outside the range)", s->skipped);
    if (s->user_events_early)
        printf("; %" PRIu64 " user event%s set early (a blocking call that returned when recorded waited for %s)",
               s->user_events_early, s->user_events_early == 1 ? "" : "s", s->user_events_early == 1 ? "it" : "them");
    printf("\n");
    printf("data      %s fed to the device, %s read back\n", cli_fmt_size(s->bytes_in, a), cli_fmt_size(s->bytes_out, b));
    printf("verified  %" PRIu64 " read-backs, %" PRIu64 " mismatches", s->readbacks, s->mismatches);
    if (s->unverified)
        printf(", %" PRIu64 " not verifiable (no recorded data)", s->unverified);
    if (s->hashed)
        printf("; %" PRIu64 " compared by hash (recorded with --hash-reads)%s", s->hashed,
               r->inexact ? ", tolerance not applicable" : "");
    if (s->undefined_bytes)
        printf("; %" PRIu64 " undefined bytes not compared (in %" PRIu64 " read-back%s; --strict compares them)",
               s->undefined_bytes, s->undefined_readbacks, s->undefined_readbacks == 1 ? "" : "s");
    if (s->call_diffs)
        printf("; %" PRIu64 " queries answered differently", s->call_diffs);
    printf("\n");
    printf("time      wall %s, OpenCL calls %s", cli_fmt_ns(s->wall_ns, a), cli_fmt_ns(s->exec_ns, b));
    if (s->loops > 1)
        printf(" (median per loop %s over %u loops)", cli_fmt_ns(s->exec_ns_loop_median, c), s->loops);
    if (s->device_ns)
        printf(", device %s", cli_fmt_ns(s->device_ns, c));
    printf("\n");
    if (r->plan_exec)
        cli_print_plan(s, r);
    if (r->nk) {
        printf("kernels   %-24s %8s %12s %12s %12s\n", "name", "launches", "device", "recorded", "host");
        for (size_t i = 0; i < r->nk; i++) {
            char d[CLI_FMT_CAP];
            printf("          %-24s %8" PRIu64 " %12s %12s %12s\n", r->k[i].name, r->k[i].n,
                   cli_fmt_ns(r->k[i].dev, a), r->k[i].have_rec ? cli_fmt_ns(r->k[i].rec, b) : "-",
                   cli_fmt_ns(r->k[i].host, d));
        }
    }
    if (r->rep_n && status_ok)
        cli_print_repeat(r, s);
    printf("result    %s\n", !status_ok                 ? "FAILED"
                             : r->rep_state               ? "NONDETERMINISTIC PROGRAM"
                             : s->mismatches              ? "MISMATCH"
                             : r->cmp_state               ? "DEVICES DIFFER"
                                                          : "ok");
}

/* What `clrr replay` was asked beyond rpl_opts and cli_replay. */
typedef struct cli_replay_args {
    const char *path;         /* the trace */
    const char *compare;      /* --compare DEVICE, or NULL */
    const char *costs;        /* --costs FILE, or the default database (in dpath), or NULL */
    const char *lanes_set;    /* --lanes or --pinned, given */
    int no_learn;
    char dpath[4096];
} cli_replay_args;

#define CLI_REPLAY_GO (-1)   /* the command line is good: replay */

/* The command line into @p o, @p r and @p a: CLI_REPLAY_GO, or the exit
 * status (--help, or a bad command line, said on stderr). */
static int cli_replay_parse(int argc, char **argv, rpl_opts *o, cli_replay *r, cli_replay_args *a)
{
    enum { O_DEVICE = 256, O_RANGE, O_KERNEL, O_LOOP, O_TIMING, O_TOL, O_COMPARE, O_EXACT, O_NOVERIFY, O_MAXMEM,
           O_JSON, O_PLAN, O_SPLIT_FIXED, O_COSTS, O_NO_LEARN, O_SPLIT_METHOD, O_LANES, O_PINNED, O_TIMEOUT,
           O_REPEAT, O_STRICT };
    static const struct option opts[] = {
        {"device", required_argument, NULL, O_DEVICE}, {"range", required_argument, NULL, O_RANGE},
        {"kernel", required_argument, NULL, O_KERNEL}, {"loop", required_argument, NULL, O_LOOP},
        {"timing", no_argument, NULL, O_TIMING}, {"tolerance", required_argument, NULL, O_TOL},
        {"compare", required_argument, NULL, O_COMPARE}, {"exact-calls", no_argument, NULL, O_EXACT},
        {"no-verify", no_argument, NULL, O_NOVERIFY}, {"max-memory", required_argument, NULL, O_MAXMEM},
        {"json", no_argument, NULL, O_JSON}, {"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
        {"strict", no_argument, NULL, O_STRICT},
        {"plan", required_argument, NULL, O_PLAN}, {"split-fixed", no_argument, NULL, O_SPLIT_FIXED},
        {"costs", required_argument, NULL, O_COSTS}, {"no-learn", no_argument, NULL, O_NO_LEARN},
        {"split-method", required_argument, NULL, O_SPLIT_METHOD}, {"lanes", required_argument, NULL, O_LANES},
        {"pinned", required_argument, NULL, O_PINNED}, {"timeout", required_argument, NULL, O_TIMEOUT},
        {"repeat", required_argument, NULL, O_REPEAT},
        {NULL, 0, NULL, 0},
    };
    int c;
    uint64_t v;
    char err[512];
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case O_DEVICE:
            if (!*optarg)
                return cli_usage_err("--device takes an index, cpu, gpu, accelerator or part of a name, not ''");
            o->device = optarg;
            break;
        case O_RANGE:
            if (cli_parse_range(optarg, &o->first, &o->last) < 0)
                return cli_usage_err("--range takes A:B with 1 <= A <= B (call numbers), not '%s'", optarg);
            break;
        case O_KERNEL:
            if (cli_parse_u64(optarg, &o->kernel, 0) < 0 || !o->kernel)
                return cli_usage_err("--kernel takes a call number, not '%s'", optarg);
            break;
        case O_LOOP:
            if (cli_parse_u64(optarg, &v, 0) < 0 || !v || v > 1000000)
                return cli_usage_err("--loop takes a count from 1 to 1000000, not '%s'", optarg);
            o->loop = (unsigned)v;
            break;
        case O_TIMING: o->timing = 1; r->timing = 1; break;
        case O_REPEAT:
            if (cli_parse_u64(optarg, &v, 0) < 0 || v < 2 || v > CLI_REPEAT_MAX)
                return cli_usage_err("--repeat takes a count from 2 to %d, not '%s'", CLI_REPEAT_MAX, optarg);
            r->rep_n = (unsigned)v;
            break;
        case O_TOL:
            if (rpl_tolerance_parse(optarg, &o->tol, err, sizeof err) < 0)
                return cli_usage_err("--tolerance: %s", err);
            r->inexact = !rpl_tolerance_is_exact(&o->tol);
            break;
        case O_COMPARE:
            if (!*optarg)
                return cli_usage_err("--compare takes a device (as --device does), not ''");
            a->compare = optarg;
            break;
        case O_TIMEOUT: {
            char *end = NULL;
            double t = strtod(optarg, &end);
            if (!*optarg || *end || !(t >= 0) || t > 1e9)
                return cli_usage_err("--timeout takes seconds (0: never), not '%s'", optarg);
            o->timeout_s = t;
            break;
        }
        case O_EXACT: o->exact_calls = 1; break;
        case O_NOVERIFY: o->verify = 0; break;
        case O_MAXMEM:
            if (cli_parse_u64(optarg, &v, 1) < 0 || v < 4096)
                return cli_usage_err("--max-memory takes a byte count (at least 4096; K, M, G suffixes), not '%s'",
                                     optarg);
            o->max_memory = (size_t)v;
            break;
        case O_JSON: r->json = 1; break;
        case O_STRICT: o->strict = 1; break;
        case O_PLAN:
            if (!*optarg)
                return cli_usage_err("--plan takes a plan file ('clrr optimize' writes one), not ''");
            r->plan_path = optarg;
            break;
        case O_SPLIT_FIXED: o->split_fixed = 1; break;
        case O_SPLIT_METHOD:
            if ((o->split_method = cli_split_method(optarg)) < 0)
                return cli_usage_err("--split-method takes fixed-point or broyden, not '%s'", optarg);
            break;
        case O_COSTS: a->costs = optarg; break;
        case O_NO_LEARN: a->no_learn = 1; break;
        case O_LANES:
            if (!strcmp(optarg, "auto") || !strcmp(optarg, "always") || !strcmp(optarg, "off"))
                o->lanes = !strcmp(optarg, "always") ? RPL_LANES_ALWAYS : !strcmp(optarg, "off") ? RPL_LANES_OFF
                                                                                              : RPL_LANES_AUTO;
            else
                return cli_usage_err("--lanes takes auto, always or off, not '%s'", optarg);
            a->lanes_set = "--lanes";
            break;
        case O_PINNED:
            if (cli_parse_u64(optarg, &v, 1) < 0 || v < 65536 || v > SIZE_MAX)
                return cli_usage_err("--pinned takes a byte count (at least 64K; K, M, G suffixes), not '%s'", optarg);
            o->pin_max = (size_t)v;
            a->lanes_set = "--pinned";
            break;
        case 'q': r->quiet = 1; break;
        case 'h': fputs(cli_replay_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    int urc = cli_one_file(argc, argv, &a->path);
    if (urc != CLI_EXIT_OK)
        return urc;
    if (o->kernel && o->first)
        return cli_usage_err("--kernel and --range cannot be combined");
    if (a->compare && o->exact_calls)
        return cli_usage_err("--compare replays on two devices; it cannot take --exact-calls");
    if (a->compare && o->loop > 1)
        return cli_usage_err("--compare cannot take --loop");
    if (r->rep_n && (a->compare || o->loop > 1 || r->plan_path || !o->verify))
        return cli_usage_err("--repeat compares whole replays: it cannot take --compare, --loop, --plan or "
                             "--no-verify");
    if (r->plan_path && (o->first || o->kernel || a->compare || o->exact_calls))
        return cli_usage_err("--plan applies to a whole replay: it cannot take --range, --kernel, --compare or "
                             "--exact-calls");
    if ((a->costs || a->no_learn) && !r->plan_path)
        return cli_usage_err("%s applies to split launches: it needs --plan", a->costs ? "--costs" : "--no-learn");
    if (a->costs && a->no_learn)
        return cli_usage_err("--costs and --no-learn exclude each other");
    if (a->lanes_set && !r->plan_path)
        return cli_usage_err("%s applies to a plan's scheduled queues: it needs --plan", a->lanes_set);
    return CLI_REPLAY_GO;
}

/* --plan: the plan read and opened against the trace, into *plan and
 * r->plan_exec, and @p hook (which lives as long as the replay) into
 * o->plan when the plan changes anything. CLI_EXIT_OK, or CLI_EXIT_ERROR
 * said on stderr. */
static int cli_replay_plan(const char *path, rpl_opts *o, cli_replay *r, plan_file **plan, rpl_plan_hook *hook)
{
    char err[512];
    plan_status pst = plan_read(r->plan_path, plan, err, sizeof err);
    if (pst == PLAN_OK && (pst = live_exec_open(*plan, path, o->max_memory, &r->plan_exec, err, sizeof err)) != PLAN_OK) {
        cli_err("%s: %s", path, err);
        plan_free(*plan);
        *plan = NULL;
        return CLI_EXIT_ERROR;
    }
    if (pst != PLAN_OK) {
        cli_err("%s: %s", r->plan_path, err);
        return CLI_EXIT_ERROR;
    }
    live_exec_stats ps;
    live_exec_get_stats(r->plan_exec, &ps);
    if (!ps.same_trace)
        cli_err("warning: %s was made for a trace of another structure (fingerprint %016" PRIx64
                ", this one %016" PRIx64 "): only changes checked as they run (redundant transfers) apply",
                r->plan_path, plan_get_info(*plan)->fingerprint, ps.fingerprint);
    live_exec_replay_hook(r->plan_exec, hook);
    /* a plan that changes nothing costs nothing: no call is matched
       (a schedule alone only gives queues lanes) */
    if (!plan_xform_count(*plan))
        hook->on_item = NULL;
    if (plan_xform_count(*plan) || plan_sched_count(*plan) || plan_stage_count(*plan))
        o->plan = hook;
    return CLI_EXIT_OK;
}

/* Split launches add what their parts took to the cost database (--costs,
 * else the default one) unless --no-learn: it opened, or NULL. */
static cdb *cli_replay_learn(const plan_file *plan, cli_replay_args *a)
{
    cdb *learn = NULL;
    char err[512];
    if (plan && plan_split_count(plan) && !a->no_learn &&
        (a->costs || (a->costs = cdb_default_path(a->dpath, sizeof a->dpath)))) {
        if (cdb_open(a->costs, &learn, err, sizeof err) != CDB_OK) {
            cli_err("warning: %s; split launches add nothing to it", err);
            learn = NULL;
        }
    }
    return learn;
}

/* --compare: @p s and a session on that device replayed side by side,
 * their results into @p r, the replay's status into *st. The exit status
 * so far, or -1 when the second session does not open (said on stderr). */
static int cli_replay_compare(rpl_session *s, const rpl_opts *o, const cli_replay_args *a, cli_replay *r,
                              rpl_status *st)
{
    rpl_opts ob = *o;
    ob.device = a->compare;
    ob.on_mismatch = NULL;
    ob.on_time = NULL;
    ob.on_progress = NULL;
    rpl_session *b = NULL;
    if (rpl_open(&b, a->path, &ob) != RPL_OK) {
        cli_err("%s: --compare %s: %s", a->path, a->compare, rpl_open_error());
        return -1;
    }
    r->cmp_dev = a->compare;
    int rc = cli_compare(s, b, &o->tol, r);
    rpl_summary sb;
    rpl_get_summary(b, &sb);
    snprintf(r->cmp_b_device, sizeof r->cmp_b_device, "%s", sb.device);
    r->cmp_b_readbacks = sb.readbacks;
    r->cmp_b_mismatches = sb.mismatches;
    rpl_close(b);
    *st = rc == CLI_EXIT_ERROR ? RPL_ERR_CL : RPL_OK;
    return rc;
}

/* --repeat: @p s and N-1 more sessions like it, replayed side by side
 * (cli_repeat), their results into @p r, the replay's status into *st. The
 * exit status so far, or -1 when a session does not open (said on stderr). */
static int cli_replay_repeat(rpl_session *s, const rpl_opts *o, const cli_replay_args *a, cli_replay *r,
                             rpl_status *st)
{
    rpl_session *ss[CLI_REPEAT_MAX] = {s};
    rpl_opts ob = *o;
    ob.on_mismatch = NULL;   /* the first replay's mismatches are listed */
    ob.on_time = NULL;
    ob.on_progress = NULL;
    unsigned n = 1;
    int rc = 0;
    for (; n < r->rep_n; n++)
        if (rpl_open(&ss[n], a->path, &ob) != RPL_OK) {
            cli_err("%s: --repeat: replay %u: %s", a->path, n + 1, rpl_open_error());
            rc = -1;
            break;
        }
    if (!rc)
        rc = cli_repeat(ss, n, &o->tol, r);
    for (unsigned k = 1; k < n; k++)
        rpl_close(ss[k]);
    *st = rc == CLI_EXIT_ERROR ? RPL_ERR_CL : RPL_OK;
    return rc;
}

/* What the replay found, into @p sum and printed (with a truncated
 * trace's warning or error); *st and *rc moved when there was nothing to
 * replay. */
static void cli_replay_report(rpl_session *s, const char *path, cli_replay *r, rpl_summary *sum, rpl_status *st,
                              int *rc)
{
    cli_progress_end(r->prog);
    r->prog = NULL;
    rpl_get_summary(s, sum);
    if (*st != RPL_OK && *rc != CLI_EXIT_ERROR)
        cli_err("%s: %s", path, rpl_error(s));
    if (*st == RPL_OK && sum->truncated && !sum->calls) {
        cli_err("%s: truncated at byte %" PRIu64 " of %" PRIu64 ", before its first complete chunk: nothing to replay",
                path, sum->valid_bytes, sum->file_bytes);
        *st = RPL_ERR_TRACE;
        *rc = CLI_EXIT_ERROR;
    } else if (*st == RPL_OK && sum->truncated) {
        cli_err("warning: %s is truncated (a crashed or killed recording): replayed its complete part, "
                "%" PRIu64 " of %" PRIu64 " bytes",
                path, sum->valid_bytes, sum->file_bytes);
    }
    cli_print_summary(path, sum, r, *st == RPL_OK);
}

/* The trace whose replay's time budget ran out: one line, from the
 * watchdog thread, right before the process ends (rpl_opts.on_timeout). */
static const char *cli_replay_timeout_path;
static void cli_on_timeout(void *user, const char *msg)
{
    (void)user;
    cli_err("%s: %s", cli_replay_timeout_path, msg);
}

static int cli_replay_run(int argc, char **argv)
{
    rpl_opts o;
    rpl_opts_init(&o);
    o.max_memory = cli_max_memory();
    o.timeout_s = RPL_TIMEOUT_AUTO;
    o.on_timeout = cli_on_timeout;
    cli_replay r;
    memset(&r, 0, sizeof r);
    cli_replay_args a;
    memset(&a, 0, sizeof a);
    char err[512];
    int prc = cli_replay_parse(argc, argv, &o, &r, &a);
    if (prc != CLI_REPLAY_GO)
        return prc;
    const char *path = a.path;
    cli_replay_timeout_path = path;
    plan_file *plan = NULL;
    rpl_plan_hook hook;
    if (r.plan_path && cli_replay_plan(path, &o, &r, &plan, &hook) != CLI_EXIT_OK)
        return CLI_EXIT_ERROR;
    cdb *learn = cli_replay_learn(plan, &a);
    o.learn = learn;
    o.user = &r;
    o.on_mismatch = cli_on_mismatch;
    if (o.timing)
        o.on_time = cli_on_time;
    r.progress = !r.json && !r.quiet && isatty(2);
    if (r.progress)
        o.on_progress = cli_on_progress;
    if (o.timing && !r.json && !r.quiet)
        printf("commands  (%scall, function, kernel, host time, device time here, device time when recorded)\n",
               o.loop > 1 ? "iteration, " : "");
    r.loops = o.loop;
    /* the bytes each launch may write, from the kernel analysis (none when
     * it cannot run: launches then define their buffers whole) */
    rpl_write_hint *hints = NULL;
    if (o.verify && !o.strict && cli_replay_hints(path, &hints, &o.nwrite_hints) == 0)
        o.write_hints = hints;

    rpl_session *s = NULL;
    if (rpl_open(&s, path, &o) != RPL_OK) {
        cli_err("%s: %s", path, rpl_open_error());
        live_exec_close(r.plan_exec);
        plan_free(plan);
        free(hints);
        return CLI_EXIT_ERROR;
    }
    r.sess = s;
    if (r.progress) {   /* calls done of the trace's (--range: of B) */
        r.prog = cli_progress_new("replay", "call", 0, 0);
        cli_progress_total(r.prog, o.kernel ? 0 : o.last ? o.last : cli_progress_count_calls(path));
    }
    int rc = CLI_EXIT_OK;
    rpl_status st = RPL_OK;
    if (a.compare) {
        rc = cli_replay_compare(s, &o, &a, &r, &st);
        if (rc < 0) {
            cli_progress_end(r.prog);
            rpl_close(s);
            free(hints);
            return CLI_EXIT_ERROR;
        }
    } else if (r.rep_n) {
        rc = cli_replay_repeat(s, &o, &a, &r, &st);
        if (rc < 0) {
            cli_progress_end(r.prog);
            rpl_close(s);
            free(hints);
            return CLI_EXIT_ERROR;
        }
    } else {
        st = rpl_run(s);
    }
    rpl_summary sum;
    cli_replay_report(s, path, &r, &sum, &st, &rc);
    if (learn && cdb_flush(learn, err, sizeof err) != CDB_OK)
        cli_err("warning: %s", err);
    else if (learn && sum.split.learned && !r.json && !r.quiet)
        printf("costs     %" PRIu64 " part times added to %s\n", sum.split.learned, a.costs);
    cdb_close(learn);
    rpl_close(s);
    live_exec_close(r.plan_exec);
    plan_free(plan);
    free(r.k);
    json_decref(r.mism_json);
    free(hints);
    if (st != RPL_OK)
        return CLI_EXIT_ERROR;
    if (rc != CLI_EXIT_OK)
        return rc;   /* CLI_EXIT_SELF (--repeat) before a mismatch with the recording */
    return sum.mismatches ? CLI_EXIT_DIFFERENT : CLI_EXIT_OK;
}

const cli_command cli_cmd_replay = {
    "replay", "re-execute a trace here and verify every read-back", cli_replay_usage, cli_replay_run, NULL,
};

/* cmd_profile.c — `clrr profile`: replays a trace (verified, as `clrr
 * replay` does) and measures its kernel launches on every device here, at
 * several work-group counts, plus each device's transfer cost; the samples
 * go to this machine's cost database (costs/cdb.h), where `clrr optimize`
 * finds them. replayer/rpl_profile.c does the measuring; this file parses
 * options and prints what the database holds afterwards. */
#include "tools/clrr/cli.h"
#include "tools/clrr/cli_model.h"
#include "tools/clrr/cli_progress.h"

#include <jansson.h>
#include "costs/cdb.h"
#include "replayer/rpl.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char cli_profile_usage[] =
    "Usage: clrr profile FILE [options]\n"
    "Replays the trace (every read-back verified, as 'clrr replay' does) and\n"
    "measures its kernel launches on every device here: the first launches of\n"
    "each distinct kernel and shape run again, on copies of their inputs, at\n"
    "several numbers of work-groups, timed by the device; each device's\n"
    "host<->device transfer latency and bandwidth are measured once. The samples\n"
    "are added to this machine's cost database, which 'clrr optimize' reads, with\n"
    "each launch shape's features from the kernel analysis ('clrr model' learns\n"
    "from them).\n"
    "\n"
    "Options:\n"
    "  --devices SPEC,...  the devices to measure on, each as --device takes it\n"
    "                      (default: every device of 'clrr devices')\n"
    "  --device SPEC       where the replay itself runs (as 'clrr replay --device';\n"
    "                      default: the recorded device, else the closest one)\n"
    "  --costs PATH        the cost database, appended to (default: $CLRR_COSTS, else\n"
    "                      $XDG_CACHE_HOME/clrr/costs or ~/.cache/clrr/costs); not FILE\n"
    "  --reps N            runs per number of work-groups (default 5); the database\n"
    "                      trusts a point with 3 samples, outliers rejected\n"
    "  --launches N        launches measured per distinct kernel and shape (default 1)\n"
    "  --max-seconds S     per launch and device: past it the measuring stops with\n"
    "                      fewer points or runs (default 10)\n"
    "  --tolerance SPEC    compare the replay's read-backs within a float tolerance,\n"
    "                      as 'clrr replay --tolerance' (a trace recorded on another\n"
    "                      device; default: exact bytes)\n"
    "  --json              one JSON object on stdout instead of the tables\n"
    "\n"
    "Launches whose arguments include images, samplers, pipes, SVM pointers or\n"
    "device queues, and programs made from binaries, are not measured (a note\n"
    "says so).\n"
    "\n"
    "Exit status: 0 every read-back matched, 1 a read-back differed (the samples\n"
    "are still added), 2 usage error (an unknown device included), 3 failed\n"
    "(unreadable trace or cost database, a call that failed here).\n";

#define CLI_PROF_MAX_DEVS 16

/* A launch key measured somewhere, and its whole number of work-groups. */
typedef struct cli_pkey {
    cdb_key k;                /* k.kernel owned */
    uint64_t groups;
} cli_pkey;

typedef struct cli_profile {
    int json;
    cli_pkey *keys;
    size_t nkeys;
    char **notes;
    size_t nnotes;
    uint64_t mismatches_listed;
    int oom;
    cli_progress *prog;       /* the progress line (NULL: off) */
} cli_profile;

static void cli_prof_on_progress(void *user, uint64_t seq, uint64_t last)
{
    cli_progress_on_call(((cli_profile *)user)->prog, seq, last);
}

static void cli_prof_on_note(void *user, const char *line)
{
    cli_profile *p = user;
    cli_progress_clear(p->prog);
    if (!p->json) {
        printf("note      %s\n", line);
        return;
    }
    char **a = realloc(p->notes, (p->nnotes + 1) * sizeof *a);
    char *d = strdup(line);
    if (!a || !d) {
        if (a)
            p->notes = a;
        free(d);
        p->oom = 1;
        return;
    }
    p->notes = a;
    p->notes[p->nnotes++] = d;
}

static void cli_prof_on_launch(void *user, const rpl_profile_launch *l)
{
    cli_profile *p = user;
    const cdb_key *k = l->key;
    for (size_t i = 0; i < p->nkeys; i++) {
        const cdb_key *a = &p->keys[i].k;
        if (!memcmp(a->program, k->program, 16) && a->dim == k->dim && !strcmp(a->kernel, k->kernel) &&
            !memcmp(a->gsz, k->gsz, sizeof a->gsz) && !memcmp(a->lsz, k->lsz, sizeof a->lsz))
            return;
    }
    cli_pkey *a = realloc(p->keys, (p->nkeys + 1) * sizeof *a);
    char *name = strdup(k->kernel);
    if (!a || !name) {
        if (a)
            p->keys = a;
        free(name);
        p->oom = 1;
        return;
    }
    p->keys = a;
    a[p->nkeys] = (cli_pkey){*k, l->groups};
    a[p->nkeys++].k.kernel = name;
}

static void cli_prof_on_mismatch(void *user, const rpl_mismatch *m)
{
    cli_profile *p = user;
    cli_progress_clear(p->prog);
    if (p->json || p->mismatches_listed++ >= 20)
        return;
    cli_mismatch_print(m);
}

/* "1024x768/16x16", or "4096/-" when the launch left the local size to the driver */
static void cli_prof_shape(const cdb_key *k, char *buf, size_t cap)
{
    size_t n = 0;
    for (unsigned d = 0; d < k->dim && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%" PRIu64, d ? "x" : "", k->gsz[d]);
    for (unsigned d = 0; d < k->dim && n < cap; d++)
        n += (size_t)(k->lsz[0] ? snprintf(buf + n, cap - n, "%s%" PRIu64, d ? "x" : "/", k->lsz[d])
                                : snprintf(buf + n, cap - n, "%s", d ? "" : "/-"));
}

static json_t *cli_prof_json_sizes(const uint64_t *v, unsigned dim)
{
    json_t *a = json_array();
    for (unsigned d = 0; d < dim; d++)
        json_array_append_new(a, cli_json_u64(v[d]));
    return a;
}

/* What the database holds now for device @p id: its kernels and transfers
 * (--json: appended to @p devs, docs/schemas/profile.json). */
static void cli_prof_device(cdb *db, const cli_profile *p, json_t *devs, const char *spec, const char *id)
{
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP], shape[128];
    json_t *dev = NULL, *kernels = NULL;
    if (p->json) {
        dev = json_object();
        kernels = json_array();
        json_object_set_new(dev, "spec", cli_json_ctext(spec));
        json_object_set_new(dev, "identity", cli_json_ctext(id));
        json_object_set_new(dev, "kernels", kernels);
        json_array_append_new(devs, dev);
    } else {
        printf("device    %s = %s\n", spec, id);
    }
    unsigned shown = 0;
    for (size_t i = 0; i < p->nkeys; i++) {
        const cli_pkey *k = &p->keys[i];
        cdb_curve c;
        if (!cdb_kernel_curve(db, id, &k->k, &c) || !c.n)
            continue;
        unsigned samples = 0;
        for (unsigned j = 0; j < c.n; j++)
            samples += c.samples[j];
        double full = cdb_curve_at(&c, (double)k->groups), per = full / (double)k->groups;
        if (p->json) {
            char hex[CLI_FMT_CAP + 4];
            tf_blobref ref;
            memcpy(ref.hash, k->k.program, 16);
            json_t *o = json_object(), *pts = json_array();
            json_object_set_new(o, "kernel", cli_json_ctext(k->k.kernel));
            json_object_set_new(o, "program", json_string(cli_fmt_hash(&ref, 32, hex)));
            json_object_set_new(o, "dim", json_integer(k->k.dim));
            json_object_set_new(o, "global", cli_prof_json_sizes(k->k.gsz, k->k.dim));
            json_object_set_new(o, "local", k->k.lsz[0] ? cli_prof_json_sizes(k->k.lsz, k->k.dim) : json_null());
            json_object_set_new(o, "groups", cli_json_u64(k->groups));
            for (unsigned j = 0; j < c.n; j++) {
                json_t *pt = json_object();
                json_object_set_new(pt, "groups", cli_json_u64(c.groups[j]));
                json_object_set_new(pt, "ns", cli_json_f64(c.ns[j]));
                json_object_set_new(pt, "samples", json_integer(c.samples[j]));
                json_array_append_new(pts, pt);
            }
            json_object_set_new(o, "points", pts);
            json_object_set_new(o, "samples", json_integer(samples));
            json_object_set_new(o, "full_ns", cli_json_f64(full));
            json_object_set_new(o, "ns_per_group", cli_json_f64(per));
            json_array_append_new(kernels, o);
        } else {
            if (!shown)
                printf("          %-24s %-20s %6s %7s %11s %11s\n", "kernel", "shape", "points", "samples",
                       "full size", "per group");
            cli_prof_shape(&k->k, shape, sizeof shape);
            printf("          %-24s %-20s %6u %7u %11s %11s\n", k->k.kernel, shape, c.n, samples,
                   cli_fmt_ns((int64_t)full, a), cli_fmt_ns((int64_t)(per + 0.5), b));
        }
        shown++;
    }
    if (!p->json && !shown)
        printf("          no kernel has a trusted point yet (%d samples each, outliers rejected)\n",
               CDB_MIN_SAMPLES);
    double lat[2], npb[2];
    int have[2];
    for (int dir = CDB_H2D; dir <= CDB_D2H; dir++)
        have[dir] = cdb_xfer(db, id, dir, &lat[dir], &npb[dir]);
    if (p->json) {
        for (int dir = CDB_H2D; dir <= CDB_D2H; dir++) {
            json_t *x = json_null();
            if (have[dir]) {
                x = json_object();
                json_object_set_new(x, "latency_ns", cli_json_f64(lat[dir]));
                json_object_set_new(x, "ns_per_byte", cli_json_f64(npb[dir]));
                json_object_set_new(x, "gbps", cli_json_f64(npb[dir] > 0 ? 1.0 / npb[dir] : 0.0));
            }
            json_object_set_new(dev, dir == CDB_H2D ? "h2d" : "d2h", x);
        }
        return;
    }
    printf("          transfers ");
    for (int dir = CDB_H2D; dir <= CDB_D2H; dir++) {
        printf("%s", dir == CDB_H2D ? "to device " : ", from device ");
        if (have[dir] && npb[dir] > 0)
            printf("%s + %.2f GB/s", cli_fmt_ns((int64_t)lat[dir], a), 1.0 / npb[dir]);
        else
            printf("not trusted yet");
    }
    printf("\n");
}

static void cli_prof_print(const char *path, cdb *db, const cli_profile *p, const rpl_summary *s,
                           const rpl_profile_summary *ps, int ok)
{
    uint64_t added = ps->kernel_samples + ps->xfer_samples;
    if (p->json) {   /* docs/schemas/profile.json */
        json_t *o = json_object(), *rp = json_object(), *devs = json_array(), *notes = json_array();
        json_object_set_new(o, "schema", json_string("clrr-profile/1"));
        json_object_set_new(o, "trace", cli_json_ctext(path));
        json_object_set_new(o, "costs", cli_json_ctext(cdb_path(db)));
        json_object_set_new(o, "ok", json_boolean(ok && !s->mismatches));
        json_object_set_new(rp, "device", cli_json_ctext(s->device));
        json_object_set_new(rp, "calls", cli_json_u64(s->calls));
        json_object_set_new(rp, "kernels", cli_json_u64(s->kernels));
        json_object_set_new(rp, "readbacks", cli_json_u64(s->readbacks));
        json_object_set_new(rp, "mismatches", cli_json_u64(s->mismatches));
        json_object_set_new(o, "replay", rp);
        json_object_set_new(o, "launches_measured", cli_json_u64(ps->launches));
        json_object_set_new(o, "launches_skipped", cli_json_u64(ps->skipped));
        json_object_set_new(o, "samples_added", cli_json_u64(added));
        json_object_set_new(o, "kernel_samples", cli_json_u64(ps->kernel_samples));
        json_object_set_new(o, "xfer_samples", cli_json_u64(ps->xfer_samples));
        for (unsigned i = 0; i < ps->ndevices; i++)
            cli_prof_device(db, p, devs, ps->specs[i], ps->identities[i]);
        json_object_set_new(o, "devices", devs);
        for (size_t i = 0; i < p->nnotes; i++)
            json_array_append_new(notes, cli_json_ctext(p->notes[i]));
        json_object_set_new(o, "notes", notes);
        cli_json_put(stdout, o);
        putchar('\n');
        return;
    }
    printf("profiled  %s: %" PRIu64 " kernel launches replayed, %" PRIu64 " measured, %" PRIu64 " skipped\n", path,
           s->kernels, ps->launches, ps->skipped);
    printf("verified  %" PRIu64 " read-backs, %" PRIu64 " mismatches (replayed on %s)\n", s->readbacks, s->mismatches,
           s->device);
    for (unsigned i = 0; i < ps->ndevices; i++)
        cli_prof_device(db, p, NULL, ps->specs[i], ps->identities[i]);
    printf("%" PRIu64 " samples added to %s\n", added, cdb_path(db));
}

/* --devices A,B,...: appended to @p specs (the strings point into @p arg). */
static int cli_prof_devices(char *arg, const char **specs, unsigned *n)
{
    for (char *save = NULL, *tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == CLI_PROF_MAX_DEVS)
            return cli_usage_err("--devices takes at most %d devices", CLI_PROF_MAX_DEVS);
        specs[(*n)++] = tok;
    }
    return CLI_EXIT_OK;
}

static int cli_profile_run(int argc, char **argv)
{
    enum { O_DEVICES = 256, O_DEVICE, O_COSTS, O_REPS, O_LAUNCHES, O_MAXSEC, O_JSON, O_TOL };
    static const struct option opts[] = {
        {"devices", required_argument, NULL, O_DEVICES}, {"device", required_argument, NULL, O_DEVICE},
        {"costs", required_argument, NULL, O_COSTS}, {"reps", required_argument, NULL, O_REPS},
        {"launches", required_argument, NULL, O_LAUNCHES}, {"max-seconds", required_argument, NULL, O_MAXSEC},
        {"json", no_argument, NULL, O_JSON}, {"tolerance", required_argument, NULL, O_TOL},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    rpl_opts o;
    rpl_opts_init(&o);
    o.max_memory = cli_max_memory();
    rpl_profile_opts po;
    memset(&po, 0, sizeof po);
    cli_profile p;
    memset(&p, 0, sizeof p);
    const char *specs[CLI_PROF_MAX_DEVS];
    unsigned nspecs = 0;
    const char *costs = NULL;
    uint64_t v;
    int c, urc;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case O_DEVICES:
            if (!*optarg || strspn(optarg, ",") == strlen(optarg))
                return cli_usage_err("--devices takes device specs separated by commas, not '%s'", optarg);
            if ((urc = cli_prof_devices(optarg, specs, &nspecs)) != CLI_EXIT_OK)
                return urc;
            break;
        case O_DEVICE:
            if (!*optarg)
                return cli_usage_err("--device takes an index, cpu, gpu, accelerator or part of a name, not ''");
            o.device = optarg;
            break;
        case O_COSTS:
            if (!*optarg)
                return cli_usage_err("--costs takes a path, not ''");
            costs = optarg;
            break;
        case O_REPS:
            if (cli_parse_u64(optarg, &v, 0) < 0 || !v || v > 1000)
                return cli_usage_err("--reps takes a count from 1 to 1000, not '%s'", optarg);
            po.reps = (unsigned)v;
            break;
        case O_LAUNCHES:
            if (cli_parse_u64(optarg, &v, 0) < 0 || !v || v > 1000000)
                return cli_usage_err("--launches takes a count from 1 to 1000000, not '%s'", optarg);
            po.launches = (unsigned)v;
            break;
        case O_MAXSEC: {
            char *end;
            double d = strtod(optarg, &end);
            if (end == optarg || *end || !(d > 0) || d > 86400)
                return cli_usage_err("--max-seconds takes a number of seconds above 0 (at most 86400), not '%s'",
                                     optarg);
            po.max_seconds = d;
            break;
        }
        case O_JSON: p.json = 1; break;
        case O_TOL: {
            char err[256];
            if (rpl_tolerance_parse(optarg, &o.tol, err, sizeof err) < 0)
                return cli_usage_err("--tolerance: %s", err);
            break;
        }
        case 'h': fputs(cli_profile_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    if ((urc = cli_one_file(argc, argv, &path)) != CLI_EXIT_OK)
        return urc;
    char dflt[1024], err[1024];
    if (!costs && !(costs = cdb_default_path(dflt, sizeof dflt))) {
        cli_err("no cost database path: set CLRR_COSTS or HOME, or give --costs");
        return CLI_EXIT_ERROR;
    }
    if (cli_same_file(costs, path))   /* the database is appended to: never the trace */
        return cli_usage_err("%s: the cost database is the trace FILE", costs);
    cdb *db = NULL;
    cdb_status cs = cdb_open(costs, &db, err, sizeof err);
    if (cs != CDB_OK) {
        cli_err("%s", cs == CDB_ERR_FORMAT ? err : cdb_strerror(cs));
        return CLI_EXIT_ERROR;
    }
    po.devices = nspecs ? specs : NULL;
    po.ndevices = nspecs;
    po.costs = db;
    po.user = &p;
    po.on_note = cli_prof_on_note;
    po.on_launch = cli_prof_on_launch;
    o.profile = &po;
    o.user = &p;
    o.on_mismatch = cli_prof_on_mismatch;
    if ((p.prog = cli_progress_new("profile", "call", 0, p.json)))
        o.on_progress = cli_prof_on_progress;
    int rc = CLI_EXIT_OK;
    rpl_session *s = NULL;
    rpl_status st = rpl_open(&s, path, &o);
    cli_progress_total(p.prog, st == RPL_OK ? cli_progress_count_calls(path) : 0);
    if (st != RPL_OK) {
        /* a device spec that names no device is a bad command line */
        const char *m = rpl_open_error();
        int usage = st == RPL_ERR_ARG || (st == RPL_ERR_DEVICE && !strncmp(m, "--device ", 9));
        cli_err("%s%s%s", usage ? "" : path, usage ? "" : ": ", m);
        rc = usage ? CLI_EXIT_USAGE : CLI_EXIT_ERROR;
        goto out;
    }
    st = rpl_run(s);
    cli_progress_end(p.prog);
    p.prog = NULL;
    rpl_summary sum;
    rpl_get_summary(s, &sum);
    rpl_profile_summary ps;
    rpl_profile_get(s, &ps);
    if (st != RPL_OK) {
        cli_err("%s: %s", path, rpl_error(s));
    } else if (sum.truncated && !sum.calls) {
        cli_err("%s: truncated at byte %" PRIu64 " of %" PRIu64 ", before its first complete chunk: nothing to "
                "replay", path, sum.valid_bytes, sum.file_bytes);
        st = RPL_ERR_TRACE;
    } else if (sum.truncated) {
        cli_err("warning: %s is truncated (a crashed or killed recording): replayed its complete part, %" PRIu64
                " of %" PRIu64 " bytes", path, sum.valid_bytes, sum.file_bytes);
    }
    /* what was measured is kept, whatever the replay's outcome, once
     * anything of the trace replayed */
    err[0] = 0;
    if (sum.calls && ps.launches)   /* the measured shapes' features, for `clrr model` */
        cli_model_note_features(path, db);
    cs = sum.calls ? cdb_flush(db, err, sizeof err) : CDB_OK;
    if (cs != CDB_OK) {
        cli_err("%s", err[0] ? err : cdb_strerror(cs));
        rc = CLI_EXIT_ERROR;
    } else if (p.oom) {
        cli_err("out of memory");
        rc = CLI_EXIT_ERROR;
    } else {
        cli_prof_print(path, db, &p, &sum, &ps, st == RPL_OK);
    }
    if (rc == CLI_EXIT_OK)
        rc = st != RPL_OK ? CLI_EXIT_ERROR : sum.mismatches ? CLI_EXIT_DIFFERENT : CLI_EXIT_OK;
out:
    rpl_close(s);
    cdb_close(db);
    for (size_t i = 0; i < p.nkeys; i++)
        free((char *)p.keys[i].k.kernel);
    free(p.keys);
    for (size_t i = 0; i < p.nnotes; i++)
        free(p.notes[i]);
    free(p.notes);
    return rc;
}

const cli_command cli_cmd_profile = {
    "profile", "measure a trace's kernels and transfers on every device into the cost database", cli_profile_usage,
    cli_profile_run, NULL,
};

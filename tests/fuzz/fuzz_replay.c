/* fuzz_replay.c — fuzz target for the replay engine (replayer/): a decoded
 * trace replayed onto the stub OpenCL driver (tests/stub-icd, which runs
 * no kernel but implements the API and checks every object it is given).
 * What a trace can make the replayer do: map its devices, decode every
 * argument, rebuild objects from recorded ids, feed recorded data, verify
 * read-backs, loop, ranges, kernel mode, timing, and trim.
 *
 * Input: one options byte, then a trace in a layout of fuzz.h ('S'
 * sections for mutations behind the checksums; seeds are real traces
 * recorded on the stub, packed by fuzz_pack). The options byte:
 *   bit 0  exact_calls            bit 1  verify off
 *   bit 2  loop 2                 bit 3  timing (on_time called)
 *   bit 4  tolerance rel=1e-5     bit 7  rpl_step() taking read-backs
 *   bits 5-6: 0 the whole trace; 1 --range A:A+B; 2 --kernel A; 3 rpl_trim
 *             of --range A:A+B (A, B: the next bytes, consumed)
 * The oracle: no crash, no hang, no sanitizer report, no leak (in the
 * replayer or in the stub: objects the replay made are released), and an
 * error status always comes with a message.
 *
 * The stub: OCL_ICD_VENDORS is set to FUZZ_STUB_VENDORS (the build's
 * stub-vendors folder) before the first OpenCL call, so no other driver is
 * ever loaded. Corpus: tests/fuzz-corpus/replay/; crashes:
 * tests/fuzz/crashes/replay/.
 *
 * Built with FUZZ_REPLAY_POCL (fuzz_replay_pocl.c), the same target
 * replays onto the driver the ICD loader finds (PoCL here), which does not
 * refuse what it cannot do: what would crash or hang it must be refused by
 * the replayer before the call (replayer/rpl_guard.c). Its oracle has no
 * leak check (the driver's own allocations). Corpus:
 * tests/fuzz-corpus/replay_pocl/; crashes: tests/fuzz/crashes/replay_pocl/. */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replayer/rpl.h"

#ifndef FUZZ_STUB_VENDORS
#error "FUZZ_STUB_VENDORS: the stub driver's vendors folder (tests/fuzz/module.mk)"
#endif

#ifdef FUZZ_REPLAY_POCL
const char *const fuzz_dirs[] = { "tests/fuzz-corpus/replay_pocl", "tests/fuzz/crashes/replay_pocl", NULL };
/* the driver's own allocations are not the replay's leaks */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}
#else
const char *const fuzz_dirs[] = { "tests/fuzz-corpus/replay", "tests/fuzz/crashes/replay", NULL };
#endif

static volatile uint64_t fr_sink;
static int fr_verbose;   /* FUZZ_VERBOSE: say how each input ended */

static void fr_check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_replay: %s\n", what);
        abort();
    }
}

static void fr_mismatch(void *user, const rpl_mismatch *m)
{
    (void)user;
    fr_sink += m->seq + strlen(m->function) + strlen(m->what) + strlen(m->writers) + m->cmp.differ;
}

static void fr_time(void *user, const rpl_cmd_time *t)
{
    (void)user;
    fr_sink += t->seq + strlen(t->function) + (t->kernel ? strlen(t->kernel) : 0);
}

static void fr_progress(void *user, uint64_t seq, uint64_t last)
{
    (void)user;
    fr_sink += seq + last;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct stat st;

    (void)argc;
    (void)argv;
#ifdef FUZZ_REPLAY_POCL
    (void)st;
#else
    if (stat(FUZZ_STUB_VENDORS "/clrrstub.icd", &st) != 0) {
        fprintf(stderr, "fuzz_replay: no stub driver at %s (make builds it)\n", FUZZ_STUB_VENDORS);
        exit(2);
    }
    setenv("OCL_ICD_VENDORS", FUZZ_STUB_VENDORS, 1);
#endif
    unsetenv("OPENCL_LAYERS");
    unsetenv("CLRR_STUB_LOG");
    unsetenv("CLRR_STUB_LOG_LOADER");
    unsetenv("LD_PRELOAD");
    fr_verbose = getenv("FUZZ_VERBOSE") != NULL;
    return 0;
}

/* rpl_trim() of the trace into a scratch file. */
static void fr_trim(const char *path, const rpl_opts *o)
{
    static int ofd = -1;
    static char opath[64];
    rpl_trim_result res;
    char err[512] = "";

    if (ofd < 0) {
        ofd = memfd_create("clrr-fuzz-trim.clrr", MFD_CLOEXEC);
        fr_check(ofd >= 0, "memfd_create");
        snprintf(opath, sizeof opath, "/proc/self/fd/%d", ofd);
    }
    rpl_status st = rpl_trim(path, opath, o, &res, err, sizeof err);
    if (st != RPL_OK)
        fr_check(err[0] != 0, "rpl_trim failed without a message");
    if (fr_verbose)
        fprintf(stderr, "  trim: %s%s%s\n", rpl_strerror(st), st ? ": " : "", err);
    fr_check(ftruncate(ofd, 0) == 0, "ftruncate");
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    rpl_opts o;
    rpl_session *s = NULL;
    rpl_status st;
    rpl_summary sum;
    int fd, mode;
    uint8_t flags;
    const char *path = fuzz_trace_path(&fd);

    if (n < 1)
        return 0;
    flags = d[0];
    d++, n--;
    rpl_opts_init(&o);
    o.exact_calls = flags & 1;
    o.verify = !(flags & 2);
    o.loop = flags & 4 ? 2 : 1;
    o.timing = (flags & 8) != 0;
    if (flags & 16) {
        char err[128];
        fr_check(rpl_tolerance_parse("rel=1e-5,f32", &o.tol, err, sizeof err) == 0, "tolerance");
    }
    o.max_memory = 64 << 20;
    o.on_mismatch = fr_mismatch;
    o.on_time = fr_time;
    o.on_progress = fr_progress;
    mode = (flags >> 5) & 3;
    if (mode == 1 || mode == 3) {
        if (n < 2)
            return 0;
        o.first = d[0] ? d[0] : 1;
        o.last = o.first + d[1];
        d += 2, n -= 2;
    } else if (mode == 2) {
        if (n < 1)
            return 0;
        o.kernel = d[0] ? d[0] : 1;
        d++, n--;
    }
    if (fuzz_write_trace(fd, d, n) != 0)
        return 0;
    if (mode == 3) {
        fr_trim(path, &o);
        return 0;
    }
    if ((st = rpl_open(&s, path, &o)) != RPL_OK) {
        fr_check(s == NULL && rpl_open_error()[0], "rpl_open failed without a message");
        if (fr_verbose)
            fprintf(stderr, "  open: %s: %s\n", rpl_strerror(st), rpl_open_error());
        return 0;
    }
    if (flags & 128) {
        rpl_readback rb;
        int has;
        while ((st = rpl_step(s, &rb, &has)) == RPL_OK)
            if (has)
                for (uint64_t k = 0; k < rb.size; k++)
                    fr_sink += ((const uint8_t *)rb.data)[k];
        if (st == RPL_END)
            st = RPL_OK;
    } else {
        st = rpl_run(s);
    }
    fr_check(st == RPL_OK || rpl_error(s)[0], "a replay error without a message");
    rpl_get_summary(s, &sum);
    fr_sink += sum.calls + strlen(sum.device) + strlen(sum.recorded_device);
    if (fr_verbose)
        fprintf(stderr, "  %s: %llu calls, %llu read-backs, %llu mismatches%s%s\n", rpl_strerror(st),
                (unsigned long long)sum.calls, (unsigned long long)sum.readbacks,
                (unsigned long long)sum.mismatches, st ? ": " : "", st ? rpl_error(s) : "");
    rpl_close(s);
    return 0;
}

/* fuzz_costs.c — fuzz target for the cost database reader (costs/cdb.h,
 * costs/COSTS.md): a cost database is carried between machines (costs
 * profiled where the GPUs are, plans made elsewhere), so it is untrusted
 * input like traces and plans.
 *
 * Input: the database file, byte for byte. The oracle: no crash, no
 * sanitizer report, no leak; a refused file comes with a "path:line:"
 * message; an accepted one answers every query (snapshot devices, specs,
 * transfer fits, a curve), takes a sample, and after cdb_flush appends
 * to it the file is accepted again with that sample counted.
 *
 * Corpus: tests/fuzz-corpus/costs/ (a database `clrr profile` wrote on
 * PoCL's pair, and hand-cut variants); crashes: tests/fuzz/crashes/costs/. */
#include "tests/fuzz/fuzz.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costs/cdb.h"

const char *const fuzz_dirs[] = { "tests/fuzz-corpus/costs", "tests/fuzz/crashes/costs", NULL };

static void fc_check(int ok, const char *what, const char *err)
{
    if (!ok) {
        fprintf(stderr, "fuzz_costs: %s%s%s\n", what, err && *err ? ": " : "", err ? err : "");
        abort();
    }
}

/* Every query an accepted database must answer. */
static void fc_queries(cdb *db)
{
    static const char *const specs[] = {"0", "1", "gpu", "gpu1", "cpu0", "pthread", "accelerator3", "", "99999999999"};
    char err[512];
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        err[0] = 0;
        int d = cdb_resolve(db, specs[i], err, sizeof err);
        fc_check(d >= 0 ? (unsigned)d < cdb_device_count(db) : err[0] != 0, "cdb_resolve", specs[i]);
    }
    for (unsigned i = 0; i < cdb_device_count(db); i++) {
        const cdb_device *dv = cdb_device_at(db, i);
        fc_check(dv && dv->identity && dv->identity[0] && dv->type && dv->name && dv->platform, "a device", NULL);
        for (int dir = CDB_H2D; dir <= CDB_D2H; dir++) {
            double lat = -1, nspb = -1;
            if (cdb_xfer(db, dv->identity, dir, &lat, &nspb))
                fc_check(lat >= 0 && nspb > 0 && isfinite(lat) && isfinite(nspb), "a transfer fit", dv->identity);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    int fd;
    const char *path = fuzz_trace_path(&fd);
    if (ftruncate(fd, 0) < 0 || (n && pwrite(fd, d, n, 0) != (ssize_t)n))
        abort();
    cdb *db = NULL;
    char err[512] = "";
    cdb_status st = cdb_open(path, &db, err, sizeof err);
    if (st != CDB_OK) {
        fc_check(db == NULL, "a refused database was returned", NULL);
        fc_check(err[0] != 0, "a refused database without a message", NULL);
        return 0;
    }
    fc_check(db != NULL, "an accepted database is NULL", NULL);
    fc_queries(db);
    /* a sample added, flushed, and the file read again: it counts */
    cdb_key k;
    memset(&k, 0, sizeof k);
    k.kernel = "fuzz";
    k.dim = 1;
    k.gsz[0] = 64;
    k.gsz[1] = k.gsz[2] = 1;
    const char *id = "fuzz | dev | 1 | 1 CU";
    cdb_curve c;
    for (int i = 0; i < CDB_MIN_SAMPLES; i++)
        fc_check(cdb_add_kernel(db, id, &k, 4, 1000) == CDB_OK, "cdb_add_kernel", NULL);
    fc_check(cdb_kernel_curve(db, id, &k, &c) == 1 && c.n >= 1, "a curve of added samples", NULL);
    fc_check(cdb_curve_at(&c, 4) > 0, "the curve's time", NULL);
    st = cdb_flush(db, err, sizeof err);
    cdb_close(db);
    if (st != CDB_OK) {   /* a file that is not a cost database is not appended to */
        fc_check(err[0] != 0, "a refused flush without a message", NULL);
        return 0;
    }
    db = NULL;
    st = cdb_open(path, &db, err, sizeof err);
    fc_check(st == CDB_OK, "the database with our samples appended is refused", err);
    fc_check(cdb_kernel_curve(db, id, &k, &c) == 1, "the appended samples are lost", NULL);
    fc_queries(db);
    cdb_close(db);
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

/* costs/cdb.h — the per-machine cost database (costs/COSTS.md).
 *
 * What each kernel launch costs on each device, as a function of the number
 * of work-groups it runs (SKMD's performance table), and what moving bytes
 * between the host and each device costs (latency and bandwidth). `clrr
 * profile` fills it; every split launch that `clrr replay --plan` runs adds
 * its own measurements; `clrr optimize` reads it to partition launches.
 *
 * The file is text, one record per line, only ever appended to (a crash
 * loses at most the line being written, which readers skip). It keeps raw
 * samples; what a reader trusts is decided when the file is read: per
 * point, the most recent CDB_KEEP samples, outliers rejected (further than
 * CDB_MAD_K median absolute deviations from the median, when there are
 * at least CDB_MIN_REJECT), and a point is trusted only with at least
 * CDB_MIN_SAMPLES samples left.
 *
 * Devices are named by identity: a string saying the model, platform,
 * driver version and compute units, so that two cards of one model share
 * their figures, and the file can be carried to another machine with the
 * same devices. A profile run also records how this machine lists its
 * devices (the snapshot), so that specs such as "gpu1" or "cpu0" can be
 * resolved where the devices are not present (plans are made on machines
 * without the GPUs).
 *
 * No OpenCL, no LLVM: the runtime pieces (the replayer, `clrr profile`)
 * and the optimizer both link it. Not thread-safe: one cdb per thread. */
#ifndef CLRR_CDB_H
#define CLRR_CDB_H

#include <stddef.h>
#include <stdint.h>

#define CDB_FORMAT_VERSION 1
#define CDB_KEEP 64           /* samples kept per point (the most recent) */
#define CDB_MIN_SAMPLES 3     /* samples a point needs, outliers rejected, to be trusted */
#define CDB_MAD_K 5.0         /* samples further than this many MADs from the median are outliers */
#define CDB_MIN_REJECT 5      /* fewer samples than this: no rejection (the median of 3 already
                                 ignores one slow run; their MAD means little) */
#define CDB_MAX_DEVICES 4096  /* devices in one snapshot, at most */
#define CDB_MAX_STRING 4096   /* bytes in a string that cdb_add_* / cdb_set_devices take, at most */

typedef enum cdb_status {
    CDB_OK = 0,
    CDB_ERR_IO = -1,          /* the file cannot be read or written */
    CDB_ERR_FORMAT = -2,      /* a line of the file is not a record (err says file:line) */
    CDB_ERR_NOMEM = -3,
    CDB_ERR_ARG = -4,         /* a string with a control character, a zero count, ... */
} cdb_status;

/*! cdb_strerror() : a static description of @p s. */
const char *cdb_strerror(cdb_status s);

typedef struct cdb cdb;

/* The launch a kernel time is of: the same program, kernel and shape. */
typedef struct cdb_key {
    uint8_t program[16];      /* trace-format's tf_hash (XXH3-128) of the program's source */
    const char *kernel;       /* kernel name (no tab, no newline) */
    unsigned dim;             /* 1..3 */
    uint64_t gsz[3];          /* global work size (1 beyond dim) */
    uint64_t lsz[3];          /* local work size; all 0: the launch left it to the driver */
} cdb_key;

/* A device of the machine, as a profile run listed it. */
typedef struct cdb_device {
    const char *identity;     /* cdb_identity()'s string */
    const char *type;         /* "cpu", "gpu", "accelerator" or "custom" */
    const char *name;         /* CL_DEVICE_NAME */
    const char *platform;     /* CL_PLATFORM_NAME */
} cdb_device;

enum { CDB_H2D = 0, CDB_D2H = 1 };

/*! cdb_default_path() : where this machine's database is: $CLRR_COSTS,
 *  else $XDG_CACHE_HOME/clrr/costs, else $HOME/.cache/clrr/costs, written
 *  into @p buf (@p cap bytes). @return buf, or NULL when none can be made
 *  (no HOME) or it does not fit. */
const char *cdb_default_path(char *buf, size_t cap);

/*! cdb_identity() : writes a device's identity into @p buf (@p cap bytes):
 *  "NAME | PLATFORM | DRIVER | N CU", each field's control characters
 *  (tabs, newlines, ...) replaced by spaces and its leading and trailing
 *  spaces dropped (a NULL field is empty); cut at a UTF-8 character
 *  boundary when it does not fit. @return buf ("" when @p cap is 1; buf
 *  untouched when @p cap is 0). Thread-safe. */
const char *cdb_identity(char *buf, size_t cap, const char *name, const char *platform, const char *driver,
                         unsigned compute_units);

/*! cdb_open() : reads the database at @p path (a file that does not exist
 *  is an empty database, made on the first cdb_flush) into a new cdb
 *  (*out; the caller closes it). A last line without its newline (a write
 *  cut short) is skipped; any other malformed line fails the open with
 *  CDB_ERR_FORMAT and "PATH:LINE: what" in @p err. @p path is copied. */
cdb_status cdb_open(const char *path, cdb **out, char *err, size_t err_cap);
/*! cdb_close() : frees @p db; samples added and not flushed are lost. Accepts NULL. */
void cdb_close(cdb *db);
/*! cdb_path() : the path the database was opened at (owned by @p db). */
const char *cdb_path(const cdb *db);

/* ------------------------------------------------------------ writing */
/* Added records count for the readers below at once; they reach the file
 * at cdb_flush. Strings are copied; a string may not be NULL, longer than
 * CDB_MAX_STRING bytes or hold a control character (bytes below 0x20:
 * CDB_ERR_ARG); identities, kernel names and types may not be empty. */

/*! cdb_add_kernel() : one measured launch: @p groups work-groups in all
 *  (the product over dimensions; work-items when the key's local size is
 *  0) of launch @p k ran in @p ns nanoseconds (device time) on device
 *  @p identity. @return CDB_OK, CDB_ERR_ARG (groups or ns 0, dim not
 *  1..3, a bad string), CDB_ERR_NOMEM. Sizes beyond dim are ignored. */
cdb_status cdb_add_kernel(cdb *db, const char *identity, const cdb_key *k, uint64_t groups, uint64_t ns);
/*! cdb_add_xfer() : one measured transfer of @p bytes between pinned host
 *  memory and device @p identity (CDB_H2D or CDB_D2H) that took @p ns
 *  nanoseconds, wall time of a blocking call. @return CDB_OK, CDB_ERR_ARG
 *  (bytes or ns 0, another dir, a bad string), CDB_ERR_NOMEM. */
cdb_status cdb_add_xfer(cdb *db, const char *identity, int dir, uint64_t bytes, uint64_t ns);
/* A tuned local size (`clrr optimize --tune`, optimizer/opt_wg.c): on one
 * device, launches of a key (its lsz: the recorded local size) ran
 * before_ns with it and after_ns with local[], medians of reps runs each. */
typedef struct cdb_tuned {
    uint64_t local[3];        /* 1 beyond the key's dim */
    uint64_t before_ns, after_ns;
    unsigned reps;
} cdb_tuned;
/*! cdb_add_tuned() : records tuned local size @p t for launch @p k on
 *  device @p identity (a `w` record, COSTS.md). The latest record of a
 *  (device, key) is the one cdb_get_tuned gives. @return CDB_OK,
 *  CDB_ERR_ARG (dim not 1..3, a local size 0, reps 0, a bad string),
 *  CDB_ERR_NOMEM. */
cdb_status cdb_add_tuned(cdb *db, const char *identity, const cdb_key *k, const cdb_tuned *t);
/*! cdb_add_features() : records what the kernel analysis says of launch
 *  shape @p k (an `f` record, COSTS.md): @p vec, "name=value,..." with
 *  names of [a-z0-9_] and decimal numbers as values (model/model.h makes
 *  and reads them; the database does not interpret them). The latest
 *  record of a key is the one cdb_get_features gives; a vector equal to
 *  that one adds nothing. @return CDB_OK, CDB_ERR_ARG (dim not 1..3, a
 *  bad kernel name, a malformed or over-long vector), CDB_ERR_NOMEM. */
cdb_status cdb_add_features(cdb *db, const cdb_key *k, const char *vec);
/*! cdb_set_devices() : this machine lists these devices, in order (the
 *  order `clrr devices` shows): a new snapshot, which replaces the
 *  previous one for cdb_resolve. @return CDB_OK, CDB_ERR_ARG (n 0 or above
 *  CDB_MAX_DEVICES, a bad string), CDB_ERR_NOMEM. */
cdb_status cdb_set_devices(cdb *db, const cdb_device *devs, unsigned n);
/*! cdb_flush() : appends the records added since the last flush to the
 *  file (creating it, with its header, and its folders), each line written
 *  whole by one write() (COSTS.md says what concurrent appenders get).
 *  Nothing pending: nothing done. @return CDB_OK; CDB_ERR_IO (the records
 *  that did not reach the file stay pending); CDB_ERR_FORMAT when the file
 *  is there but does not start with a cost database header (nothing
 *  appended). @p err says why. */
cdb_status cdb_flush(cdb *db, char *err, size_t err_cap);

/* ------------------------------------------------------------ reading */

/*! cdb_device_count() / cdb_device_at() : the latest snapshot of this
 *  machine's devices (owned by @p db; valid until the next call that adds
 *  to it, or close). */
unsigned cdb_device_count(const cdb *db);
const cdb_device *cdb_device_at(const cdb *db, unsigned i);
/*! cdb_resolve() : the snapshot's device that @p spec names, with the
 *  rules of `clrr replay --device`: an index; "gpu1", "cpu0" (the N-th of
 *  a type); "gpu", "cpu" (the first of a type); a name or platform
 *  substring (case-insensitive). @return its index, or -1 with why in
 *  @p err ("no device snapshot in PATH (run clrr profile on the
 *  machine)", "gpu2: there are 2 gpu devices in PATH", ...). */
int cdb_resolve(const cdb *db, const char *spec, char *err, size_t err_cap);

/* A kernel's measured time against its number of work-groups on one
 * device: the trusted points, groups ascending. */
typedef struct cdb_curve {
    unsigned n;
    const uint64_t *groups;   /* owned by the database; valid until it changes or closes */
    const double *ns;         /* median of the kept samples */
    const unsigned *samples;  /* samples kept (outliers rejected) */
} cdb_curve;

/*! cdb_kernel_curve() : the curve of launch @p k on @p identity (the key's
 *  sizes beyond its dim are ignored). @return 1 with *out filled when at
 *  least one point is trusted, else 0 (also when memory runs out). */
int cdb_kernel_curve(cdb *db, const char *identity, const cdb_key *k, cdb_curve *out);
/*! cdb_curve_at() : the time for @p groups work-groups, from the curve:
 *  linear between points, through the line of the first two points
 *  (clamped at 0) below the first, along the last two points' slope (the
 *  last point's time per group when there is one point) above the last;
 *  never decreasing with groups. 0 for an empty curve. */
double cdb_curve_at(const cdb_curve *c, double groups);
/*! cdb_get_tuned() : the latest tuned local size of launch @p k on
 *  @p identity (sizes beyond dim ignored). @return 1 with *out filled, or 0. */
int cdb_get_tuned(const cdb *db, const char *identity, const cdb_key *k, cdb_tuned *out);
/*! cdb_get_features() : the latest features vector of launch shape @p k
 *  (sizes beyond dim ignored; owned by @p db, valid until it changes or
 *  closes), or NULL when none was recorded. */
const char *cdb_get_features(const cdb *db, const cdb_key *k);
/*! cdb_kernel_series_count() / cdb_kernel_series_at() : every (device,
 *  launch shape) with kernel samples, by index i < count (indices of
 *  transfer series answer 0: skip them). @return 1 with *identity and *k
 *  filled (strings owned by @p db, valid until it changes or closes; the
 *  curve itself: cdb_kernel_curve), else 0. */
size_t cdb_kernel_series_count(const cdb *db);
int cdb_kernel_series_at(const cdb *db, size_t i, const char **identity, cdb_key *k);
/*! cdb_xfer() : the transfer cost to (CDB_H2D) or from (CDB_D2H) device
 *  @p identity: *lat_ns + bytes * *ns_per_byte, least squares over the
 *  trusted per-size medians (at least two sizes). @return 1, else 0 (not
 *  measured). */
int cdb_xfer(cdb *db, const char *identity, int dir, double *lat_ns, double *ns_per_byte);

/* ------------------------------------------------------------ the layer's cost */
/* What plan mode in the application's process costs (`clrr run --plan`,
 * live/live_layer.c): an `l` record per live run, COSTS.md. `clrr
 * optimize --measure` weighs a plan's measured gain against it. */
typedef struct cdb_layer_cost {
    double call_ns;           /* per OpenCL call of the application */
    double fixed_ns;          /* per run: loading the plan, the layer's set-up and exit */
    unsigned runs;            /* records it is the median of (0: none; the defaults) */
} cdb_layer_cost;
#define CDB_LAYER_CALL_NS 4000.0     /* defaults, when no run recorded one: measured on PoCL here */
#define CDB_LAYER_FIXED_NS 5e6
/*! cdb_add_layer() : one live run on device @p identity made @p calls
 *  OpenCL calls through the layer, which spent @p call_ns nanoseconds on
 *  them (its own time, not the driver's) and @p fixed_ns on its set-up
 *  and exit. @return CDB_OK, CDB_ERR_ARG (calls 0, a bad string),
 *  CDB_ERR_NOMEM. */
cdb_status cdb_add_layer(cdb *db, const char *identity, uint64_t calls, uint64_t call_ns, uint64_t fixed_ns);
/*! cdb_get_layer() : the layer's cost on this machine: medians over the
 *  latest CDB_KEEP `l` records (any device: the layer's work is the
 *  host's), per call and per run; without records the defaults above
 *  (runs 0). @p db may be NULL (the defaults). */
void cdb_get_layer(const cdb *db, cdb_layer_cost *out);

/* ------------------------------------------------------------ kernel binaries */
/* The kernel binary cache (COSTS.md, "The kernel binary cache"): program
 * binaries of generated kernels, one file per key in a folder. Bytes only;
 * every function is thread-safe (a file per entry, atomic renames). */
#define CDB_KC_CAP (256ull << 20)   /* bytes the folder holds at most (oldest used evicted) */
/*! cdb_kc_dir() : the cache's folder: $CLRR_KERNEL_CACHE, else
 *  $XDG_CACHE_HOME/clrr/kernels, else $HOME/.cache/clrr/kernels, into
 *  @p buf (@p cap bytes). @return buf, or NULL (no HOME, too long). */
const char *cdb_kc_dir(char *buf, size_t cap);
/*! cdb_kc_key() : the key of a program built from @p source with
 *  @p options for one device (@p device CL_DEVICE_NAME, @p driver
 *  CL_DRIVER_VERSION, @p platform CL_PLATFORM_NAME; NULL as empty): an
 *  XXH3-128 over the fields, each with its length. */
void cdb_kc_key(uint8_t key[16], const char *source, const char *options, const char *device, const char *driver,
                const char *platform);
/*! cdb_kc_load() : the entry of @p key in folder @p dir: *bin (malloc'd,
 *  the caller frees), *len, *build_ns (what building it took, may be
 *  NULL). @return 1 found; 0 none (or out of memory); -1 an entry that is
 *  not one (wrong magic or key, cut short, longer than @p max_len, bytes
 *  that do not match its hash): it is removed. */
int cdb_kc_load(const char *dir, const uint8_t key[16], uint64_t max_len, void **bin, size_t *len,
                uint64_t *build_ns);
/*! cdb_kc_forget() : removes the entry of @p key (one the driver refused). */
void cdb_kc_forget(const char *dir, const uint8_t key[16]);
/*! cdb_kc_store() : writes the entry of @p key (@p len bytes, built in
 *  @p build_ns) into @p dir (made when missing) through a temporary file
 *  and a rename, then removes the least recently used entries past @p cap
 *  bytes in all; an entry over @p cap is not kept (CDB_OK). @return
 *  CDB_OK, CDB_ERR_IO (with why in @p err), CDB_ERR_ARG. */
cdb_status cdb_kc_store(const char *dir, const uint8_t key[16], const void *bin, size_t len, uint64_t build_ns,
                        uint64_t cap, char *err, size_t err_cap);

#endif

/* rec.h — the recorder: an OpenCL layer (OPENCL_LAYERS) or preload library
 * (LD_PRELOAD), built as libclrr.so, that records every OpenCL call and the
 * data it moves into a trace (trace-format/tf.h).
 *
 * The layer reads its settings from CLRR_* environment variables; `clrr
 * record` translates its options into them. Both come from the one table
 * below, so the struct, the environment parsing and the help text agree.
 */
#ifndef CLRR_REC_H
#define CLRR_REC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* REC_CONTROL(type, field, ENV suffix, long option, default, "doc")
 * type is one of: str, bool, int, u64, size (size accepts K/M/G suffixes).
 * The environment variable is "CLRR_" ENV; the option is "--" option. */
#define REC_CONTROLS(X) \
    X(str,  output,       OUTPUT,       "output",        "clrr.trace", \
      "trace file to write") \
    X(bool, capture_data, CAPTURE_DATA, "capture-data",  1, \
      "record buffer, image and SVM contents (0: calls only; replays cannot feed or verify data)") \
    X(int,  level,        LEVEL,        "level",         1, \
      "zstd compression level (1 fast ... 19 small; negative: faster still)") \
    X(u64,  first_call,   FIRST_CALL,   "first-call",    0, \
      "first call number whose data is captured (0: from the start)") \
    X(u64,  last_call,    LAST_CALL,    "last-call",     0, \
      "last call number whose data is captured (0: to the end)") \
    X(size, memory,       MEMORY,       "memory",        268435456, \
      "memory the recorder may hold before the application waits (e.g. 256M)") \
    X(bool, device_timing, DEVICE_TIMING, "device-timing", 1, \
      "record the device time of enqueued commands (invisible to the application)") \
    X(u64,  timing_interval_us, TIMING_INTERVAL_US, "timing-interval-us", 10000, \
      "device timing: past a command kind's first 16 (a kernel's launches, one buffer's transfers), time at most one every N microseconds (0: every command)") \
    X(bool, tsc_clock,    TSC_CLOCK,    "tsc-clock",     1, \
      "read host times from the CPU's time-stamp counter, calibrated against CLOCK_MONOTONIC, where the kernel keeps time with it (0: clock_gettime at every call)") \
    X(int,  flush_ms,     FLUSH_MS,     "flush-ms",      200, \
      "periodic flush interval in milliseconds") \
    X(u64,  compress_threads, COMPRESS_THREADS, "compress-threads", 0, \
      "threads that compress the trace (0: three quarters of the online CPUs, at most 16)") \
    X(bool, quiet,        QUIET,        "quiet",         0, \
      "no recorder messages on stderr except errors")

typedef struct rec_controls {
#define REC_CTL_FIELD_str  const char *
#define REC_CTL_FIELD_bool int
#define REC_CTL_FIELD_int  int
#define REC_CTL_FIELD_u64  uint64_t
#define REC_CTL_FIELD_size size_t
#define REC_CTL_DECLARE(type, field, env, opt, def, doc) REC_CTL_FIELD_##type field;
    REC_CONTROLS(REC_CTL_DECLARE)
#undef REC_CTL_DECLARE
} rec_controls;

/* Describes one control, for option parsing and help text. */
typedef struct rec_control_desc {
    const char *type;     /* "str", "bool", "int", "u64", "size" */
    const char *env;      /* full variable name, e.g. "CLRR_OUTPUT" */
    const char *option;   /* long option without dashes, e.g. "output" */
    const char *def;      /* default, as text */
    const char *doc;
} rec_control_desc;

/*! rec_control_table() : the controls, *n set to their count. Static data. */
const rec_control_desc *rec_control_table(size_t *n);

/*! rec_controls_defaults() : fills @p c with the defaults. */
void rec_controls_defaults(rec_controls *c);

/*! rec_controls_from_env() : defaults overridden by CLRR_* variables.
 *  @return 0, or -1 with a message in @p err (capacity @p errcap) naming the
 *  variable whose value is invalid. Strings point into the environment. */
int rec_controls_from_env(rec_controls *c, char *err, size_t errcap);

/*! rec_control_parse() : validates @p value for the control @p d.
 *  @return 0 when valid, -1 otherwise. Used by `clrr record` options. */
int rec_control_parse(const rec_control_desc *d, const char *value);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_REC_H */

/* cli.h — internal header of the `clrr` command (tools/clrr/).
 *
 * Each subcommand lives in its own cmd_<name>.c and exports one
 * `const cli_command cli_cmd_<name>`; main.c lists them in CLI_COMMANDS.
 * This header holds that type and the helpers the subcommands share:
 * error lines, human formatting of sizes and times, JSON output, and the
 * printing of decoded trace values (used by dump and info).
 *
 * Nothing here is thread-safe; the command is single-threaded.
 */
#ifndef CLRR_CLI_H
#define CLRR_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "trace-format/tf.h"

/* Exit statuses shared by every subcommand (docs/exit-status.md is the
 * table users read; `clrr --help` says it too). */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1     /* record and run only: clrr itself failed (their
                             * other statuses are CMD's) */
#define CLI_EXIT_USAGE 2    /* bad command line */
/* 1 is a negative answer (diff: different; replay, profile: a read-back
 * differed), so an input that cannot be read (missing, corrupt, cut short)
 * and every other failure have a status of their own. */
#define CLI_EXIT_DIFFERENT 1
#define CLI_EXIT_ERROR 3

/* One subcommand. run() gets argv with argv[0] = the subcommand name, so
 * getopt_long() can be used directly; it returns the process exit status. */
typedef struct cli_command {
    const char *name;       /* "dump" */
    const char *synopsis;   /* one line for `clrr --help` */
    const char *usage;      /* full text for `clrr dump --help`, "\n"-terminated;
                             * may be NULL when the command prints its own
                             * (see help below) */
    int (*run)(int argc, char **argv);
    void (*help)(FILE *f);  /* optional: prints the usage when it is built at
                             * run time (record's options come from a table) */
} cli_command;

/*! cli_guard_wanted() : whether @p cmd runs a trace's calls on a driver
 *  (replay, profile, show, trim, plan), and so runs in a child process. */
int cli_guard_wanted(const cli_command *cmd);
/*! cli_guard_run() : runs @p cmd in a child process and returns its exit
 *  status; a child that dies of a fault (SIGSEGV, SIGBUS, SIGABRT...) is
 *  reported in one line with where its replay was, and gives
 *  CLI_EXIT_ERROR; one killed by another signal ends this process by the
 *  same signal. SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to the
 *  child. In the child it returns @p cmd's own status. Called by main()
 *  before any OpenCL call. */
int cli_guard_run(const cli_command *cmd, int argc, char **argv);

/*! cli_print_usage() : writes @p cmd's usage to @p f (help() or usage). */
void cli_print_usage(const cli_command *cmd, FILE *f);

/* ------------------------------------------------------------ errors */

/*! cli_set_command() : names the running subcommand for cli_err()
 *  (NULL: plain "clrr"). Called by main() before run(). */
void cli_set_command(const char *name);
/*! cli_started_ns() : CLOCK_MONOTONIC when main() began (set by main(),
 *  cli_mark_start). */
int64_t cli_started_ns(void);
void cli_mark_start(void);

/*! cli_err() : prints "clrr CMD: message" as ONE line on stderr; newlines and
 *  control characters inside the message are replaced by spaces. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*! cli_usage_err() : cli_err() followed by the usual " (see 'clrr CMD
 *  --help')" hint; @return CLI_EXIT_USAGE. */
int cli_usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*! cli_one_file() : the single FILE operand left after getopt_long (argv[optind]).
 *  @return CLI_EXIT_OK with *path set, or the usage-error status (message printed). */
int cli_one_file(int argc, char **argv, const char **path);

/*! cli_opt_err() : reports what getopt_long() just rejected (@p c is the
 *  '?' or ':' it returned; use an optstring starting with "+:").
 *  @return CLI_EXIT_USAGE. */
int cli_opt_err(char **argv, int c);

/*! cli_parse_u64() : parses a decimal count (with @p suffixes, one of K, M,
 *  G: powers of 1024) into *v. @return 0, or -1 when @p s is not one. */
int cli_parse_u64(const char *s, uint64_t *v, int suffixes);

/*! cli_max_memory() : the memory limit set by CLRR_MAX_MEMORY (bytes), or 0
 *  for the default (1 GiB for the reader's buffers and tables, and as much
 *  again for the data a replay holds). */
size_t cli_max_memory(void);

/*! cli_device_check() : whether --device @p spec (as `clrr replay --device`
 *  takes it) names a device here (cmd_record.c; record and run). Writes
 *  "NAME (PLATFORM)" into @p desc (may be NULL). @return CLI_EXIT_OK, or
 *  CLI_EXIT_USAGE after one error line. */
int cli_device_check(const char *spec, char *desc, size_t cap);

/*! cli_check_env() : checks the CLRR_* settings every command reads.
 *  @return CLI_EXIT_OK, or CLI_EXIT_USAGE after one error line. */
int cli_check_env(void);

/* ------------------------------------------------------------ output files (cli_out.c) */

/* Every file a command writes (-o OUT, --report FILE) goes through a cli_out:
 *  - OUT is refused (usage error) when it is the same file (device and inode,
 *    symlinks followed, hard links included) as one of the command's inputs,
 *    or a directory;
 *  - a regular file (or a new one) is written to a temporary created beside
 *    it with mkstemp ("OUT.tmpXXXXXX": O_CREAT|O_EXCL, so no planted name is
 *    followed), renamed onto OUT by cli_out_commit() once whole, removed by
 *    cli_out_abort(): a failed command leaves OUT as it was. It keeps an
 *    old OUT's permissions. A symlink to a file stays, the file it names is
 *    replaced. SIGINT, SIGTERM, SIGHUP and SIGPIPE (where nothing else
 *    handles them) remove the open temporaries before the command dies;
 *  - "-" (and /dev/stdout) is stdout, and an existing FIFO or device (/dev/null, a process
 *    substitution) is written in place: streams. With "-", the rest of what
 *    the command prints on stdout goes to stderr (unless
 *    CLI_OUT_SHARED_STDOUT).
 * Not thread-safe. */
enum {
    CLI_OUT_BINARY = 1,        /* not text: refused when the stream is a terminal */
    CLI_OUT_PATH = 2,          /* the writer opens a path itself (cli_out_path()), no FILE */
    CLI_OUT_NAMED = 4,         /* another process opens the temporary by its name (o->tmp),
                                * a stream's temporary included; no FILE */
    CLI_OUT_SHARED_STDOUT = 8, /* "-": leave the command's stdout alone (run: the
                                * application's); the content is copied at commit */
};
typedef struct cli_out {
    FILE *f;              /* write here (NULL with CLI_OUT_PATH or CLI_OUT_NAMED) */
    const char *path;     /* OUT as given (not copied) */
    char *tmp;            /* the temporary's name; NULL once renamed, or unnamed */
    int fd;               /* the temporary, or -1 (a stream written directly) */
    int sfd;              /* the stream, or -1 (a file) */
    unsigned flags;
    char *dst;            /* the file replaced at commit: OUT, or the file a symlink OUT names */
    mode_t mode;          /* ... and the mode it gets */
    char fdpath[32];      /* "/proc/self/fd/N": opens exactly the temporary */
    struct stat tst;      /* the temporary's identity */
} cli_out;

/*! cli_out_open() : prepares output @p path for writing (see above), with
 *  @p inputs (NULL-terminated; NULL for none; missing files are skipped)
 *  the files it must not be. Open it before the long work, so that a bad
 *  OUT is said at once. @return CLI_EXIT_OK; CLI_EXIT_USAGE (OUT is an
 *  input, a directory, or a terminal for a binary) or CLI_EXIT_ERROR
 *  (cannot create it), one line printed, nothing to release. */
int cli_out_open(cli_out *o, const char *path, unsigned flags, const char *const *inputs);
/*! cli_out_path() : for CLI_OUT_PATH writers: a path that opens the
 *  temporary itself ("/proc/self/fd/N"; its name where /proc is missing).
 *  Owned by @p o; only for an @p o opened with CLI_OUT_PATH. */
const char *cli_out_path(const cli_out *o);
/*! cli_out_fd() : the descriptor the content goes to (the temporary, or the
 *  stream); owned by @p o. */
int cli_out_fd(const cli_out *o);
/*! cli_out_fix_msg() : replaces the temporary's names in writer message
 *  @p msg (capacity @p cap) by OUT. */
void cli_out_fix_msg(const cli_out *o, char *msg, size_t cap);
/*! cli_out_commit() : flushes and closes the content; a file's temporary is
 *  renamed onto OUT, a stream's copied to it. Releases @p o either way.
 *  @return CLI_EXIT_OK, or CLI_EXIT_ERROR with one line printed (the
 *  temporary is removed and OUT left as it was). */
int cli_out_commit(cli_out *o);
/*! cli_out_abort() : removes the temporary and releases @p o; OUT is left
 *  as it was. Accepts an @p o already committed or aborted (does nothing). */
void cli_out_abort(cli_out *o);
/*! cli_same_file() : 1 when paths @p a and @p b name one existing file
 *  (device and inode, symlinks followed); 0 otherwise (or either NULL). */
int cli_same_file(const char *a, const char *b);
/*! cli_tmpdir() : $TMPDIR when it names a directory, else "/tmp". */
const char *cli_tmpdir(void);

/* ------------------------------------------------------------ running CMD (cli_exec.c) */

/*! cli_find_layer() : the layer next to this binary
 *  (<dir of /proc/self/exe>/../lib/libclrr.so), malloc'ed; NULL when it is
 *  not there (@p tried names the path looked at). */
char *cli_find_layer(char *tried, size_t cap);
/*! cli_loader_layers() : whether the OpenCL loader that programs started
 *  from here load (the libOpenCL.so.1 this process was linked with, found
 *  the same way; CLRR_LOADER names another file, for tests) supports
 *  layers (OPENCL_LAYERS): 1 yes, 0 no (*path: the loader), -1 unknown.
 *  CUDA's bundled libOpenCL.so.1, first in the library path of CUDA
 *  machines, does not. */
int cli_loader_layers(char *path, size_t cap);
/*! cli_layer_mode() : --preload given (@p preload), or the loader cannot
 *  load layers (one line on stderr saying so, unless @p quiet): whether to
 *  load the layer with LD_PRELOAD. */
int cli_layer_mode(int preload, int quiet, const char *cmd);
/*! cli_env_join() : sets @p name to @p add joined to its value with ':'
 *  (after it when @p append). @return 0 or -1 (errno). */
int cli_env_join(const char *name, const char *add, int append);
/*! cli_here_get() / cli_here_put() : an answer about this machine's
 *  devices (one line, no newline, at most @p cap - 1 bytes) kept under
 *  @p key for a day, keyed also by what decides which devices an
 *  application sees (cli_here.c). get: 1 with @p val set, 0 none (or
 *  expired). put: best effort. */
int cli_here_get(const char *key, char *val, size_t cap);
void cli_here_put(const char *key, const char *val);
/*! cli_in_child() : runs @p fn(@p arg, @p buf, @p cap) in a child process
 *  and waits: OpenCL drivers it starts end with it, so that a device a
 *  driver holds for its process (an NVIDIA GPU in exclusive-process mode)
 *  is free again for the command clrr runs next. @return fn's value
 *  (0..255; -1 when the child could not run or was killed), with the
 *  NUL-terminated text fn left in @p buf copied back. */
int cli_in_child(int (*fn)(void *arg, char *buf, size_t cap), void *arg, char *buf, size_t cap);
/*! cli_spawn() : runs @p cmd (NULL-terminated) and waits; ^C and ^\ reach
 *  it directly, SIGTERM and SIGHUP are forwarded. @return CLI_EXIT_OK with
 *  its wait status in *status, or (reported) CLI_EXIT_FAIL, 127 (not
 *  found) or 126 (not executable). */
int cli_spawn(char **cmd, int *status);
/*! cli_spawn_watch() : cli_spawn(), calling @p tick(@p user) every 100 ms
 *  while CMD runs (@p tick NULL: none); record's progress line. */
int cli_spawn_watch(char **cmd, int *status, void (*tick)(void *user), void *user);

/* ------------------------------------------------------------ traces */

/*! cli_open_trace() : opens @p path for reading; on failure prints one line
 *  ("clrr CMD: PATH: <status>: <detail>") and returns NULL. */
tf_reader *cli_open_trace(const char *path);

/*! cli_trace_err() : prints the one-line error for status @p s of reader
 *  @p r (may be NULL) on trace @p path. @return CLI_EXIT_ERROR. */
int cli_trace_err(tf_reader *r, const char *path, tf_status s);

/*! cli_trace_info() : the reader's container facts (tf_reader_get_info()). */
const tf_reader_info *cli_trace_info(tf_reader *r);

/* ------------------------------------------------------------ formatting */

/* Buffers for the formatters below; results are NUL-terminated. */
#define CLI_FMT_CAP 32

/*! cli_mismatch_print() : one "MISMATCH call #N ..." line on stdout for a
 *  read-back that differs (replay and profile print the same). */
struct rpl_mismatch;
void cli_mismatch_print(const struct rpl_mismatch *m);
/*! cli_split_method() : "fixed-point" or "broyden" (--split-method) as
 *  RPL_SPLIT_FIXED_POINT / RPL_SPLIT_BROYDEN; -1 for anything else. */
int cli_split_method(const char *name);
/*! cli_fmt_size() : "512 B", "1.5 KiB", "12.3 MiB", ... into @p buf. @return buf */
char *cli_fmt_size(uint64_t bytes, char buf[CLI_FMT_CAP]);
/*! cli_fmt_ns() : "850ns", "12.3us", "4.56ms", "1.234s", "2m03.4s" into @p buf. */
char *cli_fmt_ns(int64_t ns, char buf[CLI_FMT_CAP]);
/*! cli_fmt_hash() : the first @p ndigits (<= 32) hex digits of @p ref's hash. */
char *cli_fmt_hash(const tf_blobref *ref, int ndigits, char buf[CLI_FMT_CAP + 4]);

/*! cli_device_type_name() : "GPU", "CPU", "ACCELERATOR", "CUSTOM" or
 *  "OTHER" for a CL_DEVICE_TYPE_* bit set. */
const char *cli_device_type_name(uint64_t type);

/* ------------------------------------------------------------ JSON */

/* One JSON writer: jansson. Emitters build json_t values with these and
 * write them with cli_json_put(); cli_json_str() is the same encoder for
 * the emitters still written with printf. */
struct json_t;
/* CLI_JSET() : sets member @p k of jansson object @p o to the new value
 * @p v (reference stolen); the emitters' one-line idiom. */
#define CLI_JSET(o, k, v) json_object_set_new((o), (k), (v))
/*! cli_json_text() : a new JSON string of the @p len bytes at @p s (NULL:
 *  JSON null), invalid UTF-8 bytes replaced by U+FFFD. @return a new
 *  reference (the caller's), NULL when out of memory. */
struct json_t *cli_json_text(const char *s, size_t len);
/*! cli_json_ctext() : cli_json_text() of a NUL-terminated @p s (NULL: null). */
struct json_t *cli_json_ctext(const char *s);
/*! cli_json_f64() : a new JSON number; NaN and infinities as the strings
 *  "NaN", "Infinity", "-Infinity" (as cli_json_value() writes them). */
struct json_t *cli_json_f64(double v);
/*! cli_json_u64() : a new JSON integer (a real past INT64_MAX). */
struct json_t *cli_json_u64(uint64_t v);
/*! cli_json_put() : writes @p v compactly on @p f and releases it (steals
 *  the reference; NULL writes nothing). @return 0, or -1. */
int cli_json_put(FILE *f, struct json_t *v);
/*! cli_json_str() : writes @p len bytes at @p s as a quoted JSON string
 *  (cli_json_text() written by jansson: invalid UTF-8 bytes become U+FFFD;
 *  control characters are escaped). */
void cli_json_str(FILE *f, const char *s, size_t len);
/*! cli_json_cstr() : cli_json_str() of a NUL-terminated string (null if NULL). */
void cli_json_cstr(FILE *f, const char *s);
/*! cli_json_value() : writes @p v as JSON: nil -> null, blob ->
 *  {"blob":"<32 hex>","size":N}, bin -> {"bin":"<hex>"}, non-finite floats
 *  as strings, map keys that are not strings as their JSON text. */
void cli_json_value(FILE *f, const tf_value *v);

/* Recorded values inside a jansson document: jansson's integers are signed
 * 64-bit, so a document that holds values of the trace puts a placeholder
 * where each goes (cli_json_recorded()) and cli_json_put_doc() writes the
 * document with each placeholder replaced by cli_json_value()'s text:
 * unsigned values past 2^63 come out exact. */
typedef struct cli_json_doc {
    const tf_value **v;   /* malloc'ed; the values, borrowed */
    size_t n, cap;
} cli_json_doc;
/*! cli_json_recorded() : a new placeholder (the caller's reference) for
 *  recorded value @p v (borrowed: it must live until cli_json_put_doc();
 *  NULL writes null) in document @p d (zeroed by the caller). NULL when
 *  out of memory. Not thread-safe for one @p d. */
struct json_t *cli_json_recorded(cli_json_doc *d, const tf_value *v);
/*! cli_json_put_doc() : cli_json_put() of @p doc (reference stolen), the
 *  placeholders of @p d replaced by their values; releases @p d's memory.
 *  @return 0, or -1 (out of memory: nothing written). */
int cli_json_put_doc(FILE *f, struct json_t *doc, cli_json_doc *d);

/* ------------------------------------------------------------ values (human) */

/* Limits of the human form: longer strings, arrays and bins are shortened. */
#define CLI_STR_MAX 64
#define CLI_ARRAY_MAX 16

/*! cli_print_str() : writes a C-style quoted, escaped string; when @p max is
 *  non-zero and the string is longer, it is cut and followed by
 *  "...(N chars)". */
void cli_print_str(FILE *f, const char *s, size_t len, size_t max);

/*! cli_print_value() : writes @p v in the human form without any knowledge
 *  of what it means (numbers, quoted strings, [..], {k=v}, <N B blob HASH…>). */
void cli_print_value(FILE *f, const tf_value *v);

/*! cli_print_param() : writes parameter @p i of @p sig holding @p v in the
 *  human form, using the parameter's kind and C type: handles as #id,
 *  enumerants and bitfields by name, error codes by name, cl_bool as
 *  CL_TRUE/CL_FALSE, nil as NULL. */
void cli_print_param(FILE *f, const tf_sig *sig, uint32_t i, const tf_value *v);

/*! cli_print_ret() : writes a call's return value in the human form
 *  (cl_int as an error name, handles as #id). */
void cli_print_ret(FILE *f, const tf_sig *sig, const tf_value *v);

/*! cli_type_is_handle() : 1 when the C type @p ctype (e.g. "const cl_event *")
 *  names an OpenCL object type, possibly through pointers. */
int cli_type_is_handle(const char *ctype);

/*! cli_value_data_bytes() : the bytes of data that @p v carries: sizes of
 *  blob references and lengths of bins, summed through arrays and maps.
 *  Adds the blob part alone to *blob_bytes (may be NULL). */
uint64_t cli_value_data_bytes(const tf_value *v, uint64_t *blob_bytes);

#endif /* CLRR_CLI_H */

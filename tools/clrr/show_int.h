/* show_int.h — internal header of `clrr show` (tools/clrr/cmd_show.c and
 * cli_show_*.c): the objects a pass over the trace finds (show_scan.c), the
 * contents of a memory object that the trace alone gives (show_mem.c), and
 * the output forms of bytes (show_out.c: typed text, .npy, PNG).
 *
 * Also the one rule for "this call failed" that info, stats and show share
 * (cli_show_call_failed). Nothing here is thread-safe; the command is
 * single-threaded. */
#ifndef CLRR_SHOW_INT_H
#define CLRR_SHOW_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace-format/tf.h"

/*! cli_show_call_failed() : 1 when completed call @p c returned an error: a
 *  cl_int result other than CL_SUCCESS, an errcode_ret other than
 *  CL_SUCCESS, or a NULL handle or pointer (*code then CLI_SHOW_NO_CODE: no
 *  code was recorded); 0 otherwise (incomplete calls too). *code (may be
 *  NULL) gets the error code. The analyzer's rule (ana_model_info.failed). */
#define CLI_SHOW_NO_CODE INT64_MIN
int cli_show_call_failed(const tf_call *c, int64_t *code);

/* Kinds of the objects show names. */
enum {
    CLI_SHOW_BUFFER = 1, CLI_SHOW_SUBBUFFER, CLI_SHOW_IMAGE, CLI_SHOW_PIPE, CLI_SHOW_SVM,
    CLI_SHOW_PROGRAM, CLI_SHOW_KERNEL
};
/*! cli_show_kind_name() : "buffer", "sub-buffer", ... (static). */
const char *cli_show_kind_name(int kind);

/* A build (clBuildProgram, clCompileProgram, clLinkProgram's output). */
typedef struct cli_show_build {
    uint64_t seq;
    const char *fn;           /* static: the function's name as the reader gave it, copied */
    char *options;            /* malloc'ed, or NULL */
    int64_t ret;              /* its result (0 CL_SUCCESS) */
    uint32_t nheaders;        /* post.headers: names and sizes */
    char **hnames;
    uint64_t *hsizes;
    uint32_t nmissing;        /* post.headers_missing */
    char **missing;
} cli_show_build;

/* A build log the application asked for (clGetProgramBuildInfo). */
typedef struct cli_show_log {
    uint64_t seq, device;
    char *text;               /* malloc'ed, NUL-terminated (the driver's bytes, its NUL dropped) */
    size_t len;
} cli_show_log;

/* A kernel argument's info the application asked for (clGetKernelArgInfo). */
typedef struct cli_show_arginfo {
    int have_name, have_type, have_addr, have_access, have_tq;
    char name[128], type[128];
    uint64_t addr, access, tq;
} cli_show_arginfo;

/* A kernel argument as last set (clSetKernelArg): memory id, bytes, local. */
typedef struct cli_show_karg {
    int set;                  /* 1 value, 2 memory object (id), 3 __local (size), 4 SVM pointer */
    uint64_t id, size;
    uint8_t bytes[16];        /* first bytes of a value */
} cli_show_karg;

#define CLI_SHOW_MAX_ARGS 64

typedef struct cli_show_obj {
    uint64_t id;              /* trace id (SVM: the address) */
    int kind;                 /* CLI_SHOW_* */
    uint64_t create_seq, release_seq;   /* release_seq 0: alive at the end */
    int32_t refs;
    char fn[64];              /* the call that created it */
    uint64_t context;
    /* memory */
    uint64_t size, flags, parent, origin;
    int host_data;            /* created with its contents (COPY/USE_HOST_PTR) */
    uint32_t order, ctype, img_type;   /* images: format, CL_MEM_OBJECT_* */
    uint64_t w, h, d, arr, row_pitch, slice_pitch;
    uint64_t elem;            /* images: bytes per pixel (0: a format not known here) */
    /* programs */
    char *source;             /* malloc'ed, or NULL */
    size_t source_len;
    uint32_t nbins;           /* binaries it was created from, or the application fetched */
    tf_blobref *bins;
    int bins_fetched;         /* the binaries came from a CL_PROGRAM_BINARIES query */
    uint32_t nbuilds, nlogs;
    cli_show_build *builds;
    cli_show_log *logs;
    char kernel_names[512];   /* CL_PROGRAM_KERNEL_NAMES when asked */
    /* kernels */
    char name[128];
    uint64_t program;
    uint32_t nargs;           /* CL_KERNEL_NUM_ARGS when asked, else the highest index seen + 1 */
    cli_show_arginfo *arginfo;    /* CLI_SHOW_MAX_ARGS, or NULL */
    cli_show_karg *kargs;         /* CLI_SHOW_MAX_ARGS, or NULL */
} cli_show_obj;

/* A failed call. */
typedef struct cli_show_fail {
    uint64_t seq;
    char fn[64];
    int64_t code;
} cli_show_fail;

typedef struct cli_show_scan {
    cli_show_obj *objs;
    size_t n, cap;
    uint64_t *slots;          /* open addressing: id -> index + 1 */
    size_t nslots;
    cli_show_fail *fails;
    size_t nfails, capfails;
    uint64_t calls, last_seq;
    char err[512];
} cli_show_scan;

/*! cli_show_scan_run() : reads trace @p r from its start (rewound first) and
 *  fills @p sc (zeroed by the caller). @return TF_OK, or the reader's
 *  status (message in sc->err), TF_ERR_NOMEM. */
tf_status cli_show_scan_run(tf_reader *r, cli_show_scan *sc);
/*! cli_show_scan_free() : releases what @p sc holds. */
void cli_show_scan_free(cli_show_scan *sc);
/*! cli_show_scan_find() : the object of id @p id, or NULL. */
cli_show_obj *cli_show_scan_find(const cli_show_scan *sc, uint64_t id);

/*! cli_show_value_bytes() : the bytes of value @p v (a blob through @p r, a
 *  bin or a string inline), malloc'ed into *out (*len); at most @p max
 *  bytes (more: TF_ERR_LIMIT). @return TF_OK, TF_ERR_ARG when @p v holds
 *  no bytes, or the reader's error. */
tf_status cli_show_value_bytes(tf_reader *r, const tf_value *v, size_t max, void **out, size_t *len);

/* An element type for --as: scalar kind, size and vector width. */
typedef struct cli_show_type {
    char kind;                /* 'i' signed, 'u' unsigned, 'f' float */
    unsigned size;            /* bytes per component: 1, 2, 4, 8 */
    unsigned n;               /* components shown per element (1, 2, 3, 4, 8, 16) */
    unsigned stride;          /* components stored per element (3 is stored as 4) */
    char name[24];
} cli_show_type;

/* The command line of `clrr show` (cmd_show.c). */
typedef struct cli_show_opts {
    const char *trace, *what, *out, *format, *device;
    int json, source, log, replay, have_at, have_bin, have_range, have_count, have_as;
    uint64_t at, bin, lo, hi, count;
    cli_show_type as;
} cli_show_opts;

/* ------------------------------------------------------------ programs and kernels (show_prog.c) */

/*! cli_show_prog_brief() / cli_show_kernel_brief() : one listing line. */
void cli_show_prog_brief(FILE *f, const cli_show_scan *sc, const cli_show_obj *p);
void cli_show_kernel_brief(FILE *f, const cli_show_obj *k);
/*! cli_show_obj_json_head() : a new jansson object (the caller's) with an
 *  object's id, kind, created_at, created_by, released_at.
 *  cli_show_prog_brief_json() / cli_show_kernel_brief_json() : one listing
 *  entry as a new jansson object. */
struct json_t *cli_show_obj_json_head(const cli_show_obj *o);
struct json_t *cli_show_prog_brief_json(const cli_show_scan *sc, const cli_show_obj *p);
struct json_t *cli_show_kernel_brief_json(const cli_show_obj *k);
/*! cli_show_json_put() : writes @p j (reference stolen) and a newline on
 *  stdout (an error line when out of memory). */
void cli_show_json_put(struct json_t *j);
/*! cli_show_prog_view() : program @p p as @p o asks (its source, logs, a
 *  binary, or everything; JSON). @return a CLI_EXIT_* status (errors said). */
int cli_show_prog_view(tf_reader *r, const cli_show_scan *sc, const cli_show_obj *p, const cli_show_opts *o);
/*! cli_show_kernel_view() : kernel @p k: its program, argument info (recorded
 *  queries, else the kernel analysis of its program's source), arguments
 *  as last set. @return a CLI_EXIT_* status. */
int cli_show_kernel_view(tf_reader *r, const cli_show_scan *sc, const cli_show_obj *k, const cli_show_opts *o);

/* ------------------------------------------------------------ contents (show_mem.c) */

/*! cli_show_mem_from_trace() : the contents of memory object @p o after call
 *  @p at when the trace alone holds them (its creation from host memory, a
 *  whole write or read-back since, with the writes after it), into *data
 *  (malloc'ed, o->size bytes; images packed) and *from (the call they come
 *  from). @return 1 found, 0 the trace does not say (a kernel, copy, fill,
 *  map or partial transfer may have changed them: replay), negative: the
 *  reader failed (message in @p err). */
int cli_show_mem_from_trace(tf_reader *r, const cli_show_scan *sc, const cli_show_obj *o, uint64_t at, void **data,
                        uint64_t *from, char *err, size_t cap);

/*! cli_show_image_elem() : bytes per pixel of channel order @p order and type
 *  @p type, 0 when not a format this build knows. */
uint64_t cli_show_image_elem(uint32_t order, uint32_t type);
/*! cli_show_order_name() / cli_show_ctype_name() : "CL_RGBA", "CL_UNORM_INT8", ... or NULL. */
const char *cli_show_order_name(uint32_t order);
const char *cli_show_ctype_name(uint32_t type);

/* ------------------------------------------------------------ output forms (show_out.c) */

/*! cli_show_type_parse() : parses "float4", "int", "uint8", "half", "double2",
 *  "char", "ushort16", ... @return 0, or -1 for anything else. */
int cli_show_type_parse(const char *s, cli_show_type *t);
/*! cli_show_type_of_image() : the element type of an image's pixels (its
 *  channels); -1 when the format has none (packed 565 formats, ...). */
int cli_show_type_of_image(uint32_t order, uint32_t type, cli_show_type *t);

/*! cli_show_print_typed() : one line per element "[I] v0 v1 ..." of @p len
 *  bytes at @p data as @p t, elements [first, first + count) (count
 *  clipped to what there is), to @p f. */
void cli_show_print_typed(FILE *f, const void *data, size_t len, const cli_show_type *t, uint64_t first, uint64_t count);
/*! cli_show_print_hex() : a hex dump (16 bytes a line, offsets) of bytes [first, first+count). */
void cli_show_print_hex(FILE *f, const void *data, size_t len, uint64_t first, uint64_t count);

/*! cli_show_write_npy() : a .npy file (format 1.0) of @p len bytes at @p data
 *  as elements @p t, with @p ndims dimensions @p dims (outermost first;
 *  the last is the vector width when t->n > 1; ndims 0: one dimension
 *  from the length). @return 0, or -1 when a write fails. */
int cli_show_write_npy(FILE *f, const void *data, size_t len, const cli_show_type *t, const uint64_t *dims,
                   unsigned ndims);

/*! cli_show_png_check() : NULL when an image of @p order and @p type has a
 *  PNG form here (8 or 16 bits, gray, gray+alpha, RGB or RGBA), else why
 *  not (static). */
const char *cli_show_png_check(uint32_t order, uint32_t type);
/*! cli_show_write_png() : the slice of @p w x @p h pixels at @p px (packed,
 *  @p elem bytes each) as a PNG to @p f. @return 0, or -1 with why in
 *  @p err. */
int cli_show_write_png(FILE *f, const void *px, uint64_t w, uint64_t h, uint32_t order, uint32_t type, uint64_t elem,
                   char *err, size_t cap);

#endif /* CLRR_SHOW_INT_H */

/* ana_model_int.h — internal to the trace model (analyzer/ana_model*.c)
 * and its readers in the analyzer (graph, statistics, timeline): the
 * model's layout, its pool allocator and id maps, and trace-value helpers.
 * Not a public header. */
#ifndef CLRR_ANA_MODEL_INT_H
#define CLRR_ANA_MODEL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/ana.h"
#include "trace-format/tf.h"
#include "api_sem.h"

#define ANA_MAX_KARGS 256            /* kernel argument indices accepted */
#define ANA_MAX_SOURCE (64u << 20)   /* largest program source read */
#define ANA_ERR_CAP 256

/* ------------------------------------------------------------ pool */

/* A bump allocator: chunks freed together. Memory is never handed back
 * piecewise; everything a model returns lives in its pool. */
typedef struct ana_pool_chunk ana_pool_chunk;
typedef struct ana_pool {
    ana_pool_chunk *head;
} ana_pool;

/*! ana_pool_alloc() : @p n zeroed bytes aligned for any object, or NULL. */
void *ana_pool_alloc(ana_pool *p, size_t n);
/*! ana_pool_dup() : a copy of @p n bytes at @p src (n may be 0), or NULL. */
void *ana_pool_dup(ana_pool *p, const void *src, size_t n);
/*! ana_pool_strndup() : a NUL-terminated copy of @p n bytes, or NULL. */
char *ana_pool_strndup(ana_pool *p, const char *s, size_t n);
void ana_pool_release(ana_pool *p);

/* ------------------------------------------------------------ id maps */

/* Open addressing: any u64 key -> 32-bit value (the key that marks empty
 * slots, ANA_IDMAP_EMPTY, is kept aside). */
#define ANA_IDMAP_EMPTY UINT64_MAX
typedef struct ana_idmap {
    uint64_t *keys;
    uint32_t *vals;
    size_t n, cap;
    int has_empty;                /* ANA_IDMAP_EMPTY is a key, with value empty_val */
    uint32_t empty_val;
} ana_idmap;

/*! ana_idmap_put() : sets @p key to @p val. @return 0, or -1 out of memory. */
int ana_idmap_put(ana_idmap *m, uint64_t key, uint32_t val);
/*! ana_idmap_get() : @return 1 and *val when @p key is present, else 0. */
int ana_idmap_get(const ana_idmap *m, uint64_t key, uint32_t *val);
void ana_idmap_free(ana_idmap *m);

/* ------------------------------------------------------------ growable arrays */

/*! ana_grow() : makes room for @p need elements of @p elem bytes in *arr
 *  (capacity *cap, doubled). @return 0, or -1 out of memory / overflow. */
int ana_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* ------------------------------------------------------------ the model */

/* What the model keeps per object beyond the public ana_object. */
typedef struct ana_obj_x {
    int64_t refs;                 /* the application's references */
    /* kernels */
    ana_karg *cur;                /* current arguments (malloc'ed, ncur used) */
    unsigned ncur;
    const ana_karg *snap;         /* pool copy of cur, NULL when an argument changed */
    unsigned kip_index;           /* 1 + index in clCreateKernelsInProgram's output */
    uint32_t last_launch;         /* cmd index + 1 of its last launch (ana_model_analyze) */
    /* images: layout for transfer ranges */
    uint64_t img_w, img_h, img_d, elem;
    /* programs */
    uint32_t an;                  /* 1 + index into ana_model.progs, 0 none */
    const char *why;              /* why there is no analysis */
    uint64_t inputs;              /* linked program: how many inputs */
    uint64_t input0;              /* linked program: its first input */
} ana_obj_x;

/* One program analysis, shared by programs with the same source and options. */
typedef struct ana_prog_an {
    uint64_t hash;                /* of source and options */
    uint64_t program;             /* the first program object with them */
    ana_program *p;               /* NULL: failed, see why */
    const char *why;
} ana_prog_an;

typedef struct ana_fn_slot {
    uint32_t sig_id;
    uint32_t fn;                  /* index into fns */
} ana_fn_slot;

/* A mapped pointer waiting for its unmap. */
typedef struct ana_mapping {
    uint64_t ptr, seq, object, lo, hi, flags;
} ana_mapping;

struct ana_model {
    ana_pool pool;
    ana_object *objs;
    ana_obj_x *xo;
    size_t nobjs, capobjs;
    ana_idmap objmap;             /* handle id -> object index */
    ana_idmap svmmap;             /* SVM base address -> object index */
    uint32_t *svm;                /* live and dead SVM objects, by address */
    size_t nsvm, capsvm;
    ana_cmd *cmds;
    size_t ncmds, capcmds;
    ana_idmap seqmap;             /* seq -> cmd index (after sorting) */
    tf_devtime *early;            /* DEVTIME records before their call */
    size_t nearly, capearly;
    ana_idmap labels;             /* hashes of memory labels in use */
    ana_mapping *maps;            /* live mappings */
    size_t nmaps, capmaps;
    ana_fn_time *fns;
    size_t nfns, capfns;
    ana_fn_slot *fnslots;         /* by signature id, sorted */
    size_t nfnslots, capfnslots;
    ana_idmap tids;
    ana_idmap timed;              /* events whose profiling times the application asked */
    ana_prog_an *progs;
    size_t nprogs, capprogs;
    int analyzed;
    const char *unavailable;      /* the kernel analysis cannot be loaded: why */
    ana_model_info info;
    tf_reader *r;                 /* while building */
    char *err;                    /* while building */
    size_t err_cap;
    int failed;                   /* while building: an error was set */
};

/* ------------------------------------------------------------ building helpers */

/*! ana_model_fail() : sets the model's build error (the first one wins)
 *  "call #SEQ FN: ..." when @p c is not NULL. @return ANA_ERR_TRACE. */
ana_status ana_model_fail(ana_model *m, const tf_call *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*! ana_call_param() : the index of parameter @p name in @p c's signature, or -1. */
int ana_call_param(const tf_call *c, const char *name);
/*! ana_call_arg() / ana_call_out() : input / output value of parameter @p name, or NULL
 *  when the signature has no such parameter (outs: or the call has none). */
const tf_value *ana_call_arg(const tf_call *c, const char *name);
const tf_value *ana_call_out(const tf_call *c, const char *name);
/*! ana_call_u64() : integer input @p name into *v. @return 1, or 0 when the
 *  parameter is absent, nil (then *v = dflt) is also 1. A value of another
 *  type: 0. */
int ana_call_u64(const tf_call *c, const char *name, uint64_t dflt, uint64_t *v);
/*! ana_u64_array() : up to @p cap integers of array @p v into @p dst.
 *  @return the count, or -1 when v is not an array of integers (nil: 0). */
int ana_u64_array(const tf_value *v, uint64_t *dst, unsigned cap);

/*! ana_obj_get() : the index of object @p id, created as kind @p kind_hint
 *  (ANA_OBJ_UNKNOWN) when never seen. @return the index, or -1 out of memory. */
long ana_obj_get(ana_model *m, uint64_t id, ana_obj_kind kind_hint);
/*! ana_obj_new() : records the creation of object @p id by call @p c.
 *  @return the index, or -1 (error set). */
long ana_obj_new(ana_model *m, const tf_call *c, uint64_t id, ana_obj_kind kind);
/*! ana_svm_find() : the SVM object containing @p addr (live at the time), or -1. */
long ana_svm_find(const ana_model *m, uint64_t addr);

/*! ana_model_objects_call() : object creation, retain/release, kernel
 *  arguments, program sources and options, last uses for one successful
 *  call. @return ANA_OK or an error (set). */
ana_status ana_model_objects_call(ana_model *m, const tf_call *c);
/*! ana_model_commands_call() : appends the command of a successful enqueue
 *  or host sync call. @return ANA_OK or an error (set). */
ana_status ana_model_commands_call(ana_model *m, const tf_call *c);
/*! ana_model_is_command() : 1 when function @p fn makes a command. */
int ana_model_is_command(const char *fn);

/*! ana_model_fn_of_call() : the host-time entry of @p c's function (while
 *  building, before the entries are sorted), or NULL. */
const ana_fn_time *ana_model_fn_of_call(const ana_model *m, const tf_call *c);

/*! ana_model_cmd_index() : index of the command of call @p seq, or -1. */
long ana_model_cmd_index(const ana_model *m, uint64_t seq);

/* ------------------------------------------------------------ building commands */

/* A command under construction: its memory ranges before they are pooled. */
#define ANA_CMD_MAXREF 64   /* memory ranges of one command */
typedef struct ana_cb {
    ana_model *m;
    const tf_call *c;
    ana_cmd *k;
    ana_memref refs[ANA_CMD_MAXREF];
    unsigned nrefs;
} ana_cb;

/*! ana_sat_add() / ana_sat_mul() : u64 arithmetic saturating at UINT64_MAX. */
static inline uint64_t ana_sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
static inline uint64_t ana_sat_mul(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/*! ana_cb_use() : counts a use of object @p id by command call @p seq. */
void ana_cb_use(ana_model *m, uint64_t id, uint64_t seq);
/*! ana_cb_ref() : adds [lo, hi) of memory object @p id to the command
 *  (whole: the whole object, the range being unknown, with @p why;
 *  hi = UINT64_MAX: to its end). Sub-buffers resolve to their parent. */
ana_status ana_cb_ref(ana_cb *b, uint64_t id, uint64_t lo, uint64_t hi, int access, int whole,
                      const char *why);
/*! ana_cb_ref_svm() : adds [addr, addr + size) of the SVM allocation that
 *  contains @p addr (size 0: the whole allocation); nothing for host memory. */
ana_status ana_cb_ref_svm(ana_cb *b, uint64_t addr, uint64_t size, int access);
/*! ana_cb_vec3() : the 3-element origin/region array @p name (missing
 *  elements @p dflt). @return ANA_OK or ANA_ERR_TRACE (set). */
ana_status ana_cb_vec3(ana_cb *b, const char *name, uint64_t v[3], uint64_t dflt);
/*! ana_model_transfer() : the memory ranges and bytes of a non-kernel
 *  command, from the effects of its API description @p a (NULL: none;
 *  ana_model_xfer.c). */
ana_status ana_model_transfer(ana_cb *b, const api_sem *a);

/* ------------------------------------------------------------ creating objects */

/*! ana_type_kind() : the object kind a C type names ("const cl_event *" ->
 *  EVENT; memory objects -> BUFFER), or -1 for a type that is not one. */
int ana_type_kind(const char *ctype);
/*! ana_model_created() / ana_model_created_outs() : records the objects a
 *  successful call created: the handle it returned / the handles it wrote
 *  to output parameters (ana_model_create.c). */
ana_status ana_model_created(ana_model *m, const tf_call *c, const char *fn);
ana_status ana_model_created_outs(ana_model *m, const tf_call *c, const char *fn);
/*! ana_model_set_options() : program @p prog's build options from @p c,
 *  and the source the analysis compiles: the headers recorded with the
 *  build inlined (ana_source_inline). */
ana_status ana_model_set_options(ana_model *m, const tf_call *c, uint64_t prog);
/*! ana_model_set_kname() : kernel object @p k's name (@p n bytes, trailing
 *  NULs dropped). */
ana_status ana_model_set_kname(ana_model *m, long k, const char *s, size_t n);
/*! ana_source_inline() (ana_include.c) : @p src (NUL-terminated) with each
 *  include directive replaced by the text of the header it resolves to in
 *  @p headers (a build's post.headers, FORMAT.md 11.1, read from @p r; NULL:
 *  none recorded), or by an #error line when none does, so that compiling
 *  it reads no file of this machine. @p opts: the build options (-I).
 *  @return ANA_OK with *out NULL when @p src has no include directive, else
 *  *out a malloc'ed text of *outlen bytes (caller frees); ANA_ERR_NOMEM;
 *  ANA_ERR_ARG when the text would pass 32 MiB. */
ana_status ana_source_inline(tf_reader *r, const char *src, const char *opts, const tf_value *headers,
                             char **out, size_t *outlen);
/*! ana_svm_release() : the SVM allocation at @p addr is freed by call @p seq. */
void ana_svm_release(ana_model *m, uint64_t addr, uint64_t seq);

#endif /* CLRR_ANA_MODEL_INT_H */

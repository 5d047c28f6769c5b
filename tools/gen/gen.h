/* gen.h — internal header of clrr-gen, the code generator: the API model
 * built from the OpenCL headers (libclang) and recorder/api.overlay. */
#ifndef CLRR_GEN_H
#define CLRR_GEN_H

#include <stdio.h>

#define GEN_MAX_PARAMS 16
#define GEN_MAX_FUNCS 512
#define GEN_MAX_MACROS 8192

enum gen_kind {
    GK_NONE = -1, GK_VALUE = 0, GK_HANDLE, GK_STRING, GK_ARRAY, GK_BLOB, GK_CALLBACK,
    GK_USERDATA, GK_PROPS, GK_PTR, GK_STRUCT, GK_CUSTOM
};
enum gen_dir { GD_IN = 1, GD_OUT = 2, GD_INOUT = 3 };

/* An annotation from the overlay (a rule or a param line). */
typedef struct gen_annot {
    int dir, kind, elem;               /* elem: a gen_kind for arrays */
    char *len, *count, *valid, *blocking, *struct_t, *props;
    int shadow, complete, timing;
} gen_annot;

typedef struct gen_param {
    char *name;
    char *type;          /* spelling as declared */
    char *pointee;       /* spelling of the pointee type (pointers) */
    int is_ptr, is_fnptr, is_signed, is_float, elem_signed;
    char *handle_kind;   /* "MEM", "EVENT", ... when the type (or pointee) is an object */
    gen_annot a;
    int annotated;
} gen_param;

/* Call semantics (gen_sem.c, from `cat`, `op`, `mem`, `waits`, `drop` and
 * `unknown` lines): categories and operations as bit flags / codes, the
 * memory effects of commands by parameter. Parameter fields are indexes
 * into gen_func.p, -1 when absent; size -2 is `size=*`. */
#define GEN_MAX_EFFECTS 4
enum gen_acc { GA_R = 1, GA_W = 2, GA_RW = 3, GA_MAP = 4, GA_MIGRATE = 8, GA_MAPPED = 16 };
enum gen_range { GR_WHOLE, GR_BYTES, GR_RECT, GR_IMAGE, GR_KERNEL, GR_LIST, GR_SVM, GR_SVMLIST };
typedef struct gen_effect {
    int obj, acc, range;
    int off, size, origin, region, row, slice, flags, ptr, sizes;
} gen_effect;

typedef struct gen_func {
    char *name;
    char *ret;           /* return type spelling */
    char *ret_handle;    /* object kind returned, or NULL */
    int ret_is_ptr, ret_void, ret_int;
    int np;
    gen_param p[GEN_MAX_PARAMS];
    char *category;      /* the first category (generated comments; the flags are api_sem.h's) */
    unsigned cats;       /* every category, GEN_CAT_* bits (gen_sem.c) */
    int op;              /* an operation code (gen_sem.c), 0: none */
    int neff;
    gen_effect eff[GEN_MAX_EFFECTS];
    int drop, unknown;   /* a plan may drop it; effects beyond eff[] unknown */
    int nwait, wait, event;   /* wait-list parameters (-1: none) */
    int sem_done;
    int hook_pre, hook_post;
    int rpl_pre, rpl_post;   /* replay hooks (`replay` lines) */
    int ext;             /* wrapped extension function */
    int overlap;         /* host input captured while the driver runs (`overlap` lines) */
    int stage;           /* the driver is called through rec_xfer_NAME (`stage` lines) */
    int in_dispatch;     /* has a slot in struct _cl_icd_dispatch */
} gen_func;

typedef struct gen_named {  /* enum/bits annotation */
    char *func, *param, *prefix;
    int bits;
} gen_named;

typedef struct gen_api {
    gen_func f[GEN_MAX_FUNCS];
    int nf;
    char *dispatch[GEN_MAX_FUNCS];     /* dispatch slots, in order */
    int ndispatch;
    char *macros[GEN_MAX_MACROS];      /* integral CL_* macros */
    int nmacros;
    gen_named named[512];
    int nnamed;
} gen_api;

/* gen_parse.c */
int gen_parse_headers(gen_api *api, const char *tu_path, int argc, const char **argv);
/* gen_overlay.c */
int gen_apply_overlay(gen_api *api, const char *path);
/* gen_emit.c */
int gen_emit_all(const gen_api *api, const char *outdir, const char *overlay_path);
void gen_emit_sigs(FILE *o, const gen_api *api, const char *prefix, const char *upper);
/* gen_sem.c: the semantic directives (from gen_apply_overlay), defaults,
 * checks, and build/gen/api_sem.{c,h} */
int gen_sem_directive(gen_api *api, gen_func *f, char **tok, int n, const char *where);
void gen_sem_finish(gen_api *api, const char *path);
int gen_emit_sem(const gen_api *api, const char *outdir, const char *overlay_path);
/* gen_rpl.c */
int gen_emit_rpl(const gen_api *api, const char *outdir, const char *overlay_path);

gen_func *gen_find_func(gen_api *api, const char *name);
char *gen_strdup(const char *s);
void gen_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif

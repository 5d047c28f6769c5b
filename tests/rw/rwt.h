/* rwt.h — the oracle of the rewriter's tests (tests/unit/test_rw.c): runs a
 * producer and a consumer kernel one after the other on a real OpenCL
 * device, runs the fused kernel on the same inputs, and compares every
 * buffer bit for bit; checks a source with clang -fsyntax-only.
 *
 * The device work runs in a separate program, rwt-run (tests/rw/rwt_run.c,
 * next to the test binary), that links only OpenCL: a process holding
 * libclang-16 (LLVM 16) crashes when PoCL loads its own LLVM 15 into it. */
#ifndef CLRR_RWT_H
#define CLRR_RWT_H

#include <stddef.h>

#include "rewriter/rw.h"

#define RWT_MAX_BUFS 8
#define RWT_MAX_ARGS 16

/* A kernel argument: a buffer of the case, or a scalar. */
enum { RWT_BUF = 1, RWT_INT, RWT_UINT, RWT_ULONG, RWT_FLOAT };
typedef struct rwt_arg {
    int kind;
    unsigned buf;              /* RWT_BUF: index into rwt_case.bufs */
    long long i;               /* RWT_INT, RWT_UINT, RWT_ULONG */
    float f;                   /* RWT_FLOAT */
} rwt_arg;

/* How a buffer is filled: random floats in [0, 1) or random ints in [0, 1000). */
enum { RWT_F32 = 0, RWT_I32 };
typedef struct rwt_bufspec {
    size_t bytes;
    int fill;
} rwt_bufspec;

/* A launch of P then C (same shape), and the buffers they share. */
typedef struct rwt_case {
    const char *src;
    size_t len;
    const char *options;       /* build options, or NULL */
    const char *p, *c;
    unsigned nbufs;
    rwt_bufspec bufs[RWT_MAX_BUFS];
    unsigned np, nc;
    rwt_arg pa[RWT_MAX_ARGS], ca[RWT_MAX_ARGS];
    unsigned dims;
    size_t global[2];
    size_t local[2];           /* all zero: the driver chooses */
    unsigned b;                /* the buffer B (index into bufs) */
} rwt_case;

/*! rwt_compare() : runs P then C from cs->src, and kernel @p name of
 *  @p fused (its parameters mapped by @p f), each on fresh copies of the
 *  same random inputs; compares every buffer (B too when @p keep_store).
 *  @return 0 when all are equal, 1 when one differs, -1 when something
 *  could not run; err says which. */
int rwt_compare(const rwt_case *cs, const rw_fuse_out *f, const char *name, int keep_store,
                char *err, size_t cap);

/*! rwt_spawn() : writes @p src to a temporary file and runs @p prog (a
 *  program next to the test binary: "rwt-run", "rwp-run") with the
 *  NULL-terminated @p argv, whose words 0, 1 and 2 it sets to the
 *  program's path, the source's path and an output file's path (and
 *  clears again); reads @p out_bytes of that output into *out (malloc'd).
 *  One process of each program serves every run (its --serve mode,
 *  rwh.h), started again after a run it did not answer (that run fails).
 *  @return 0, or -1 with why in err (the program's stderr when it failed). */
int rwt_spawn(const char *prog, const char *src, size_t len, char **argv, size_t out_bytes,
              unsigned char **out, char *err, size_t cap);

/*! rwt_rw_so() : opens libclrr-rw.so (../lib from the test binary) and
 *  looks up @p fn and @p free_fn (*f, *g: NULL when missing); *hidden: 1
 *  when it exports rw_strerror and none of the rewriter's internals.
 *  @return the handle (dlclose it), or NULL when it does not open. */
void *rwt_rw_so(const char *fn, const char *free_fn, void **f, void **g, int *hidden);

/*! rwt_syntax_ok() : 1 when clang-16 -fsyntax-only (OpenCL C 1.2 unless
 *  @p options say otherwise, default header) accepts @p src; else 0 with
 *  its diagnostics in err. @p options (or NULL) go to a shell as they are. */
int rwt_syntax_ok(const char *src, size_t len, const char *options, char *err, size_t cap);

#endif

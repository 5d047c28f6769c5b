/* rwp.h — the oracle of the partition tests (tests/unit/test_rw_part.c):
 * runs a kernel's full launch on a real OpenCL device, then a kernel (the
 * partition-ready one, or the plain kernel to show the oracle has teeth)
 * as several launches that each cover a range of work-groups along one
 * dimension, each on fresh copies of the same random inputs, and compares
 * every buffer bit for bit.
 *
 * The device work runs in rwp-run (tests/rw/rwp_run.c, next to the test
 * binary), a program that links only OpenCL: a process holding libclang-16
 * (LLVM 16) crashes when PoCL loads its own LLVM 15 into it. */
#ifndef CLRR_RWP_H
#define CLRR_RWP_H

#include <stddef.h>

#define RWP_MAX_BUFS 8
#define RWP_MAX_ARGS 24
#define RWP_MAX_PARTS 16

/* A kernel argument: a buffer of the case, __local memory, or a scalar
 * (RWP_RAW: any scalar of n bytes, 1 to 8, the low n bytes of i as
 * little-endian bytes: char, short, long, double, ...). */
enum { RWP_BUF = 1, RWP_LOCAL, RWP_INT, RWP_UINT, RWP_ULONG, RWP_FLOAT, RWP_RAW };
typedef struct rwp_arg {
    int kind;
    size_t n;                  /* RWP_BUF: index into rwp_case.bufs; RWP_LOCAL, RWP_RAW: bytes */
    long long i;               /* RWP_INT, RWP_UINT, RWP_ULONG; RWP_RAW: the bits */
    float f;                   /* RWP_FLOAT */
} rwp_arg;

/* How a buffer is filled: random floats in [0, 1) or random ints in [0, 1000). */
enum { RWP_F32 = 0, RWP_I32 };
typedef struct rwp_buf {
    size_t bytes;
    int fill;
} rwp_buf;

/* One launch of a kernel and the buffers it uses. */
typedef struct rwp_case {
    const char *src;           /* the program */
    size_t len;
    const char *options;       /* build options, or NULL */
    const char *kernel;        /* K */
    unsigned nbufs;
    rwp_buf bufs[RWP_MAX_BUFS];
    unsigned nargs;
    rwp_arg args[RWP_MAX_ARGS];
    unsigned dims;             /* 1 to 3 */
    size_t offset[3], global[3];
    size_t local[3];           /* all zero: the driver chooses */
} rwp_case;

/* How the launch is split: along dimension dim into nparts launches, part
 * i starting at work-group first[i] of that dimension (at work-item
 * first[i] when the case has no local size); first[0] = 0, increasing. */
typedef struct rwp_split {
    unsigned dim;
    unsigned nparts;
    size_t first[RWP_MAX_PARTS];
} rwp_split;

/*! rwp_parts() : runs kernel @p name of @p src in the parts of @p sp as
 *  rwp_compare() does, and puts what it leaves in the buffers, one after
 *  the other, in *out (malloc'd). @return 0, or -1 with err. */
int rwp_parts(const rwp_case *cs, const char *src, size_t len, const char *name, int extra,
              const rwp_split *sp, unsigned char **out, char *err, size_t cap);

/*! rwp_full() : what cs->kernel of cs->src, run as written, leaves in the
 *  buffers (one after the other, *out malloc'd). @return 0, or -1 with err. */
int rwp_full(const rwp_case *cs, unsigned char **out, char *err, size_t cap);

/*! rwp_compare_coarse() : runs kernel @p name of @p src (@p len bytes) over
 *  cs's global size with dimension @p dim divided by @p f (that
 *  dimension's local size halved until it divides it, the others' kept)
 *  and compares every buffer with @p full (rwp_full). @return 0 equal, 1
 *  differs (err says where), -1 could not run. */
int rwp_compare_coarse(const rwp_case *cs, const unsigned char *full, const char *src, size_t len,
                       const char *name, unsigned dim, unsigned f, char *err, size_t cap);

/*! rwp_compare_group() : as rwp_compare_coarse(), for the group forms:
 *  dimension @p dim's local size is divided by @p f too (cs must have a
 *  local size that f divides). @return 0 equal, 1 differs, -1 could not run. */
int rwp_compare_group(const rwp_case *cs, const unsigned char *full, const char *src, size_t len,
                      const char *name, unsigned dim, unsigned f, char *err, size_t cap);

/*! rwp_compare() : runs cs->kernel's full launch from cs->src, then kernel
 *  @p name of @p src (@p len bytes) in the parts of @p sp, each part with
 *  global_work_offset[d] = offset[d] + first * local[d] and global[d] the
 *  groups it covers (the last one clipped), the other dimensions as in
 *  the full launch; with @p extra, K's arguments are followed by the nine
 *  ulong values of rw.h's RW_PART_EXTRA (the full launch's global sizes,
 *  offsets and local sizes). Compares every buffer.
 *  @return 0 when all are equal, 1 when one differs, -1 when something
 *  could not run; err says which. */
int rwp_compare(const rwp_case *cs, const char *src, size_t len, const char *name, int extra,
                const rwp_split *sp, char *err, size_t cap);

#endif

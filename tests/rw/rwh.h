/* rwh.h — the device half shared by the rewriter tests' helpers (rwt-run,
 * rwp-run): one OpenCL device, context and queue per process, the
 * buffers' fixed random data, the kernel arguments and the buffers written
 * out; and the server mode in which one process answers every run a test
 * asks for (tests/rw/rwt.c, rwt_spawn), so that PoCL loads its kernel
 * library once per test instead of once per run. It links only OpenCL. */
#ifndef CLRR_TESTS_RWH_H
#define CLRR_TESTS_RWH_H

#include <CL/cl.h>
#include <stddef.h>

#define RWH_MAX_BUFS 8

/*! One run of the helper: the words a command line would give it
 *  (argv[0] the helper's name). @return its exit status: 0, 2 usage,
 *  3 OpenCL failure (one line on stderr). */
typedef int (*rwh_run_fn)(int argc, char **argv);

/*! rwh_main() : the helper's main: with the single argument --serve, runs
 *  requests from stdin until its end (each: a line with the number of
 *  words, then the words, each ended by a NUL; the first word is the file
 *  that receives the run's stderr, the others are the run's argv from
 *  argv[1]; the run's stdout goes there too) and answers each on its
 *  first stdout with the run's exit status on a line; else runs @p run
 *  once on the command line. */
int rwh_main(int argc, char **argv, rwh_run_fn run);

/*! rwh_device() : the process's device (the first of the first platform
 *  that has one), its context and an in-order queue, made on the first
 *  call and kept. @return 0, or 3 with a line on stderr. */
int rwh_device(const char *name, cl_device_id *dev, cl_context *ctx, cl_command_queue *q);

/*! rwh_slurp() : the whole file at @p path, NUL-terminated (malloc'd), its
 *  length in *len; NULL when it cannot be read. */
char *rwh_slurp(const char *path, size_t *len);

/*! rwh_build() : a program of @p src built with @p options on the
 *  process's device. @return it, or NULL with a line on stderr. */
cl_program rwh_build(const char *name, const char *src, size_t len, const char *options);

/*! rwh_buffers() : the buffers named by argv[*a] up to "--" or the end
 *  (f32:BYTES, random floats in [0, 1); i32:BYTES, ints in [0, 1000)),
 *  filled with the same data in every run; *a left at the "--".
 *  @return 0, 2 (bad word, too many) or 3. */
int rwh_buffers(const char *name, int argc, char **argv, int *a, cl_mem *mems, size_t *bytes,
                unsigned *nbufs);

/*! rwh_set_arg() : sets argument @p i of @p k from word @p w: bN (buffer
 *  N), iV (int), uV (uint), lV (ulong), fX (a float's bits in hex), sN
 *  (N bytes of __local memory), xN:X (a scalar of N bytes, 1 to 8: the
 *  low N bytes of hex X, little-endian). @return 0, or -1. */
int rwh_set_arg(cl_kernel k, cl_uint i, const char *w, const cl_mem *mems, unsigned nbufs);

/*! rwh_write_out() : reads every buffer back, in order, into the file at
 *  @p path. @return 0, or 3 with a line on stderr. */
int rwh_write_out(const char *name, const char *path, const cl_mem *mems, const size_t *bytes,
                  unsigned nbufs);

/*! rwh_release() : releases @p prog (may be NULL) and the buffers. */
void rwh_release(cl_program prog, cl_mem *mems, unsigned nbufs);

/*! rwh_fail() : "NAME: WHAT: E" on stderr. @return 3. */
int rwh_fail(const char *name, const char *what, cl_int e);

#endif

/* test_tf_common.h — helpers shared by the trace-format unit tests
 * (test_tf.c, test_tf_corrupt.c): temporary files, record writers that
 * follow FORMAT.md's schemas, and a reader loop that summarises calls. */
#ifndef CLRR_TEST_TF_COMMON_H
#define CLRR_TEST_TF_COMMON_H

#include <CUnit/Basic.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace-format/tf_hot.h"

/* A unique temporary path (the file exists, empty). */
static inline void tt_tmp(char path[64])
{
    int fd;

    snprintf(path, 64, "/tmp/tf_test_XXXXXX");
    fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
}

static inline uint64_t tt_fsize(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Deterministic bytes (xorshift); @p compressible repeats a short pattern. */
static inline void tt_fill(uint8_t *p, size_t n, uint64_t seed, int compressible)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

    for (size_t i = 0; i < n; i++) {
        if (compressible) {
            p[i] = (uint8_t)("clEnqueueWriteBuffer(queue, buf, CL_TRUE) "[(i + seed) % 42]);
            continue;
        }
        if ((i & 7) == 0) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        p[i] = (uint8_t)(x >> (8 * (i & 7)));
    }
}

/* SIG [1, id, name, "cl_int", [[name, type, kind, dir] x np]] */
static inline void tt_sig(tf_writer *w, uint32_t id, const char *name, unsigned np)
{
    tf_enc *e = tf_writer_lock(w);

    tf_enc_array(e, 5);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, id);
    tf_enc_cstr(e, name);
    tf_enc_cstr(e, "cl_int");
    tf_enc_array(e, np);
    for (unsigned i = 0; i < np; i++) {
        char pname[16];
        snprintf(pname, sizeof(pname), "p%u", i);
        tf_enc_array(e, 4);
        tf_enc_cstr(e, pname);
        tf_enc_cstr(e, "cl_uint");
        tf_enc_uint(e, TF_KIND_VALUE);
        tf_enc_uint(e, TF_DIR_IN);
    }
    tf_writer_unlock(w);
}

/* BEGIN [2, seq, tid, sig, t, [a, a+1, ...], nil] */
static inline void tt_begin(tf_writer *w, uint64_t seq, uint64_t tid, uint32_t sig, unsigned np, uint64_t a)
{
    tf_enc *e = tf_writer_lock(w);

    tf_enc_array(e, 7);
    tf_enc_uint(e, 2);
    tf_enc_uint(e, seq);
    tf_enc_uint(e, tid);
    tf_enc_uint(e, sig);
    tf_enc_int(e, (int64_t)(1000 + seq));
    tf_enc_array(e, np);
    for (unsigned i = 0; i < np; i++)
        tf_enc_uint(e, a + i);
    tf_enc_nil(e);
    tf_writer_unlock(w);
}

/* END [3, seq, t, ret, [nil x np], nil] */
static inline void tt_end(tf_writer *w, uint64_t seq, unsigned np, int64_t ret)
{
    tf_enc *e = tf_writer_lock(w);

    tf_enc_array(e, 6);
    tf_enc_uint(e, 3);
    tf_enc_uint(e, seq);
    tf_enc_int(e, (int64_t)(2000 + seq));
    tf_enc_int(e, ret);
    tf_enc_array(e, np);
    for (unsigned i = 0; i < np; i++)
        tf_enc_nil(e);
    tf_enc_nil(e);
    tf_writer_unlock(w);
}

/* DATA [5, seq, "blob", blobref] */
static inline void tt_data_blob(tf_writer *w, uint64_t seq, const tf_blobref *ref)
{
    tf_enc *e = tf_writer_lock(w);

    tf_enc_array(e, 4);
    tf_enc_uint(e, 5);
    tf_enc_uint(e, seq);
    tf_enc_cstr(e, "blob");
    tf_enc_blobref(e, ref);
    tf_writer_unlock(w);
}

/* What a read of a whole trace saw. */
typedef struct tt_read {
    tf_status status;            /* the status that ended the loop */
    size_t ncalls, ncomplete, nother;
    uint64_t *seqs;              /* seq of each call, in yield order */
    int *complete;
} tt_read;

/* Reads every item of @p path; never fails the test by itself. */
static inline tt_read tt_read_all(const char *path, const tf_reader_opts *opts, tf_reader_info *info)
{
    tt_read out;
    tf_reader *r = NULL;
    tf_item it;
    size_t cap = 0;

    memset(&out, 0, sizeof(out));
    out.status = tf_reader_open(&r, path, opts);
    if (out.status != TF_OK)
        return out;
    while ((out.status = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type != TF_ITEM_CALL) {
            out.nother++;
            continue;
        }
        if (out.ncalls == cap) {
            cap = cap ? cap * 2 : 256;
            out.seqs = realloc(out.seqs, cap * sizeof(*out.seqs));
            out.complete = realloc(out.complete, cap * sizeof(*out.complete));
        }
        out.seqs[out.ncalls] = it.u.call.seq;
        out.complete[out.ncalls] = it.u.call.complete;
        out.ncomplete += it.u.call.complete != 0;
        out.ncalls++;
    }
    if (info)
        *info = *tf_reader_get_info(r);
    tf_reader_close(r);
    return out;
}

static inline void tt_read_free(tt_read *t)
{
    free(t->seqs);
    free(t->complete);
    t->seqs = NULL;
    t->complete = NULL;
}

/* Runs the registered suites; the exit status says whether any failed. */
static inline int tt_run(void)
{
    unsigned failures;

    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}

#endif /* CLRR_TEST_TF_COMMON_H */

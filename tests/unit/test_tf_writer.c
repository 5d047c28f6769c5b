/* test_tf_writer.c — trace-format: the writer's pool of compression
 * workers. Many record chunks and blobs of varied sizes: contents, order
 * (the pieces of a blob in order, every blob before the records that name
 * it at every chunk boundary) and the very bytes one worker writes; several
 * producer threads; waited and periodic flushes; close; write errors with
 * workers running (the failed state, one message, no hang, SIGXFSZ never
 * reaching the application); the crash flush. */
#include "test_tf_common.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <xxhash.h>

#define MIB ((size_t)1 << 20)

static double wt_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t wt_get64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* ------------------------------------------------ the chunks of a file */

typedef struct wt_chunk {
    uint64_t off, end;
    uint8_t type;
    uint8_t hash[16];
    uint64_t blob_size, piece_off, raw;
} wt_chunk;

/* Walks the chunk headers of @p path (FORMAT.md 3.1) up to the trailer or
 * the end. @return the chunks (malloc'd), *n their count. */
static wt_chunk *wt_chunks(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t h[72];
    uint64_t off, size = tt_fsize(path);
    wt_chunk *out = NULL;
    size_t cap = 0;

    *n = 0;
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_FATAL(fread(h, 1, 32, f) == 32);
    off = (uint64_t)(h[14] | h[15] << 8);
    while (off + 40 <= size) {
        wt_chunk c;
        uint64_t ext;
        fseek(f, (long)off, SEEK_SET);
        if (fread(h, 1, 40, f) != 40 || memcmp(h, "\x89" "CHK", 4) != 0)
            break;
        memset(&c, 0, sizeof(c));
        c.off = off;
        c.type = h[4];
        ext = (uint64_t)(h[6] | h[7] << 8);
        c.raw = wt_get64(h + 16);
        c.end = off + 40 + ext + wt_get64(h + 8);
        if (c.type == 2 && fread(h + 40, 1, 32, f) == 32) {
            memcpy(c.hash, h + 40, 16);
            c.blob_size = wt_get64(h + 56);
            c.piece_off = wt_get64(h + 64);
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            out = realloc(out, cap * sizeof(*out));
        }
        out[(*n)++] = c;
        off = c.end;
    }
    fclose(f);
    return out;
}

/* ------------------------------------------------ a varied workload */

/* Blob sizes: empty, tiny, around the compression slice (128 KiB) and the
 * piece size, several pieces, several capture windows. */
static const size_t wt_sizes[] = {
    0, 1, 100, 4096, 65536, 131073, MIB - 1, MIB, MIB + 1, 5 * MIB / 2, 5 * MIB + 3, 300000,
};
#define WT_NSIZES (sizeof(wt_sizes) / sizeof(wt_sizes[0]))
#define WT_CALLS 72

/* The blob of call @p i: every sixth repeats call i - 5's (dedup after a
 * new blob: the speculative capture is dropped); odd ones compress well. */
static size_t wt_blob(uint64_t i, uint8_t *buf)
{
    uint64_t k = i % 6 == 0 && i >= 6 ? i - 5 : i;
    size_t n = wt_sizes[k % WT_NSIZES];

    tt_fill(buf, n, 1000 + k, (int)(k & 1));
    return n;
}

/* How many distinct non-empty blobs the first @p ncalls calls have. */
static size_t wt_distinct(uint64_t ncalls)
{
    uint8_t *buf = malloc(6 * MIB);
    tf_blobref *refs = calloc(ncalls, sizeof(*refs));
    size_t n = 0, k;

    for (uint64_t i = 1; i <= ncalls; i++) {
        tf_blobref r;
        size_t len = wt_blob(i, buf);
        tf_hash(buf, len, &r);
        for (k = 0; k < n && memcmp(&refs[k], &r, sizeof(r)) != 0; k++)
            ;
        if (k == n && len)
            refs[n++] = r;
    }
    free(buf);
    free(refs);
    return n;
}

/* One producer: for each of @p ncalls calls a blob, BEGIN, END and a DATA
 * record naming the blob; call seq = base + i. */
static void wt_calls(tf_writer *w, uint64_t base, uint64_t tid, uint64_t ncalls, uint8_t *buf)
{
    for (uint64_t i = 1; i <= ncalls; i++) {
        tf_blobref ref;
        size_t n = wt_blob(i, buf);
        CU_ASSERT(tf_writer_blob(w, buf, n, &ref) == TF_OK);
        tt_begin(w, base + i, tid, 1, 2, i);
        tt_end(w, base + i, 2, 0);
        tt_data_blob(w, base + i, &ref);
    }
}

static void wt_write(const char *path, const tf_writer_opts *o)
{
    uint8_t *buf = malloc(6 * MIB);
    tf_writer *w = NULL;

    CU_ASSERT_FATAL(tf_writer_open(&w, path, o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    wt_calls(w, 0, 1, WT_CALLS, buf);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    free(buf);
}

/* Reads @p path: every call once and in order per thread (seq / 1000000 is
 * the thread), every DATA blob readable; with @p check_bytes its bytes are
 * compared with the workload's. @return the DATA items seen. */
static size_t wt_check(const char *path, int check_bytes)
{
    uint8_t *want = malloc(6 * MIB), *back = malloc(6 * MIB), one;
    uint64_t last[8] = { 0 };
    tf_reader *r = NULL;
    tf_item it;
    tf_status s;
    size_t data = 0, calls = 0, bad = 0;

    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    while ((s = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type == TF_ITEM_CALL) {
            uint64_t t = it.u.call.seq / 1000000;
            CU_ASSERT_FATAL(t < 8);
            CU_ASSERT(it.u.call.complete && it.u.call.seq > last[t]);
            last[t] = it.u.call.seq;
            calls++;
        } else if (it.type == TF_ITEM_DATA && it.u.data.value.type == TF_BLOB) {
            const tf_blobref *ref = &it.u.data.value.v.blob;
            data++;
            if (ref->size && tf_reader_blob(r, ref, ref->size - 1, &one, 1) != TF_OK)
                bad++;                              /* named before it was stored */
            if (check_bytes) {
                size_t n = wt_blob(it.u.data.seq % 1000000, want);
                if (ref->size != n || tf_reader_blob(r, ref, 0, back, n) != TF_OK || memcmp(back, want, n))
                    bad++;
            }
        }
    }
    CU_ASSERT(s == TF_END);
    CU_ASSERT(calls == data);
    CU_ASSERT(bad == 0);
    tf_reader_close(r);
    free(want);
    free(back);
    return data;
}

/* The pieces of every blob are in the file once, in order, one after the
 * other; @return how many blobs were stored. */
static size_t wt_check_pieces(const wt_chunk *c, size_t n)
{
    size_t blobs = 0, ok = 1;

    for (size_t i = 0; i < n; i++) {
        if (c[i].type != 2 || c[i].piece_off != 0)
            continue;
        blobs++;
        for (size_t k = i + 1; k < n; k++)      /* stored once */
            if (c[k].type == 2 && c[k].piece_off == 0 && memcmp(c[k].hash, c[i].hash, 16) == 0 &&
                c[k].blob_size == c[i].blob_size)
                ok = 0;
        uint64_t off = c[i].raw;
        for (size_t k = i + 1; off < c[i].blob_size; k++, off += c[k - 1].raw) {
            if (k >= n || c[k].type != 2 || memcmp(c[k].hash, c[i].hash, 16) != 0 || c[k].piece_off != off) {
                ok = 0;
                break;
            }
        }
    }
    CU_ASSERT(ok);
    return blobs;
}

/* Several workers and a small budget (capture windows of 4 pieces): every
 * blob and record, in order; the pieces of each blob in order; and at every
 * chunk boundary of the file (what a kill there leaves), every blob a
 * record names is already there. */
static void test_workers_order(void)
{
    char path[64], cut[64];
    tf_writer_opts o = { .threads = 6, .chunk_size = 256, .memory_budget = 16 * MIB, .flush_ms = 100000 };
    wt_chunk *c;
    size_t n, records = 0, seen = 0;
    FILE *in;
    uint8_t *bytes;

    tt_tmp(path);
    wt_write(path, &o);
    CU_ASSERT(wt_check(path, 1) == WT_CALLS);
    c = wt_chunks(path, &n);
    CU_ASSERT_FATAL(n > 0);
    CU_ASSERT(c[n - 1].type == 3);                   /* the index comes last */
    CU_ASSERT(wt_check_pieces(c, n) == wt_distinct(WT_CALLS));
    for (size_t i = 0; i < n; i++)
        records += c[i].type == 1;
    CU_ASSERT(records > 10);

    tt_tmp(cut);
    bytes = malloc(tt_fsize(path));
    in = fopen(path, "rb");
    CU_ASSERT_FATAL(in && fread(bytes, 1, tt_fsize(path), in) == tt_fsize(path));
    fclose(in);
    for (size_t i = 0; i < n; i++) {                 /* a dozen cuts after a record chunk */
        if (c[i].type != 1 || seen++ % (records / 12 + 1) != 0)
            continue;
        FILE *f = fopen(cut, "wb");
        CU_ASSERT_FATAL(f != NULL);
        CU_ASSERT(fwrite(bytes, 1, c[i].end, f) == c[i].end);
        fclose(f);
        wt_check(cut, 0);
    }
    free(bytes);
    free(c);
    unlink(cut);
    unlink(path);
}

/* The file does not depend on the number of workers: one and six write the
 * same bytes (level 3: no adaptive level; no periodic flush). */
static void test_workers_same_bytes(void)
{
    char p1[64], p6[64];
    tf_writer_opts o1 = { .threads = 1, .level = 3, .chunk_size = 8192, .memory_budget = 32 * MIB,
                          .flush_ms = 100000 };
    tf_writer_opts o6 = o1;
    uint64_t n;
    uint8_t *a, *b;
    FILE *f;

    o6.threads = 6;
    tt_tmp(p1);
    tt_tmp(p6);
    wt_write(p1, &o1);
    wt_write(p6, &o6);
    n = tt_fsize(p1);
    CU_ASSERT_FATAL(n > 0 && n == tt_fsize(p6));
    a = malloc(n);
    b = malloc(n);
    f = fopen(p1, "rb");
    CU_ASSERT(fread(a, 1, n, f) == n);
    fclose(f);
    f = fopen(p6, "rb");
    CU_ASSERT(fread(b, 1, n, f) == n);
    fclose(f);
    CU_ASSERT(memcmp(a, b, n) == 0);
    free(a);
    free(b);
    unlink(p1);
    unlink(p6);
}

/* ------------------------------------------- several producer threads */

typedef struct wt_prod {
    tf_writer *w;
    uint64_t tid, ncalls;
} wt_prod;

static void *wt_producer(void *arg)
{
    wt_prod *p = arg;
    uint8_t *buf = malloc(6 * MIB);

    wt_calls(p->w, p->tid * 1000000, p->tid, p->ncalls, buf);
    free(buf);
    return NULL;
}

static void test_workers_producers(void)
{
    char path[64];
    tf_writer_opts o = { .threads = 8, .chunk_size = 16384, .memory_budget = 24 * MIB };
    tf_writer *w = NULL;
    pthread_t th[4];
    wt_prod p[4];

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    for (int t = 0; t < 4; t++) {
        p[t] = (wt_prod){ w, (uint64_t)t + 1, WT_CALLS / 2 };
        CU_ASSERT_FATAL(pthread_create(&th[t], NULL, wt_producer, &p[t]) == 0);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    CU_ASSERT(wt_check(path, 1) == 4 * (WT_CALLS / 2));
    unlink(path);
}

/* ---------------------------------------------------- flush and close */

static void test_workers_flush(void)
{
    char path[64];
    tf_writer_opts o = { .threads = 4, .flush_ms = 20 };
    struct timespec ts = { 0, 300 * 1000 * 1000 };
    tf_writer *w = NULL;
    tf_writer_stats st;
    uint8_t *buf = malloc(4 * MIB);
    tf_blobref ref;
    tt_read rd;

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    for (uint64_t i = 1; i <= 50; i++) {
        tt_fill(buf, 4 * MIB, i, 0);
        CU_ASSERT(tf_writer_blob(w, buf, i % 5 ? 4096 : 4 * MIB, &ref) == TF_OK);
        tt_begin(w, i, 1, 1, 2, i);
        tt_end(w, i, 2, 0);
        tt_data_blob(w, i, &ref);
    }
    CU_ASSERT(tf_writer_flush(w, 1) == TF_OK);          /* everything so far is in the file */
    tf_writer_get_stats(w, &st);
    CU_ASSERT(st.file_bytes == tt_fsize(path));
    rd = tt_read_all(path, NULL, NULL);
    CU_ASSERT(rd.status == TF_END && rd.ncomplete == 50);
    tt_read_free(&rd);
    CU_ASSERT(wt_check(path, 0) == 50);

    for (uint64_t i = 51; i <= 60; i++) {                /* the periodic flush */
        tt_begin(w, i, 1, 1, 2, i);
        tt_end(w, i, 2, 0);
    }
    nanosleep(&ts, NULL);
    rd = tt_read_all(path, NULL, NULL);
    CU_ASSERT(rd.status == TF_END && rd.ncomplete == 60);
    tt_read_free(&rd);

    for (uint64_t i = 61; i <= 70; i++) {                /* close writes the rest */
        tt_begin(w, i, 1, 1, 2, i);
        tt_end(w, i, 2, 0);
    }
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    {
        tf_reader_info info;
        rd = tt_read_all(path, NULL, &info);
        CU_ASSERT(rd.status == TF_END && rd.ncomplete == 70);
        CU_ASSERT(info.has_index);
        tt_read_free(&rd);
    }
    free(buf);
    unlink(path);
}

/* ------------------------------------------------------- write errors */

/* The file is a pipe whose reader goes away: the next writes fail with
 * EPIPE (SIGPIPE stays blocked on the workers). Producers never block for
 * long, blobs keep their refs, the message names the error, close returns
 * the failure. */
static void test_workers_write_error(void)
{
    int fds[2];
    char path[64];
    tf_writer_opts o = { .threads = 4, .memory_budget = 8 * MIB };
    tf_writer *w = NULL;
    uint8_t *buf = malloc(3 * MIB);
    tf_blobref ref, want;
    double t0, slowest = 0;
    char msg[600];
    int failed_at = 0;

    CU_ASSERT_FATAL(pipe(fds) == 0);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[1]);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    CU_ASSERT(tf_writer_flush(w, 1) == TF_OK);
    close(fds[0]);
    for (int i = 1; i <= 40; i++) {
        tt_fill(buf, 3 * MIB, (uint64_t)i, 0);
        t0 = wt_now();
        tf_status s = tf_writer_blob(w, buf, 3 * MIB, &ref);
        tt_begin(w, (uint64_t)i, 1, 1, 2, (uint64_t)i);
        tt_end(w, (uint64_t)i, 2, 0);
        if (wt_now() - t0 > slowest)
            slowest = wt_now() - t0;
        tf_hash(buf, 3 * MIB, &want);
        CU_ASSERT(memcmp(&ref, &want, sizeof(ref)) == 0);
        if (s == TF_ERR_FAILED && !failed_at)
            failed_at = i;
    }
    CU_ASSERT(failed_at > 0);
    CU_ASSERT(tf_writer_flush(w, 1) == TF_ERR_FAILED);
    CU_ASSERT(tf_writer_status(w) == TF_ERR_FAILED);
    CU_ASSERT(strstr(tf_writer_errmsg(w), "Broken pipe") != NULL);
    CU_ASSERT(strchr(tf_writer_errmsg(w), '\n') == NULL);
    CU_ASSERT(slowest < 2.0);
    t0 = wt_now();
    CU_ASSERT(tf_writer_close_msg(w, msg, sizeof(msg)) == TF_ERR_FAILED);
    CU_ASSERT(wt_now() - t0 < 2.0);
    CU_ASSERT(strstr(msg, "writing a chunk") != NULL && strstr(msg, "Broken pipe") != NULL);
    close(fds[1]);
    free(buf);
}

/* Child: RLIMIT_FSIZE of 1 MiB, SIGXFSZ left at its default action (it
 * would kill the process), 4 workers and 2 producers: the writer fails with
 * EFBIG and the process lives. Exit 0 when all went as expected. */
static void wt_fsize_child(const char *path)
{
    struct rlimit lim = { 1 << 20, 1 << 20 };
    tf_writer_opts o = { .threads = 4, .memory_budget = 8 * MIB };
    tf_writer *w = NULL;
    pthread_t th;
    wt_prod p;

    alarm(60);                                  /* a hang fails the test */
    signal(SIGXFSZ, SIG_DFL);
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0 || tf_writer_open(&w, path, &o) != TF_OK)
        _exit(2);
    tt_sig(w, 1, "clWork", 2);
    p = (wt_prod){ w, 2, WT_CALLS / 2 };
    if (pthread_create(&th, NULL, wt_producer, &p) != 0)
        _exit(3);
    wt_producer(&(wt_prod){ w, 1, WT_CALLS / 2 });
    pthread_join(th, NULL);
    if (tf_writer_status(w) != TF_ERR_FAILED || strstr(tf_writer_errmsg(w), "File too large") == NULL)
        _exit(4);
    if (tf_writer_close(w) != TF_ERR_FAILED)
        _exit(5);
    _exit(0);
}

static void test_workers_fsize(void)
{
    char path[64];
    pid_t pid;
    int st = 0;
    tt_read rd;

    tt_tmp(path);
    pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0)
        wt_fsize_child(path);
    waitpid(pid, &st, 0);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CU_ASSERT(tt_fsize(path) <= 1 << 20);
    rd = tt_read_all(path, NULL, NULL);             /* what reached the file reads */
    CU_ASSERT(rd.status == TF_END);
    tt_read_free(&rd);
    unlink(path);
}

/* ---------------------------------------------------------- crash flush */

static tf_writer *g_wt_crash;

static void wt_crash_handler(int sig)
{
    (void)sig;
    tf_writer_crash_flush(g_wt_crash, 5000);
    _exit(0);
}

/* Child: 4 workers kept busy with 1.5 MiB blobs; 60 calls, then SIGSEGV
 * (handler: crash flush). Every call and blob must be in the file. */
static void wt_crash_child(const char *path)
{
    tf_writer_opts o = { .threads = 4, .flush_ms = 100000, .memory_budget = 32 * MIB };
    struct sigaction sa;
    uint8_t *buf = malloc(3 * MIB / 2);
    tf_blobref ref;

    alarm(60);
    if (tf_writer_open(&g_wt_crash, path, &o) != TF_OK)
        _exit(2);
    tt_sig(g_wt_crash, 1, "clWork", 2);
    for (uint64_t i = 1; i <= 60; i++) {
        tt_fill(buf, 3 * MIB / 2, i, (int)(i & 1));
        tf_writer_blob(g_wt_crash, buf, 3 * MIB / 2, &ref);
        tt_begin(g_wt_crash, i, 1, 1, 2, i);
        tt_end(g_wt_crash, i, 2, 0);
        tt_data_blob(g_wt_crash, i, &ref);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = wt_crash_handler;
    sigaction(SIGSEGV, &sa, NULL);
    raise(SIGSEGV);
    _exit(4);
}

static void test_workers_crash_flush(void)
{
    char path[64];
    pid_t pid;
    int st = 0;
    tf_reader *r = NULL;
    tf_item it;
    tf_status s;
    uint8_t *want = malloc(3 * MIB / 2), *back = malloc(3 * MIB / 2);
    size_t calls = 0, blobs_ok = 0;

    tt_tmp(path);
    pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0)
        wt_crash_child(path);
    waitpid(pid, &st, 0);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    while ((s = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type == TF_ITEM_CALL) {
            CU_ASSERT(it.u.call.complete && it.u.call.seq == calls + 1);
            calls++;
        } else if (it.type == TF_ITEM_DATA && it.u.data.value.type == TF_BLOB) {
            tt_fill(want, 3 * MIB / 2, it.u.data.seq, (int)(it.u.data.seq & 1));
            if (tf_reader_blob(r, &it.u.data.value.v.blob, 0, back, 3 * MIB / 2) == TF_OK &&
                memcmp(back, want, 3 * MIB / 2) == 0)
                blobs_ok++;
        }
    }
    CU_ASSERT(s == TF_END);
    CU_ASSERT(calls == 60 && blobs_ok == 60);
    CU_ASSERT(tf_reader_get_info(r)->has_index == 0);
    tf_reader_close(r);
    unlink(path);
    free(want);
    free(back);
}

/* ------------------------------------------------------------ sink mode and feed readers */

/* What the sink saw: items decoded by a feed reader, as "B<seq>" (a call
 * begins, with its first argument), "C<seq>=<ret>" (it ends), "D<seq>"
 * (data); the hand-overs that held more than one record. */
typedef struct sk_state {
    tf_reader *r;
    char log[512];
    unsigned handovers, multi, errors;
} sk_state;

static void sk_sink(void *ctx, const void *rec, size_t len)
{
    sk_state *k = ctx;
    const uint8_t *p = rec, *end = p + len;
    unsigned records = 0;
    k->handovers++;
    while (p < end) {
        tf_item it;
        size_t used = 0;
        tf_status st = tf_reader_feed(k->r, p, (size_t)(end - p), &used, &it);
        CU_ASSERT(used > 0 && used <= (size_t)(end - p));
        p += used ? used : (size_t)(end - p);
        records++;
        char one[64] = "";
        uint64_t a = 0, ret = 0;
        if (st == TF_OK && it.type == TF_ITEM_BEGIN) {
            CU_ASSERT(it.u.call.complete == 0 && it.u.call.outs == NULL);
            tf_value_u64(&it.u.call.args[0], &a);
            snprintf(one, sizeof one, "B%llu:%llu ", (unsigned long long)it.u.call.seq, (unsigned long long)a);
        } else if (st == TF_OK && it.type == TF_ITEM_CALL) {
            tf_value_u64(&it.u.call.ret, &ret);
            snprintf(one, sizeof one, "C%llu=%llu ", (unsigned long long)it.u.call.seq, (unsigned long long)ret);
        } else if (st == TF_OK && it.type == TF_ITEM_DATA) {
            snprintf(one, sizeof one, "D%llu ", (unsigned long long)it.u.data.seq);
        } else if (st != TF_END) {
            k->errors++;
        }
        strncat(k->log, one, sizeof k->log - strlen(k->log) - 1);
    }
    k->multi += records > 1;
}

/* The record writers (tf_write_* of tf.h, tf_wrec_* of tf_hot.h) write
 * each record as FORMAT.md 4 lists it: the expected bytes are spelled out
 * here by hand, msgpack by msgpack, so that a change of tag, field count
 * or field order in trace-format fails. A writer in sink mode hands each
 * record over as it is made. */
typedef struct rw_cap {
    uint8_t buf[4096];
    size_t len;
    unsigned n;
} rw_cap;

static void rw_sink(void *ctx, const void *rec, size_t len)
{
    rw_cap *c = ctx;
    if (c->len + len <= sizeof c->buf) {
        memcpy(c->buf + c->len, rec, len);
        c->len += len;
    }
    c->n++;
}

/* The record captured since the last take equals @p want (@p n bytes). */
static int rw_take(rw_cap *c, const char *want, size_t n)
{
    int ok = c->len == n && memcmp(c->buf, want, n) == 0;
    if (!ok) {
        fprintf(stderr, "record writer: got %zu bytes:", c->len);
        for (size_t i = 0; i < c->len; i++)
            fprintf(stderr, " %02x", c->buf[i]);
        fprintf(stderr, "\n");
    }
    c->len = 0;
    return ok;
}
#define RW_EXPECT(c, lit) CU_ASSERT(rw_take((c), (lit), sizeof(lit) - 1))

static void test_record_writers(void)
{
    rw_cap c = {0};
    tf_writer *w = NULL;
    tf_writer_opts o = {.sink = rw_sink, .sink_ctx = &c};
    CU_ASSERT_FATAL(tf_writer_open(&w, NULL, &o) == TF_OK);

    tf_value kv[2] = {{.type = TF_STR, .v.str = {"pid", 3}}, {.type = TF_UINT, .v.u = 300}};
    tf_value env = {.type = TF_MAP, .v.map = {&kv[0], &kv[1], 1}};
    CU_ASSERT(tf_write_env(w, &env) == TF_OK);
    RW_EXPECT(&c, "\x92\x00\x81\xa3pid\xcd\x01\x2c");   /* [0, {"pid": 300}] */
    CU_ASSERT(tf_write_env(w, NULL) == TF_OK);
    RW_EXPECT(&c, "\x92\x00\x80");                       /* [0, {}] */

    tf_param ps[1] = {{"n", "cl_uint", TF_KIND_VALUE, TF_DIR_IN}};
    tf_sig sig = {.id = 9, .name = "clF", .ret_type = "cl_int", .nparams = 1, .params = ps};
    CU_ASSERT(tf_write_sig(w, &sig) == TF_OK);
    /* [1, 9, "clF", "cl_int", [["n", "cl_uint", 0, 1]]] */
    RW_EXPECT(&c, "\x95\x01\x09\xa3" "clF" "\xa6" "cl_int" "\x91\x94\xa1n\xa7" "cl_uint" "\x00\x01");

    tf_value args[2] = {{.type = TF_UINT, .v.u = 7}, {.type = TF_INT, .v.i = -2}};
    CU_ASSERT(tf_write_begin(w, 200, 3, 9, -5, args, 2, NULL) == TF_OK);
    RW_EXPECT(&c, "\x97\x02\xcc\xc8\x03\x09\xfb\x92\x07\xfe\xc0");   /* [2, 200, 3, 9, -5, [7, -2], nil] */
    CU_ASSERT(tf_write_begin(w, 1, 1, 9, 70000, args, 1, &env) == TF_OK);
    RW_EXPECT(&c, "\x97\x02\x01\x01\x09\xce\x00\x01\x11\x70\x91\x07\x81\xa3pid\xcd\x01\x2c");

    tf_value ret = {.type = TF_INT, .v.i = -30};
    CU_ASSERT(tf_write_end(w, 200, 8, &ret, NULL, 2, NULL) == TF_OK);
    RW_EXPECT(&c, "\x96\x03\xcc\xc8\x08\xe2\x92\xc0\xc0\xc0");   /* [3, 200, 8, -30, [nil, nil], nil] */
    CU_ASSERT(tf_write_end(w, 1, 9, NULL, args, 1, &env) == TF_OK);
    RW_EXPECT(&c, "\x96\x03\x01\x09\xc0\x91\x07\x81\xa3pid\xcd\x01\x2c");

    CU_ASSERT(tf_write_devtime(w, 5, 1, 2, 3, 1000) == TF_OK);
    RW_EXPECT(&c, "\x96\x04\x05\x01\x02\x03\xcd\x03\xe8");         /* [4, 5, 1, 2, 3, 1000] */

    tf_blobref ref = {.size = 5};
    memset(ref.hash, 0xab, sizeof ref.hash);
    tf_value blob = {.type = TF_BLOB, .v.blob = ref};
    CU_ASSERT(tf_write_data(w, 5, "ptr", &blob) == TF_OK);
    /* [5, 5, "ptr", ext 1 (hash, size LE)] */
    RW_EXPECT(&c, "\x94\x05\x05\xa3ptr\xc7\x18\x01"
                  "\xab\xab\xab\xab\xab\xab\xab\xab\xab\xab\xab\xab\xab\xab\xab\xab"
                  "\x05\x00\x00\x00\x00\x00\x00\x00");

    CU_ASSERT(tf_write_note(w, 0, 4, "hi") == TF_OK);
    RW_EXPECT(&c, "\x94\x06\x00\x04\xa2hi");                       /* [6, 0, 4, "hi"] */

    tf_value devs = {.type = TF_ARRAY, .v.arr = {&env, 1}};
    CU_ASSERT(tf_write_devices(w, 2, &devs) == TF_OK);
    RW_EXPECT(&c, "\x93\x07\x02\x91\x81\xa3pid\xcd\x01\x2c");      /* [7, 2, [{"pid": 300}]] */
    CU_ASSERT(tf_write_devices(w, 2, &env) == TF_ERR_ARG);          /* not an array */
    CU_ASSERT(tf_write_data(w, 5, NULL, &blob) == TF_ERR_ARG);
    CU_ASSERT(tf_write_note(NULL, 0, 0, "x") == TF_ERR_ARG);
    CU_ASSERT(c.len == 0);

    /* the encoder-level heads write the same bytes, under the lock */
    tf_enc *e = tf_writer_lock(w);
    tf_wrec_begin_head(e, 200, 3, 9, -5);
    tf_enc_value(e, &(tf_value){.type = TF_ARRAY, .v.arr = {args, 2}});
    tf_enc_nil(e);
    tf_writer_unlock(w);
    RW_EXPECT(&c, "\x97\x02\xcc\xc8\x03\x09\xfb\x92\x07\xfe\xc0");
    e = tf_writer_lock(w);
    tf_wrec_end_head(e, 200, 8);
    tf_enc_int(e, -30);
    tf_enc_array(e, 2);
    tf_enc_nils(e, 2);
    tf_enc_nil(e);
    tf_writer_unlock(w);
    RW_EXPECT(&c, "\x96\x03\xcc\xc8\x08\xe2\x92\xc0\xc0\xc0");
    e = tf_writer_lock(w);
    tf_wrec_env_head(e);
    tf_enc_map(e, 0);
    tf_writer_unlock(w);
    RW_EXPECT(&c, "\x92\x00\x80");
    tf_wrec_sig(tf_writer_lock(w), &sig);
    tf_writer_unlock(w);
    RW_EXPECT(&c, "\x95\x01\x09\xa3" "clF" "\xa6" "cl_int" "\x91\x94\xa1n\xa7" "cl_uint" "\x00\x01");
    tf_wrec_devtime(tf_writer_lock(w), 5, 1, 2, 3, 1000);
    tf_writer_unlock(w);
    RW_EXPECT(&c, "\x96\x04\x05\x01\x02\x03\xcd\x03\xe8");
    e = tf_writer_lock(w);
    tf_wrec_data_head(e, 5, "ptr");
    tf_enc_bool(e, 0);
    tf_writer_unlock(w);
    RW_EXPECT(&c, "\x94\x05\x05\xa3ptr\xc2");
    tf_wrec_note(tf_writer_lock(w), 0, 4, "hi");
    tf_writer_unlock(w);
    RW_EXPECT(&c, "\x94\x06\x00\x04\xa2hi");
    e = tf_writer_lock(w);
    tf_wrec_devices_head(e, 2, 0);
    tf_writer_unlock(w);
    RW_EXPECT(&c, "\x93\x07\x02\x90");
    CU_ASSERT(c.n == 19);   /* 11 whole, 8 under the lock; the refused ones wrote nothing */
    CU_ASSERT(tf_writer_close(w) == TF_OK);

    /* and a reader takes them back: a file written by tf_write_* alone */
    char path[64];
    tf_reader *r = NULL;
    tf_item it;
    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    CU_ASSERT(tf_write_env(w, &env) == TF_OK && tf_write_sig(w, &sig) == TF_OK);
    CU_ASSERT(tf_write_begin(w, 1, 1, 9, 10, args, 1, NULL) == TF_OK);
    CU_ASSERT(tf_write_data(w, 1, "k", &args[1]) == TF_OK);
    CU_ASSERT(tf_write_end(w, 1, 20, &ret, args, 1, NULL) == TF_OK);
    CU_ASSERT(tf_write_devtime(w, 1, 0, 0, 3, 4) == TF_OK);
    CU_ASSERT(tf_write_note(w, 1, 0, "n") == TF_OK);
    CU_ASSERT(tf_write_devices(w, 2, &(tf_value){.type = TF_ARRAY, .v.arr = {NULL, 0}}) == TF_OK);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    const tf_value *pid = tf_map_get(tf_reader_env(r), "pid");
    CU_ASSERT(pid && pid->type == TF_UINT && pid->v.u == 300);
    CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_DATA && it.u.data.seq == 1 &&
              !strcmp(it.u.data.key, "k") && it.u.data.value.v.i == -2);
    CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_CALL && it.u.call.seq == 1 &&
              !strcmp(it.u.call.sig->name, "clF") && it.u.call.complete && it.u.call.ret.v.i == -30 &&
              it.u.call.t_begin == 10 && it.u.call.t_end == 20 && it.u.call.args[0].v.u == 7 &&
              it.u.call.outs[0].v.u == 7);
    CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_DEVTIME && it.u.devtime.end == 4);
    CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_NOTE && !strcmp(it.u.note.text, "n"));
    CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_DEVICES && it.u.devices.platform == 2);
    CU_ASSERT(tf_reader_next(r, &it) == TF_END);
    tf_reader_close(r);
    unlink(path);
}

/* @p trusted: the feed reader as plan mode opens it (no bounds walk;
 * msgpack-c finds where each record ends). */
static void sink_feed(int trusted)
{
    sk_state k = {0};
    tf_writer *w = NULL;
    tf_writer_opts o = {.sink = sk_sink, .sink_ctx = &k};
    CU_ASSERT(tf_writer_open(&w, NULL, NULL) == TF_ERR_ARG);   /* no path and no sink */
    CU_ASSERT_FATAL(tf_reader_open_feed(&k.r, &(tf_reader_opts){.trusted_feed = trusted}) == TF_OK);
    CU_ASSERT_FATAL(tf_writer_open(&w, NULL, &o) == TF_OK);

    /* a SIG and the first BEGIN using it in one record session, as the
     * recorder writes them: one hand-over, two records */
    tf_enc *e = tf_writer_lock(w);
    tf_enc_array(e, 5);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, 3);
    tf_enc_cstr(e, "clThing");
    tf_enc_cstr(e, "cl_int");
    tf_enc_array(e, 1);
    tf_enc_array(e, 4);
    tf_enc_cstr(e, "p0");
    tf_enc_cstr(e, "cl_uint");
    tf_enc_uint(e, TF_KIND_VALUE);
    tf_enc_uint(e, TF_DIR_IN);
    tf_enc_array(e, 7);
    tf_enc_uint(e, 2);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, 3);
    tf_enc_int(e, 100);
    tf_enc_array(e, 1);
    tf_enc_uint(e, 41);
    tf_enc_nil(e);
    tf_writer_unlock(w);
    tt_begin(w, 2, 1, 3, 1, 77);
    tt_end(w, 2, 1, 5);
    tt_end(w, 1, 1, 0);

    /* blobs are hashed, not stored: the reference is the bytes' hash */
    uint8_t data[3000];
    tf_blobref ref, want;
    tt_fill(data, sizeof data, 9, 0);
    CU_ASSERT(tf_writer_blob(w, data, sizeof data, &ref) == TF_OK);
    tf_hash(data, sizeof data, &want);
    CU_ASSERT(!memcmp(&ref, &want, sizeof ref));
    tt_data_blob(w, 2, &ref);
    CU_ASSERT(tf_writer_flush(w, 1) == TF_OK);

    tf_writer_stats st;
    tf_writer_get_stats(w, &st);
    CU_ASSERT(st.records == 5 && st.file_bytes == 0 && st.blobs_stored == 0);   /* lock sessions */
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    CU_ASSERT_STRING_EQUAL(k.log, "B1:41 B2:77 C2=5 C1=0 D2 ");
    CU_ASSERT(k.handovers == 5 && k.multi == 1 && k.errors == 0);

    /* a corrupt record: an error, no item, and the next good one decodes */
    tf_item it;
    size_t used = 0;
    static const uint8_t bad[] = {0x93, 0x02, 0xc1, 0x00};   /* 0xc1 is never msgpack */
    CU_ASSERT(tf_reader_feed(k.r, bad, sizeof bad, &used, &it) == TF_ERR_CORRUPT);
    CU_ASSERT(used == sizeof bad);
    CU_ASSERT(tf_reader_feed(k.r, bad, 0, &used, &it) == TF_ERR_CORRUPT);
    static const uint8_t note[] = {0x94, 0x06, 0x00, 0x00, 0xa1, 'x'};   /* NOTE [6, 0, 0, "x"] */
    CU_ASSERT(tf_reader_feed(k.r, note, sizeof note, &used, &it) == TF_OK);
    CU_ASSERT(it.type == TF_ITEM_NOTE && used == sizeof note);
    tf_reader_close(k.r);
}

static void test_sink_feed(void)
{
    sink_feed(0);
    sink_feed(1);
}

/* Deep equality of two values (maps entry by entry, in order). */
static int tv_equal(const tf_value *a, const tf_value *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case TF_NIL: return 1;
    case TF_BOOL: return a->v.b == b->v.b;
    case TF_INT: return a->v.i == b->v.i;
    case TF_UINT: return a->v.u == b->v.u;
    case TF_F64: return !memcmp(&a->v.f, &b->v.f, sizeof a->v.f);
    case TF_STR:
    case TF_BIN: return a->v.str.len == b->v.str.len && !memcmp(a->v.str.ptr, b->v.str.ptr, a->v.str.len);
    case TF_ARRAY:
        if (a->v.arr.n != b->v.arr.n)
            return 0;
        for (uint32_t i = 0; i < a->v.arr.n; i++)
            if (!tv_equal(&a->v.arr.items[i], &b->v.arr.items[i]))
                return 0;
        return 1;
    case TF_MAP:
        if (a->v.map.n != b->v.map.n)
            return 0;
        for (uint32_t i = 0; i < a->v.map.n; i++)
            if (!tv_equal(&a->v.map.keys[i], &b->v.map.keys[i]) || !tv_equal(&a->v.map.vals[i], &b->v.map.vals[i]))
                return 0;
        return 1;
    case TF_BLOB: return a->v.blob.size == b->v.blob.size && !memcmp(a->v.blob.hash, b->v.blob.hash, 16);
    default: return 0;
    }
}

/* A feed reader opened with trusted_feed decodes each record in one pass
 * (trace-format/tf_mp.c); one without walks it, unpacks it with msgpack-c
 * and converts. Every msgpack format, as a DATA record's value: the same
 * item from both; cut anywhere: an error from both. */
static void test_feed_formats(void)
{
    static const struct { const char *what; size_t n; uint8_t b[48]; int ok; } vals[] = {
        {"nil", 1, {0xc0}, 1},
        {"false, true", 3, {0x92, 0xc2, 0xc3}, 1},
        {"fixints", 4, {0x93, 0x00, 0x7f, 0xe0}, 1},
        {"uint 8..64", 20, {0x94, 0xcc, 0xff, 0xcd, 0x12, 0x34, 0xce, 0xde, 0xad, 0xbe, 0xef,
                            0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, 1},
        {"int 8..64, negative", 20, {0x94, 0xd0, 0x80, 0xd1, 0x80, 0x00, 0xd2, 0xff, 0xff, 0xff, 0xfe,
                                     0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}, 1},
        {"int 8..64, not negative", 16, {0x94, 0xd0, 0x05, 0xd1, 0x7f, 0xff, 0xd2, 0, 0, 0, 1,
                                         0xd3, 0, 0, 0, 2}, 0 /* short: int64 needs 8 */},
        {"int 8..64, not negative", 20, {0x94, 0xd0, 0x05, 0xd1, 0x7f, 0xff, 0xd2, 0, 0, 0, 1,
                                         0xd3, 0, 0, 0, 0, 0, 0, 0, 0}, 1},
        {"float 32, 64", 15, {0x92, 0xca, 0x3f, 0xc0, 0x00, 0x00, 0xcb, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18}, 1},
        {"strings", 12, {0x94, 0xa0, 0xa3, 'a', 'b', 'c', 0xd9, 0x01, 'x', 0xda, 0x00, 0x00}, 1},
        {"bins", 10, {0x93, 0xc4, 0x00, 0xc5, 0x00, 0x01, 0x07, 0xc6, 0, 0}, 0 /* bin32 cut */},
        {"bins", 13, {0x93, 0xc4, 0x00, 0xc5, 0x00, 0x01, 0x07, 0xc6, 0, 0, 0, 1, 0x08}, 1},
        {"array16, array32", 10, {0x92, 0xdc, 0x00, 0x01, 0xc0, 0xdd, 0, 0, 0, 0}, 1},
        {"maps", 14, {0x93, 0x81, 0xa1, 'k', 0x01, 0xde, 0x00, 0x01, 0x02, 0x90, 0xdf, 0, 0, 0}, 0},
        {"maps", 15, {0x93, 0x81, 0xa1, 'k', 0x01, 0xde, 0x00, 0x01, 0x02, 0x90, 0xdf, 0, 0, 0, 0}, 1},
        {"blob reference", 27, {0xc7, 24, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                0x10, 0, 0, 0, 0, 0, 0, 0}, 1},
        {"ext of another type", 27, {0xc7, 24, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                     0x10, 0, 0, 0, 0, 0, 0, 0}, 0},
        {"fixext", 3, {0xd4, 1, 0}, 0},
        {"0xc1", 2, {0x91, 0xc1}, 0},
        {"count past the end", 3, {0x9f, 0x01, 0x02}, 0},
    };
    tf_reader *r = NULL, *t = NULL;
    CU_ASSERT_FATAL(tf_reader_open_feed(&r, NULL) == TF_OK);
    CU_ASSERT_FATAL(tf_reader_open_feed(&t, &(tf_reader_opts){.trusted_feed = 1}) == TF_OK);
    for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
        uint8_t rec[64] = {0x94, 0x05, 0x01, 0xa1, 'k'};   /* DATA [5, 1, "k", value] */
        size_t n = 5 + vals[v].n;
        memcpy(rec + 5, vals[v].b, vals[v].n);
        for (size_t cut = 1; cut <= n; cut++) {
            tf_item a, b;
            size_t ua = 0, ub = 0;
            tf_status sa = tf_reader_feed(r, rec, cut, &ua, &a), sb = tf_reader_feed(t, rec, cut, &ub, &b);
            int whole = cut == n && vals[v].ok;
            if (sa != sb || ua != ub || (sa == TF_OK) != whole)
                fprintf(stderr, "feed formats: %s, %zu of %zu bytes: %d/%d, %zu/%zu bytes used\n", vals[v].what, cut,
                        n, (int)sa, (int)sb, ua, ub);
            CU_ASSERT(sa == sb && ua == ub && (sa == TF_OK) == whole);
            if (sa == TF_OK && sb == TF_OK) {
                CU_ASSERT(a.type == TF_ITEM_DATA && b.type == TF_ITEM_DATA);
                CU_ASSERT(tv_equal(&a.u.data.value, &b.u.data.value));
            }
        }
    }
    tf_reader_close(r);
    tf_reader_close(t);
}

/* ------------------------------------------- blob hashes (FORMAT.md 5.1) */

/* The 5.1 rule, written independently of the library: XXH3-128 of the
 * bytes up to 1 MiB; above, XXH3-128 seeded with the size over the 1 MiB
 * leaves' canonical hashes. */
static void ht_rule(const uint8_t *p, size_t len, uint8_t out[16])
{
    XXH128_canonical_t c;

    if (len <= MIB) {
        XXH128_canonicalFromHash(&c, XXH3_128bits(p, len));
    } else {
        size_t n = (len + MIB - 1) / MIB;
        uint8_t *d = malloc(n * 16);
        CU_ASSERT_FATAL(d != NULL);
        for (size_t i = 0; i < n; i++) {
            XXH128_canonicalFromHash(&c, XXH3_128bits(p + i * MIB, len - i * MIB < MIB ? len - i * MIB : MIB));
            memcpy(d + i * 16, c.digest, 16);
        }
        XXH128_canonicalFromHash(&c, XXH3_128bits_withSeed(d, n * 16, len));
        free(d);
    }
    memcpy(out, c.digest, 16);
}

/* tf_hash() follows the rule at and around the leaf size; a blob over it
 * differs from the whole-blob XXH3 of 1.1. */
static void test_hash_rule(void)
{
    static const size_t sizes[] = { 0, 1, 4096, MIB - 1, MIB, MIB + 1, 2 * MIB, 5 * MIB + 12345, 33 * MIB };
    uint8_t *p = malloc(33 * MIB), want[16];
    XXH128_canonical_t whole;
    tf_blobref r;

    CU_ASSERT_FATAL(p != NULL);
    tt_fill(p, 33 * MIB, 7, 1);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        tf_hash(p, sizes[i], &r);
        ht_rule(p, sizes[i], want);
        CU_ASSERT(r.size == sizes[i]);
        CU_ASSERT(memcmp(r.hash, want, 16) == 0);
        XXH128_canonicalFromHash(&whole, XXH3_128bits(p, sizes[i]));
        CU_ASSERT((memcmp(r.hash, whole.digest, 16) == 0) == (sizes[i] <= MIB));
    }
    free(p);
}

/* The writer hashes large blobs with its workers: on the speculative path
 * (a new blob of one window, copied and hashed piece by piece), the plain
 * path (a repeated blob, hashed by leaves before any copy) and across
 * windows (a blob larger than a window); with 1 and 4 workers. Every ref
 * follows the rule, every blob reads back, a repeated blob is stored once;
 * tf_writer_blob_ref() stores bytes under the reference it is given. */
static void hash_writer(unsigned threads)
{
    char path[64];
    tf_writer_opts o = { .threads = threads, .memory_budget = 16 * MIB, .flush_ms = 100000 };
    static const size_t sizes[] = { 3 * MIB, 3 * MIB + 5, 4 * MIB, 9 * MIB + 77, 2 * MIB };
    enum { NB = sizeof sizes / sizeof sizes[0] };
    uint8_t *p[NB], want[16];
    tf_blobref ref[NB], again, given = { .hash = { 0xc1, 0x77 }, .size = 2 * MIB };
    tf_writer *w;
    tf_writer_stats st;

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    for (size_t i = 0; i < NB; i++) {
        p[i] = malloc(sizes[i]);
        CU_ASSERT_FATAL(p[i] != NULL);
        tt_fill(p[i], sizes[i], 100 + i, i & 1);
        CU_ASSERT(tf_writer_blob(w, p[i], sizes[i], &ref[i]) == TF_OK);   /* new: speculative */
        ht_rule(p[i], sizes[i], want);
        CU_ASSERT(memcmp(ref[i].hash, want, 16) == 0 && ref[i].size == sizes[i]);
    }
    for (size_t i = 0; i < NB; i++) {                  /* repeated: hashed first, not stored */
        CU_ASSERT(tf_writer_blob(w, p[i], sizes[i], &again) == TF_OK);
        CU_ASSERT(memcmp(again.hash, ref[i].hash, 16) == 0);
    }
    CU_ASSERT(tf_writer_blob_ref(w, p[4], sizes[4], &given) == TF_OK);
    CU_ASSERT(tf_writer_blob_ref(w, p[4], sizes[4] - 1, &given) == TF_ERR_ARG);
    tf_writer_get_stats(w, &st);
    CU_ASSERT(st.blobs_stored == NB + 1);
    CU_ASSERT(tf_writer_close(w) == TF_OK);

    tf_reader *r;
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    for (size_t i = 0; i <= NB; i++) {
        const tf_blobref *b = i < NB ? &ref[i] : &given;
        const uint8_t *src = i < NB ? p[i] : p[4];
        uint8_t *got = malloc(b->size);
        CU_ASSERT_FATAL(got != NULL);
        CU_ASSERT(tf_reader_blob(r, b, 0, got, b->size) == TF_OK);
        CU_ASSERT(memcmp(got, src, b->size) == 0);
        free(got);
    }
    tf_reader_close(r);
    for (size_t i = 0; i < NB; i++)
        free(p[i]);
    unlink(path);
}

/* Tickets (tf_writer_blob_begin/join), with 1 and 4 workers and a budget
 * of 16 MiB (windows of 4 pieces): four pending at once on one thread,
 * their windows more than the budget (each holds its window's: a wait for
 * it here would never end),
 * new blobs (speculative), the same bytes again (hashed, not stored),
 * blobs of several windows, one of a single piece and an empty one (done
 * at begin, NULL). Every ref is what tf_writer_blob gives (the rule), a
 * blob pending elsewhere is stored once, every blob reads back. */
static void blob_tickets(unsigned threads)
{
    char path[64];
    tf_writer_opts o = { .threads = threads, .memory_budget = 16 * MIB, .flush_ms = 100000 };
    static const size_t sizes[] = { 4 * MIB, 4 * MIB - 1, 4 * MIB, 4 * MIB, 3 * MIB + 5, 9 * MIB + 77, MIB, 0,
                                    2 * MIB, 21 * MIB };
    enum { NB = sizeof sizes / sizeof sizes[0] };
    uint8_t *p[NB], want[16];
    tf_blobref ref[NB], again[NB];
    tf_wticket *t[NB];
    tf_status st;
    tf_writer *w;
    tf_writer_stats ws;

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    for (size_t i = 0; i < NB; i++) {
        p[i] = malloc(sizes[i] ? sizes[i] : 1);
        CU_ASSERT_FATAL(p[i] != NULL);
        tt_fill(p[i], sizes[i], 300 + i, i & 1);
    }
    for (int round = 0; round < 2; round++) {   /* new, then the same bytes again */
        tf_blobref *r = round ? again : ref;
        for (size_t i = 0; i < NB; i += 4) {     /* four pending at a time: 16 MiB and headers */
            for (size_t k = i; k < i + 4 && k < NB; k++) {
                st = TF_ERR_ARG;
                t[k] = tf_writer_blob_begin(w, p[k], sizes[k], &r[k], &st);
                CU_ASSERT((t[k] == NULL) == (sizes[k] <= MIB));
                CU_ASSERT(st == TF_OK);
            }
            for (size_t k = i; k < i + 4 && k < NB; k++)
                if (t[k])
                    CU_ASSERT(tf_writer_blob_join(w, t[k]) == TF_OK);
        }
        for (size_t i = 0; i < NB; i++) {
            ht_rule(p[i], sizes[i], want);
            CU_ASSERT(r[i].size == sizes[i] && memcmp(r[i].hash, want, 16) == 0);
        }
    }
    CU_ASSERT(tf_writer_blob_begin(w, NULL, 5, &again[0], &st) == NULL && st == TF_ERR_ARG);
    tf_writer_get_stats(w, &ws);
    CU_ASSERT(ws.blobs_stored == NB - 1);   /* the empty one is no blob */
    CU_ASSERT(ws.blob_calls == 2 * NB);
    CU_ASSERT(tf_writer_close(w) == TF_OK);

    tf_reader *rd;
    CU_ASSERT_FATAL(tf_reader_open(&rd, path, NULL) == TF_OK);
    for (size_t i = 0; i < NB; i++) {
        uint8_t *got = malloc(sizes[i] ? sizes[i] : 1);
        CU_ASSERT_FATAL(got != NULL);
        CU_ASSERT(tf_reader_blob(rd, &ref[i], 0, got, sizes[i]) == TF_OK);
        CU_ASSERT(memcmp(got, p[i], sizes[i]) == 0);
        free(got);
    }
    tf_reader_close(rd);
    for (size_t i = 0; i < NB; i++)
        free(p[i]);
    unlink(path);
}

static void test_blob_tickets(void)
{
    blob_tickets(1);
    blob_tickets(4);
}

/* Tickets whose bytes arrive while they are pending (tf_writer_blob_open,
 * tf_writer_blob_avail: the recorder's pipelined reads): the memory holds
 * other bytes until a part is made available (in steps that are no
 * multiple of a piece, one of them 0, then all at once at join), each
 * blob new and then again (stored once), in one window and in several;
 * the refs are the rule's and the blobs read back as the final bytes. */
static void blob_tickets_avail(unsigned threads)
{
    char path[64];
    tf_writer_opts o = { .threads = threads, .memory_budget = 16 * MIB, .flush_ms = 100000 };
    static const size_t sizes[] = { 4 * MIB, 3 * MIB + 5, 9 * MIB + 77, 2 * MIB };
    enum { NB = sizeof sizes / sizeof sizes[0] };
    uint8_t *p[NB], *fin[NB], want[16];
    tf_blobref ref[NB];
    tf_writer *w;
    tf_writer_stats ws;

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    for (size_t i = 0; i < NB; i++) {
        p[i] = malloc(sizes[i]);
        fin[i] = malloc(sizes[i]);
        CU_ASSERT_FATAL(p[i] != NULL && fin[i] != NULL);
        tt_fill(fin[i], sizes[i], 700 + i, 0);
    }
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < NB; i++) {
            size_t step = MIB + MIB / 2, at = 0;
            memset(p[i], 0x5a, sizes[i]);
            tf_wticket *t = tf_writer_blob_open(w, p[i], sizes[i], &ref[i]);
            CU_ASSERT_FATAL(t != NULL);
            tf_writer_blob_avail(w, t, 0);
            for (; at + step < sizes[i] && at < 6 * MIB; at += step) {
                memcpy(p[i] + at, fin[i] + at, step);
                tf_writer_blob_avail(w, t, at + step);
            }
            memcpy(p[i] + at, fin[i] + at, sizes[i] - at);   /* the rest: posted by join */
            CU_ASSERT(tf_writer_blob_join(w, t) == TF_OK);
            ht_rule(fin[i], sizes[i], want);
            CU_ASSERT(ref[i].size == sizes[i] && memcmp(ref[i].hash, want, 16) == 0);
        }
    }
    CU_ASSERT(tf_writer_blob_open(w, p[0], MIB, &ref[0]) == NULL);   /* one piece: no ticket */
    tf_writer_get_stats(w, &ws);
    CU_ASSERT(ws.blobs_stored == NB);
    CU_ASSERT(tf_writer_close(w) == TF_OK);

    tf_reader *rd;
    CU_ASSERT_FATAL(tf_reader_open(&rd, path, NULL) == TF_OK);
    for (size_t i = 0; i < NB; i++) {
        uint8_t *got = malloc(sizes[i]);
        CU_ASSERT_FATAL(got != NULL);
        CU_ASSERT(tf_reader_blob(rd, &ref[i], 0, got, sizes[i]) == TF_OK);
        CU_ASSERT(memcmp(got, fin[i], sizes[i]) == 0);
        free(got);
        free(p[i]);
        free(fin[i]);
    }
    tf_reader_close(rd);
    unlink(path);
}

static void test_blob_tickets_avail(void)
{
    blob_tickets_avail(1);
    blob_tickets_avail(4);
}

/* Incompressible blob pieces (random bytes) are stored as they are
 * (codec 0, the sample says zstd cannot win: tf_wzstd.c): the file is the
 * raw bytes plus chunk headers, and reads back; compressible ones of the
 * same size still shrink. */
static void test_incompressible(void)
{
    for (int random = 1; random >= 0; random--) {
        char path[64];
        tt_tmp(path);
        tf_writer_opts o = { .threads = 2 };
        tf_writer *w = NULL;
        CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
        size_t n = 4 * MIB;
        uint8_t *b = malloc(n), *back = malloc(n);
        CU_ASSERT_FATAL(b && back);
        uint64_t x = 88172645463325252ull;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b[i] = random ? (uint8_t)(x >> 32) : (uint8_t)(i / 4096);
        }
        tf_blobref ref;
        CU_ASSERT(tf_writer_blob(w, b, n, &ref) == TF_OK);
        CU_ASSERT(tf_writer_close(w) == TF_OK);
        uint64_t size = tt_fsize(path);
        if (random) {
            CU_ASSERT(size >= n && size <= n + 64 * 1024);
        } else {
            CU_ASSERT(size < n / 8);
        }
        tf_reader *r = NULL;
        CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
        CU_ASSERT(tf_reader_blob(r, &ref, 0, back, n) == TF_OK);
        CU_ASSERT(memcmp(b, back, n) == 0);
        tf_reader_close(r);
        free(b);
        free(back);
        unlink(path);
    }
}

static void test_hash_writer(void)
{
    hash_writer(1);
    hash_writer(4);
}

/* The inline record lock prefetches the chunk for writing with PREFETCHW
 * only where the CPU has it: the writer's flag agrees with the kernel's
 * "3dnowprefetch" (the same CPUID bit, on Intel and AMD alike). */
static void test_prefetchw_flag(void)
{
    char path[64], line[8192];
    tf_writer *w = NULL;
    int has = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");

    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            has = strstr(line, " 3dnowprefetch") != NULL;
            break;
        }
    if (f)
        fclose(f);
    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
#if defined(__x86_64__)
    CU_ASSERT_EQUAL(((tf_wfast_ *)(void *)w)->prefetchw, has);
#else
    (void)has;
    CU_ASSERT_EQUAL(((tf_wfast_ *)(void *)w)->prefetchw, 0);
#endif
    tt_sig(w, 1, "clWork", 1);   /* a record through the inline path */
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    unlink(path);
}

/* NOTE [6, seq, 0, text] of @p n bytes of @p c */
static void big_note(tf_writer *w, uint64_t seq, char *buf, size_t n, char c)
{
    memset(buf, c, n);
    tf_enc *e = tf_writer_lock(w);
    tf_enc_array(e, 4);
    tf_enc_uint(e, 6);
    tf_enc_uint(e, seq);
    tf_enc_uint(e, 0);
    tf_enc_str(e, buf, n);
    tf_writer_unlock(w);
}

/* Records larger than a chunk and its 64 KiB of slack: the open chunk grows
 * under the record (the inline record path's cursor and record start follow
 * it), the records around it are intact, and the statistics count every
 * record and byte. Chunks of 4 KiB: the first big record comes into an
 * open chunk that holds records already, the second into a fresh one. */
static void test_big_records(void)
{
    char path[64];
    tf_writer *w = NULL;
    tf_writer_opts o = {.chunk_size = 4096, .flush_ms = 100000, .threads = 2};
    static char buf[300000];
    static const size_t sizes[3] = {200000, 70000, 300000};
    static const uint64_t at[3] = {10, 11, 30};   /* after these calls' END */

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    for (uint64_t i = 1, k = 0; i <= 50; i++) {
        tt_begin(w, i, 1, 1, 2, i);
        tt_end(w, i, 2, 0);
        for (; k < 3 && at[k] == i; k++)
            big_note(w, 1000 + k, buf, sizes[k], (char)('a' + k));
    }
    tf_writer_stats st;
    tf_writer_get_stats(w, &st);
    CU_ASSERT(st.records == 1 + 100 + 3);
    CU_ASSERT(st.record_bytes_raw > 570000 && st.record_bytes_raw < 580000);
    CU_ASSERT_FATAL(tf_writer_close(w) == TF_OK);

    tf_reader *r = NULL;
    tf_item it;
    tf_status s;
    uint64_t next = 1, k = 0;
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    while ((s = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type == TF_ITEM_CALL) {
            CU_ASSERT(it.u.call.seq == next && it.u.call.complete);
            next++;
        } else if (it.type == TF_ITEM_NOTE) {
            CU_ASSERT_FATAL(k < 3);
            CU_ASSERT(it.u.note.seq == 1000 + k && strlen(it.u.note.text) == sizes[k]);
            CU_ASSERT(it.u.note.text[0] == 'a' + (char)k && it.u.note.text[sizes[k] - 1] == 'a' + (char)k);
            CU_ASSERT(next == at[k] + 1);   /* after its call */
            k++;
        }
    }
    CU_ASSERT(s == TF_END && next == 51 && k == 3);
    tf_reader_close(r);
    unlink(path);
}

int main(void)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    s = CU_add_suite("trace-format writer workers", NULL, NULL);
    CU_add_test(s, "6 workers: contents, piece order, blobs before records at every cut", test_workers_order);
    CU_add_test(s, "1 and 6 workers write the same bytes", test_workers_same_bytes);
    CU_add_test(s, "4 producers, 8 workers: every blob and call", test_workers_producers);
    CU_add_test(s, "waited and periodic flushes, close", test_workers_flush);
    CU_add_test(s, "write error (closed pipe) with workers: failed state, no hang", test_workers_write_error);
    CU_add_test(s, "file size limit with workers: EFBIG, no SIGXFSZ", test_workers_fsize);
    CU_add_test(s, "crash flush with busy workers", test_workers_crash_flush);
    CU_add_test(s, "sink mode into a feed reader: records in lock order, begins, blobs hashed", test_sink_feed);
    CU_add_test(s, "trusted feed (one pass) and msgpack-c decode every format alike", test_feed_formats);
    CU_add_test(s, "blob hashes: whole up to 1 MiB, leaves above", test_hash_rule);
    CU_add_test(s, "incompressible blob pieces stored raw: file = bytes + headers", test_incompressible);
    CU_add_test(s, "workers hash large blobs: speculative, repeated, several windows, given refs", test_hash_writer);
    CU_add_test(s, "tickets: several pending, new and repeated blobs, several windows, small ones at begin", test_blob_tickets);
    CU_add_test(s, "tickets: bytes made available in parts while pending (open, avail, join)", test_blob_tickets_avail);
    CU_add_test(s, "records larger than a chunk and its slack: grown under the record, counted", test_big_records);
    CU_add_test(s, "PREFETCHW used only where the CPU has it", test_prefetchw_flag);
    CU_add_test(s, "record writers: every record type's bytes as FORMAT.md lists them", test_record_writers);
    return tt_run();
}

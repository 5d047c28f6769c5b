/* test_tf_grow.c — what `clrr record` reads of a trace being written
 * (tf_grow_scan: the chunk headers that appeared since the last call) and
 * the one UTF-8 fixer of the JSON writers (tf_utf8_fix). A committed trace
 * is copied into a file a few bytes at a time, as a writer would grow it:
 * after each step the totals count only whole chunks, never go down, and
 * at the end equal the reader's; another file at the path starts again;
 * a file that is not a trace is refused once and for all. */
#include <CUnit/Basic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace-format/tf.h"

#define GOLDEN "traces/api_tour-pocl.clrr"

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void test_growing(void)
{
    size_t len = 0;
    unsigned char *b = slurp(GOLDEN, &len);
    CU_ASSERT_FATAL(b != NULL && len > 1000);
    tf_reader *r = NULL;
    CU_ASSERT_FATAL(tf_reader_open(&r, GOLDEN, NULL) == TF_OK);
    CU_ASSERT_FATAL(tf_reader_scan(r) == TF_OK);
    const tf_reader_info *in = tf_reader_get_info(r);
    uint64_t raw = in->record_bytes_raw + in->blob_bytes_raw;
    uint64_t stored = in->record_bytes_stored + in->blob_bytes_stored;
    CU_ASSERT_FATAL(stored > 0 && raw > stored);   /* it compresses */

    char path[] = "/tmp/test_tf_grow.XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    tf_grow g;
    memset(&g, 0, sizeof g);
    CU_ASSERT_EQUAL(tf_grow_scan(&g, path), 0);   /* empty: not yet a trace, not refused */
    CU_ASSERT_EQUAL(g.chunks, 0);
    uint64_t last_raw = 0, last_chunks = 0, steps = 0;
    for (size_t off = 0; off < len;) {
        size_t n = len - off < 997 ? len - off : 997;
        CU_ASSERT_FATAL(write(fd, b + off, n) == (ssize_t)n);
        off += n;
        CU_ASSERT_EQUAL(tf_grow_scan(&g, path), 0);
        CU_ASSERT(g.raw >= last_raw && g.chunks >= last_chunks);
        CU_ASSERT(g.off <= off);          /* only whole chunks */
        CU_ASSERT(g.stored <= g.off);
        steps += g.chunks != last_chunks;
        last_raw = g.raw;
        last_chunks = g.chunks;
    }
    CU_ASSERT(steps > 1);                 /* seen growing, not all at the end */
    CU_ASSERT_EQUAL(g.raw, raw);
    CU_ASSERT_EQUAL(g.stored, stored);
    CU_ASSERT_EQUAL(g.chunks, in->record_chunks + in->blob_chunks + (in->has_index ? 1 : 0));

    /* another file at the path: counted from its start */
    close(fd);
    unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, b, len / 2) == (ssize_t)(len / 2));
    CU_ASSERT_EQUAL(tf_grow_scan(&g, path), 0);
    CU_ASSERT(g.raw < raw && g.off <= len / 2);
    close(fd);
    unlink(path);
    tf_reader_close(r);
    free(b);
}

static void test_not_a_trace(void)
{
    char path[] = "/tmp/test_tf_grow.XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    static const char text[] = "this is not a trace, but long enough to have a header\n";
    CU_ASSERT_FATAL(write(fd, text, sizeof text) == (ssize_t)sizeof text);
    tf_grow g;
    memset(&g, 0, sizeof g);
    CU_ASSERT_EQUAL(tf_grow_scan(&g, path), -1);
    CU_ASSERT(g.bad);
    CU_ASSERT_EQUAL(tf_grow_scan(&g, path), -1);
    CU_ASSERT_EQUAL(g.raw + g.stored + g.chunks, 0);
    memset(&g, 0, sizeof g);
    CU_ASSERT_EQUAL(tf_grow_scan(&g, "/nonexistent/dir/x.clrr"), 0);   /* not there yet */
    close(fd);
    unlink(path);
}

static int fixed(const char *in, size_t len, const char *want)
{
    char out[64];
    size_t n = tf_utf8_fix(out, in, len);
    return n == strlen(want) && !memcmp(out, want, n);
}

static void test_utf8(void)
{
    CU_ASSERT(fixed("plain", 5, "plain"));
    CU_ASSERT(fixed("caf\xc3\xa9 \xce\xbb \xf0\x9f\x98\x80", 13, "caf\xc3\xa9 \xce\xbb \xf0\x9f\x98\x80"));
    CU_ASSERT(fixed("a\xff" "b", 3, "a\xef\xbf\xbd" "b"));             /* a byte never in UTF-8 */
    CU_ASSERT(fixed("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd"));       /* overlong '/' */
    CU_ASSERT(fixed("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));   /* a surrogate */
    CU_ASSERT(fixed("\xf4\x90\x80\x80", 4,
                    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));       /* past U+10FFFF */
    CU_ASSERT(fixed("x\xe2\x82", 3, "x\xef\xbf\xbd\xef\xbf\xbd"));      /* cut short */
    CU_ASSERT_EQUAL(tf_utf8_valid("ok\xc3\xa9\xff", 5), 4);
    CU_ASSERT_EQUAL(tf_utf8_valid("", 0), 0);
    CU_ASSERT_EQUAL(tf_utf8_seq("\xe2\x82\xac", 3), 3);
    CU_ASSERT_EQUAL(tf_utf8_seq("\xe2\x82\xac", 2), 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("tf_grow", NULL, NULL);
    CU_add_test(s, "a growing trace: whole chunks, totals as the reader's", test_growing);
    CU_add_test(s, "not a trace: refused once and for all", test_not_a_trace);
    CU_add_test(s, "UTF-8 kept, other bytes U+FFFD", test_utf8);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}

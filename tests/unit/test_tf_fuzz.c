/* test_tf_fuzz.c — fuzz target for the trace reader, and the driver that
 * runs its corpus as an ordinary unit test (zstd's regression_driver.c).
 *
 * Input: a whole trace file, or, when the first byte is 'R', the bytes of
 * one RECORD chunk payload that the target wraps in a valid file header and
 * chunk header (correct checksums), so that mutations reach the msgpack
 * walker and the record decoder instead of dying at a checksum.
 *
 * Unit test (default): every file in tests/fuzz-corpus/trace-format/ (or
 * $TF_FUZZ_CORPUS) goes through the target; the oracle is "no crash, no
 * sanitizer report" (make SAN=1 test-unit).
 * libFuzzer target:
 *   clang -DTF_LIBFUZZER -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -I. \
 *     tests/unit/test_tf_fuzz.c trace-format/tf_*.c -lmsgpackc -lxxhash -lzstd -pthread -o fuzz_tf
 *   ./fuzz_tf -max_len=4096 tests/fuzz-corpus/trace-format
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "trace-format/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static void fz_put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i); }
static void fz_put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i); }

/* Writes the input as a trace file (see the file comment). */
static int fz_write(const char *path, const uint8_t *d, size_t n)
{
    uint8_t h[72] = { 0 }, *c = h + 32;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), ok;

    if (fd < 0)
        return -1;
    if (n > 0 && d[0] == 'R') {
        d++, n--;
        memcpy(h, "\x89" "CLRR\r\n\x1a\n", 9);
        h[10] = 1;
        h[14] = 32;
        fz_put32(h + 28, (uint32_t)XXH3_64bits(h, 28));
        memcpy(c, "\x89" "CHK", 4);
        c[4] = 1;
        fz_put64(c + 8, n);
        fz_put64(c + 16, n);
        fz_put64(c + 24, XXH3_64bits(d, n));
        fz_put32(c + 36, (uint32_t)XXH3_64bits(c, 40));
        ok = write(fd, h, sizeof(h)) == (ssize_t)sizeof(h);
    } else {
        ok = 1;
    }
    ok = ok && write(fd, d, n) == (ssize_t)n;
    close(fd);
    return ok ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static char path[64];
    tf_reader_opts o = { .max_memory = 64 << 20, .max_chunk = 8 << 20 };
    tf_reader *r = NULL;
    tf_item it;
    uint8_t buf[4096];
    int k = 0;

    if (!path[0])
        snprintf(path, sizeof(path), "/tmp/tf_fuzz.%d", (int)getpid());
    if (fz_write(path, d, n) != 0 || tf_reader_open(&r, path, &o) != TF_OK) {
        unlink(path);
        return 0;
    }
    tf_reader_env(r);
    while (tf_reader_next(r, &it) == TF_OK && k++ < 100000) {
        if (it.type == TF_ITEM_DATA && it.u.data.value.type == TF_BLOB) {
            const tf_blobref *b = &it.u.data.value.v.blob;
            tf_reader_blob(r, b, 0, buf, b->size < sizeof(buf) ? (size_t)b->size : sizeof(buf));
        }
        if (it.type == TF_ITEM_CALL)
            for (uint32_t i = 0; i < it.u.call.sig->nparams; i++)
                (void)it.u.call.args[i].type;
    }
    tf_reader_scan(r);
    tf_reader_rewind(r);
    tf_reader_next(r, &it);
    tf_reader_close(r);
    unlink(path);
    return 0;
}

#ifndef TF_LIBFUZZER
#include <CUnit/Basic.h>

static void test_corpus(void)
{
    const char *dir = getenv("TF_FUZZ_CORPUS") ? getenv("TF_FUZZ_CORPUS") : "tests/fuzz-corpus/trace-format";
    DIR *dp = opendir(dir);
    struct dirent *de;
    size_t files = 0;

    CU_ASSERT_FATAL(dp != NULL);
    while ((de = readdir(dp)) != NULL) {
        char path[512];
        FILE *f;
        uint8_t *d;
        long n;
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if ((f = fopen(path, "rb")) == NULL)
            continue;
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        rewind(f);
        d = malloc(n > 0 ? (size_t)n : 1);
        if (d && fread(d, 1, (size_t)n, f) == (size_t)n) {
            LLVMFuzzerTestOneInput(d, (size_t)n);
            files++;
        }
        free(d);
        fclose(f);
    }
    closedir(dp);
    CU_ASSERT(files > 0);
}

int main(void)
{
    CU_pSuite s;
    unsigned failures;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("trace-format: fuzz corpus", NULL, NULL);
    CU_add_test(s, "every corpus file reads without a crash", test_corpus);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
#endif

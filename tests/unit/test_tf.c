/* test_tf.c — trace-format: writer and reader behaviour. Round trips of
 * every record and value type, concurrent writers, blob dedup, big blobs,
 * compression, byte-shuffled pieces, index and scan, writer failure,
 * memory budget, periodic and crash flushes. Robustness against damaged files is in test_tf_corrupt.c. */
#include "test_tf_common.h"

#include <errno.h>
#include <msgpack.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <zstd.h>

#define MIB ((size_t)1 << 20)

static double tt_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* -------------------------------------------------------------- round trip */

#define RT_NP 10

static void rt_write(const char *path, tf_blobref *ref, uint8_t *small)
{
    tf_writer *w = NULL;
    tf_enc *e;
    static const uint8_t bin3[3] = { 0, 0xff, 7 };

    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    tt_fill(small, 100, 1, 0);
    CU_ASSERT(tf_writer_blob(w, small, 100, ref) == TF_OK);

    e = tf_writer_lock(w);                       /* ENV [0, map] */
    tf_enc_array(e, 2);
    tf_enc_uint(e, 0);
    tf_enc_map(e, 3);
    tf_enc_cstr(e, "version");
    tf_enc_cstr(e, "0.1.0");
    tf_enc_cstr(e, "argv");
    tf_enc_array(e, 2);
    tf_enc_cstr(e, "./app");
    tf_enc_cstr(e, "-x");
    tf_enc_cstr(e, "pid");
    tf_enc_uint(e, 1234);
    tf_writer_unlock(w);

    tt_sig(w, 7, "clEverything", RT_NP);

    e = tf_writer_lock(w);                       /* BEGIN with one value of each type */
    tf_enc_array(e, 7);
    tf_enc_uint(e, 2);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, 3);
    tf_enc_uint(e, 7);
    tf_enc_int(e, 123456789);
    tf_enc_array(e, RT_NP);
    tf_enc_nil(e);
    tf_enc_bool(e, 1);
    tf_enc_int(e, -5);
    tf_enc_uint(e, UINT64_MAX);
    tf_enc_f64(e, 3.25);
    tf_enc_str(e, "hello", 5);
    tf_enc_bin(e, bin3, 3);
    tf_enc_array(e, 2);
    tf_enc_uint(e, 1);
    tf_enc_int(e, INT64_MIN);
    tf_enc_map(e, 1);
    tf_enc_cstr(e, "k");
    tf_enc_int(e, -1);
    tf_enc_blobref(e, ref);
    tf_enc_map(e, 1);                            /* pre */
    tf_enc_cstr(e, "note");
    tf_enc_cstr(e, NULL);
    tf_writer_unlock(w);

    tt_begin(w, 2, 4, 7, RT_NP, 0);              /* never ends */

    e = tf_writer_lock(w);                       /* END of call 1 */
    tf_enc_array(e, 6);
    tf_enc_uint(e, 3);
    tf_enc_uint(e, 1);
    tf_enc_int(e, 123456999);
    tf_enc_int(e, -30);
    tf_enc_array(e, RT_NP);
    for (int i = 0; i < RT_NP; i++)
        tf_enc_uint(e, 90 + (unsigned)i);
    tf_enc_map(e, 1);
    tf_enc_cstr(e, "ok");
    tf_enc_bool(e, 0);
    tf_writer_unlock(w);

    e = tf_writer_lock(w);                       /* DEVTIME */
    tf_enc_array(e, 6);
    tf_enc_uint(e, 4);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, 10);
    tf_enc_uint(e, 20);
    tf_enc_uint(e, 30);
    tf_enc_uint(e, 40);
    tf_writer_unlock(w);

    e = tf_writer_lock(w);                       /* DATA */
    tf_enc_array(e, 4);
    tf_enc_uint(e, 5);
    tf_enc_uint(e, 1);
    tf_enc_cstr(e, "read");
    tf_enc_bin(e, bin3, 3);
    tf_writer_unlock(w);

    e = tf_writer_lock(w);                       /* NOTE */
    tf_enc_array(e, 4);
    tf_enc_uint(e, 6);
    tf_enc_uint(e, 0);
    tf_enc_uint(e, 42);
    tf_enc_cstr(e, "cannot capture");
    tf_writer_unlock(w);

    e = tf_writer_lock(w);                       /* a record type from the future */
    tf_enc_array(e, 3);
    tf_enc_uint(e, 9);
    tf_enc_cstr(e, "future");
    tf_enc_f64(e, 1.5);
    tf_writer_unlock(w);

    e = tf_writer_lock(w);                       /* DEVTIME with an extra field */
    tf_enc_array(e, 7);
    tf_enc_uint(e, 4);
    tf_enc_uint(e, 2);
    for (int i = 0; i < 4; i++)
        tf_enc_uint(e, 5);
    tf_enc_cstr(e, "extra");
    tf_writer_unlock(w);

    CU_ASSERT(tf_writer_close(w) == TF_OK);
}

static void rt_check_call1(const tf_call *c, const tf_blobref *ref)
{
    const tf_value *a = c->args, *v;
    uint64_t u;
    int64_t i;

    CU_ASSERT(c->seq == 1 && c->tid == 3 && c->complete == 1);
    CU_ASSERT(c->t_begin == 123456789 && c->t_end == 123456999);
    CU_ASSERT_FATAL(c->sig != NULL);
    CU_ASSERT(strcmp(c->sig->name, "clEverything") == 0 && c->sig->nparams == RT_NP);
    CU_ASSERT(strcmp(c->sig->params[3].name, "p3") == 0 && strcmp(c->sig->params[3].type, "cl_uint") == 0);
    CU_ASSERT(c->sig->params[3].kind == TF_KIND_VALUE && c->sig->params[3].dir == TF_DIR_IN);
    CU_ASSERT(a[0].type == TF_NIL);
    CU_ASSERT(a[1].type == TF_BOOL && a[1].v.b == 1);
    CU_ASSERT(a[2].type == TF_INT && a[2].v.i == -5);
    CU_ASSERT(a[3].type == TF_UINT && a[3].v.u == UINT64_MAX);
    CU_ASSERT(!tf_value_i64(&a[3], &i) && tf_value_u64(&a[3], &u) && u == UINT64_MAX);
    CU_ASSERT(a[4].type == TF_F64 && a[4].v.f == 3.25);
    CU_ASSERT(a[5].type == TF_STR && a[5].v.str.len == 5 && memcmp(a[5].v.str.ptr, "hello", 5) == 0);
    CU_ASSERT(a[6].type == TF_BIN && a[6].v.str.len == 3 && (uint8_t)a[6].v.str.ptr[1] == 0xff);
    CU_ASSERT(a[7].type == TF_ARRAY && a[7].v.arr.n == 2);
    CU_ASSERT(a[7].v.arr.items[0].type == TF_UINT && a[7].v.arr.items[1].v.i == INT64_MIN);
    CU_ASSERT(a[8].type == TF_MAP && (v = tf_map_get(&a[8], "k")) != NULL && tf_value_i64(v, &i) && i == -1);
    CU_ASSERT(!tf_value_u64(tf_map_get(&a[8], "k"), &u));
    CU_ASSERT(tf_map_get(&a[8], "nope") == NULL && tf_map_get(&a[7], "k") == NULL);
    CU_ASSERT(a[9].type == TF_BLOB && a[9].v.blob.size == 100 && memcmp(a[9].v.blob.hash, ref->hash, 16) == 0);
    CU_ASSERT(c->ret.type == TF_INT && c->ret.v.i == -30);
    CU_ASSERT_FATAL(c->outs != NULL);
    CU_ASSERT(c->outs[9].type == TF_UINT && c->outs[9].v.u == 99);
    CU_ASSERT_FATAL(c->pre != NULL);
    CU_ASSERT((v = tf_map_get(c->pre, "note")) != NULL && v->type == TF_NIL);
    CU_ASSERT(c->post != NULL && (v = tf_map_get(c->post, "ok")) != NULL && v->type == TF_BOOL && !v->v.b);
}

static void test_roundtrip(void)
{
    char path[64];
    tf_blobref ref;
    uint8_t small[100], back[100];
    tf_reader *r = NULL;
    tf_item it;
    const tf_value *env, *v;
    uint64_t u;

    tt_tmp(path);
    rt_write(path, &ref, small);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(strcmp(tf_reader_open_error(), "") == 0);
    CU_ASSERT(tf_reader_get_info(r)->major == TF_FORMAT_MAJOR && tf_reader_get_info(r)->minor == TF_FORMAT_MINOR);
    env = tf_reader_env(r);
    CU_ASSERT_FATAL(env != NULL && env->type == TF_MAP);
    CU_ASSERT((v = tf_map_get(env, "version")) && v->type == TF_STR && v->v.str.len == 5);
    CU_ASSERT((v = tf_map_get(env, "pid")) && tf_value_u64(v, &u) && u == 1234);
    CU_ASSERT((v = tf_map_get(env, "argv")) && v->type == TF_ARRAY && v->v.arr.n == 2);

    for (int pass = 0; pass < 2; pass++) {
        CU_ASSERT_FATAL(tf_reader_next(r, &it) == TF_OK);
        CU_ASSERT_FATAL(it.type == TF_ITEM_CALL);
        rt_check_call1(&it.u.call, &ref);
        CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_DEVTIME);
        CU_ASSERT(it.u.devtime.seq == 1 && it.u.devtime.queued == 10 && it.u.devtime.end == 40);
        CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_DATA);
        CU_ASSERT(strcmp(it.u.data.key, "read") == 0 && it.u.data.value.type == TF_BIN);
        CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_NOTE);
        CU_ASSERT(it.u.note.object == 42 && strcmp(it.u.note.text, "cannot capture") == 0);
        CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_DEVTIME && it.u.devtime.seq == 2);
        /* call 2 has begun, not ended: its DEVTIME came first */
        CU_ASSERT(tf_reader_call_open(r, 2) == 1 && tf_reader_call_open(r, 1) == 0);
        CU_ASSERT(tf_reader_call_open(r, 3) == 0 && tf_reader_call_open(NULL, 2) == 0);
        CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_CALL);
        CU_ASSERT(it.u.call.seq == 2 && it.u.call.complete == 0 && it.u.call.outs == NULL);
        CU_ASSERT(tf_reader_call_open(r, 2) == 0);
        CU_ASSERT(it.u.call.ret.type == TF_NIL && it.u.call.t_end == 0 && it.u.call.pre == NULL);
        CU_ASSERT(it.u.call.args[4].type == TF_UINT && it.u.call.args[4].v.u == 4);
        CU_ASSERT(tf_reader_next(r, &it) == TF_END);
        CU_ASSERT(tf_reader_next(r, &it) == TF_END);
        CU_ASSERT(tf_reader_rewind(r) == TF_OK);
    }
    CU_ASSERT(tf_reader_sig(r, 7) != NULL && tf_reader_sig(r, 8) == NULL);
    CU_ASSERT(tf_reader_blob(r, &ref, 0, back, 100) == TF_OK && memcmp(back, small, 100) == 0);
    CU_ASSERT(tf_reader_get_info(r)->has_index == 1 && tf_reader_get_info(r)->truncated == 0);
    CU_ASSERT(tf_reader_get_info(r)->blobs == 1 && tf_reader_get_info(r)->record_chunks == 1);
    CU_ASSERT(tf_reader_get_info(r)->valid_bytes == tt_fsize(path));
    tf_reader_close(r);
    unlink(path);
}

/* DEVICES (1.1): one device map of @p name with id @p id */
static void dv_device(tf_enc *e, uint64_t id, const char *name)
{
    tf_enc_map(e, 2);
    tf_enc_cstr(e, "id");
    tf_enc_uint(e, id);
    tf_enc_cstr(e, "name");
    tf_enc_cstr(e, name);
}

static void dv_devices(tf_writer *w, uint64_t plat, int n, uint64_t first, const char *name, int bad)
{
    tf_enc *e = tf_writer_lock(w);
    tf_enc_array(e, 3);
    tf_enc_uint(e, 7);
    tf_enc_uint(e, plat);
    tf_enc_array(e, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        if (bad)
            tf_enc_uint(e, 5);
        else
            dv_device(e, first + (uint64_t)i, name);
    }
    tf_writer_unlock(w);
}

/* the devices under platform @p pid in the environment: count, first id */
static int dv_env_devices(tf_reader *r, uint64_t pid, uint64_t *first)
{
    const tf_value *plats = tf_map_get(tf_reader_env(r), "platforms");
    for (uint32_t i = 0; plats && plats->type == TF_ARRAY && i < plats->v.arr.n; i++) {
        uint64_t id = 0;
        if (!tf_value_u64(tf_map_get(&plats->v.arr.items[i], "id"), &id) || id != pid)
            continue;
        const tf_value *d = tf_map_get(&plats->v.arr.items[i], "devices");
        if (!d)
            return -1;
        if (d->type != TF_ARRAY)
            return -2;
        if (d->v.arr.n && first)
            tf_value_u64(tf_map_get(&d->v.arr.items[0], "id"), first);
        return (int)d->v.arr.n;
    }
    return -3;
}

static void test_devices_record(void)
{
    char path[64];
    tf_writer *w = NULL;
    tf_reader *r = NULL;
    tf_item it;
    uint64_t first = 0;

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    tf_enc *e = tf_writer_lock(w);               /* ENV: two platforms, no devices */
    tf_enc_array(e, 2);
    tf_enc_uint(e, 0);
    tf_enc_map(e, 2);
    tf_enc_cstr(e, "pid");
    tf_enc_uint(e, 7);
    tf_enc_cstr(e, "platforms");
    tf_enc_array(e, 2);
    for (uint64_t p = 1; p <= 2; p++) {
        tf_enc_map(e, 2);
        tf_enc_cstr(e, "id");
        tf_enc_uint(e, p);
        tf_enc_cstr(e, "name");
        tf_enc_cstr(e, p == 1 ? "one" : "two");
    }
    tf_writer_unlock(w);
    dv_devices(w, 2, 2, 10, "gpu", 0);           /* platform 2's devices */
    dv_devices(w, 9, 1, 30, "ghost", 0);         /* a platform ENV does not list */
    dv_devices(w, 2, 1, 20, "again", 0);         /* platform 2 again: replaces */
    CU_ASSERT(tf_writer_close(w) == TF_OK);

    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(dv_env_devices(r, 1, NULL) == -1 && dv_env_devices(r, 2, NULL) == -1);
    for (int pass = 0; pass < 2; pass++) {
        CU_ASSERT_FATAL(tf_reader_next(r, &it) == TF_OK);
        CU_ASSERT(it.type == TF_ITEM_DEVICES && it.u.devices.platform == 2);
        CU_ASSERT(it.u.devices.devices && it.u.devices.devices->type == TF_ARRAY && it.u.devices.devices->v.arr.n == 2);
        CU_ASSERT(dv_env_devices(r, 2, &first) == 2 && first == 10);
        CU_ASSERT(dv_env_devices(r, 1, NULL) == -1);
        CU_ASSERT(tf_value_u64(tf_map_get(tf_reader_env(r), "pid"), &first) && first == 7);
        CU_ASSERT_FATAL(tf_reader_next(r, &it) == TF_OK);
        CU_ASSERT(it.type == TF_ITEM_DEVICES && it.u.devices.platform == 9 && it.u.devices.devices->v.arr.n == 1);
        CU_ASSERT(dv_env_devices(r, 9, NULL) == -3);
        CU_ASSERT_FATAL(tf_reader_next(r, &it) == TF_OK);
        CU_ASSERT(it.type == TF_ITEM_DEVICES && dv_env_devices(r, 2, &first) == 1 && first == 20);
        CU_ASSERT(tf_reader_next(r, &it) == TF_END);
        CU_ASSERT(tf_reader_rewind(r) == TF_OK);
    }
    tf_reader_close(r);

    /* a DEVICES whose devices are not maps is corrupt */
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    e = tf_writer_lock(w);
    tf_enc_array(e, 2);
    tf_enc_uint(e, 0);
    tf_enc_map(e, 0);
    tf_writer_unlock(w);
    dv_devices(w, 1, 1, 0, NULL, 1);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(tf_reader_next(r, &it) == TF_ERR_CORRUPT);
    CU_ASSERT(strstr(tf_reader_error(r), "DEVICES") != NULL);
    tf_reader_close(r);
    unlink(path);
}

static void test_misc_api(void)
{
    tf_value v = { .type = TF_INT, .v.i = -1 };
    uint64_t u;
    int64_t i;
    tf_blobref a, b;

    CU_ASSERT(!tf_value_u64(&v, &u) && tf_value_i64(&v, &i) && i == -1);
    v.type = TF_BOOL;
    v.v.b = 1;
    CU_ASSERT(tf_value_u64(&v, &u) && u == 1);
    v.type = TF_STR;
    CU_ASSERT(!tf_value_u64(&v, &u) && !tf_value_i64(&v, &i) && !tf_value_u64(NULL, &u));
    CU_ASSERT(tf_map_get(NULL, "x") == NULL);
    for (int s = TF_ERR_FAILED; s <= TF_END; s++)
        CU_ASSERT(tf_strerror((tf_status)s) != NULL && *tf_strerror((tf_status)s));
    tf_hash("abc", 3, &a);
    tf_hash("abd", 3, &b);
    CU_ASSERT(a.size == 3 && memcmp(a.hash, b.hash, 16) != 0);
    CU_ASSERT(tf_writer_close(NULL) == TF_OK);
    tf_reader_close(NULL);
    CU_ASSERT(tf_writer_open(NULL, "/tmp/x", NULL) == TF_ERR_ARG);
}

/* ------------------------------------------- the hash leaves no AVX state */

#if defined(__x86_64__)
#include <cpuid.h>

/* XGETBV with ECX = 1 (XINUSE) is there: CPUID.(EAX=0DH, ECX=1):EAX[2]. */
static int xinuse_known(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(0xd, 1, &a, &b, &c, &d) && (a & 4) && __builtin_cpu_supports("avx2");
}

/* The state components not in their initial configuration; bit 2: the
 * upper halves of the YMM registers. */
static uint64_t xinuse(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    return ((uint64_t)hi << 32) | lo;
}
#endif

/* The application's thread hashes what it hands the driver; the AVX2 hash
 * must leave the upper YMM halves clean (vzeroupper), or every SSE
 * instruction the application runs after it is slowed down (ep's host
 * reference took 20 times as long under the recorder). */
static void test_hash_upper_clean(void)
{
#if defined(__x86_64__)
    static uint8_t buf[3 << 20];
    tf_blobref r;
    uint64_t in_use;

    if (!xinuse_known()) {
        printf("(no AVX2 or no XINUSE here: not checked) ");
        return;
    }
    memset(buf, 7, sizeof buf);
    tf_hash(buf, 100000, &r);
    in_use = xinuse();
    CU_ASSERT((in_use & 4) == 0);
    tf_hash(buf, sizeof buf, &r);
    in_use = xinuse();
    CU_ASSERT((in_use & 4) == 0);
#endif
}

/* --------------------------------------- encoder bytes == msgpack-c's */

/* Encodes the same values through tf_enc_* and through msgpack-c's
 * msgpack_packer; calls @p both once per value with the encoder to use. */
typedef struct enc_pair { tf_enc *e; msgpack_packer *pk; } enc_pair;

static void enc_values(enc_pair *x, char *big)
{
    static const uint64_t us[] = { 0, 1, 127, 128, 255, 256, 65535, 65536, UINT32_MAX,
                                   (uint64_t)UINT32_MAX + 1, UINT64_MAX };
    static const int64_t is[] = { 0, 5, 127, 128, 70000, -1, -31, -32, -33, -127, -128, -129, -32767,
                                  -32768, -32769, INT32_MIN, (int64_t)INT32_MIN - 1, INT64_MIN, INT64_MAX };
    static const size_t lens[] = { 0, 1, 31, 32, 255, 256, 65535, 65536 };
    static const uint32_t counts[] = { 0, 1, 15, 16, 65535, 65536 };
    static const double fs[] = { 0.0, -1.5, 1e300 };
    tf_blobref b;

    tf_hash("blob", 4, &b);
    for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++) {
        tf_enc_uint(x->e, us[i]);
        msgpack_pack_uint64(x->pk, us[i]);
    }
    for (size_t i = 0; i < sizeof(is) / sizeof(is[0]); i++) {
        tf_enc_int(x->e, is[i]);
        msgpack_pack_int64(x->pk, is[i]);
    }
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        tf_enc_str(x->e, big, lens[i]);
        msgpack_pack_str_with_body(x->pk, big, lens[i]);
        tf_enc_bin(x->e, big, lens[i]);
        msgpack_pack_bin_with_body(x->pk, big, lens[i]);
    }
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        tf_enc_array(x->e, counts[i]);
        msgpack_pack_array(x->pk, counts[i]);
        tf_enc_map(x->e, counts[i]);
        msgpack_pack_map(x->pk, counts[i]);
        for (uint32_t k = 0; k < 3 * counts[i]; k++) {   /* the array's items, the map's pairs */
            tf_enc_nil(x->e);
            msgpack_pack_nil(x->pk);
        }
    }
    for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
        tf_enc_f64(x->e, fs[i]);
        msgpack_pack_double(x->pk, fs[i]);
    }
    tf_enc_bool(x->e, 1);
    msgpack_pack_true(x->pk);
    tf_enc_bool(x->e, 0);
    msgpack_pack_false(x->pk);
    tf_enc_cstr(x->e, NULL);
    msgpack_pack_nil(x->pk);
    tf_enc_cstr(x->e, "clFinish");
    msgpack_pack_str_with_body(x->pk, "clFinish", 8);
    tf_enc_blobref(x->e, &b);
    {
        uint8_t body[24];
        memcpy(body, b.hash, 16);
        for (int k = 0; k < 8; k++)
            body[16 + k] = (uint8_t)(b.size >> 8 * k);
        msgpack_pack_ext_with_body(x->pk, body, 24, 1);
    }
}

static void test_encoder_bytes(void)
{
    char path[64], *big = malloc(65536);
    tf_writer *w = NULL;
    tf_writer_opts o = { .flush_ms = 100000, .chunk_size = 64 << 20 };
    msgpack_sbuffer sb;
    msgpack_packer pk;
    enc_pair x;
    uint8_t *file;
    FILE *f;
    size_t n;

    memset(big, 'q', 65536);
    tt_tmp(path);
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    x.e = tf_writer_lock(w);
    x.pk = &pk;
    enc_values(&x, big);
    tf_writer_unlock(w);
    tf_writer_crash_flush(w, 5000);               /* the open chunk goes out uncompressed */

    n = (size_t)tt_fsize(path);
    CU_ASSERT_FATAL(n == 32 + 40 + sb.size);
    file = malloc(n);
    f = fopen(path, "rb");
    CU_ASSERT_FATAL(f && fread(file, 1, n, f) == n);
    fclose(f);
    CU_ASSERT(file[32 + 4] == 1 && file[32 + 5] == 0);   /* a RECORD chunk, codec none */
    CU_ASSERT(memcmp(file + 72, sb.data, sb.size) == 0);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    msgpack_sbuffer_destroy(&sb);
    free(file);
    free(big);
    unlink(path);
}

/* ------------------------------------------------------------ many threads */

#define MT_THREADS 4
#define MT_PER     20000

static void *mt_body(void *arg)
{
    tf_writer *w = *(tf_writer **)((void **)arg)[0];
    uint64_t t = (uint64_t)(uintptr_t)((void **)arg)[1];

    for (uint64_t i = 0; i < MT_PER; i++) {
        uint64_t seq = t * 1000000 + i + 1;
        tt_begin(w, seq, t + 1, 1, 2, i);
        tt_end(w, seq, 2, 0);
    }
    return NULL;
}

static void test_threads(void)
{
    char path[64];
    tf_writer *w = NULL;
    tf_writer_opts o = { .chunk_size = 16 << 10 };
    pthread_t th[MT_THREADS];
    void *args[MT_THREADS][2];
    tf_writer_stats st;
    uint64_t last[MT_THREADS] = { 0 };
    size_t count[MT_THREADS] = { 0 };
    tt_read rd;
    int ordered = 1;

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    for (uintptr_t t = 0; t < MT_THREADS; t++) {
        args[t][0] = &w;
        args[t][1] = (void *)t;
        CU_ASSERT_FATAL(pthread_create(&th[t], NULL, mt_body, args[t]) == 0);
    }
    for (int t = 0; t < MT_THREADS; t++)
        pthread_join(th[t], NULL);
    tf_writer_get_stats(w, &st);
    CU_ASSERT(st.records == 1 + 2 * MT_THREADS * MT_PER);
    CU_ASSERT(tf_writer_close(w) == TF_OK);

    rd = tt_read_all(path, NULL, NULL);
    CU_ASSERT(rd.status == TF_END);
    CU_ASSERT(rd.ncalls == MT_THREADS * MT_PER && rd.ncomplete == rd.ncalls);
    for (size_t i = 0; i < rd.ncalls; i++) {
        uint64_t t = rd.seqs[i] / 1000000;
        CU_ASSERT_FATAL(t < MT_THREADS);
        if (rd.seqs[i] <= last[t])
            ordered = 0;
        last[t] = rd.seqs[i];
        count[t]++;
    }
    CU_ASSERT(ordered);
    for (int t = 0; t < MT_THREADS; t++)
        CU_ASSERT(count[t] == MT_PER && last[t] == (uint64_t)t * 1000000 + MT_PER);
    tt_read_free(&rd);
    unlink(path);
}

/* ------------------------------------------------------------------ blobs */

static void test_dedup(void)
{
    char path[64];
    size_t n = 3 * MIB;
    uint8_t *data = malloc(n), *back = malloc(n);
    tf_writer *w = NULL;
    tf_reader *r = NULL;
    tf_blobref ref, ref2;
    tf_writer_stats st;

    tt_tmp(path);
    tt_fill(data, n, 42, 0);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    for (int i = 0; i < 100; i++) {
        CU_ASSERT(tf_writer_blob(w, data, n, i ? &ref2 : &ref) == TF_OK);
        if (i) {
            CU_ASSERT(memcmp(&ref, &ref2, sizeof(ref)) == 0);
        }
    }
    CU_ASSERT(tf_writer_blob(w, data, 0, &ref2) == TF_OK && ref2.size == 0);
    tf_writer_get_stats(w, &st);
    CU_ASSERT(st.blob_calls == 101 && st.blob_bytes_in == 100 * (uint64_t)n);
    CU_ASSERT(st.blobs_stored == 1 && st.blob_bytes_stored == n);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    CU_ASSERT(tt_fsize(path) > n && tt_fsize(path) < n + 64 * 1024);

    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    memset(back, 0, n);
    CU_ASSERT(tf_reader_blob(r, &ref, 0, back, n) == TF_OK && memcmp(back, data, n) == 0);
    CU_ASSERT(tf_reader_blob(r, &ref2, 0, back, 0) == TF_OK);
    CU_ASSERT(tf_reader_get_info(r)->blobs == 1 && tf_reader_get_info(r)->blob_chunks == 3);
    CU_ASSERT(tf_reader_get_info(r)->blob_bytes_raw == n);
    tf_reader_close(r);
    unlink(path);
    free(data);
    free(back);
}

/* Reads @p ref of @p size bytes back from @p path in whole and around every
 * piece boundary; expects the index when @p indexed. */
static void big_check(const char *path, const tf_blobref *ref, const uint8_t *data, size_t size, int indexed)
{
    tf_reader *r = NULL;
    uint8_t *back = malloc(size), two[2];
    tf_blobref bad = *ref;
    int ok = 1;

    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(tf_reader_get_info(r)->has_index == indexed);
    for (size_t k = 1; k * TF_BLOB_PIECE < size; k++) {
        size_t off = k * TF_BLOB_PIECE - 1;
        if (tf_reader_blob(r, ref, off, two, 2) != TF_OK || memcmp(two, data + off, 2) != 0)
            ok = 0;
    }
    CU_ASSERT(ok);
    CU_ASSERT(tf_reader_blob(r, ref, size - 1, two, 1) == TF_OK && two[0] == data[size - 1]);
    CU_ASSERT(tf_reader_blob(r, ref, 0, back, size) == TF_OK && memcmp(back, data, size) == 0);
    CU_ASSERT(tf_reader_blob(r, ref, size, two, 0) == TF_OK);
    CU_ASSERT(tf_reader_blob(r, ref, size - 1, two, 2) == TF_ERR_ARG);
    bad.hash[0] ^= 1;
    CU_ASSERT(tf_reader_blob(r, &bad, 0, two, 1) == TF_ERR_NOT_FOUND);
    CU_ASSERT(strstr(tf_reader_error(r), "not in the trace") != NULL);
    bad = *ref;
    bad.size++;
    CU_ASSERT(tf_reader_blob(r, &bad, 0, two, 1) == TF_ERR_NOT_FOUND);
    CU_ASSERT(tf_reader_scan(r) == TF_OK);
    CU_ASSERT(tf_reader_get_info(r)->blob_chunks == (size + TF_BLOB_PIECE - 1) / TF_BLOB_PIECE);
    CU_ASSERT(tf_reader_get_info(r)->truncated == 0);
    tf_reader_close(r);
    free(back);
}

static void test_big_blob_and_index(void)
{
    char path[64];
    size_t size = 40 * MIB + 12345;
    uint8_t *data = malloc(size);
    tf_writer *w = NULL;
    tf_blobref ref;

    tt_tmp(path);
    tt_fill(data, size, 7, 0);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    CU_ASSERT(tf_writer_blob(w, data, size, &ref) == TF_OK);
    tt_sig(w, 1, "clWrite", 0);
    CU_ASSERT(tf_writer_close(w) == TF_OK);

    big_check(path, &ref, data, size, 1);
    CU_ASSERT(truncate(path, (off_t)(tt_fsize(path) - 32)) == 0);   /* no trailer: scan */
    big_check(path, &ref, data, size, 0);
    unlink(path);
    free(data);
}

static void test_compression(void)
{
    char path[64];
    size_t n = 8 * MIB;
    uint8_t *data = malloc(n), *back = malloc(n);
    tf_writer *w = NULL;
    tf_reader *r = NULL;
    tf_blobref ref;
    tf_writer_stats st;

    tt_tmp(path);
    tt_fill(data, n, 3, 1);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    CU_ASSERT(tf_writer_blob(w, data, n, &ref) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    for (uint64_t i = 1; i <= 20000; i++) {
        tt_begin(w, i, 1, 1, 2, i);
        tt_end(w, i, 2, 0);
    }
    CU_ASSERT(tf_writer_flush(w, 1) == TF_OK);
    tf_writer_get_stats(w, &st);
    CU_ASSERT(st.file_bytes == tt_fsize(path));
    CU_ASSERT(st.record_bytes_raw > 20000 * 20);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    CU_ASSERT(tt_fsize(path) < (n + st.record_bytes_raw) / 8);

    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(tf_reader_blob(r, &ref, 0, back, n) == TF_OK && memcmp(back, data, n) == 0);
    CU_ASSERT(tf_reader_get_info(r)->record_bytes_stored < tf_reader_get_info(r)->record_bytes_raw / 2);
    CU_ASSERT(tf_reader_get_info(r)->blob_bytes_stored < n / 8);
    tf_reader_close(r);
    unlink(path);
    free(data);
    free(back);
}

/* ------------------------------------------------ byte-shuffled pieces */

/* Checks every codec 2 chunk of @p path against FORMAT.md 3.2 without the
 * library's reader: its zstd frame, unshuffled by the spec's layout, is
 * the blob's bytes at piece_off (@p blobs / @p sizes / @p hashes: the
 * blobs written). @return the number of codec 2 chunks. */
static unsigned shuf_check_file(const char *path, uint8_t *const *blobs, const tf_blobref *refs, int nblobs)
{
    FILE *f = fopen(path, "rb");
    uint8_t hdr[72];
    unsigned nshuf = 0;
    long off;

    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_FATAL(fread(hdr, 1, 32, f) == 32);
    CU_ASSERT(hdr[10] == 2 && hdr[11] == 0);                     /* major 2 */
    off = hdr[14] | hdr[15] << 8;
    while (fseek(f, off, SEEK_SET) == 0 && fread(hdr, 1, 40, f) == 40 && memcmp(hdr, "\x89" "CHK", 4) == 0) {
        size_t ext = (size_t)(hdr[6] | hdr[7] << 8), stored = 0, raw = 0;
        for (int i = 7; i >= 0; i--) {
            stored = stored << 8 | hdr[8 + i];
            raw = raw << 8 | hdr[16 + i];
        }
        if (hdr[4] == 2 && hdr[5] == 2) {
            uint8_t *z = malloc(stored), *planes = malloc(raw), *bytes = malloc(raw);
            uint64_t piece_off = 0;
            int b = -1;
            CU_ASSERT_FATAL(ext >= 32 && fread(hdr + 40, 1, 32, f) == 32);
            for (int i = 7; i >= 0; i--)
                piece_off = piece_off << 8 | hdr[64 + i];
            for (int i = 0; i < nblobs; i++)
                if (memcmp(refs[i].hash, hdr + 40, 16) == 0)
                    b = i;
            CU_ASSERT_FATAL(b >= 0 && fseek(f, off + 40 + (long)ext, SEEK_SET) == 0);
            CU_ASSERT_FATAL(fread(z, 1, stored, f) == stored);
            CU_ASSERT_FATAL(ZSTD_decompress(planes, raw, z, stored) == raw);
            size_t m = raw / 4;
            for (size_t i = 0; i < raw; i++)                   /* byte k of element e is at k*m + e */
                bytes[i] = i < 4 * m ? planes[(i % 4) * m + i / 4] : planes[i];
            CU_ASSERT(memcmp(bytes, blobs[b] + piece_off, raw) == 0);
            nshuf++;
            free(z);
            free(planes);
            free(bytes);
        }
        off += 40 + (long)ext + (long)stored;
    }
    fclose(f);
    return nshuf;
}

/* Blob pieces of 4-byte numbers are stored byte-shuffled (codec 2), text
 * is not; both read back exactly, by the index and by a scan, at any
 * offset; a last piece whose length is not a multiple of 4 keeps its tail
 * bytes in place; pieces under 32 KiB are never shuffled. */
static void test_shuffle(void)
{
    char path[64];
    size_t sizes[4] = { 2 * MIB + 40003, 2 * MIB, MIB + 1000, 20000 };
    uint8_t *blobs[4], *back = malloc(3 * MIB);
    tf_blobref refs[4];
    tf_writer *w = NULL;
    tf_reader *r = NULL;
    uint32_t rng = 12345;

    for (int i = 0; i < 4; i++)
        blobs[i] = malloc(sizes[i]);
    for (size_t i = 0; i < sizes[0] / 4; i++) {                 /* a slow signal plus noise, as ints */
        rng = rng * 1664525u + 1013904223u;
        int32_t v = (int32_t)((i / 64) % 4096) + (int32_t)(rng >> 28);
        memcpy(blobs[0] + 4 * i, &v, 4);
    }
    memcpy(blobs[0] + sizes[0] - 3, "end", 3);
    tt_fill(blobs[1], sizes[1], 5, 1);                         /* text */
    for (size_t i = 0; i < sizes[2] / 4; i++) {                /* floats */
        float v = (float)(i % 5000) * 0.25f + 100.0f;
        memcpy(blobs[2] + 4 * i, &v, 4);
    }
    for (size_t i = 0; i < sizes[3]; i += 4) {                 /* a small piece of ints */
        int32_t v = (int32_t)i;
        memcpy(blobs[3] + i, &v, 4);
    }
    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    for (int i = 0; i < 4; i++)
        CU_ASSERT(tf_writer_blob(w, blobs[i], sizes[i], &refs[i]) == TF_OK);
    tt_sig(w, 1, "clWrite", 0);
    CU_ASSERT(tf_writer_close(w) == TF_OK);

    /* 8 pieces: 3 of the ints (the last 40003 bytes), 2 of text, 2 of
     * floats (the last 1000 bytes), the small one; shuffled: the ints' 3
     * and the floats' first */
    CU_ASSERT(shuf_check_file(path, blobs, refs, 4) == 4);
    for (int pass = 0; pass < 2; pass++) {
        CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
        CU_ASSERT(tf_reader_get_info(r)->major == 2);
        CU_ASSERT(tf_reader_scan(r) == TF_OK);
        CU_ASSERT(tf_reader_get_info(r)->has_index == !pass);
        CU_ASSERT(tf_reader_get_info(r)->blob_chunks == 8);
        CU_ASSERT(tf_reader_get_info(r)->blob_chunks_shuffled == 4);
        for (int i = 0; i < 4; i++) {
            memset(back, 0, sizes[i]);
            CU_ASSERT(tf_reader_blob(r, &refs[i], 0, back, sizes[i]) == TF_OK);
            CU_ASSERT(memcmp(back, blobs[i], sizes[i]) == 0);
        }
        /* across a piece boundary at odd offsets, and the tail bytes */
        CU_ASSERT(tf_reader_blob(r, &refs[0], MIB - 5, back, 11) == TF_OK && memcmp(back, blobs[0] + MIB - 5, 11) == 0);
        CU_ASSERT(tf_reader_blob(r, &refs[0], sizes[0] - 5, back, 5) == TF_OK &&
                  memcmp(back, blobs[0] + sizes[0] - 5, 5) == 0);
        tf_reader_close(r);
        CU_ASSERT(truncate(path, (off_t)(tt_fsize(path) - 32)) == 0);   /* no trailer: scan */
    }
    unlink(path);
    for (int i = 0; i < 4; i++)
        free(blobs[i]);
    free(back);
}

/* -------------------------------------------------------- writer failure */

static void test_writer_failure(void)
{
    char path[64];
    struct rlimit old, lim;
    uint8_t *data = malloc(MIB);
    tf_writer *w = NULL;
    tf_writer_opts o = { .chunk_size = 4096 };
    tf_blobref ref, want;
    tt_read rd;
    double t0, slowest = 0;

    CU_ASSERT(tf_writer_open(&w, "/dev/full", NULL) == TF_ERR_IO && w == NULL);

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    CU_ASSERT(tf_writer_flush(w, 1) == TF_OK && tf_writer_status(w) == TF_OK);
    CU_ASSERT(strcmp(tf_writer_errmsg(w), "") == 0);

    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 512 * 1024;
    CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    for (uint64_t i = 1; i <= 64; i++) {
        tt_fill(data, MIB, i, 0);
        t0 = tt_now();
        tf_writer_blob(w, data, MIB, &ref);
        tt_begin(w, i, 1, 1, 2, i);
        tt_end(w, i, 2, 0);
        if (tt_now() - t0 > slowest)
            slowest = tt_now() - t0;
        tf_hash(data, MIB, &want);
        CU_ASSERT(memcmp(&ref, &want, sizeof(ref)) == 0);   /* filled even when failed */
        if (i == 32) {
            CU_ASSERT(tf_writer_flush(w, 1) == TF_ERR_FAILED);
        }
    }
    CU_ASSERT(tf_writer_status(w) == TF_ERR_FAILED);
    CU_ASSERT(strstr(tf_writer_errmsg(w), "File too large") != NULL);
    CU_ASSERT(tf_writer_blob(w, "x", 1, &ref) == TF_ERR_FAILED && ref.size == 1);
    CU_ASSERT(slowest < 2.0);                               /* producers never block for long */
    CU_ASSERT(tf_writer_close(w) == TF_ERR_FAILED);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);

    CU_ASSERT(tt_fsize(path) <= 512 * 1024);
    rd = tt_read_all(path, NULL, NULL);                     /* what reached the file reads */
    CU_ASSERT(rd.status == TF_END);
    tt_read_free(&rd);
    unlink(path);
    free(data);
}

/* ------------------------------------------------------- shared close */

/* tf_writer_close_shared: the file is complete (index, trailer); the
 * writer stays, failed, so that a late caller returns at once. Its memory
 * stays reachable (as the recorder's global), not a leak. */
static tf_writer *shared_w;

static void test_close_shared(void)
{
    char path[64];
    tf_writer *w = NULL;
    tf_blobref ref;
    tf_reader_info info;
    tt_read rd;
    char msg[128];
    static uint8_t big[3 << 20];

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    for (uint64_t i = 1; i <= 5; i++) {
        tt_begin(w, i, 1, 1, 2, i);
        tt_end(w, i, 2, 0);
    }
    shared_w = w;
    CU_ASSERT(tf_writer_close_shared(w, msg, sizeof msg) == TF_OK && msg[0] == 0);
    CU_ASSERT(tf_writer_status(w) == TF_ERR_FAILED);
    CU_ASSERT(strcmp(tf_writer_errmsg(w), "closed") == 0);
    tt_begin(w, 6, 1, 1, 2, 6);                             /* a late call: dropped */
    tt_end(w, 6, 2, 0);
    CU_ASSERT(tf_writer_blob(w, big, sizeof big, &ref) == TF_ERR_FAILED);
    CU_ASSERT(tf_writer_flush(w, 1) == TF_ERR_FAILED);
    rd = tt_read_all(path, NULL, &info);
    CU_ASSERT(rd.status == TF_END && rd.ncalls == 5 && rd.ncomplete == 5);
    CU_ASSERT(info.has_index);
    tt_read_free(&rd);
    unlink(path);
}

/* ---------------------------------------------------------- memory budget */

/* The trace goes through a FIFO whose reader does not read until a
 * producer has waited on the budget (or 30 s have passed): the writer's
 * worker blocks in write(2) with its job still charged, so the wait does
 * not depend on how fast the workers compress. Then the reader copies
 * everything to the file. */
typedef struct {
    const char *fifo, *path;
    tf_writer *_Atomic w;
    int ok;
} bud_drain;

static void *bud_drain_body(void *arg)
{
    bud_drain *d = arg;
    int in = open(d->fifo, O_RDONLY), out = open(d->path, O_WRONLY | O_TRUNC);
    double t0 = tt_now();
    tf_writer_stats st = { 0 };
    static uint8_t buf[1 << 16];
    ssize_t k;

    while (tt_now() - t0 < 30.0) {
        tf_writer *w = atomic_load(&d->w);
        if (w) {
            tf_writer_get_stats(w, &st);
            if (st.waits > 0)
                break;
        }
        usleep(1000);
    }
    d->ok = in >= 0 && out >= 0;
    while (in >= 0 && (k = read(in, buf, sizeof(buf))) > 0)
        if (out < 0 || write(out, buf, (size_t)k) != k)
            d->ok = 0;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return NULL;
}

static void test_budget(void)
{
    char path[64], fifo[80];
    size_t n = 3 * MIB;
    uint8_t *data = malloc(n), *back = malloc(n);
    tf_writer *w = NULL;
    tf_reader *r = NULL;
    tf_writer_opts o = { .memory_budget = MIB, .level = 3 };
    tf_blobref ref[10];
    tf_writer_stats st;
    bud_drain d = { 0 };
    pthread_t th;
    int ok = 1;

    tt_tmp(path);
    snprintf(fifo, sizeof(fifo), "%s.fifo", path);
    CU_ASSERT_FATAL(mkfifo(fifo, 0600) == 0);
    d.fifo = fifo;
    d.path = path;
    CU_ASSERT_FATAL(pthread_create(&th, NULL, bud_drain_body, &d) == 0);
    CU_ASSERT_FATAL(tf_writer_open(&w, fifo, &o) == TF_OK);
    atomic_store(&d.w, w);
    for (int i = 0; i < 10; i++) {
        tt_fill(data, n, 100 + (uint64_t)i, i & 1);
        CU_ASSERT(tf_writer_blob(w, data, n, &ref[i]) == TF_OK);
    }
    tf_writer_get_stats(w, &st);
    CU_ASSERT(st.waits > 0);
    atomic_store(&d.w, NULL);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    pthread_join(th, NULL);
    CU_ASSERT(d.ok);
    unlink(fifo);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    for (int i = 0; i < 10; i++) {
        tt_fill(data, n, 100 + (uint64_t)i, i & 1);
        if (tf_reader_blob(r, &ref[i], 0, back, n) != TF_OK || memcmp(back, data, n) != 0)
            ok = 0;
    }
    CU_ASSERT(ok);
    tf_reader_close(r);
    unlink(path);
    free(data);
    free(back);
}

/* ---------------------------------------------------------------- flushes */

static void test_periodic_flush(void)
{
    char path[64];
    tf_writer *w = NULL;
    tf_writer_opts o = { .flush_ms = 20 };
    struct timespec ts = { 0, 300 * 1000 * 1000 };
    tt_read rd;

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    for (uint64_t i = 1; i <= 100; i++) {
        tt_begin(w, i, 1, 1, 2, i);
        tt_end(w, i, 2, 0);
    }
    nanosleep(&ts, NULL);
    rd = tt_read_all(path, NULL, NULL);          /* while the writer is open */
    CU_ASSERT(rd.status == TF_END && rd.ncomplete == 100);
    tt_read_free(&rd);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    unlink(path);
}

static tf_writer *g_crash_w;

static void crash_handler(int sig)
{
    (void)sig;
    tf_writer_crash_flush(g_crash_w, 5000);
    _exit(0);
}

/* Child: 500 calls each with a blob, a waited flush, 300 more calls; then
 * SIGSEGV (handler: crash flush) or SIGKILL. */
static void crash_child(const char *path, int sig)
{
    tf_writer_opts o = { .flush_ms = 100000 };
    struct sigaction sa;
    uint8_t data[4096];
    tf_blobref ref;

    if (tf_writer_open(&g_crash_w, path, &o) != TF_OK)
        _exit(2);
    tt_sig(g_crash_w, 1, "clWork", 2);
    for (uint64_t i = 1; i <= 800; i++) {
        if (i <= 500) {
            tt_fill(data, sizeof(data), i, 0);
            tf_writer_blob(g_crash_w, data, sizeof(data), &ref);
        }
        tt_begin(g_crash_w, i, 1, 1, 2, i);
        tt_end(g_crash_w, i, 2, 0);
        if (i <= 500)
            tt_data_blob(g_crash_w, i, &ref);
        if (i == 500 && tf_writer_flush(g_crash_w, 1) != TF_OK)
            _exit(3);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = crash_handler;
    sigaction(SIGSEGV, &sa, NULL);
    raise(sig);
    _exit(4);
}

static void crash_run(int sig, size_t want_calls)
{
    char path[64];
    pid_t pid;
    int wst = 0;
    tf_reader *r = NULL;
    tf_item it;
    tf_status s;
    uint8_t data[4096], back[4096];
    size_t calls = 0, blobs_ok = 0;

    tt_tmp(path);
    pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0)
        crash_child(path, sig);
    waitpid(pid, &wst, 0);
    if (sig == SIGKILL) {
        CU_ASSERT(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);
    } else {
        CU_ASSERT(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    }

    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    while ((s = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type == TF_ITEM_CALL) {
            CU_ASSERT(it.u.call.complete && it.u.call.seq == calls + 1);
            calls++;
        } else if (it.type == TF_ITEM_DATA && it.u.data.value.type == TF_BLOB) {
            /* the blob went in before the record that names it */
            tt_fill(data, sizeof(data), it.u.data.seq, 0);
            if (tf_reader_blob(r, &it.u.data.value.v.blob, 0, back, sizeof(back)) == TF_OK &&
                memcmp(back, data, sizeof(data)) == 0)
                blobs_ok++;
        }
    }
    CU_ASSERT(s == TF_END);
    CU_ASSERT(calls >= want_calls);
    CU_ASSERT(blobs_ok == 500);
    CU_ASSERT(tf_reader_get_info(r)->has_index == 0);
    tf_reader_close(r);
    unlink(path);
}

static void test_crash_flush(void) { crash_run(SIGSEGV, 800); }
static void test_kill_after_flush(void) { crash_run(SIGKILL, 500); }

int main(void)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("trace-format", NULL, NULL);
    CU_add_test(s, "round trip of every record and value type", test_roundtrip);
    CU_add_test(s, "DEVICES records: items, merged into the environment", test_devices_record);
    CU_add_test(s, "value helpers and small API", test_misc_api);
    CU_add_test(s, "the AVX2 hash leaves the upper YMM halves clean", test_hash_upper_clean);
    CU_add_test(s, "encoder bytes equal msgpack-c's msgpack_packer", test_encoder_bytes);
    CU_add_test(s, "4 threads: every record once, per-thread order", test_threads);
    CU_add_test(s, "dedup: 100 x 3 MiB stored once", test_dedup);
    CU_add_test(s, "40 MiB blob: pieces, random access, index and scan", test_big_blob_and_index);
    CU_add_test(s, "compression shrinks compressible data", test_compression);
    CU_add_test(s, "4-byte numbers byte-shuffled (codec 2), text not", test_shuffle);
    CU_add_test(s, "writer failure: failed state, no blocking", test_writer_failure);
    CU_add_test(s, "shared close: file complete, late calls dropped", test_close_shared);
    CU_add_test(s, "memory budget: producers wait, data complete", test_budget);
    CU_add_test(s, "periodic flush makes records readable", test_periodic_flush);
    CU_add_test(s, "crash flush from a SIGSEGV handler", test_crash_flush);
    CU_add_test(s, "SIGKILL after a waited flush", test_kill_after_flush);
    return tt_run();
}

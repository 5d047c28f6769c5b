/* costs/cdb_kcache.c — the kernel binary cache (COSTS.md, "The kernel
 * binary cache"): program binaries of the kernels a plan generates, one
 * file per (source, options, device, driver, platform), so that a later
 * run loads them instead of building them. Bytes only: the OpenCL calls
 * (clGetProgramInfo, clCreateProgramWithBinary) are the callers'. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "costs/cdb_int.h"

/* An entry: this header, then len bytes of the driver's binary. */
#define KC_MAGIC "\x89" "CLRRKB\x01"   /* 8 bytes; not text */
typedef struct kc_head {
    char magic[8];
    uint8_t key[16];          /* cdb_kc_key of what it was built from */
    uint64_t len;             /* bytes of binary that follow */
    uint64_t hash;            /* XXH3-64 of those bytes */
    uint64_t build_ns;        /* what building it from source took */
} kc_head;

const char *cdb_kc_dir(char *buf, size_t cap)
{
    const char *e = getenv("CLRR_KERNEL_CACHE");
    int n;
    if (!buf || !cap)
        return NULL;
    if (e && *e)
        n = snprintf(buf, cap, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e == '/')
        n = snprintf(buf, cap, "%s/clrr/kernels", e);
    else if ((e = getenv("HOME")) && *e)
        n = snprintf(buf, cap, "%s/.cache/clrr/kernels", e);
    else
        return NULL;
    return n < 0 || (size_t)n >= cap ? NULL : buf;
}

static void kc_field(XXH3_state_t *s, const char *f)
{
    uint64_t n = f ? strlen(f) : 0;
    XXH3_128bits_update(s, &n, sizeof n);   /* length first: fields cannot run into each other */
    if (n)
        XXH3_128bits_update(s, f, n);
}

void cdb_kc_key(uint8_t key[16], const char *source, const char *options, const char *device, const char *driver,
                const char *platform)
{
    XXH3_state_t *s = XXH3_createState();
    memset(key, 0, 16);
    if (!s)
        return;
    XXH3_128bits_reset(s);
    kc_field(s, "clrr-kcache-1");
    kc_field(s, source);
    kc_field(s, options);
    kc_field(s, device);
    kc_field(s, driver);
    kc_field(s, platform);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(s));
    memcpy(key, c.digest, 16);
    XXH3_freeState(s);
}

static int kc_name(char *buf, size_t cap, const char *dir, const uint8_t key[16])
{
    static const char hx[] = "0123456789abcdef";
    char h[33];
    for (int i = 0; i < 16; i++) {
        h[2 * i] = hx[key[i] >> 4];
        h[2 * i + 1] = hx[key[i] & 15];
    }
    h[32] = 0;
    int n = snprintf(buf, cap, "%s/%s.bin", dir, h);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int cdb_kc_load(const char *dir, const uint8_t key[16], uint64_t max_len, void **bin, size_t *len, uint64_t *build_ns)
{
    char path[4096];
    *bin = NULL;
    *len = 0;
    if (build_ns)
        *build_ns = 0;
    if (!dir || kc_name(path, sizeof path, dir, key))
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    kc_head h;
    struct stat st;
    int bad = fstat(fd, &st) || !S_ISREG(st.st_mode) || read(fd, &h, sizeof h) != (ssize_t)sizeof h ||
              memcmp(h.magic, KC_MAGIC, 8) || memcmp(h.key, key, 16) || !h.len || h.len > max_len ||
              (uint64_t)st.st_size != sizeof h + h.len;
    void *b = bad ? NULL : malloc((size_t)h.len);
    if (!bad && !b) {
        close(fd);
        return 0;   /* out of memory: a miss, the entry left as it is */
    }
    size_t got = 0;
    while (b && got < h.len) {
        ssize_t r = read(fd, (char *)b + got, (size_t)h.len - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (bad || got != h.len || XXH3_64bits(b, (size_t)h.len) != h.hash) {
        free(b);
        unlink(path);   /* rebuilt, and written again, by the caller */
        return -1;
    }
    /* the entry's time is when it was last used: eviction takes the oldest */
    utimensat(AT_FDCWD, path, NULL, 0);
    *bin = b;
    *len = (size_t)h.len;
    if (build_ns)
        *build_ns = h.build_ns;
    return 1;
}

void cdb_kc_forget(const char *dir, const uint8_t key[16])
{
    char path[4096];
    if (dir && !kc_name(path, sizeof path, dir, key))
        unlink(path);
}

static int kc_mkdirs(const char *dir)
{
    char d[4096];
    if (snprintf(d, sizeof d, "%s", dir) >= (int)sizeof d)
        return -1;
    for (char *p = d + 1;; p++) {
        if (*p != '/' && *p)
            continue;
        char c = *p;
        *p = 0;
        if (mkdir(d, 0755) && errno != EEXIST)
            return -1;
        if (!(*p = c))
            break;
    }
    return 0;
}

typedef struct kc_ent {
    char name[64];
    off_t size;
    struct timespec t;
} kc_ent;

static int kc_ent_cmp(const void *a, const void *b)
{
    const kc_ent *x = a, *y = b;
    if (x->t.tv_sec != y->t.tv_sec)
        return x->t.tv_sec < y->t.tv_sec ? -1 : 1;
    return x->t.tv_nsec < y->t.tv_nsec ? -1 : x->t.tv_nsec > y->t.tv_nsec;
}

/* The oldest entries go until the folder holds at most @p cap bytes. */
static void kc_evict(const char *dir, uint64_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    kc_ent *v = NULL;
    size_t n = 0, c = 0;
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l != 36 || strcmp(e->d_name + 32, ".bin"))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
            continue;
        if (n == c) {
            kc_ent *nv = realloc(v, (c = c ? 2 * c : 64) * sizeof *v);
            if (!nv)
                break;
            v = nv;
        }
        memcpy(v[n].name, e->d_name, l + 1);
        v[n].size = st.st_size;
        v[n].t = st.st_mtim;
        total += (uint64_t)st.st_size;
        n++;
    }
    if (total > cap) {
        qsort(v, n, sizeof *v, kc_ent_cmp);
        for (size_t i = 0; i < n && total > cap; i++)
            if (!unlinkat(dirfd(d), v[i].name, 0))
                total -= (uint64_t)v[i].size;
    }
    free(v);
    closedir(d);
}

cdb_status cdb_kc_store(const char *dir, const uint8_t key[16], const void *bin, size_t len, uint64_t build_ns,
                        uint64_t cap, char *err, size_t err_cap)
{
    char path[4096], tmp[4096 + 16];
    if (!dir || !bin || !len || kc_name(path, sizeof path, dir, key)) {
        cdb_errf(err, err_cap, "no kernel cache folder");
        return CDB_ERR_ARG;
    }
    if (len > cap)
        return CDB_OK;   /* never kept: it would evict everything */
    if (kc_mkdirs(dir)) {
        cdb_errf(err, err_cap, "%s: cannot make the folder: %s", dir, strerror(errno));
        return CDB_ERR_IO;
    }
    snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cdb_errf(err, err_cap, "%s: %s", dir, strerror(errno));
        return CDB_ERR_IO;
    }
    kc_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, KC_MAGIC, 8);
    memcpy(h.key, key, 16);
    h.len = len;
    h.hash = XXH3_64bits(bin, len);
    h.build_ns = build_ns;
    int bad = write(fd, &h, sizeof h) != (ssize_t)sizeof h;
    for (size_t off = 0; !bad && off < len;) {
        ssize_t w = write(fd, (const char *)bin + off, len - off);
        if (w <= 0)
            bad = 1;
        else
            off += (size_t)w;
    }
    int e = errno;
    if (close(fd))
        bad = 1;
    /* rename: a reader sees the old entry, no entry or the whole new one */
    if (bad || rename(tmp, path)) {
        e = bad ? e : errno;
        unlink(tmp);
        cdb_errf(err, err_cap, "%s: %s", path, strerror(e));
        return CDB_ERR_IO;
    }
    kc_evict(dir, cap);
    return CDB_OK;
}

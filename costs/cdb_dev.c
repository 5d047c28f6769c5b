/* costs/cdb_dev.c — devices: the snapshot of how this machine lists them,
 * resolving a `--device` spec against it, identities, and where the
 * database of this machine is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "costs/cdb_int.h"

/* A string the writer accepts: not NULL, at most CDB_MAX_STRING bytes, no control character. */
int cdb_str_ok(const char *s, int may_be_empty)
{
    if (!s || (!*s && !may_be_empty))
        return 0;
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++, n++)
        if (*p < 0x20 || n >= CDB_MAX_STRING)
            return 0;
    return 1;
}

int cdb_dev_copy(cdb_device *dst, const char *identity, const char *type, const char *name, const char *platform)
{
    const char *src[4] = {identity, type, name, platform};
    size_t len[4], total = 0;
    for (int i = 0; i < 4; i++) {
        len[i] = strlen(src[i]);
        if (len[i] > SIZE_MAX / 8)
            return -1;
        total += len[i] + 1;
    }
    char *block = malloc(total), *p = block;
    if (!block)
        return -1;
    const char *out[4];
    for (int i = 0; i < 4; i++) {
        memcpy(p, src[i], len[i] + 1);
        out[i] = p;
        p += len[i] + 1;
    }
    dst->identity = out[0];   /* the block starts here: cdb_dev_free frees it */
    dst->type = out[1];
    dst->name = out[2];
    dst->platform = out[3];
    return 0;
}

void cdb_dev_free(cdb_device *d)
{
    free((void *)d->identity);
}

void cdb_devs_replace(cdb *db, cdb_device *devs, unsigned n)
{
    for (unsigned i = 0; i < db->ndevs; i++)
        cdb_dev_free(&db->devs[i]);
    free(db->devs);
    db->devs = devs;
    db->ndevs = n;
}

cdb_status cdb_set_devices(cdb *db, const cdb_device *devs, unsigned n)
{
    if (!db || !devs || !n || n > CDB_MAX_DEVICES)
        return CDB_ERR_ARG;
    for (unsigned i = 0; i < n; i++)
        if (!cdb_str_ok(devs[i].identity, 0) || !cdb_str_ok(devs[i].type, 0) || !cdb_str_ok(devs[i].name, 1) ||
            !cdb_str_ok(devs[i].platform, 1))
            return CDB_ERR_ARG;
    cdb_device *copy = calloc(n, sizeof *copy);
    if (!copy)
        return CDB_ERR_NOMEM;
    size_t mark = db->pend.len;
    int bad = cdb_buf_printf(&db->pend, "s\t%llu\t%u\n", (unsigned long long)time(NULL), n);
    for (unsigned i = 0; i < n && !bad; i++)
        bad = cdb_dev_copy(&copy[i], devs[i].identity, devs[i].type, devs[i].name, devs[i].platform) ||
              cdb_buf_printf(&db->pend, "d\t%u\t%s\t%s\t%s\t%s\n", i, devs[i].type, devs[i].identity,
                             devs[i].name, devs[i].platform);
    if (bad) {
        for (unsigned i = 0; i < n; i++)
            cdb_dev_free(&copy[i]);
        free(copy);
        db->pend.len = mark;
        if (db->pend.p)
            db->pend.p[mark] = 0;
        return CDB_ERR_NOMEM;
    }
    cdb_devs_replace(db, copy, n);
    return CDB_OK;
}

unsigned cdb_device_count(const cdb *db)
{
    return db ? db->ndevs : 0;
}

const cdb_device *cdb_device_at(const cdb *db, unsigned i)
{
    return db && i < db->ndevs ? &db->devs[i] : NULL;
}

/* The rules of replayer/rpl_devices.c rpl_spec_pick, on the snapshot. */
int cdb_resolve(const cdb *db, const char *spec, char *err, size_t err_cap)
{
    if (!db || !spec) {
        cdb_errf(err, err_cap, "no device spec");
        return -1;
    }
    const char *path = db->path;
    unsigned n = db->ndevs;
    if (!n) {
        cdb_errf(err, err_cap, "no device snapshot in %s (run clrr profile on the machine)", path);
        return -1;
    }
    char *end;
    unsigned long idx = strtoul(spec, &end, 10);
    if (*spec && !*end) {
        if (idx >= n) {
            if (n == 1)
                cdb_errf(err, err_cap, "%s: there is one device in %s, 0", spec, path);
            else
                cdb_errf(err, err_cap, "%s: there are %u devices in %s, 0 to %u", spec, n, path, n - 1);
            return -1;
        }
        return (int)idx;
    }
    static const char *const types[] = {"cpu", "gpu", "accelerator", "custom"};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        /* "gpu1": the second GPU, in the snapshot's order */
        size_t tl = strlen(types[t]);
        if (!strncasecmp(spec, types[t], tl) && spec[tl] >= '0' && spec[tl] <= '9') {
            unsigned long want = strtoul(spec + tl, &end, 10), seen = 0;
            for (unsigned i = 0; !*end && i < n; i++)
                if (!strcasecmp(db->devs[i].type, types[t]) && seen++ == want)
                    return (int)i;
            if (!*end) {
                cdb_errf(err, err_cap, "%s: there %s %lu %s device%s in %s", spec, seen == 1 ? "is" : "are", seen,
                         types[t], seen == 1 ? "" : "s", path);
                return -1;
            }
        }
    }
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        if (!strcasecmp(spec, types[t])) {
            for (unsigned i = 0; i < n; i++)
                if (!strcasecmp(db->devs[i].type, types[t]))
                    return (int)i;
            cdb_errf(err, err_cap, "%s: no %s device in %s", spec, types[t], path);
            return -1;
        }
    for (unsigned i = 0; i < n; i++)
        if (strcasestr(db->devs[i].name, spec) || strcasestr(db->devs[i].platform, spec))
            return (int)i;
    cdb_errf(err, err_cap, "%s: no device in %s matches", spec, path);
    return -1;
}

/* Appends @p s (control characters as spaces, ends trimmed) at buf[*at], cut at a UTF-8
 * boundary. @return 0 when it was cut (nothing more fits). */
static int ident_put(char *buf, size_t cap, size_t *at, const char *s, int trim)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    if (trim) {
        while (n && (*p <= 0x20 || *p == 0x7f))
            p++, n--;
        while (n && (p[n - 1] <= 0x20 || p[n - 1] == 0x7f))
            n--;
    }
    size_t room = cap - 1 - *at, whole = n <= room;
    if (!whole) {
        n = room;
        while (n && (p[n] & 0xc0) == 0x80)   /* p[n] continues the character that would be cut */
            n--;
    }
    for (size_t i = 0; i < n; i++)
        buf[*at + i] = (p[i] < 0x20 || p[i] == 0x7f) ? ' ' : (char)p[i];
    *at += n;
    buf[*at] = 0;
    return (int)whole;
}

const char *cdb_identity(char *buf, size_t cap, const char *name, const char *platform, const char *driver,
                         unsigned compute_units)
{
    if (!buf || !cap)
        return buf;
    size_t at = 0;
    char cu[32];
    snprintf(cu, sizeof cu, "%u CU", compute_units);
    buf[0] = 0;
    (void)(ident_put(buf, cap, &at, name, 1) && ident_put(buf, cap, &at, " | ", 0) &&
           ident_put(buf, cap, &at, platform, 1) && ident_put(buf, cap, &at, " | ", 0) &&
           ident_put(buf, cap, &at, driver, 1) && ident_put(buf, cap, &at, " | ", 0) &&
           ident_put(buf, cap, &at, cu, 0));
    return buf;
}

const char *cdb_default_path(char *buf, size_t cap)
{
    const char *e = getenv("CLRR_COSTS");
    int n;
    if (!buf || !cap)
        return NULL;
    if (e && *e)
        n = snprintf(buf, cap, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e == '/')   /* relative: ignored (XDG) */
        n = snprintf(buf, cap, "%s/clrr/costs", e);
    else if ((e = getenv("HOME")) && *e)
        n = snprintf(buf, cap, "%s/.cache/clrr/costs", e);
    else
        return NULL;
    return n < 0 || (size_t)n >= cap ? NULL : buf;
}

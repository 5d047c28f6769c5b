/* cli_binonly.c — programs built from binaries only (`clrr record` at the
 * end, `clrr info`): a clCreateProgramWithBinary whose binaries the trace
 * cannot trace back to a source. A replay on another device rebuilds a
 * binary program from source only where the application fetched those
 * binaries (CL_PROGRAM_BINARIES, post.binaries) from a program it created
 * from source earlier in the trace, or where the recorder kept the source
 * the driver reported for it (post.source); any other binary loads only on
 * a device of the kind it was built for (replayer/rpl_progsrc.c has the
 * same rule). Programs of applications with binary caches of their own
 * (pyopencl's, hashcat's) are such programs on their second run. */
#include "tools/clrr/info_int.h"

#include <stdlib.h>
#include <string.h>

#define CLI_BO_MAX 65536   /* programs and hashes remembered */

static int cli_bo_has(const uint64_t *v, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

static void cli_bo_push(void **arr, size_t *n, size_t *cap, const void *el, size_t size)
{
    if (*n >= CLI_BO_MAX)
        return;
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        void *a = realloc(*arr, c * size);
        if (!a)
            return;
        *arr = a;
        *cap = c;
    }
    memcpy((char *)*arr + *n * size, el, size);
    (*n)++;
}

static int cli_bo_known(const cli_binonly *b, const tf_value *bin)
{
    if (!bin || bin->type != TF_BLOB)
        return 0;
    for (size_t i = 0; i < b->nhash; i++)
        if (!memcmp(b->hash[i].h, bin->v.blob.hash, 16))
            return 1;
    return 0;
}

/* The name of recorded device @p id ("" when the trace does not describe it). */
static void cli_bo_devname(const cli_binonly *b, uint64_t id, char *dst, size_t cap)
{
    dst[0] = 0;
    for (size_t i = 0; i < b->ndev; i++)
        if (b->dev[i].id == id) {
            snprintf(dst, cap, "%s", b->dev[i].name);
            return;
        }
}

static void cli_bo_devices(cli_binonly *b, const tf_value *devs)
{
    for (uint32_t d = 0; devs && devs->type == TF_ARRAY && d < devs->v.arr.n; d++) {
        const tf_value *m = &devs->v.arr.items[d], *nm = tf_map_get(m, "name");
        struct cli_bo_dev x = {0};
        if (!tf_value_u64(tf_map_get(m, "id"), &x.id) || !nm || nm->type != TF_STR)
            continue;
        snprintf(x.name, sizeof x.name, "%.*s", (int)nm->v.str.len, nm->v.str.ptr);
        cli_bo_push((void **)&b->dev, &b->ndev, &b->cap_dev, &x, sizeof x);
    }
}

void cli_binonly_env(cli_binonly *b, const tf_value *env)
{
    const tf_value *plats = env ? tf_map_get(env, "platforms") : NULL;
    for (uint32_t p = 0; plats && plats->type == TF_ARRAY && p < plats->v.arr.n; p++)
        cli_bo_devices(b, tf_map_get(&plats->v.arr.items[p], "devices"));   /* format 1.0 */
}

void cli_binonly_item(cli_binonly *b, const tf_item *it)
{
    if (it->type == TF_ITEM_DEVICES) {
        cli_bo_devices(b, it->u.devices.devices);
        return;
    }
    const tf_call *c = &it->u.call;
    if (it->type != TF_ITEM_CALL || !c->sig || !c->sig->name || !c->complete || !c->args)
        return;
    const char *fn = c->sig->name;
    uint64_t id = 0, v = 0;
    if (!strcmp(fn, "clCreateProgramWithSource")) {
        if (tf_value_u64(&c->ret, &id) && id)
            cli_bo_push((void **)&b->src, &b->nsrc, &b->cap_src, &id, sizeof id);
    } else if (!strcmp(fn, "clGetProgramInfo") && c->sig->nparams >= 2) {
        const tf_value *bins = c->post ? tf_map_get(c->post, "binaries") : NULL;
        if (!bins || bins->type != TF_ARRAY || !tf_value_u64(&c->args[0], &id) || !cli_bo_has(b->src, b->nsrc, id))
            return;
        for (uint32_t i = 0; i < bins->v.arr.n; i++) {
            const tf_value *x = &bins->v.arr.items[i];
            struct cli_bo_hash h;
            if (x->type != TF_BLOB || cli_bo_known(b, x))
                continue;
            memcpy(h.h, x->v.blob.hash, 16);
            cli_bo_push((void **)&b->hash, &b->nhash, &b->cap_hash, &h, sizeof h);
        }
    } else if (!strcmp(fn, "clCreateProgramWithBinary") && c->sig->nparams >= 5) {
        if (!tf_value_u64(&c->ret, &id) || !id)
            return;   /* failed: nothing built */
        const tf_value *post_src = c->post ? tf_map_get(c->post, "source") : NULL;
        if (post_src && post_src->type != TF_NIL)
            return;   /* the driver reported its source */
        const tf_value *bins = &c->args[4];
        int known = bins->type == TF_ARRAY && bins->v.arr.n > 0;
        for (uint32_t i = 0; known && i < bins->v.arr.n; i++)
            known = cli_bo_known(b, &bins->v.arr.items[i]);
        if (known)
            return;
        b->programs++;
        const tf_value *devs = &c->args[2];
        for (uint32_t i = 0; devs->type == TF_ARRAY && i < devs->v.arr.n; i++) {
            char name[256];
            if (!tf_value_u64(&devs->v.arr.items[i], &v))
                continue;
            cli_bo_devname(b, v, name, sizeof name);
            if (!name[0])
                snprintf(name, sizeof name, "device #%llu", (unsigned long long)v);
            if (!strstr(b->devices, name) && strlen(b->devices) + strlen(name) + 3 < sizeof b->devices)
                snprintf(b->devices + strlen(b->devices), sizeof b->devices - strlen(b->devices), "%s%s",
                         b->devices[0] ? ", " : "", name);
        }
    }
}

void cli_binonly_free(cli_binonly *b)
{
    free(b->src);
    free(b->hash);
    free(b->dev);
    memset(b, 0, sizeof *b);
}

void cli_binonly_line(FILE *f, const char *prefix, const cli_binonly *b)
{
    fprintf(f, "%s%llu program%s built from binaries only (no source or IL recorded): the trace replays only "
               "on %s; record a run that builds from source to replay it elsewhere (e.g. PYOPENCL_NO_CACHE=1 for "
               "pyopencl, or clear the application's binary cache)\n",
            prefix, (unsigned long long)b->programs, b->programs == 1 ? " was" : "s were",
            b->devices[0] ? b->devices : "the device it was recorded on");
}

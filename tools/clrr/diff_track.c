/* diff_track.c — who last wrote each memory object, followed along trace A
 * for `clrr diff`: kernel names (clCreateKernel, clCloneKernel), the memory
 * objects among each kernel's current arguments (clSetKernelArg with an
 * object id), and for every launch (clEnqueueNDRangeKernel, clEnqueueTask)
 * those objects as "possibly written by" it (the last launch of each kernel,
 * up to CLI_DIFF_WRITERS kernels); writes, copies, fills and write maps replace
 * that list. Two open-addressing tables keyed by id. */
#include "tools/clrr/diff_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CLI_DIFF_NAME_CAP 48       /* kernel names are cut to this */
#define CLI_DIFF_MAX_ARGS 4096     /* kernel argument indices beyond are ignored */
#define CLI_DIFF_WRITERS 3         /* writers (kernels) remembered per object */

typedef struct cli_diff_kernel {
    uint64_t id;               /* 0: empty slot */
    char name[CLI_DIFF_NAME_CAP];
    uint32_t nargs;
    uint64_t *args;            /* object id per argument index, 0 none */
} cli_diff_kernel;

typedef struct cli_diff_writer {
    uint64_t seq;
    int is_kernel;
    char name[CLI_DIFF_NAME_CAP];  /* kernel name or function name */
} cli_diff_writer;

typedef struct cli_diff_object {
    uint64_t id;
    int n;                     /* most recent first */
    cli_diff_writer w[CLI_DIFF_WRITERS];
} cli_diff_object;

struct cli_diff_track {
    cli_diff_kernel *k;
    size_t nk, capk;
    cli_diff_object *o;
    size_t no, capo;
};

cli_diff_track *cli_diff_track_new(void)
{
    return calloc(1, sizeof(cli_diff_track));
}

void cli_diff_track_free(cli_diff_track *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->capk; i++)
        free(t->k[i].args);
    free(t->k);
    free(t->o);
    free(t);
}

static size_t cli_diff_hash(uint64_t id, size_t cap)
{
    return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

/* Finds (or, with @p add, inserts) kernel @p id. */
static cli_diff_kernel *cli_diff_kernel_get(cli_diff_track *t, uint64_t id, int add)
{
    if (!id)
        return NULL;
    if (add && (t->nk + 1) * 2 > t->capk) {
        size_t cap = t->capk ? t->capk * 2 : 64;
        cli_diff_kernel *n = calloc(cap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < t->capk; i++) {
            if (!t->k[i].id)
                continue;
            size_t h = cli_diff_hash(t->k[i].id, cap);
            while (n[h].id)
                h = (h + 1) & (cap - 1);
            n[h] = t->k[i];
        }
        free(t->k);
        t->k = n;
        t->capk = cap;
    }
    if (!t->capk)
        return NULL;
    size_t h = cli_diff_hash(id, t->capk);
    while (t->k[h].id && t->k[h].id != id)
        h = (h + 1) & (t->capk - 1);
    if (t->k[h].id == id)
        return &t->k[h];
    if (!add)
        return NULL;
    t->k[h].id = id;
    t->nk++;
    return &t->k[h];
}

static cli_diff_object *cli_diff_object_get(cli_diff_track *t, uint64_t id, int add)
{
    if (!id)
        return NULL;
    if (add && (t->no + 1) * 2 > t->capo) {
        size_t cap = t->capo ? t->capo * 2 : 256;
        cli_diff_object *n = calloc(cap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < t->capo; i++) {
            if (!t->o[i].id)
                continue;
            size_t h = cli_diff_hash(t->o[i].id, cap);
            while (n[h].id)
                h = (h + 1) & (cap - 1);
            n[h] = t->o[i];
        }
        free(t->o);
        t->o = n;
        t->capo = cap;
    }
    if (!t->capo)
        return NULL;
    size_t h = cli_diff_hash(id, t->capo);
    while (t->o[h].id && t->o[h].id != id)
        h = (h + 1) & (t->capo - 1);
    if (t->o[h].id == id)
        return &t->o[h];
    if (!add)
        return NULL;
    t->o[h].id = id;
    t->no++;
    return &t->o[h];
}

/* Value of parameter @p name of call @p c (inputs), or NULL. */
static const tf_value *cli_diff_arg(const tf_call *c, const char *name)
{
    for (uint32_t i = 0; c->args && i < c->sig->nparams; i++)
        if (c->sig->params[i].name && !strcmp(c->sig->params[i].name, name))
            return &c->args[i];
    return NULL;
}

static uint64_t cli_diff_arg_u64(const tf_call *c, const char *name)
{
    const tf_value *v = cli_diff_arg(c, name);
    uint64_t u = 0;
    if (!v || v->type == TF_BOOL || !tf_value_u64(v, &u))
        return 0;
    return u;
}

static void cli_diff_copy_name(char *dst, const char *s, size_t len)
{
    if (len >= CLI_DIFF_NAME_CAP)
        len = CLI_DIFF_NAME_CAP - 1;
    for (size_t i = 0; i < len; i++)
        dst[i] = (unsigned char)s[i] < 0x20 || s[i] == '"' ? '?' : s[i];
    dst[len] = 0;
}

/* Records that @p seq (a launch of kernel @p kname, or the function @p fn)
 * wrote object @p id. A transfer replaces what was known. */
static int cli_diff_wrote(cli_diff_track *t, uint64_t id, uint64_t seq, const char *name, int is_kernel)
{
    cli_diff_object *o = cli_diff_object_get(t, id, 1);
    if (!o)
        return id ? -1 : 0;
    if (!is_kernel)
        o->n = 0;
    for (int i = 0; i < o->n; i++) {   /* an earlier launch of the same kernel */
        if (o->w[i].is_kernel && !strncmp(o->w[i].name, name, CLI_DIFF_NAME_CAP - 1)) {
            memmove(&o->w[i], &o->w[i + 1], (size_t)(o->n - i - 1) * sizeof o->w[0]);
            o->n--;
            break;
        }
    }
    if (o->n == CLI_DIFF_WRITERS)
        o->n--;
    memmove(&o->w[1], &o->w[0], (size_t)o->n * sizeof o->w[0]);
    o->n++;
    o->w[0].seq = seq;
    o->w[0].is_kernel = is_kernel;
    cli_diff_copy_name(o->w[0].name, name, strlen(name));
    return 0;
}

static int cli_diff_track_launch(cli_diff_track *t, const tf_call *c)
{
    cli_diff_kernel *k = cli_diff_kernel_get(t, cli_diff_arg_u64(c, "kernel"), 0);
    if (!k)
        return 0;
    int rc = 0;
    for (uint32_t i = 0; i < k->nargs; i++) {
        if (!k->args[i])
            continue;
        int dup = 0;   /* the same object in two arguments: once */
        for (uint32_t j = 0; j < i && !dup; j++)
            dup = k->args[j] == k->args[i];
        if (!dup && cli_diff_wrote(t, k->args[i], c->seq, k->name[0] ? k->name : "?", 1))
            rc = -1;
    }
    return rc;
}

static int cli_diff_track_setarg(cli_diff_track *t, const tf_call *c)
{
    cli_diff_kernel *k = cli_diff_kernel_get(t, cli_diff_arg_u64(c, "kernel"), 0);
    uint64_t idx;
    const tf_value *iv = cli_diff_arg(c, "arg_index"), *av = cli_diff_arg(c, "arg_value");
    if (!k || !iv || !tf_value_u64(iv, &idx) || idx >= CLI_DIFF_MAX_ARGS)
        return 0;
    if (idx >= k->nargs) {
        uint32_t n = (uint32_t)idx + 1 < 8 ? 8 : (uint32_t)idx + 1;
        uint64_t *a = realloc(k->args, n * sizeof *a);
        if (!a)
            return -1;
        memset(a + k->nargs, 0, (n - k->nargs) * sizeof *a);
        k->args = a;
        k->nargs = n;
    }
    uint64_t id = 0;
    if (av && av->type == TF_UINT)   /* an object id; bytes and NULL are not objects */
        id = av->v.u;
    k->args[idx] = id;
    return 0;
}

int cli_diff_track_call(cli_diff_track *t, const tf_call *c)
{
    if (!t || !c->sig || !c->sig->name || !c->complete)
        return 0;
    const char *fn = c->sig->name;
    uint64_t id;
    if (!strcmp(fn, "clCreateKernel")) {
        const tf_value *nv = cli_diff_arg(c, "kernel_name");
        if (c->ret.type == TF_BOOL || !tf_value_u64(&c->ret, &id) || !id)
            return 0;
        cli_diff_kernel *k = cli_diff_kernel_get(t, id, 1);
        if (!k)
            return -1;
        k->nargs = 0;
        if (nv && nv->type == TF_STR)
            cli_diff_copy_name(k->name, nv->v.str.ptr, nv->v.str.len);
        else
            k->name[0] = 0;
        return 0;
    }
    if (!strcmp(fn, "clCloneKernel")) {
        const cli_diff_kernel *src = cli_diff_kernel_get(t, cli_diff_arg_u64(c, "source_kernel"), 0);
        if (!src || c->ret.type == TF_BOOL || !tf_value_u64(&c->ret, &id) || !id)
            return 0;
        char name[CLI_DIFF_NAME_CAP];
        uint32_t n = src->nargs;
        uint64_t *args = n ? malloc(n * sizeof *args) : NULL;
        if (n && !args)
            return -1;
        if (n)
            memcpy(args, src->args, n * sizeof *args);
        memcpy(name, src->name, sizeof name);
        cli_diff_kernel *k = cli_diff_kernel_get(t, id, 1);   /* may move src */
        if (!k) {
            free(args);
            return -1;
        }
        free(k->args);
        memcpy(k->name, name, sizeof name);
        k->args = args;
        k->nargs = n;
        return 0;
    }
    if (!strcmp(fn, "clSetKernelArg"))
        return cli_diff_track_setarg(t, c);
    if (!strcmp(fn, "clEnqueueNDRangeKernel") || !strcmp(fn, "clEnqueueTask"))
        return cli_diff_track_launch(t, c);
    if (!strncmp(fn, "clEnqueueWrite", 14) || !strncmp(fn, "clEnqueueFill", 13)) {
        id = cli_diff_arg_u64(c, "buffer");
        if (!id)
            id = cli_diff_arg_u64(c, "image");
        return cli_diff_wrote(t, id, c->seq, fn, 0);
    }
    if (!strncmp(fn, "clEnqueueCopy", 13)) {
        id = cli_diff_arg_u64(c, "dst_buffer");
        if (!id)
            id = cli_diff_arg_u64(c, "dst_image");
        return cli_diff_wrote(t, id, c->seq, fn, 0);
    }
    if (!strcmp(fn, "clEnqueueUnmapMemObject") && c->pre && tf_map_get(c->pre, "data"))
        return cli_diff_wrote(t, cli_diff_arg_u64(c, "memobj"), c->seq, "a write map", 0);
    return 0;
}

int cli_diff_track_writers(const cli_diff_track *t, uint64_t id, char *dst, size_t cap)
{
    dst[0] = 0;
    if (!t || !t->capo || !id)
        return 0;
    size_t h = cli_diff_hash(id, t->capo);
    while (t->o[h].id && t->o[h].id != id)
        h = (h + 1) & (t->capo - 1);
    const cli_diff_object *o = &t->o[h];
    if (o->id != id || !o->n)
        return 0;
    size_t n = 0;
    for (int i = 0; i < o->n && n < cap; i++) {
        const cli_diff_writer *w = &o->w[i];
        int k = snprintf(dst + n, cap - n, w->is_kernel ? "%skernel \"%s\" (#%" PRIu64 ")"
                                                        : "%s%s (#%" PRIu64 ")",
                         i ? " or " : "", w->name, w->seq);
        if (k < 0)
            break;
        n += (size_t)k;
    }
    return 1;
}

/* rpl_progsrc.c — programs created from a device binary, rebuilt from
 * source on another device.
 *
 * An application that builds a program from source, fetches its binary
 * (clGetProgramInfo CL_PROGRAM_BINARIES: the recorder stores the binaries
 * as blobs in post.binaries) and creates a program from that binary has
 * recorded where the binary came from. When the replay runs on another
 * device than the recorded one, such a binary cannot load; the program is
 * then created from the source it came from and built with that source's
 * recorded options instead of the application's. A binary program whose
 * source the driver reported when recorded (post.source, FORMAT.md 11.1)
 * is created from that source, built with the application's options.
 * Binaries of unknown origin still fail with an error that names the
 * program.
 *
 * Builds of recorded sources use only the headers recorded with the trace
 * (the post.headers of clBuildProgram and clCompileProgram, FORMAT.md
 * 11.1, and a compile's input headers), never this machine's
 * files: before the build, every include directive of the source is
 * replaced by the text of the recorded header it resolves to (the
 * recorder's rules: a quoted name beside the including file, then in each
 * -I directory of the options; an angled one in the -I directories), with
 * #line directives around it, recursively; a directive naming no recorded
 * header (an absolute name, one that escapes with "..", a system header, a
 * computed `#include MACRO`) becomes `#error`, which fails the build only
 * where the compiler would have included it (not in a disabled #if branch).
 * The program is then created again from that text, which has no include
 * directive left, so the driver has nothing to look up; build options that
 * name a file (-include, -imacros, @file) are refused. Writing the headers
 * into a private directory and pointing -I at it would not do: a quoted
 * include is looked up beside the source first (the driver's own temporary
 * directory), an absolute name anywhere, and an unrecorded name in the
 * system directories. The preprocessor's first phases are applied before
 * looking for directives (trigraphs, which clang's OpenCL mode honours;
 * backslash-newline splices; %: for #), so no spelling hides one; the
 * recorded text is used unchanged when it has no include directive. The
 * inliner is the trace library's (trace-format/tf_inc.c tf_inc_inline, the
 * analyzer's too); the blobs are read with rpl_fetch. */
#include "replayer/rpl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rpl_progsrc {
    uint64_t prog;            /* recorded program id */
    char *src;                /* its source (programs from source) */
    char *opts;               /* options of its last successful build */
    void *live;               /* the live program of that build */
    uint8_t hash[16];         /* tf_hash of the recorded source bytes (profiling) */
    int hashed;
    char *inl;                /* its source with the recorded headers inlined (its last build), or NULL */
    tf_blobref *bins;         /* binaries fetched from it */
    uint32_t nbins;
    int substitute;           /* a binary program created from source here */
};

static struct rpl_progsrc *rpl_progsrc_get(rpl_session *s, uint64_t prog, int add)
{
    for (size_t i = 0; i < s->npsrc; i++)
        if (s->psrc[i].prog == prog)
            return &s->psrc[i];
    if (!add || s->npsrc >= 65536)
        return NULL;
    struct rpl_progsrc *a = realloc(s->psrc, (s->npsrc + 1) * sizeof *a);
    if (!a)
        return NULL;
    s->psrc = a;
    struct rpl_progsrc *e = &a[s->npsrc++];
    memset(e, 0, sizeof *e);
    e->prog = prog;
    return e;
}

int rpl_progsrc_source(rpl_session *s, uint64_t prog, const char *src, size_t len)
{
    struct rpl_progsrc *e = prog ? rpl_progsrc_get(s, prog, 1) : NULL;
    if (!e)
        return prog ? RPL_ERR_NOMEM : RPL_OK;
    free(e->src);
    e->src = strndup(src, len);
    /* the key `clrr optimize` looks costs up by: the analyzer hashes the
     * recorded bytes, whatever they hold (rpl_profile.c); plans key their
     * splits by it too (rpl_split_prepare) */
    e->hashed = s->o.profile != NULL || (s->o.plan && s->o.plan->split_of);
    if (e->hashed) {
        tf_blobref h;
        tf_hash(src, len, &h);
        memcpy(e->hash, h.hash, sizeof e->hash);
    }
    return e->src ? RPL_OK : RPL_ERR_NOMEM;
}

int rpl_progsrc_built(rpl_session *s, uint64_t prog, const char *opts)
{
    struct rpl_progsrc *e = rpl_progsrc_get(s, prog, 0);
    if (!e || e->substitute)
        return RPL_OK;
    free(e->opts);
    e->opts = strdup(opts ? opts : "");
    return e->opts ? RPL_OK : RPL_ERR_NOMEM;
}

int rpl_progsrc_binaries(rpl_session *s, uint64_t prog, const tf_value *bins)
{
    struct rpl_progsrc *e = rpl_progsrc_get(s, prog, 0);
    if (!e || !e->src || !bins || bins->type != TF_ARRAY || !bins->v.arr.n || bins->v.arr.n > 1024)
        return RPL_OK;
    tf_blobref *b = calloc(bins->v.arr.n, sizeof *b);
    if (!b)
        return RPL_ERR_NOMEM;
    for (uint32_t i = 0; i < bins->v.arr.n; i++)
        if (bins->v.arr.items[i].type == TF_BLOB)
            b[i] = bins->v.arr.items[i].v.blob;
    free(e->bins);
    e->bins = b;
    e->nbins = bins->v.arr.n;
    return RPL_OK;
}

/* The program from source whose fetched binaries include every one of @p
 * bins (an array of blob references), or NULL. */
static const struct rpl_progsrc *rpl_progsrc_origin(rpl_session *s, const tf_value *bins)
{
    for (size_t i = 0; i < s->npsrc; i++) {
        const struct rpl_progsrc *e = &s->psrc[i];
        uint32_t found = 0;
        for (uint32_t k = 0; e->src && e->opts && k < bins->v.arr.n; k++) {
            const tf_value *v = &bins->v.arr.items[k];
            for (uint32_t j = 0; v->type == TF_BLOB && j < e->nbins; j++)
                if (e->bins[j].size == v->v.blob.size && !memcmp(e->bins[j].hash, v->v.blob.hash, sizeof e->bins[j].hash)) {
                    found++;
                    break;
                }
        }
        if (found && found == bins->v.arr.n)
            return e;
    }
    return NULL;
}

int rpl_progsrc_substitute(rpl_cx *x, cl_context ctx, const tf_value *bins, cl_program *out)
{
    rpl_session *s = x->s;
    *out = NULL;
    uint64_t id = 0;
    tf_value_u64(&x->c->ret, &id);
    const struct rpl_progsrc *o = id ? rpl_progsrc_origin(s, bins) : NULL;
    const tf_value *ps = x->c->post ? tf_map_get(x->c->post, "source") : NULL;
    if (!o && ps && x->api->clCreateProgramWithSource) {
        /* the source the driver reported for the binary (post.source):
         * built with the application's own options */
        void *d = NULL;
        size_t got = 0;
        int st = rpl_fetch(s, ps, 0, &d, &got);
        if (st < 0)
            return st;
        if (st == 0 || !got) {
            free(d);
            return 0;
        }
        const char *strings[1] = {d};
        cl_int err = CL_SUCCESS;
        cl_program p = x->api->clCreateProgramWithSource(ctx, 1, strings, &got, &err);
        free(d);
        if (!p || err != CL_SUCCESS)
            return 0;   /* as recorded: the binary, and its error */
        *out = p;
        return 1;
    }
    if (!o || !x->api->clCreateProgramWithSource)
        return 0;
    char *src = strdup(o->inl ? o->inl : o->src), *opts = strdup(o->opts);
    struct rpl_progsrc *e = src && opts ? rpl_progsrc_get(s, id, 1) : NULL;
    if (!e) {
        free(src);
        free(opts);
        return RPL_ERR_NOMEM;
    }
    const char *strings[1] = {src};
    cl_int err = CL_SUCCESS;
    cl_program p = x->api->clCreateProgramWithSource(ctx, 1, strings, NULL, &err);
    free(src);
    if (!p || err != CL_SUCCESS) {
        free(opts);
        return 0;   /* as recorded: the binary, and its error */
    }
    free(e->opts);
    e->opts = opts;
    e->substitute = 1;
    *out = p;
    return 1;
}

void rpl_progsrc_live(rpl_session *s, uint64_t prog, void *live)
{
    struct rpl_progsrc *e = rpl_progsrc_get(s, prog, 0);
    if (e && e->src && !e->substitute)
        e->live = live;
}

int rpl_progsrc_of_live(rpl_session *s, const void *live, const char **src, const char **opts,
                        const uint8_t **hash)
{
    /* the latest first: a handle the runtime reused belongs to the newest */
    for (size_t i = s->npsrc; live && i-- > 0;) {
        const struct rpl_progsrc *e = &s->psrc[i];
        if (e->live == live && e->src && e->opts && e->hashed && !e->substitute) {
            rpl_obj *o = rpl_obj_by_live(s, live);
            if (o && o->id != e->prog)
                return 0;   /* a program that is not from source took the handle over */
            *src = e->inl ? e->inl : e->src;
            *opts = e->opts;
            *hash = e->hash;
            return 1;
        }
    }
    return 0;
}

const char *rpl_progsrc_options(rpl_session *s, uint64_t prog)
{
    const struct rpl_progsrc *e = rpl_progsrc_get(s, prog, 0);
    return e && e->substitute ? e->opts : NULL;
}

void rpl_progsrc_free(rpl_session *s)
{
    for (size_t i = 0; i < s->npsrc; i++) {
        free(s->psrc[i].src);
        free(s->psrc[i].opts);
        free(s->psrc[i].inl);
        free(s->psrc[i].bins);
    }
    free(s->psrc);
    s->psrc = NULL;
    s->npsrc = 0;
}

/* ------------------------------------------------ recorded headers */
/* tf_inc_fetch_fn: a recorded header's bytes, read with the session @p ctx. */
static int rpl_inc_fetch(void *ctx, const tf_value *v, void **data, size_t *len)
{
    return rpl_fetch(ctx, v, 0, data, len);
}

int rpl_progsrc_prepare_build(rpl_cx *x, cl_program *program, const char **options, const tf_value *inames,
                              const tf_value *iprogs)
{
    rpl_session *s = x->s;
    uint64_t id = rpl_arg_id(x, 0);
    const char *bad = tf_inc_bad_option(*options);
    if (bad)
        return rpl_call_error(x, RPL_ERR_INVALID, "the build options of program #%llu name a file of this machine (%s): "
                              "refused", (unsigned long long)id, bad);
    struct rpl_progsrc *e = rpl_progsrc_get(s, id, 0);
    if (!e || !e->src || e->substitute || !x->api->clCreateProgramWithSource || !x->api->clGetProgramInfo)
        return RPL_OK;
    const tf_value *headers = x->c->post ? tf_map_get(x->c->post, "headers") : NULL;
    if (headers && headers->type != TF_MAP)
        return rpl_call_error(x, RPL_ERR_INVALID, "the recorded headers of program #%llu are not a map",
                              (unsigned long long)id);
    /* clCompileProgram's input headers: programs from source of the trace */
    uint32_t ne = inames && iprogs && inames->type == TF_ARRAY && iprogs->type == TF_ARRAY
                          && inames->v.arr.n == iprogs->v.arr.n && inames->v.arr.n <= 1024
                      ? inames->v.arr.n : 0;
    const char **ename = rpl_scratch(x, (ne + 1) * sizeof *ename);
    const char **etext = ename ? rpl_scratch(x, (ne + 1) * sizeof *etext) : NULL;
    if (!etext)
        return RPL_ERR_NOMEM;
    for (uint32_t i = 0; i < ne; i++) {
        const tf_value *nv = &inames->v.arr.items[i];
        uint64_t hid = 0;
        const struct rpl_progsrc *he = tf_value_u64(&iprogs->v.arr.items[i], &hid) && hid
                                           ? rpl_progsrc_get(s, hid, 0) : NULL;
        char *nm = nv->type == TF_STR ? rpl_scratch(x, (size_t)nv->v.str.len + 1) : NULL;
        if (nv->type == TF_STR && !nm)
            return RPL_ERR_NOMEM;
        if (nm)
            memcpy(nm, nv->v.str.ptr, nv->v.str.len);
        ename[i] = nm;
        etext[i] = he ? (he->inl ? he->inl : he->src) : NULL;
    }
    char *text = NULL;
    size_t len = 0;
    int found = 0, ferr = 0, st = RPL_OK;
    tf_inc_status is = tf_inc_inline(e->src, *options, headers, ename, etext, ne, rpl_inc_fetch, s, &text, &len,
                                     &found, &ferr);
    if (is != TF_INC_OK) {
        st = is == TF_INC_LIMIT
                 ? rpl_call_error(x, RPL_ERR_LIMIT, "program #%llu with its recorded headers is over %u MiB",
                                  (unsigned long long)id, TF_INC_OUT_MAX >> 20)
                 : rpl_fail(x, is == TF_INC_FETCH ? ferr : RPL_ERR_NOMEM);
        goto out;
    }
    if (!found)
        goto out;   /* no include: the recorded text as it is */
    cl_context ctx = NULL;
    cl_int err = x->api->clGetProgramInfo(*program, CL_PROGRAM_CONTEXT, sizeof ctx, &ctx, NULL);
    const char *strings[1] = {text};
    cl_program p = err == CL_SUCCESS ? x->api->clCreateProgramWithSource(ctx, 1, strings, NULL, &err) : NULL;
    if (!p || err != CL_SUCCESS) {
        st = rpl_call_error(x, RPL_ERR_CL, "program #%llu with its recorded headers could not be created (%d)",
                            (unsigned long long)id, (int)err);
        goto out;
    }
    rpl_obj *o = rpl_obj_find(s, id);
    int32_t refs = o ? o->refs : 1;
    o = rpl_obj_bind(s, id, p, RPL_OBJ_PROGRAM, 1);
    if (!o) {
        x->api->clReleaseProgram(p);
        st = rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int32_t k = 1; k < refs && x->api->clRetainProgram; k++)
        if (x->api->clRetainProgram(p) == CL_SUCCESS)
            o->refs++;
    *program = p;
    free(e->inl);
    e->inl = text;
    text = NULL;
out:
    free(text);
    return st;
}

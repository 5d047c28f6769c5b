/* rpl_progsrc.c — programs created from a device binary, rebuilt from
 * source on another device.
 *
 * An application that builds a program from source, fetches its binary
 * (clGetProgramInfo CL_PROGRAM_BINARIES: the recorder stores the binaries
 * as blobs in post.binaries) and creates a program from that binary has
 * recorded where the binary came from. When the replay runs on another
 * device than the recorded one, such a binary cannot load; the program is
 * then created from the source it came from and built with that source's
 * recorded options instead of the application's. Binaries of unknown
 * origin still fail with an error that names the program.
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
 * recorded text is used unchanged when it has no include directive. */
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
#define RPL_INC_DEPTH 32
#define RPL_INC_OUT_MAX (32u << 20)
#define RPL_INC_NAME_MAX 1024
#define RPL_INC_DIRS_MAX 64

typedef struct rpl_inc {
    rpl_session *s;
    const tf_value *headers;          /* map name -> blob, or NULL */
    uint32_t nh;                      /* its entries; then the input headers: */
    const char *const *ename;         /* clCompileProgram's header_include_names */
    const char *const *etext;         /* ... their sources */
    uint32_t ne;
    const char *dirs[RPL_INC_DIRS_MAX];
    int ndirs;
    char *out;
    size_t len, cap;
    uint8_t *once, *done;             /* per header: #pragma once met; inlined already */
    int found;                        /* include directives met */
    int err;                          /* RPL_ERR_* */
} rpl_inc;

static void rpl_inc_put(rpl_inc *c, const char *p, size_t n)
{
    if (c->err)
        return;
    if (c->len + n + 1 > RPL_INC_OUT_MAX) {
        c->err = RPL_ERR_LIMIT;
        return;
    }
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n + 1)
            cap *= 2;
        char *o = realloc(c->out, cap);
        if (!o) {
            c->err = RPL_ERR_NOMEM;
            return;
        }
        c->out = o;
        c->cap = cap;
    }
    memcpy(c->out + c->len, p, n);
    c->len += n;
    c->out[c->len] = 0;
}

/* Printable ASCII but quotes and backslashes: names from a trace, safe
 * inside a string of the generated text. */
static void rpl_inc_safe(const char *name, char *safe, size_t cap)
{
    size_t k = 0;
    for (; name[k] && k + 1 < cap; k++)
        safe[k] = name[k] >= 0x20 && name[k] < 0x7f && name[k] != '"' && name[k] != '\'' && name[k] != '\\'
                      ? name[k] : '?';
    safe[k] = 0;
}

static void rpl_inc_line(rpl_inc *c, unsigned long line, const char *name)
{
    char b[RPL_INC_NAME_MAX + 64], safe[RPL_INC_NAME_MAX];
    rpl_inc_safe(name, safe, sizeof safe);
    int n = snprintf(b, sizeof b, "#line %lu \"%s\"\n", line, safe);
    rpl_inc_put(c, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* Phases 1 and 2: trigraphs replaced, backslash-newline splices (blanks
 * allowed between them, as clang does) removed, the newlines they held put
 * back after the next newline so that line numbers stay. Heap; NULL: ENOMEM. */
static char *rpl_inc_phase2(const char *t, size_t n, size_t *outlen)
{
    static const char tri_from[] = "=/'()!<>-", tri_to[] = "#\\^[]|{}~";
    char *a = malloc(n + 1);
    if (!a)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *f = i + 2 < n && t[i] == '?' && t[i + 1] == '?' ? memchr(tri_from, t[i + 2], 9) : NULL;
        if (f) {
            a[m++] = tri_to[f - tri_from];
            i += 2;
        } else {
            a[m++] = t[i];
        }
    }
    char *b = malloc(m + 1);
    if (!b) {
        free(a);
        return NULL;
    }
    size_t o = 0, pending = 0;
    for (size_t i = 0; i < m; i++) {
        if (a[i] == '\\') {
            size_t j = i + 1;
            while (j < m && (a[j] == ' ' || a[j] == '\t' || a[j] == '\r' || a[j] == '\f' || a[j] == '\v'))
                j++;
            if (j < m && a[j] == '\n') {
                pending++;
                i = j;
                continue;
            }
        }
        b[o++] = a[i];
        if (a[i] == '\n')
            for (; pending; pending--)
                b[o++] = '\n';
    }
    for (; pending; pending--)
        b[o++] = '\n';
    b[o] = 0;
    free(a);
    *outlen = o;
    return b;
}

static int rpl_inc_hspace(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* Skips blanks and comments on the line from *j (a block comment may span
 * lines: *nl counts the newlines passed). */
static void rpl_inc_skip(const char *t, size_t n, size_t *j, unsigned long *nl)
{
    while (*j < n) {
        if (rpl_inc_hspace(t[*j])) {
            (*j)++;
        } else if (*j + 1 < n && t[*j] == '/' && t[*j + 1] == '*') {
            size_t k = *j + 2;
            while (k + 1 < n && !(t[k] == '*' && t[k + 1] == '/'))
                *nl += t[k++] == '\n';
            *j = k + 1 < n ? k + 2 : n;
        } else if (*j + 1 < n && t[*j] == '/' && t[*j + 1] == '/') {
            while (*j < n && t[*j] != '\n')
                (*j)++;
        } else {
            return;
        }
    }
}

/* Same rules as the recorder (recorder/hooks_program.c rec_hdr_join). */
static int rpl_inc_join(const char *dir, const char *name, char *out)
{
    char tmp[2 * RPL_INC_NAME_MAX + 2];
    int n = name[0] == '/' || !dir[0] ? snprintf(tmp, sizeof tmp, "%s", name)
                                      : snprintf(tmp, sizeof tmp, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return 0;
    const char *seg[256];
    size_t sl[256];
    int ns = 0, abs = tmp[0] == '/';
    for (const char *p = tmp; *p;) {
        while (*p == '/')
            p++;
        const char *q = p;
        while (*q && *q != '/')
            q++;
        size_t l = (size_t)(q - p);
        if (l == 1 && p[0] == '.') {
            /* dropped */
        } else if (l == 2 && p[0] == '.' && p[1] == '.' && ns && !(sl[ns - 1] == 2 && !memcmp(seg[ns - 1], "..", 2))) {
            ns--;
        } else if (l == 2 && p[0] == '.' && p[1] == '.' && abs) {
            /* "/.." is "/" */
        } else if (l) {
            if (ns == 256)
                return 0;
            seg[ns] = p;
            sl[ns++] = l;
        }
        p = q;
    }
    size_t o = 0;
    if (abs)
        out[o++] = '/';
    for (int i = 0; i < ns; i++) {
        if (o + sl[i] + 2 > RPL_INC_NAME_MAX)
            return 0;
        if (i)
            out[o++] = '/';
        memcpy(out + o, seg[i], sl[i]);
        o += sl[i];
    }
    out[o] = 0;
    return ns > 0;
}

/* The recorded header @p name resolves to (index into the map; from nh
 * on, an input header), or -1. */
static int rpl_inc_find(rpl_inc *c, const char *name, int angled, const char *dir)
{
    for (uint32_t i = 0; i < c->ne; i++)   /* an input header, by its include name */
        if (c->ename[i] && c->etext[i] && !strcmp(c->ename[i], name))
            return (int)(c->nh + i);
    const tf_value *h = c->headers;
    if (!h || h->type != TF_MAP)
        return -1;
    char cand[RPL_INC_NAME_MAX];
    for (int k = angled ? 0 : -1; k < c->ndirs; k++) {
        if (!rpl_inc_join(k < 0 ? dir : c->dirs[k], name, cand))
            continue;
        size_t l = strlen(cand);
        for (uint32_t i = 0; i < h->v.map.n; i++) {
            const tf_value *key = &h->v.map.keys[i];
            if (key->type == TF_STR && key->v.str.len == l && !memcmp(key->v.str.ptr, cand, l))
                return (int)i;
        }
    }
    return -1;
}

static void rpl_inc_error(rpl_inc *c, const char *what, const char *name)
{
    char b[RPL_INC_NAME_MAX + 128], safe[RPL_INC_NAME_MAX];
    rpl_inc_safe(name, safe, sizeof safe);
    int n = snprintf(b, sizeof b, "#error clrr: %s %s\n", what, safe);
    rpl_inc_put(c, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

static void rpl_inc_file(rpl_inc *c, const char *text, size_t len, const char *fname, const char *dir,
                         int hdr, int depth);

/* Directive `#include` (include_next, import, embed) at t[j..]: replaced. */
static void rpl_inc_directive(rpl_inc *c, const char *t, size_t n, size_t *jp, unsigned long *line,
                              const char *fname, const char *dir, int depth)
{
    size_t j = *jp;
    unsigned long nl = 0;
    rpl_inc_skip(t, n, &j, &nl);
    char name[RPL_INC_NAME_MAX];
    int angled = 0, ok = 0;
    if (j < n && (t[j] == '"' || t[j] == '<')) {
        char close = t[j] == '"' ? '"' : '>';
        size_t k = j + 1;
        while (k < n && t[k] != close && t[k] != '\n')
            k++;
        if (k < n && t[k] == close && k > j + 1 && k - j - 1 < sizeof name) {
            memcpy(name, t + j + 1, k - j - 1);
            name[k - j - 1] = 0;
            ok = !memchr(t + j + 1, 0, k - j - 1);
            angled = close == '>';
        }
        j = k < n && t[k] == close ? k + 1 : k;
    }
    /* the rest of the directive, to the newline that ends it */
    while (j < n && t[j] != '\n') {
        size_t j0 = j;
        rpl_inc_skip(t, n, &j, &nl);
        if (j == j0)
            j++;
    }
    if (j < n)
        j++;
    *jp = j;
    c->found++;
    unsigned long next = *line + nl + 1;
    if (!ok) {
        rpl_inc_error(c, "an include whose name is not a plain \"name\" or <name> is not replayed:", "");
    } else {
        int h = rpl_inc_find(c, name, angled, dir);
        if (h < 0) {
            rpl_inc_error(c, "no header recorded with the trace is named", name);
        } else if (depth >= RPL_INC_DEPTH) {
            rpl_inc_error(c, "headers nested too deeply at", name);
        } else if (!(c->once[h] && c->done[h])) {
            void *p = NULL;
            size_t got = 0;
            int st = 1;
            char hn[RPL_INC_NAME_MAX], hd[RPL_INC_NAME_MAX];
            if ((uint32_t)h >= c->nh) {
                const char *et = c->etext[h - c->nh];
                p = strdup(et);
                got = strlen(et);
                if (!p) {
                    c->err = RPL_ERR_NOMEM;
                    return;
                }
                snprintf(hn, sizeof hn, "%s", c->ename[h - c->nh]);
            } else {
                st = rpl_fetch(c->s, &c->headers->v.map.vals[h], 0, &p, &got);
                if (st < 0) {
                    c->err = st;
                    return;
                }
                const tf_value *key = &c->headers->v.map.keys[h];
                snprintf(hn, sizeof hn, "%.*s", (int)key->v.str.len, key->v.str.ptr);
            }
            snprintf(hd, sizeof hd, "%s", hn);
            char *slash = strrchr(hd, '/');
            if (slash)
                *(slash == hd ? slash + 1 : slash) = 0;
            else
                hd[0] = 0;
            c->done[h] = 1;
            rpl_inc_line(c, 1, hn);
            rpl_inc_file(c, p ? p : "", st ? got : 0, hn, hd, h + 1, depth + 1);
            rpl_inc_put(c, "\n", 1);
            free(p);
        }
    }
    rpl_inc_line(c, next, fname);
    *line = next;
}

/* Copies @p text (a source or header @p hdr - 1) to the output with its
 * include directives replaced (above). */
static void rpl_inc_file(rpl_inc *c, const char *text, size_t len, const char *fname, const char *dir,
                         int hdr, int depth)
{
    size_t n;
    char *t = rpl_inc_phase2(text, len, &n);
    if (!t) {
        c->err = RPL_ERR_NOMEM;
        return;
    }
    unsigned long line = 1;
    int bol = 1;
    size_t i = 0;
    while (i < n && !c->err) {
        char ch = t[i];
        size_t from = i;
        if (ch == '\n') {
            line++;
            bol = 1;
            i++;
        } else if (rpl_inc_hspace(ch)) {
            i++;
        } else if (i + 1 < n && ch == '/' && (t[i + 1] == '*' || t[i + 1] == '/')) {
            unsigned long nl = 0;
            rpl_inc_skip(t, n, &i, &nl);
            line += nl;
            bol |= nl > 0;   /* as if the next token started a line: the safe reading */
        } else if (bol && (ch == '#' || (ch == '%' && i + 1 < n && t[i + 1] == ':'))) {
            size_t j = i + (ch == '#' ? 1 : 2);
            unsigned long nl = 0;
            rpl_inc_skip(t, n, &j, &nl);
            size_t w = j;
            while (j < n && (t[j] == '_' || (t[j] >= 'a' && t[j] <= 'z') || (t[j] >= 'A' && t[j] <= 'Z')
                             || (t[j] >= '0' && t[j] <= '9')))
                j++;
            size_t wl = j - w;
#define RPL_INC_IS(s) (wl == sizeof(s) - 1 && !memcmp(t + w, s, wl))
            bol = 0;
            if (RPL_INC_IS("include") || RPL_INC_IS("include_next") || RPL_INC_IS("import") || RPL_INC_IS("embed")) {
                line += nl;
                rpl_inc_directive(c, t, n, &j, &line, fname, dir, depth);
                i = j;
                bol = 1;
                continue;
            }
            if (hdr && RPL_INC_IS("pragma")) {
                size_t k = j;
                unsigned long nl2 = 0;
                rpl_inc_skip(t, n, &k, &nl2);
                if (k + 4 <= n && !memcmp(t + k, "once", 4) && (k + 4 == n || !(t[k + 4] == '_' || (t[k + 4] >= 'a' && t[k + 4] <= 'z')))) {
                    /* kept here (c->once); in the one text it would be "#pragma once in main file" */
                    c->once[hdr - 1] = 1;
                    while (k < n && t[k] != '\n')
                        k++;
                    i = k;
                    continue;
                }
            }
#undef RPL_INC_IS
            line += nl;
            i = j;
        } else if (ch == '"' || ch == '\'') {
            i++;
            while (i < n && t[i] != ch && t[i] != '\n')
                i += t[i] == '\\' && i + 1 < n && t[i + 1] != '\n' ? 2 : 1;
            if (i < n && t[i] == ch)
                i++;
            bol = 0;
        } else {
            i++;
            bol = 0;
        }
        rpl_inc_put(c, t + from, i - from);
    }
    free(t);
}

/* Build options that name a file the driver would read. */
static const char *rpl_inc_bad_option(const char *opts)
{
    static const char *const bad[] = {"-include", "--include", "-imacros", "--imacros", "@"};
    for (const char *p = opts ? opts : ""; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '"' || *p == '\'')
            p++;
        for (size_t k = 0; *p && k < sizeof bad / sizeof bad[0]; k++)
            if (!strncmp(p, bad[k], strlen(bad[k])))
                return bad[k];
        while (*p && !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            p++;
    }
    return NULL;
}

/* The -I directories of @p buf (split in place). */
static void rpl_inc_dirs(rpl_inc *c, char *buf)
{
    char *tok[512];
    int nt = 0;
    for (char *p = buf; *p && nt < 512;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        char *w = p, *o = p;
        char quote = 0;
        for (; *p && (quote || !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')); p++) {
            if (!quote && (*p == '"' || *p == '\''))
                quote = *p;
            else if (quote && *p == quote)
                quote = 0;
            else
                *o++ = *p;
        }
        if (*p)
            p++;
        *o = 0;
        tok[nt++] = w;
    }
    for (int i = 0; i < nt && c->ndirs < RPL_INC_DIRS_MAX; i++) {
        if (!strcmp(tok[i], "-I") && i + 1 < nt)
            c->dirs[c->ndirs++] = tok[++i];
        else if (!strncmp(tok[i], "-I", 2) && tok[i][2])
            c->dirs[c->ndirs++] = tok[i] + 2;
    }
}

int rpl_progsrc_prepare_build(rpl_cx *x, cl_program *program, const char **options, const tf_value *inames,
                              const tf_value *iprogs)
{
    rpl_session *s = x->s;
    uint64_t id = rpl_arg_id(x, 0);
    const char *bad = rpl_inc_bad_option(*options);
    if (bad)
        return rpl_call_error(x, RPL_ERR_INVALID, "the build options of program #%llu name a file of this machine (%s): "
                              "refused", (unsigned long long)id, bad);
    struct rpl_progsrc *e = rpl_progsrc_get(s, id, 0);
    if (!e || !e->src || e->substitute || !x->api->clCreateProgramWithSource || !x->api->clGetProgramInfo)
        return RPL_OK;
    rpl_inc c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.headers = x->c->post ? tf_map_get(x->c->post, "headers") : NULL;
    if (c.headers && c.headers->type != TF_MAP)
        return rpl_call_error(x, RPL_ERR_INVALID, "the recorded headers of program #%llu are not a map",
                              (unsigned long long)id);
    uint32_t nh = c.headers ? c.headers->v.map.n : 0;
    c.nh = nh;
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
    c.ename = ename;
    c.etext = etext;
    c.ne = ne;
    char *optbuf = strdup(*options ? *options : "");
    c.once = calloc(nh + ne + 1, 1);
    c.done = calloc(nh + ne + 1, 1);
    int st = RPL_OK;
    if (!optbuf || !c.once || !c.done) {
        st = rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
        goto out;
    }
    rpl_inc_dirs(&c, optbuf);
    rpl_inc_line(&c, 1, "<program>");
    rpl_inc_file(&c, e->src, strlen(e->src), "<program>", "", 0, 0);
    if (c.err) {
        st = c.err == RPL_ERR_LIMIT
                 ? rpl_call_error(x, RPL_ERR_LIMIT, "program #%llu with its recorded headers is over %u MiB",
                                  (unsigned long long)id, RPL_INC_OUT_MAX >> 20)
                 : rpl_fail(x, c.err);
        goto out;
    }
    if (!c.found)
        goto out;   /* no include: the recorded text as it is */
    cl_context ctx = NULL;
    cl_int err = x->api->clGetProgramInfo(*program, CL_PROGRAM_CONTEXT, sizeof ctx, &ctx, NULL);
    const char *strings[1] = {c.out};
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
    e->inl = c.out;
    c.out = NULL;
out:
    free(c.out);
    free(c.once);
    free(c.done);
    free(optbuf);
    return st;
}

/* ana_include.c — the headers recorded with a build, inlined into the
 * source for the kernel analysis: the analysis of a trace reads no file of
 * this machine. The same rules as the replay's (replayer/rpl_progsrc.c,
 * which documents them, and FORMAT.md 11.1): every include directive is
 * replaced by the recorded header it resolves to, or by #error when none
 * does, after trigraphs, splices and %: are undone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana_model_int.h"

/* ------------------------------------------------ recorded headers */
#define ANA_INC_DEPTH 32
#define ANA_INC_OUT_MAX (32u << 20)
#define ANA_INC_NAME_MAX 1024
#define ANA_INC_DIRS_MAX 64

typedef struct ana_inc {
    tf_reader *r;
    const tf_value *headers;          /* map name -> blob, or NULL */
    const char *dirs[ANA_INC_DIRS_MAX];
    int ndirs;
    char *out;
    size_t len, cap;
    uint8_t *once, *done;             /* per header: #pragma once met; inlined already */
    int found;                        /* include directives met */
    int err;                          /* ANA_ERR_* */
} ana_inc;

static void ana_inc_put(ana_inc *c, const char *p, size_t n)
{
    if (c->err)
        return;
    if (c->len + n + 1 > ANA_INC_OUT_MAX) {
        c->err = ANA_ERR_ARG;
        return;
    }
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n + 1)
            cap *= 2;
        char *o = realloc(c->out, cap);
        if (!o) {
            c->err = ANA_ERR_NOMEM;
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
static void ana_inc_safe(const char *name, char *safe, size_t cap)
{
    size_t k = 0;
    for (; name[k] && k + 1 < cap; k++)
        safe[k] = name[k] >= 0x20 && name[k] < 0x7f && name[k] != '"' && name[k] != '\'' && name[k] != '\\'
                      ? name[k] : '?';
    safe[k] = 0;
}

static void ana_inc_line(ana_inc *c, unsigned long line, const char *name)
{
    char b[ANA_INC_NAME_MAX + 64], safe[ANA_INC_NAME_MAX];
    ana_inc_safe(name, safe, sizeof safe);
    int n = snprintf(b, sizeof b, "#line %lu \"%s\"\n", line, safe);
    ana_inc_put(c, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* Phases 1 and 2: trigraphs replaced, backslash-newline splices (blanks
 * allowed between them, as clang does) removed, the newlines they held put
 * back after the next newline so that line numbers stay. Heap; NULL: ENOMEM. */
static char *ana_inc_phase2(const char *t, size_t n, size_t *outlen)
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

static int ana_inc_hspace(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* Skips blanks and comments on the line from *j (a block comment may span
 * lines: *nl counts the newlines passed). */
static void ana_inc_skip(const char *t, size_t n, size_t *j, unsigned long *nl)
{
    while (*j < n) {
        if (ana_inc_hspace(t[*j])) {
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

/* Same rules as the recorder (recorder/hooks_program.c rec_hdr_join, replayer/rpl_progsrc.c). */
static int ana_inc_join(const char *dir, const char *name, char *out)
{
    char tmp[2 * ANA_INC_NAME_MAX + 2];
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
        if (o + sl[i] + 2 > ANA_INC_NAME_MAX)
            return 0;
        if (i)
            out[o++] = '/';
        memcpy(out + o, seg[i], sl[i]);
        o += sl[i];
    }
    out[o] = 0;
    return ns > 0;
}

/* The recorded header @p name resolves to (index into the map), or -1. */
static int ana_inc_find(ana_inc *c, const char *name, int angled, const char *dir)
{
    const tf_value *h = c->headers;
    if (!h || h->type != TF_MAP)
        return -1;
    char cand[ANA_INC_NAME_MAX];
    for (int k = angled ? 0 : -1; k < c->ndirs; k++) {
        if (!ana_inc_join(k < 0 ? dir : c->dirs[k], name, cand))
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

static void ana_inc_error(ana_inc *c, const char *what, const char *name)
{
    char b[ANA_INC_NAME_MAX + 128], safe[ANA_INC_NAME_MAX];
    ana_inc_safe(name, safe, sizeof safe);
    int n = snprintf(b, sizeof b, "#error clrr: %s %s\n", what, safe);
    ana_inc_put(c, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

static void ana_inc_file(ana_inc *c, const char *text, size_t len, const char *fname, const char *dir,
                         int hdr, int depth);

/* Directive `#include` (include_next, import, embed) at t[j..]: replaced. */
static void ana_inc_directive(ana_inc *c, const char *t, size_t n, size_t *jp, unsigned long *line,
                              const char *fname, const char *dir, int depth)
{
    size_t j = *jp;
    unsigned long nl = 0;
    ana_inc_skip(t, n, &j, &nl);
    char name[ANA_INC_NAME_MAX];
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
        ana_inc_skip(t, n, &j, &nl);
        if (j == j0)
            j++;
    }
    if (j < n)
        j++;
    *jp = j;
    c->found++;
    unsigned long next = *line + nl + 1;
    if (!ok) {
        ana_inc_error(c, "an include whose name is not a plain \"name\" or <name> is not replayed:", "");
    } else {
        int h = ana_inc_find(c, name, angled, dir);
        if (h < 0) {
            ana_inc_error(c, "no header recorded with the trace is named", name);
        } else if (depth >= ANA_INC_DEPTH) {
            ana_inc_error(c, "headers nested too deeply at", name);
        } else if (!(c->once[h] && c->done[h])) {
            const tf_value *hv = &c->headers->v.map.vals[h];
            char *p = NULL;
            size_t got = 0;
            int st = 1;
            if (hv->type == TF_BLOB) {
                if (hv->v.blob.size > ANA_INC_OUT_MAX) {
                    c->err = ANA_ERR_ARG;
                    return;
                }
                got = (size_t)hv->v.blob.size;
                p = malloc(got + 1);
                if (!p) {
                    c->err = ANA_ERR_NOMEM;
                    return;
                }
                if (tf_reader_blob(c->r, &hv->v.blob, 0, p, got) != TF_OK) {
                    free(p);
                    p = NULL;
                    st = 0;   /* a missing blob: the header is empty */
                }
            } else if (hv->type == TF_BIN || hv->type == TF_STR) {
                got = hv->v.str.len;
                p = malloc(got + 1);
                if (!p) {
                    c->err = ANA_ERR_NOMEM;
                    return;
                }
                memcpy(p, hv->v.str.ptr, got);
            } else {
                st = 0;
            }
            const tf_value *key = &c->headers->v.map.keys[h];
            char hn[ANA_INC_NAME_MAX], hd[ANA_INC_NAME_MAX];
            snprintf(hn, sizeof hn, "%.*s", (int)key->v.str.len, key->v.str.ptr);
            snprintf(hd, sizeof hd, "%s", hn);
            char *slash = strrchr(hd, '/');
            if (slash)
                *(slash == hd ? slash + 1 : slash) = 0;
            else
                hd[0] = 0;
            c->done[h] = 1;
            ana_inc_line(c, 1, hn);
            ana_inc_file(c, p ? p : "", st ? got : 0, hn, hd, h + 1, depth + 1);
            ana_inc_put(c, "\n", 1);
            free(p);
        }
    }
    ana_inc_line(c, next, fname);
    *line = next;
}

/* Copies @p text (a source or header @p hdr - 1) to the output with its
 * include directives replaced (above). */
static void ana_inc_file(ana_inc *c, const char *text, size_t len, const char *fname, const char *dir,
                         int hdr, int depth)
{
    size_t n;
    char *t = ana_inc_phase2(text, len, &n);
    if (!t) {
        c->err = ANA_ERR_NOMEM;
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
        } else if (ana_inc_hspace(ch)) {
            i++;
        } else if (i + 1 < n && ch == '/' && (t[i + 1] == '*' || t[i + 1] == '/')) {
            unsigned long nl = 0;
            ana_inc_skip(t, n, &i, &nl);
            line += nl;
            bol |= nl > 0;   /* as if the next token started a line: the safe reading */
        } else if (bol && (ch == '#' || (ch == '%' && i + 1 < n && t[i + 1] == ':'))) {
            size_t j = i + (ch == '#' ? 1 : 2);
            unsigned long nl = 0;
            ana_inc_skip(t, n, &j, &nl);
            size_t w = j;
            while (j < n && (t[j] == '_' || (t[j] >= 'a' && t[j] <= 'z') || (t[j] >= 'A' && t[j] <= 'Z')
                             || (t[j] >= '0' && t[j] <= '9')))
                j++;
            size_t wl = j - w;
#define ANA_INC_IS(s) (wl == sizeof(s) - 1 && !memcmp(t + w, s, wl))
            bol = 0;
            if (ANA_INC_IS("include") || ANA_INC_IS("include_next") || ANA_INC_IS("import") || ANA_INC_IS("embed")) {
                line += nl;
                ana_inc_directive(c, t, n, &j, &line, fname, dir, depth);
                i = j;
                bol = 1;
                continue;
            }
            if (hdr && ANA_INC_IS("pragma")) {
                size_t k = j;
                unsigned long nl2 = 0;
                ana_inc_skip(t, n, &k, &nl2);
                if (k + 4 <= n && !memcmp(t + k, "once", 4) && (k + 4 == n || !(t[k + 4] == '_' || (t[k + 4] >= 'a' && t[k + 4] <= 'z')))) {
                    /* kept here (c->once); in the one text it would be "#pragma once in main file" */
                    c->once[hdr - 1] = 1;
                    while (k < n && t[k] != '\n')
                        k++;
                    i = k;
                    continue;
                }
            }
#undef ANA_INC_IS
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
        ana_inc_put(c, t + from, i - from);
    }
    free(t);
}

/* The -I directories of @p buf (split in place). */
static void ana_inc_dirs(ana_inc *c, char *buf)
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
    for (int i = 0; i < nt && c->ndirs < ANA_INC_DIRS_MAX; i++) {
        if (!strcmp(tok[i], "-I") && i + 1 < nt)
            c->dirs[c->ndirs++] = tok[++i];
        else if (!strncmp(tok[i], "-I", 2) && tok[i][2])
            c->dirs[c->ndirs++] = tok[i] + 2;
    }
}

ana_status ana_source_inline(tf_reader *r, const char *src, const char *opts, const tf_value *headers,
                             char **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (!src)
        return ANA_OK;
    ana_inc c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.headers = headers && headers->type == TF_MAP ? headers : NULL;
    uint32_t nh = c.headers ? c.headers->v.map.n : 0;
    char *optbuf = strdup(opts ? opts : "");
    c.once = calloc(nh + 1, 1);
    c.done = calloc(nh + 1, 1);
    ana_status st = ANA_OK;
    if (!optbuf || !c.once || !c.done) {
        st = ANA_ERR_NOMEM;
        goto done;
    }
    ana_inc_dirs(&c, optbuf);
    ana_inc_line(&c, 1, "<program>");
    ana_inc_file(&c, src, strlen(src), "<program>", "", 0, 0);
    if (c.err) {
        st = (ana_status)c.err;
        goto done;
    }
    if (c.found) {
        *out = c.out;
        *outlen = c.len;
        c.out = NULL;
    }
done:
    free(c.out);
    free(c.once);
    free(c.done);
    free(optbuf);
    return st;
}

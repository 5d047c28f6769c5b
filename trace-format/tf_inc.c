/* tf_inc.c — the recorded headers of a build (FORMAT.md 11.1): the rules
 * that resolve an include name (the recorder records with them), and the
 * inliner that replaces every include directive of a program source with
 * the recorded header it resolves to (the replayer builds, and the
 * analyzer analyzes, that text: neither reads a file of its machine).
 * A directive naming no recorded header (an absolute name, one that
 * escapes with "..", a system header, a computed `#include MACRO`) becomes
 * `#error`, which fails a build only where the compiler would have
 * included it. The preprocessor's first phases (trigraphs, which clang's
 * OpenCL mode honours; backslash-newline splices; %: for #) are applied
 * before directives are looked for, so no spelling hides one. */
#include "trace-format/tf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tf_inc {
    tf_inc_fetch_fn fetch;
    void *ctx;
    const tf_value *headers;          /* map name -> value, or NULL */
    uint32_t nh;                      /* its entries; then the input headers: */
    const char *const *ename;         /* e.g. clCompileProgram's header_include_names */
    const char *const *etext;         /* ... their texts */
    uint32_t ne;
    const char *dirs[TF_INC_DIRS_MAX];
    int ndirs;
    char *out;
    size_t len, cap;
    uint8_t *once, *done;             /* per header: #pragma once met; inlined already */
    int found;                        /* include directives met */
    tf_inc_status err;
    int fetch_err;                    /* the callback's code, for TF_INC_FETCH */
} tf_inc;

static void tf_inc_put(tf_inc *c, const char *p, size_t n)
{
    if (c->err)
        return;
    if (c->len + n + 1 > TF_INC_OUT_MAX) {
        c->err = TF_INC_LIMIT;
        return;
    }
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n + 1)
            cap *= 2;
        char *o = realloc(c->out, cap);
        if (!o) {
            c->err = TF_INC_NOMEM;
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
static void tf_inc_safe(const char *name, char *safe, size_t cap)
{
    size_t k = 0;
    for (; name[k] && k + 1 < cap; k++)
        safe[k] = name[k] >= 0x20 && name[k] < 0x7f && name[k] != '"' && name[k] != '\'' && name[k] != '\\'
                      ? name[k] : '?';
    safe[k] = 0;
}

static void tf_inc_line(tf_inc *c, unsigned long line, const char *name)
{
    char b[TF_INC_NAME_MAX + 64], safe[TF_INC_NAME_MAX];
    tf_inc_safe(name, safe, sizeof safe);
    int n = snprintf(b, sizeof b, "#line %lu \"%s\"\n", line, safe);
    tf_inc_put(c, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* Phases 1 and 2: trigraphs replaced, backslash-newline splices (blanks
 * allowed between them, as clang does) removed, the newlines they held put
 * back after the next newline so that line numbers stay. Heap; NULL: ENOMEM. */
static char *tf_inc_phase2(const char *t, size_t n, size_t *outlen)
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

static int tf_inc_hspace(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* Skips blanks and comments on the line from *j (a block comment may span
 * lines: *nl counts the newlines passed). */
static void tf_inc_skip(const char *t, size_t n, size_t *j, unsigned long *nl)
{
    while (*j < n) {
        if (tf_inc_hspace(t[*j])) {
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

int tf_inc_join(const char *dir, const char *name, char *out)
{
    char tmp[2 * TF_INC_NAME_MAX + 2];
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
        if (o + sl[i] + 2 > TF_INC_NAME_MAX)
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
static int tf_inc_find(tf_inc *c, const char *name, int angled, const char *dir)
{
    for (uint32_t i = 0; i < c->ne; i++)   /* an input header, by its include name */
        if (c->ename[i] && c->etext[i] && !strcmp(c->ename[i], name))
            return (int)(c->nh + i);
    const tf_value *h = c->headers;
    if (!h || h->type != TF_MAP)
        return -1;
    char cand[TF_INC_NAME_MAX];
    for (int k = angled ? 0 : -1; k < c->ndirs; k++) {
        if (!tf_inc_join(k < 0 ? dir : c->dirs[k], name, cand))
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

static void tf_inc_error(tf_inc *c, const char *what, const char *name)
{
    char b[TF_INC_NAME_MAX + 128], safe[TF_INC_NAME_MAX];
    tf_inc_safe(name, safe, sizeof safe);
    int n = snprintf(b, sizeof b, "#error clrr: %s %s\n", what, safe);
    tf_inc_put(c, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

static void tf_inc_file(tf_inc *c, const char *text, size_t len, const char *fname, const char *dir,
                         int hdr, int depth);

/* Directive `#include` (include_next, import, embed) at t[j..]: replaced. */
static void tf_inc_directive(tf_inc *c, const char *t, size_t n, size_t *jp, unsigned long *line,
                              const char *fname, const char *dir, int depth)
{
    size_t j = *jp;
    unsigned long nl = 0;
    tf_inc_skip(t, n, &j, &nl);
    char name[TF_INC_NAME_MAX];
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
        tf_inc_skip(t, n, &j, &nl);
        if (j == j0)
            j++;
    }
    if (j < n)
        j++;
    *jp = j;
    c->found++;
    unsigned long next = *line + nl + 1;
    if (!ok) {
        tf_inc_error(c, "an include whose name is not a plain \"name\" or <name> is not replayed:", "");
    } else {
        int h = tf_inc_find(c, name, angled, dir);
        if (h < 0) {
            tf_inc_error(c, "no header recorded with the trace is named", name);
        } else if (depth >= TF_INC_DEPTH) {
            tf_inc_error(c, "headers nested too deeply at", name);
        } else if (!(c->once[h] && c->done[h])) {
            void *p = NULL;
            size_t got = 0;
            int st = 1;
            char hn[TF_INC_NAME_MAX], hd[TF_INC_NAME_MAX];
            if ((uint32_t)h >= c->nh) {
                const char *et = c->etext[h - c->nh];
                p = strdup(et);
                got = strlen(et);
                if (!p) {
                    c->err = TF_INC_NOMEM;
                    return;
                }
                snprintf(hn, sizeof hn, "%s", c->ename[h - c->nh]);
            } else {
                st = c->fetch(c->ctx, &c->headers->v.map.vals[h], &p, &got);
                if (st < 0) {
                    c->err = TF_INC_FETCH;
                    c->fetch_err = st;
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
            tf_inc_line(c, 1, hn);
            tf_inc_file(c, p ? p : "", st ? got : 0, hn, hd, h + 1, depth + 1);
            tf_inc_put(c, "\n", 1);
            free(p);
        }
    }
    tf_inc_line(c, next, fname);
    *line = next;
}

/* Copies @p text (a source or header @p hdr - 1) to the output with its
 * include directives replaced (above). */
static void tf_inc_file(tf_inc *c, const char *text, size_t len, const char *fname, const char *dir,
                         int hdr, int depth)
{
    size_t n;
    char *t = tf_inc_phase2(text, len, &n);
    if (!t) {
        c->err = TF_INC_NOMEM;
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
        } else if (tf_inc_hspace(ch)) {
            i++;
        } else if (i + 1 < n && ch == '/' && (t[i + 1] == '*' || t[i + 1] == '/')) {
            unsigned long nl = 0;
            tf_inc_skip(t, n, &i, &nl);
            line += nl;
            bol |= nl > 0;   /* as if the next token started a line: the safe reading */
        } else if (bol && (ch == '#' || (ch == '%' && i + 1 < n && t[i + 1] == ':'))) {
            size_t j = i + (ch == '#' ? 1 : 2);
            unsigned long nl = 0;
            tf_inc_skip(t, n, &j, &nl);
            size_t w = j;
            while (j < n && (t[j] == '_' || (t[j] >= 'a' && t[j] <= 'z') || (t[j] >= 'A' && t[j] <= 'Z')
                             || (t[j] >= '0' && t[j] <= '9')))
                j++;
            size_t wl = j - w;
#define TF_INC_IS(s) (wl == sizeof(s) - 1 && !memcmp(t + w, s, wl))
            bol = 0;
            if (TF_INC_IS("include") || TF_INC_IS("include_next") || TF_INC_IS("import") || TF_INC_IS("embed")) {
                line += nl;
                tf_inc_directive(c, t, n, &j, &line, fname, dir, depth);
                i = j;
                bol = 1;
                continue;
            }
            if (hdr && TF_INC_IS("pragma")) {
                size_t k = j;
                unsigned long nl2 = 0;
                tf_inc_skip(t, n, &k, &nl2);
                if (k + 4 <= n && !memcmp(t + k, "once", 4) && (k + 4 == n || !(t[k + 4] == '_' || (t[k + 4] >= 'a' && t[k + 4] <= 'z')))) {
                    /* kept here (c->once); in the one text it would be "#pragma once in main file" */
                    c->once[hdr - 1] = 1;
                    while (k < n && t[k] != '\n')
                        k++;
                    i = k;
                    continue;
                }
            }
#undef TF_INC_IS
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
        tf_inc_put(c, t + from, i - from);
    }
    free(t);
}

const char *tf_inc_bad_option(const char *opts)
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

int tf_inc_dirs(char *buf, const char **dirs, int max)
{
    int nd = 0;
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
    for (int i = 0; i < nt && nd < max; i++) {
        if (!strcmp(tok[i], "-I") && i + 1 < nt)
            dirs[nd++] = tok[++i];
        else if (!strncmp(tok[i], "-I", 2) && tok[i][2])
            dirs[nd++] = tok[i] + 2;
    }
    return nd;
}

tf_inc_status tf_inc_inline(const char *src, const char *opts, const tf_value *headers,
                            const char *const *ename, const char *const *etext, uint32_t ne,
                            tf_inc_fetch_fn fetch, void *ctx, char **out, size_t *outlen, int *found,
                            int *fetch_err)
{
    *out = NULL;
    *outlen = 0;
    if (found)
        *found = 0;
    if (fetch_err)
        *fetch_err = 0;
    tf_inc c;
    memset(&c, 0, sizeof c);
    c.fetch = fetch;
    c.ctx = ctx;
    c.headers = headers && headers->type == TF_MAP && fetch ? headers : NULL;
    c.nh = c.headers ? c.headers->v.map.n : 0;
    c.ename = ename;
    c.etext = etext;
    c.ne = ename && etext ? ne : 0;
    char *optbuf = strdup(opts ? opts : "");
    c.once = calloc((size_t)c.nh + c.ne + 1, 1);
    c.done = calloc((size_t)c.nh + c.ne + 1, 1);
    tf_inc_status st = TF_INC_OK;
    if (!optbuf || !c.once || !c.done) {
        st = TF_INC_NOMEM;
        goto done;
    }
    c.ndirs = tf_inc_dirs(optbuf, c.dirs, TF_INC_DIRS_MAX);
    tf_inc_line(&c, 1, "<program>");
    tf_inc_file(&c, src ? src : "", src ? strlen(src) : 0, "<program>", "", 0, 0);
    if (c.err) {
        st = c.err;
        if (st == TF_INC_FETCH && fetch_err)
            *fetch_err = c.fetch_err;
        goto done;
    }
    if (found)
        *found = c.found > 0;
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

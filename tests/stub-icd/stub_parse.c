/* stub_parse.c — a rough reader of OpenCL C sources: finds every
 * `__kernel void NAME(params)` (or `kernel`, with __attribute__((...))
 * anywhere between) outside comments, and for each parameter its name,
 * type name and qualifiers. No preprocessor: a kernel declared through a
 * macro is not found. */
#include "tests/stub-icd/stub_int.h"

#include <stdlib.h>
#include <string.h>

static int stub_id_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int stub_id_char(char c)
{
    return stub_id_start(c) || (c >= '0' && c <= '9');
}

/* A copy of src with comments turned into spaces (strings kept). */
static char *stub_uncomment(const char *src)
{
    char *out = stub_strdup(src);
    if (!out)
        return NULL;
    for (char *p = out; *p; p++) {
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                *p++ = ' ';
            if (!*p)
                break;
        } else if (p[0] == '/' && p[1] == '*') {
            p[0] = p[1] = ' ';
            p += 2;
            while (*p && !(p[0] == '*' && p[1] == '/')) {
                if (*p != '\n')
                    *p = ' ';
                p++;
            }
            if (!*p)
                break;
            p[0] = p[1] = ' ';
            p++;
        } else if (*p == '"' || *p == '\'') {
            char q = *p;
            while (p[1] && p[1] != q)
                p += p[1] == '\\' && p[2] ? 2 : 1;
            if (!p[1])
                break;
            p++;
        }
    }
    return out;
}

static const char *stub_skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v'))
        p++;
    return p;
}

/* Past the matching ')' of the '(' at p; NULL when unbalanced. */
static const char *stub_skip_parens(const char *p, const char *end)
{
    int depth = 0;
    for (; p < end; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && --depth == 0)
            return p + 1;
    }
    return NULL;
}

static int stub_word_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* Skips blanks and __attribute__((...)); NULL on unbalanced parentheses. */
static const char *stub_skip_attrs(const char *p, const char *end)
{
    for (;;) {
        p = stub_skip_ws(p, end);
        const char *e = p;
        while (e < end && stub_id_char(*e))
            e++;
        if (!stub_word_is(p, (size_t)(e - p), "__attribute__") && !stub_word_is(p, (size_t)(e - p), "__attribute"))
            return p;
        p = stub_skip_ws(e, end);
        if (p == end || *p != '(' || !(p = stub_skip_parens(p, end)))
            return NULL;
    }
}

static size_t stub_scalar_size(const char *t)
{
    static const struct { const char *name; size_t size; } base[] = {
        { "char", 1 }, { "uchar", 1 }, { "unsigned char", 1 }, { "short", 2 }, { "ushort", 2 },
        { "unsigned short", 2 }, { "half", 2 }, { "int", 4 }, { "uint", 4 }, { "unsigned int", 4 },
        { "unsigned", 4 }, { "float", 4 }, { "long", 8 }, { "ulong", 8 }, { "unsigned long", 8 },
        { "double", 8 }, { "size_t", sizeof(size_t) }, { "ptrdiff_t", sizeof(size_t) },
        { "intptr_t", sizeof(size_t) }, { "uintptr_t", sizeof(size_t) },
    };
    size_t n = strlen(t), digits = 0;
    while (digits < n && t[n - 1 - digits] >= '0' && t[n - 1 - digits] <= '9')
        digits++;
    size_t width = digits ? (size_t)atoi(t + n - digits) : 1;
    if (width != 1 && width != 2 && width != 3 && width != 4 && width != 8 && width != 16)
        return 0;
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        if (strlen(base[i].name) == n - digits && memcmp(base[i].name, t, n - digits) == 0)
            return base[i].size * (width == 3 ? 4 : width);
    return 0;
}

static void stub_free_kernel(struct stub_kdecl *k)
{
    for (cl_uint j = 0; j < k->nargs; j++) {
        free(k->args[j].name);
        free(k->args[j].type_name);
    }
    free(k->args);
    free(k->name);
}

/* One parameter [p, end). Returns -1 when out of memory. */
static int stub_parse_param(const char *p, const char *end, struct stub_argdecl *a)
{
    char type[256] = "";
    size_t tlen = 0, stars = 0;
    const char *last = NULL, *prev = NULL;
    size_t lastn = 0, prevn = 0;
    a->addr = CL_KERNEL_ARG_ADDRESS_PRIVATE;
    a->access = CL_KERNEL_ARG_ACCESS_NONE;
    int have_addr = 0, have_access = 0;
    while ((p = stub_skip_attrs(p, end)) && p < end) {
        if (*p == '*') {
            stars++;
            p++;
            continue;
        }
        if (!stub_id_start(*p)) {
            p++;
            continue;
        }
        const char *s = p;
        while (p < end && stub_id_char(*p))
            p++;
        size_t n = (size_t)(p - s);
        if (stub_word_is(s, n, "__global") || stub_word_is(s, n, "global"))
            a->addr = CL_KERNEL_ARG_ADDRESS_GLOBAL, have_addr = 1;
        else if (stub_word_is(s, n, "__local") || stub_word_is(s, n, "local"))
            a->addr = CL_KERNEL_ARG_ADDRESS_LOCAL, have_addr = 1;
        else if (stub_word_is(s, n, "__constant") || stub_word_is(s, n, "constant"))
            a->addr = CL_KERNEL_ARG_ADDRESS_CONSTANT, have_addr = 1;
        else if (stub_word_is(s, n, "__private") || stub_word_is(s, n, "private"))
            a->addr = CL_KERNEL_ARG_ADDRESS_PRIVATE, have_addr = 1;
        else if (stub_word_is(s, n, "__read_only") || stub_word_is(s, n, "read_only"))
            a->access = CL_KERNEL_ARG_ACCESS_READ_ONLY, have_access = 1;
        else if (stub_word_is(s, n, "__write_only") || stub_word_is(s, n, "write_only"))
            a->access = CL_KERNEL_ARG_ACCESS_WRITE_ONLY, have_access = 1;
        else if (stub_word_is(s, n, "__read_write") || stub_word_is(s, n, "read_write"))
            a->access = CL_KERNEL_ARG_ACCESS_READ_WRITE, have_access = 1;
        else if (stub_word_is(s, n, "const") || stub_word_is(s, n, "__const"))
            a->tq |= CL_KERNEL_ARG_TYPE_CONST;
        else if (stub_word_is(s, n, "restrict") || stub_word_is(s, n, "__restrict"))
            a->tq |= CL_KERNEL_ARG_TYPE_RESTRICT;
        else if (stub_word_is(s, n, "volatile"))
            a->tq |= CL_KERNEL_ARG_TYPE_VOLATILE;
        else if (stub_word_is(s, n, "pipe"))
            a->tq |= CL_KERNEL_ARG_TYPE_PIPE;
        else {
            if (prev && tlen + prevn + 2 < sizeof type) {   /* the word before the last is type */
                if (tlen)
                    type[tlen++] = ' ';
                memcpy(type + tlen, prev, prevn);
                type[tlen += prevn] = '\0';
            }
            prev = last, prevn = lastn;
            last = s, lastn = n;
        }
    }
    if (prev && tlen + prevn + 2 < sizeof type) {
        if (tlen)
            type[tlen++] = ' ';
        memcpy(type + tlen, prev, prevn);
        type[tlen += prevn] = '\0';
    }
    if (!prev) {   /* a lone word: a type without a name */
        if (last && lastn < sizeof type)
            memcpy(type, last, lastn), type[lastn] = '\0';
        last = "", lastn = 0;
    }
    size_t base_len = strlen(type);
    for (size_t i = 0; i < stars && strlen(type) + 2 < sizeof type; i++)
        strcat(type, "*");
    a->is_image = strncmp(type, "image", 5) == 0 && base_len > 7 && memcmp(type + base_len - 2, "_t", 2) == 0;
    a->is_sampler = strcmp(type, "sampler_t") == 0;
    if (!have_addr && (stars || a->is_image))
        a->addr = CL_KERNEL_ARG_ADDRESS_GLOBAL;
    if (a->is_image && !have_access)
        a->access = CL_KERNEL_ARG_ACCESS_READ_ONLY;
    if (!stars && !a->is_image && !a->is_sampler && a->addr == CL_KERNEL_ARG_ADDRESS_PRIVATE)
        a->scalar_size = stub_scalar_size(type);
    a->type_name = stub_strdup(type);
    a->name = stub_memdup(last, lastn + 1);
    if (!a->type_name || !a->name)
        return -1;
    a->name[lastn] = '\0';
    return 0;
}

/* The kernel whose `void` follows p; its name and parameters into k.
 * Returns 1 found, 0 not a kernel definition, -1 out of memory. */
static int stub_parse_one(const char *p, const char *end, struct stub_kdecl *k, const char **next)
{
    if (!(p = stub_skip_attrs(p, end)) || end - p < 4 || memcmp(p, "void", 4) || (p + 4 < end && stub_id_char(p[4])))
        return 0;
    if (!(p = stub_skip_attrs(p + 4, end)) || p == end || !stub_id_start(*p))
        return 0;
    const char *name = p;
    while (p < end && stub_id_char(*p))
        p++;
    size_t nlen = (size_t)(p - name);
    if (!(p = stub_skip_attrs(p, end)) || p == end || *p != '(')
        return 0;
    const char *close = stub_skip_parens(p, end);
    if (!close)
        return 0;
    *next = close;
    const char *a = p + 1, *stop = close - 1;
    memset(k, 0, sizeof *k);
    if (!(k->name = stub_memdup(name, nlen + 1)))
        return -1;
    k->name[nlen] = '\0';
    const char *q = stub_skip_ws(a, stop);
    if (q == stop || (stop - q >= 4 && memcmp(q, "void", 4) == 0 && stub_skip_ws(q + 4, stop) == stop))
        return 1;
    cl_uint cap = 0;
    for (const char *s = a; s <= stop;) {
        int depth = 0;
        const char *e = s;
        while (e < stop && !(depth == 0 && *e == ',')) {
            depth += *e == '(' ? 1 : *e == ')' ? -1 : 0;
            e++;
        }
        if (k->nargs == cap) {
            cap = cap ? 2 * cap : 8;
            struct stub_argdecl *n = realloc(k->args, cap * sizeof *n);
            if (!n)
                return -1;
            k->args = n;
        }
        struct stub_argdecl *arg = &k->args[k->nargs++];
        memset(arg, 0, sizeof *arg);
        if (stub_parse_param(s, e, arg) < 0)
            return -1;
        s = e + 1;
    }
    return 1;
}

int stub_parse_kernels(const char *src, struct stub_kdecl **out, cl_uint *n)
{
    *out = NULL;
    *n = 0;
    char *text = stub_uncomment(src);
    if (!text)
        return -1;
    const char *p = text, *end = text + strlen(text);
    cl_uint cap = 0;
    int rc = 0;
    while (p < end) {
        if (!stub_id_start(*p) || (p > text && stub_id_char(p[-1]))) {
            p++;
            continue;
        }
        const char *s = p;
        while (p < end && stub_id_char(*p))
            p++;
        if (!stub_word_is(s, (size_t)(p - s), "__kernel") && !stub_word_is(s, (size_t)(p - s), "kernel"))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            struct stub_kdecl *k = realloc(*out, cap * sizeof *k);
            if (!k) {
                rc = -1;
                break;
            }
            *out = k;
        }
        const char *next = p;
        struct stub_kdecl *k = &(*out)[*n];
        int r = stub_parse_one(p, end, k, &next);
        if (r != 0)
            (*n)++;   /* also on -1, so that what was allocated is freed */
        if (r < 0) {
            rc = -1;
            break;
        }
        for (cl_uint i = 0; r && i + 1 < *n; i++)
            if (strcmp((*out)[i].name, k->name) == 0) {   /* a prototype, then the definition */
                stub_free_kernel(k);
                (*n)--;
                break;
            }
        p = next;
    }
    free(text);
    if (rc < 0) {
        stub_free_kernels(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void stub_free_kernels(struct stub_kdecl *k, cl_uint n)
{
    for (cl_uint i = 0; i < n; i++)
        stub_free_kernel(&k[i]);
    free(k);
}

/* ana_llvm_options.c — the recorded build options, reduced to those clang
 * accepts for the analysis: -D, -U (a separate value is joined to its
 * flag, so it can never be read as another option; -I is dropped: the
 * recorded headers are inlined, ana_include.c), -cl-std (valid
 * values), -cl-ext and the -cl-* math flags; the analysis chooses
 * optimization, debug info and arg-info itself; everything else is
 * dropped with a note. Tokens are split like a shell would, without
 * expansions. */
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana_llvm_int.h"


/* A growable string (malloc'ed). */
typedef struct ana_str {
    char *s;
    size_t len, cap;
} ana_str;

static int ana_str_add(ana_str *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *d;
        while (cap < b->len + n + 1)
            cap *= 2;
        d = realloc(b->s, cap);
        if (!d)
            return -1;
        b->s = d;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

static int ana_str_adds(ana_str *b, const char *s)
{
    return ana_str_add(b, s, strlen(s));
}

/* Splits @p opts like a shell would, without expansions: blanks separate,
 * '...' and "..." group, backslash escapes. Tokens are appended, NUL
 * separated, to @p toks; returns the count or -1 on ENOMEM. */
static int ana_tokenize(const char *opts, ana_str *toks)
{
    const char *p = opts;
    int count = 0;

    while (*p) {
        int have = 0;
        char quote = 0;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        while (*p && (quote || !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))) {
            if (!quote && (*p == '"' || *p == '\'')) {
                quote = *p++;
                have = 1;
                continue;
            }
            if (quote && *p == quote) {
                quote = 0;
                p++;
                continue;
            }
            if (*p == '\\' && p[1] && quote != '\'') {
                p++;
            }
            if (ana_str_add(toks, p, 1) < 0)
                return -1;
            have = 1;
            p++;
        }
        if (have) {
            if (ana_str_add(toks, "", 1) < 0)   /* the separating NUL */
                return -1;
            count++;
        }
    }
    return count;
}

static int ana_starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Options passed to clang as they are. */
static const char *const ana_cl_flags[] = {
    "-cl-single-precision-constant", "-cl-denorms-are-zero",
    "-cl-fp32-correctly-rounded-divide-sqrt", "-cl-mad-enable", "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations", "-cl-finite-math-only", "-cl-fast-relaxed-math",
    "-cl-uniform-work-group-size", "-cl-no-stdinc", "-w",
};
static const char *const ana_cl_stds[] = {
    "cl", "CL", "cl1.0", "CL1.0", "cl1.1", "CL1.1", "cl1.2", "CL1.2", "cl2.0", "CL2.0",
    "cl3.0", "CL3.0", "clc++", "CLC++", "clc++1.0", "CLC++1.0", "clc++2021", "CLC++2021",
};

static int ana_in(const char *s, const char *const *set, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!strcmp(s, set[i]))
            return 1;
    return 0;
}

static int ana_filter(const char *opts, ana_str *args, ana_str *notes, int *has_std)
{
    ana_str toks = { 0 };
    const char *t, *end;
    int n, i, kept = 0, rc = -1;

    *has_std = 0;
    n = ana_tokenize(opts, &toks);
    if (n <= 0) {
        rc = n;
        goto out;
    }
    t = toks.s;
    end = toks.s + toks.len;
    for (i = 0; i < n && t < end; i++, t += strlen(t) + 1) {
        const char *val = NULL;
        int keep = 0, joined = 0;
        if (!strcmp(t, "-I") || (ana_starts(t, "-I") && t[2])) {
            /* no include path: the headers recorded with the build are
             * inlined (ana_include.c), the host's are never searched */
            if (!t[2] && i + 1 < n) {
                t += strlen(t) + 1;
                i++;
            }
            continue;
        }
        if ((!strcmp(t, "-D") || !strcmp(t, "-U")) && i + 1 < n) {
            /* separate value: join, so that it can never be read as an option */
            val = t + strlen(t) + 1;
            joined = 1;
            keep = 1;
        } else if ((ana_starts(t, "-D") || ana_starts(t, "-U")) && t[2]) {
            keep = 1;
        } else if (ana_starts(t, "-cl-std=")) {
            keep = ana_in(t + 8, ana_cl_stds, sizeof ana_cl_stds / sizeof ana_cl_stds[0]);
            *has_std |= keep;
        } else if (ana_starts(t, "-cl-ext=")) {
            keep = 1;
        } else if (!strcmp(t, "-cl-kernel-arg-info") || !strcmp(t, "-cl-opt-disable") ||
                   !strcmp(t, "-cl-strict-aliasing") || !strcmp(t, "-g") ||
                   (t[0] == '-' && t[1] == 'O' && strlen(t) <= 3)) {
            continue;   /* the analysis chooses these itself */
        } else {
            keep = ana_in(t, ana_cl_flags, sizeof ana_cl_flags / sizeof ana_cl_flags[0]);
        }
        if (!keep) {
            if (ana_str_adds(notes, "dropped build option '") < 0 ||
                ana_str_add(notes, t, strnlen(t, 200)) < 0 ||
                ana_str_adds(notes, "' (not accepted by clang or not relevant)\n") < 0)
                goto out;
            continue;
        }
        if (ana_str_add(args, t, strlen(t)) < 0 ||
            (joined && ana_str_add(args, val, strlen(val)) < 0) ||
            ana_str_add(args, "", 1) < 0)
            goto out;
        kept++;
        if (joined) {
            t = val;
            i++;
        }
    }
    rc = kept;
out:
    free(toks.s);
    return rc;
}

int ana_options_filter(const char *opts, char **args, char **notes, int *has_std)
{
    ana_str a = { 0 }, n = { 0 };
    int count;

    *args = *notes = NULL;
    if (ana_str_adds(&n, "") < 0 || ana_str_adds(&a, "") < 0) {
        free(n.s);
        free(a.s);
        return -1;
    }
    a.len = 0;   /* keep the allocation, start the list empty */
    count = ana_filter(opts ? opts : "", &a, &n, has_std);
    if (count < 0) {
        free(a.s);
        free(n.s);
        return -1;
    }
    *args = a.s;
    *notes = n.s;
    return count;
}

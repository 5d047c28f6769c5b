/* plan_pattern.c — patterns read from plans (PLAN.md, "Patterns"): their
 * canonical text (compact JSON, keys sorted, through jansson) and key,
 * validation of untrusted ones, and a readable one-line form. Patterns of
 * calls are built in plan_pattern_build.c, straight into the same canonical
 * text. */
#include "plan/plan_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define PLAN_PAT_MAX_ARRAY 16
#define PLAN_PAT_MAX_ARGS 256
#define PLAN_PAT_MAX_STR 256

uint64_t plan_pattern_key(const char *canon, size_t len)
{
    return XXH64(canon, len, 0x706c616e6b6579ull);   /* "plankey" */
}

plan_status plan_pattern_canon(const json_t *pat, char **out, uint64_t *key)
{
    *out = NULL;
    char *s = json_dumps(pat, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
    if (!s)
        return PLAN_ERR_NOMEM;
    size_t n = strlen(s);
    if (n > PLAN_PATTERN_MAX) {
        free(s);
        return PLAN_ERR_LIMIT;
    }
    *out = s;
    *key = plan_pattern_key(s, n);
    return PLAN_OK;
}

/* ------------------------------------------------------------ validation */

static int plan_name_ok(const char *k, int function)
{
    size_t n = strlen(k);
    if (!n || n > 63)
        return 0;
    if (function && strncmp(k, "cl", 2))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)k[i];
        if (!(function ? isalnum(ch) || ch == '_' : (islower(ch) || isdigit(ch) || ch == '_')))
            return 0;
    }
    return function || islower((unsigned char)k[0]);
}

static int plan_uint_ok(const json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) >= 0;
    if (!json_is_string(v))
        return 0;
    const char *s = json_string_value(v);   /* integers past INT64_MAX, signed ones */
    size_t n = strlen(s);
    if (!n || n > 21)
        return 0;
    for (size_t i = s[0] == '-'; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static int plan_str_ok(const json_t *v, size_t max)
{
    if (!json_is_string(v) || json_string_length(v) > max)
        return 0;
    const char *s = json_string_value(v);
    for (size_t i = 0; s[i]; i++)
        if (!isprint((unsigned char)s[i]))
            return 0;
    return strlen(s) == json_string_length(v);
}

static int plan_hash_ok(const json_t *v)
{
    uint8_t h[16];
    return json_is_null(v) || (json_is_string(v) && !plan_unhex(json_string_value(v), h, 16));
}

/* A role object (memory, kernel, program, scalar bytes, local size, SVM). */
static const char *plan_role_check(const json_t *o)
{
    const char *key;
    json_t *v;
    if (!json_is_object(o) || !json_object_size(o) || json_object_size(o) > 3)
        return "expected an object naming a role (mem, kernel, program, bytes, bytes_size, local, svm, object)";
    if (json_object_get(o, "mem")) {
        if (json_object_size(o) != 3 || !plan_uint_ok(json_object_get(o, "mem")) ||
            !plan_uint_ok(json_object_get(o, "size")) || !plan_uint_ok(json_object_get(o, "flags")))
            return "a memory role is {\"mem\": N, \"size\": N, \"flags\": N}";
        return NULL;
    }
    if (json_object_get(o, "kernel")) {
        if (json_object_size(o) != 2 || !plan_str_ok(json_object_get(o, "kernel"), PLAN_PAT_MAX_STR) ||
            !json_object_get(o, "program") || !plan_hash_ok(json_object_get(o, "program")))
            return "a kernel role is {\"kernel\": NAME, \"program\": HASH or null}";
        return NULL;
    }
    if (json_object_size(o) != 1)
        return "unknown role";
    json_object_foreach((json_t *)o, key, v) {
        if (!strcmp(key, "program"))
            return plan_hash_ok(v) ? NULL : "program: expected 32 hex digits or null";
        if (!strcmp(key, "bytes"))
            return plan_str_ok(v, 2 * PLAN_PAT_MAX_STR) ? NULL : "bytes: expected hex digits";
        if (!strcmp(key, "bytes_size") || !strcmp(key, "local"))
            return plan_uint_ok(v) ? NULL : "expected a non-negative integer";
        if (!strcmp(key, "svm"))
            return json_is_true(v) ? NULL : "svm: expected true";
        if (!strcmp(key, "object"))
            return plan_str_ok(v, 16) ? NULL : "object: expected a short string";
    }
    return "unknown role";
}

plan_status plan_pattern_check(const json_t *pat, const char *where, char *err, size_t err_cap)
{
    const char *key;
    json_t *v;
    if (!json_is_object(pat) || json_object_size(pat) > 64)
        return plan_seterr(err, err_cap, PLAN_ERR_PLAN, "%s: expected an object of at most 64 members", where);
    json_t *fn = json_object_get(pat, "function");
    if (!json_is_string(fn) || !plan_name_ok(json_string_value(fn), 1))
        return plan_seterr(err, err_cap, PLAN_ERR_PLAN, "%s.function: expected an OpenCL function name", where);
    json_object_foreach((json_t *)pat, key, v) {
        if (!strcmp(key, "function"))
            continue;
        if (!plan_name_ok(key, 0))
            return plan_seterr(err, err_cap, PLAN_ERR_PLAN, "%s: bad member name", where);
        const char *why = NULL;
        if (json_is_null(v) || plan_uint_ok(v) || plan_str_ok(v, PLAN_PAT_MAX_STR)) {
            why = NULL;
        } else if (json_is_array(v) && !strcmp(key, "args")) {
            if (json_array_size(v) > PLAN_PAT_MAX_ARGS)
                why = "more than 256 arguments";
            for (size_t i = 0; !why && i < json_array_size(v); i++) {
                json_t *a = json_array_get(v, i);
                why = json_is_null(a) ? NULL : plan_role_check(a);
            }
        } else if (json_is_array(v)) {
            if (json_array_size(v) > PLAN_PAT_MAX_ARRAY)
                why = "an array of more than 16 values";
            for (size_t i = 0; !why && i < json_array_size(v); i++)
                if (!plan_uint_ok(json_array_get(v, i)) && !json_is_null(json_array_get(v, i)))
                    why = "expected an array of non-negative integers";
        } else if (json_is_object(v)) {
            why = plan_role_check(v);
        } else {
            why = "expected an integer, a string, null, an array or a role";
        }
        if (why)
            return plan_seterr(err, err_cap, PLAN_ERR_PLAN, "%s.%s: %s", where, key, why);
    }
    return PLAN_OK;
}

/* ------------------------------------------------------------ readable */

typedef struct plan_sb {
    char *dst;
    size_t cap, len;
} plan_sb;

static void plan_sb_put(plan_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void plan_sb_put(plan_sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->len < b->cap ? b->dst + b->len : NULL, b->len < b->cap ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->len += (size_t)n;
}

static void plan_sb_value(plan_sb *b, const json_t *v)
{
    if (json_is_integer(v)) {
        plan_sb_put(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_string(v)) {
        plan_sb_put(b, "%s", json_string_value(v));
    } else if (json_is_null(v)) {
        plan_sb_put(b, "-");
    } else if (json_is_array(v)) {
        plan_sb_put(b, "[");
        for (size_t i = 0; i < json_array_size(v); i++) {
            plan_sb_put(b, i ? " " : "");
            plan_sb_value(b, json_array_get(v, i));
        }
        plan_sb_put(b, "]");
    } else if (json_is_object(v)) {
        json_t *m = json_object_get(v, "mem"), *k = json_object_get(v, "kernel"), *x;
        if (m) {
            plan_sb_put(b, "mem#");
            plan_sb_value(b, m);
            plan_sb_put(b, "(");
            plan_sb_value(b, json_object_get(v, "size"));
            plan_sb_put(b, " B)");
        } else if (k) {
            x = json_object_get(v, "program");
            plan_sb_put(b, "%s@%.8s", json_string_value(k), json_is_string(x) ? json_string_value(x) : "?");
        } else if ((x = json_object_get(v, "bytes"))) {
            plan_sb_put(b, "0x%.32s%s", json_string_value(x), json_string_length(x) > 32 ? "…" : "");
        } else if ((x = json_object_get(v, "local"))) {
            plan_sb_put(b, "local ");
            plan_sb_value(b, x);
        } else if ((x = json_object_get(v, "bytes_size"))) {
            plan_sb_value(b, x);
            plan_sb_put(b, " B");
        } else if ((x = json_object_get(v, "program"))) {
            plan_sb_put(b, "program@%.8s", json_is_string(x) ? json_string_value(x) : "?");
        } else {
            plan_sb_put(b, "svm");
        }
    }
}

int plan_pattern_format(const char *pattern, char *dst, size_t dst_cap)
{
    plan_sb b = {dst, dst_cap, 0};
    if (dst_cap)
        dst[0] = 0;
    json_t *p = json_loads(pattern, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(p)) {
        plan_sb_put(&b, "%s", pattern);
        json_decref(p);
        return (int)b.len;
    }
    const char *key;
    json_t *v;
    plan_sb_put(&b, "%s", json_string_value(json_object_get(p, "function")));
    json_object_foreach(p, key, v) {
        if (!strcmp(key, "function"))
            continue;
        if (!strcmp(key, "args")) {
            plan_sb_put(&b, " args(");
            for (size_t i = 0; i < json_array_size(v); i++) {
                plan_sb_put(&b, i ? ", " : "");
                plan_sb_value(&b, json_array_get(v, i));
            }
            plan_sb_put(&b, ")");
            continue;
        }
        plan_sb_put(&b, " %s=", key);
        plan_sb_value(&b, v);
    }
    json_decref(p);
    if (dst_cap && b.len >= dst_cap)
        dst[dst_cap - 1] = 0;
    return (int)b.len;
}

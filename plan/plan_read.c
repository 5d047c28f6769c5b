/* plan_read.c — the plan reader. A plan is untrusted input: the file
 * size is bounded before it is parsed, every member is checked for its
 * type and range, counts are checked against what they count, unknown
 * members are refused (in plans of a minor version this build knows), and
 * the first problem is reported as one line naming where it is
 * ("transformations[3].pattern.args[1]: ..."). */
#include "plan/plan_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char *const plan_reserved[];

typedef struct plan_rd {
    plan_file *p;
    int lenient;              /* a newer minor version: unknown members are ignored */
    char *err;
    size_t cap;
} plan_rd;

static plan_status plan_bad(plan_rd *r, plan_status st, const char *where, const char *what)
{
    return plan_seterr(r->err, r->cap, st, "%s: %s", where, what);
}

/* Every member of @p o must be one of @p names (NULL-terminated). */
static plan_status plan_members(plan_rd *r, const json_t *o, const char *where, const char *const *names)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        int known = 0;
        for (size_t i = 0; names[i] && !known; i++)
            known = !strcmp(key, names[i]);
        if (!known && !r->lenient) {
            char k[48];
            snprintf(k, sizeof k, "%s", key);
            for (char *c = k; *c; c++)
                if (!isprint((unsigned char)*c))
                    *c = '?';
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s: unknown member '%s'", where, k);
        }
    }
    return PLAN_OK;
}

static plan_status plan_get_u64(plan_rd *r, const json_t *o, const char *name, const char *where, uint64_t *v)
{
    json_t *x = json_object_get(o, name);
    if (!json_is_integer(x) || json_integer_value(x) < 0)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.%s: expected a non-negative integer", where, name);
    *v = (uint64_t)json_integer_value(x);
    return PLAN_OK;
}

static plan_status plan_get_str(plan_rd *r, const json_t *o, const char *name, const char *where, size_t max,
                              const char **v)
{
    json_t *x = json_object_get(o, name);
    if (!json_is_string(x) || json_string_length(x) > max || strlen(json_string_value(x)) != json_string_length(x))
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.%s: expected a string of at most %zu bytes", where, name,
                          max);
    *v = json_string_value(x);
    return PLAN_OK;
}

static plan_status plan_get_hash(plan_rd *r, const json_t *v, const char *where, uint8_t h[16])
{
    if (!json_is_string(v) || plan_unhex(json_string_value(v), h, 16))
        return plan_bad(r, PLAN_ERR_PLAN, where, "expected 32 lower-case hex digits");
    return PLAN_OK;
}

static plan_status plan_get_array(plan_rd *r, const json_t *o, const char *name, const char *where, size_t max,
                                json_t **a)
{
    *a = json_object_get(o, name);
    if (!json_is_array(*a))
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.%s: expected an array", where, name);
    if (json_array_size(*a) > max)
        return plan_seterr(r->err, r->cap, PLAN_ERR_LIMIT, "%s.%s: %zu entries, at most %zu are accepted", where, name,
                          json_array_size(*a), max);
    return PLAN_OK;
}

#define PLAN_TRY(e)                  \
    do {                            \
        plan_status plan_st_ = (e);   \
        if (plan_st_ != PLAN_OK)      \
            return plan_st_;         \
    } while (0)

/* Entry @p i of a section: an object of the members @p names whose `id`
 * (into *id) is i + 1 (ids count from 1 in order). */
static plan_status plan_rd_entry(plan_rd *r, const json_t *o, const char *where, const char *const *names, size_t i,
                               uint64_t *id)
{
    if (!json_is_object(o))
        return plan_bad(r, PLAN_ERR_PLAN, where, "expected an object");
    PLAN_TRY(plan_members(r, o, where, names));
    PLAN_TRY(plan_get_u64(r, o, "id", where, id));
    if (*id != i + 1)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.id: %llu, expected %zu (ids count from 1 in order)", where,
                          (unsigned long long)*id, i + 1);
    return PLAN_OK;
}

static plan_status plan_rd_effect(plan_rd *r, const json_t *o, const char *where, plan_effect *e)
{
    static const char *const names[] = {"commands", "kernels", "bytes", "device_ns", "timed", NULL};
    if (!json_is_object(o))
        return plan_bad(r, PLAN_ERR_PLAN, where, "expected an object");
    PLAN_TRY(plan_members(r, o, where, names));
    PLAN_TRY(plan_get_u64(r, o, "commands", where, &e->commands));
    PLAN_TRY(plan_get_u64(r, o, "kernels", where, &e->kernels));
    PLAN_TRY(plan_get_u64(r, o, "bytes", where, &e->bytes));
    PLAN_TRY(plan_get_u64(r, o, "device_ns", where, &e->device_ns));
    PLAN_TRY(plan_get_u64(r, o, "timed", where, &e->timed));
    if (e->kernels > e->commands || e->timed > e->commands)
        return plan_bad(r, PLAN_ERR_PLAN, where, "kernels and timed cannot exceed commands");
    return PLAN_OK;
}

static int plan_pass_of(const char *name)
{
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++)
        if (!strcmp(name, plan_pass_name((plan_pass)i)))
            return (int)i;
    return -1;
}

/* `requires` (1.9, PLAN.md "Requires"): the features the plan uses. A
 * feature this build does not know refuses the plan, whatever its minor
 * version; before 1.9 the member does not exist. */
static plan_status plan_rd_requires(plan_rd *r, const json_t *root, unsigned long mi)
{
    json_t *a = json_object_get(root, "requires");
    if (mi < 9) {
        if (a)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "plan.requires: comes with 1.9 (this plan is %d.%lu)",
                              PLAN_MAJOR, mi);
        return PLAN_OK;
    }
    if (!json_is_array(a) || json_array_size(a) > PLAN_MAX_REQUIRES)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "plan.requires: expected an array of at most %u feature names",
                          PLAN_MAX_REQUIRES);
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *s = json_string_value(json_array_get(a, i));
        size_t n = s ? strlen(s) : 0;
        if (!n || n > 32)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                              "plan.requires[%zu]: expected a feature name (1 to 32 characters)", i);
        unsigned f = 0;
        while (f < PLAN_FEAT_COUNT && strcmp(s, plan_feature_name((plan_feature)f)))
            f++;
        if (f == PLAN_FEAT_COUNT) {
            char k[33], known[128] = "";
            snprintf(k, sizeof k, "%s", s);
            for (char *c = k; *c; c++)
                if (!isprint((unsigned char)*c))
                    *c = '?';
            for (unsigned g = 0; g < PLAN_FEAT_COUNT; g++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", g ? ", " : "",
                         plan_feature_name((plan_feature)g));
            return plan_seterr(r->err, r->cap, PLAN_ERR_VERSION,
                              "plan.requires[%zu]: feature '%s' is unknown to this build (it knows %s): the plan "
                              "needs a newer clrr", i, k, known);
        }
        if (r->p->info.requires & 1u << f)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "plan.requires[%zu]: '%s' is listed twice", i, s);
        r->p->info.requires |= 1u << f;
    }
    return PLAN_OK;
}

static plan_status plan_rd_header(plan_rd *r, const json_t *root)
{
    const char *s;
    char *end;
    PLAN_TRY(plan_get_str(r, root, "format", "plan", 64, &s));
    if (strcmp(s, PLAN_FORMAT))
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "plan.format: '%.64s', not '%s'", s, PLAN_FORMAT);
    PLAN_TRY(plan_get_str(r, root, "version", "plan", 16, &s));
    errno = 0;
    end = (char *)s;
    unsigned long ma = 0, mi = 0;
    if (isdigit((unsigned char)s[0]))
        ma = strtoul(s, &end, 10);
    if (*end == '.' && isdigit((unsigned char)end[1]))
        mi = strtoul(end + 1, &end, 10);
    else
        end = (char *)s;   /* no minor: not MAJOR.MINOR */
    if (!isdigit((unsigned char)s[0]) || errno || *end || ma > 1000 || mi > 1000)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "plan.version: '%s' is not MAJOR.MINOR", s);
    if (ma != PLAN_MAJOR)
        return plan_seterr(r->err, r->cap, PLAN_ERR_VERSION,
                          "plan.version: format version %lu.%lu; this build reads %d.x", ma, mi, PLAN_MAJOR);
    r->p->info.major = (unsigned)ma;
    r->p->info.minor = (unsigned)mi;
    r->lenient = mi > PLAN_MINOR;
    static const char *const top[] = {"format", "version", "requires", "generator", "trace", "passes", "kernels",
                                      "transformations", "device_selection", "splits", "fused_kernels",
                                      "specializations", "schedule", "local_sizes", "coarsenings", "staging",
                                      "unstaged", NULL};
    PLAN_TRY(plan_members(r, root, "plan", top));
    if (mi >= 9)   /* first: a feature this build does not know is the reason to refuse */
        PLAN_TRY(plan_rd_requires(r, root, mi));
    json_t *spv = json_object_get(root, "splits");
    if (mi < 4 && spv && !json_is_null(spv))
        return plan_seterr(r->err, r->cap, PLAN_ERR_VERSION,
                          "plan.splits: this section is reserved for later versions and must be null before 1.4 "
                          "(this plan is %lu.%lu)", ma, mi);
    json_t *szv = json_object_get(root, "specializations");
    if (mi < 7 && szv && !json_is_null(szv))
        return plan_seterr(r->err, r->cap, PLAN_ERR_VERSION,
                          "plan.specializations: this section is reserved for later versions and must be null "
                          "before 1.7 (this plan is %lu.%lu)", ma, mi);
    json_t *scv = json_object_get(root, "schedule");
    if (mi < 8 && scv && !json_is_null(scv))
        return plan_seterr(r->err, r->cap, PLAN_ERR_VERSION,
                          "plan.schedule: this section is reserved for later versions and must be null before 1.8 "
                          "(this plan is %lu.%lu)", ma, mi);
    if (mi < 10 && json_object_get(root, "local_sizes") && !r->lenient)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "plan.local_sizes: comes with 1.10 (this plan is %lu.%lu)",
                          ma, mi);
    if (mi < 12 && json_object_get(root, "coarsenings") && !r->lenient)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "plan.coarsenings: comes with 1.12 (this plan is %lu.%lu)",
                          ma, mi);
    if (mi < 13 && json_object_get(root, "staging") && !r->lenient)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "plan.staging: comes with 1.13 (this plan is %lu.%lu)", ma,
                          mi);
    if (mi < 14 && json_object_get(root, "unstaged") && !r->lenient)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "plan.unstaged: comes with 1.14 (this plan is %lu.%lu)", ma,
                          mi);
    for (size_t i = 0; plan_reserved[i]; i++) {
        json_t *v = json_object_get(root, plan_reserved[i]);
        if (v && !json_is_null(v))
            return plan_seterr(r->err, r->cap, PLAN_ERR_VERSION,
                              "plan.%s: this section is reserved for later versions and must be null in %d.%d",
                              plan_reserved[i], PLAN_MAJOR, PLAN_MINOR);
    }
    const char *gen, *file, *fp;
    PLAN_TRY(plan_get_str(r, root, "generator", "plan", 256, &gen));
    json_t *t = json_object_get(root, "trace");
    static const char *const tn[] = {"file", "calls", "fingerprint", "programs", NULL};
    if (!json_is_object(t))
        return plan_bad(r, PLAN_ERR_PLAN, "plan.trace", "expected an object");
    PLAN_TRY(plan_members(r, t, "plan.trace", tn));
    PLAN_TRY(plan_get_str(r, t, "file", "plan.trace", 4096, &file));
    PLAN_TRY(plan_get_u64(r, t, "calls", "plan.trace", &r->p->info.trace_calls));
    PLAN_TRY(plan_get_str(r, t, "fingerprint", "plan.trace", 16, &fp));
    uint8_t fb[8];
    if (plan_unhex(fp, fb, 8))
        return plan_bad(r, PLAN_ERR_PLAN, "plan.trace.fingerprint", "expected 16 lower-case hex digits");
    for (int i = 0; i < 8; i++)
        r->p->info.fingerprint = r->p->info.fingerprint << 8 | fb[i];
    json_t *progs;
    PLAN_TRY(plan_get_array(r, t, "programs", "plan.trace", PLAN_MAX_KERNELS, &progs));
    for (size_t i = 0; i < json_array_size(progs); i++) {
        uint8_t h[16];
        char where[64];
        snprintf(where, sizeof where, "plan.trace.programs[%zu]", i);
        PLAN_TRY(plan_get_hash(r, json_array_get(progs, i), where, h));
        PLAN_TRY(plan_add_program(r->p, h));
    }
    return plan_set_strings(r->p, gen, file);
}

static plan_status plan_rd_passes(plan_rd *r, const json_t *root)
{
    static const char *const names[] = {"name", "enabled", "transformations", "effect", NULL};
    json_t *a;
    int seen[PLAN_PASS_COUNT] = {0};
    PLAN_TRY(plan_get_array(r, root, "passes", "plan", 64, &a));
    for (size_t i = 0; i < json_array_size(a); i++) {
        char where[48];
        const char *name;
        json_t *o = json_array_get(a, i);
        snprintf(where, sizeof where, "passes[%zu]", i);
        if (!json_is_object(o))
            return plan_bad(r, PLAN_ERR_PLAN, where, "expected an object");
        PLAN_TRY(plan_members(r, o, where, names));
        PLAN_TRY(plan_get_str(r, o, "name", where, 64, &name));
        int p = plan_pass_of(name);
        if (p < 0 && r->lenient)
            continue;
        if (p < 0)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.name: unknown pass '%.64s'", where, name);
        if (seen[p]++)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s: pass '%s' listed twice", where, name);
        if (p == PLAN_PASS_WGSIZE && r->p->info.minor < 10)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.name: pass 'wgsize' comes with 1.10 (this plan is "
                              "%u.%u)", where, r->p->info.major, r->p->info.minor);
        if (p == PLAN_PASS_SCHEDULE && r->p->info.minor < 8)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.name: pass 'schedule' comes with 1.8 (this plan is "
                              "%u.%u)", where, r->p->info.major, r->p->info.minor);
        plan_pass_result *res = &r->p->passes[p];
        json_t *en = json_object_get(o, "enabled");
        if (!json_is_boolean(en))
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.enabled: expected true or false", where);
        res->enabled = json_is_true(en);
        PLAN_TRY(plan_get_u64(r, o, "transformations", where, &res->transformations));
        char ew[64];
        snprintf(ew, sizeof ew, "%s.effect", where);
        PLAN_TRY(plan_rd_effect(r, json_object_get(o, "effect"), ew, &res->effect));
    }
    return PLAN_OK;
}

static plan_status plan_rd_kernels(plan_rd *r, const json_t *root)
{
    static const char *const names[] = {"name", "program", "args", NULL};
    static const char *const acc[] = {"none", "read", "write", "rw", "unknown"};
    json_t *a;
    PLAN_TRY(plan_get_array(r, root, "kernels", "plan", PLAN_MAX_KERNELS, &a));
    for (size_t i = 0; i < json_array_size(a); i++) {
        char where[48], w2[64];
        const char *name;
        uint8_t prog[16], access[256];
        json_t *o = json_array_get(a, i), *args;
        snprintf(where, sizeof where, "kernels[%zu]", i);
        if (!json_is_object(o))
            return plan_bad(r, PLAN_ERR_PLAN, where, "expected an object");
        PLAN_TRY(plan_members(r, o, where, names));
        PLAN_TRY(plan_get_str(r, o, "name", where, 256, &name));
        snprintf(w2, sizeof w2, "%s.program", where);
        PLAN_TRY(plan_get_hash(r, json_object_get(o, "program"), w2, prog));
        PLAN_TRY(plan_get_array(r, o, "args", where, 256, &args));
        for (size_t j = 0; j < json_array_size(args); j++) {
            json_t *v = json_array_get(args, j);
            int k = -1;
            for (int m = 0; m < 5 && json_is_string(v); m++)
                if (!strcmp(json_string_value(v), acc[m]))
                    k = m;
            if (k < 0)
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                                  "%s.args[%zu]: expected none, read, write, rw or unknown", where, j);
            access[j] = (uint8_t)k;
        }
        if (plan_find_kernel(r->p, name, prog))
            return plan_bad(r, PLAN_ERR_PLAN, where, "the same kernel is listed twice");
        PLAN_TRY(plan_add_kernel(r->p, name, prog, (unsigned)json_array_size(args), access));
    }
    return PLAN_OK;
}

/* An identifier of OpenCL C (a kernel name). */
static int plan_is_ident(const char *s)
{
    if (!*s || isdigit((unsigned char)*s))
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

static plan_status plan_rd_fused(plan_rd *r, const json_t *root)
{
    static const char *const names[] = {"id", "name", "producer", "consumer", "program", "keep_store",
                                        "params", "options", "source", "storing", "launches", "into",
                                        "horizontal", NULL};
    json_t *a = json_object_get(root, "fused_kernels");
    if (!a || json_is_null(a))
        return PLAN_OK;   /* 1.0: reserved, null */
    PLAN_TRY(plan_get_array(r, root, "fused_kernels", "plan", PLAN_MAX_FUSED, &a));
    for (size_t i = 0; i < json_array_size(a); i++) {
        char where[48], w2[80];
        plan_fused f;
        uint8_t prm[PLAN_FUSED_MAX_PARAMS][2];
        json_t *o = json_array_get(a, i), *params, *ks;
        uint64_t id;
        memset(&f, 0, sizeof f);
        snprintf(where, sizeof where, "fused_kernels[%zu]", i);
        PLAN_TRY(plan_rd_entry(r, o, where, names, i, &id));
        PLAN_TRY(plan_get_str(r, o, "name", where, 256, &f.name));
        PLAN_TRY(plan_get_str(r, o, "producer", where, 256, &f.producer));
        PLAN_TRY(plan_get_str(r, o, "consumer", where, 256, &f.consumer));
        if (!plan_is_ident(f.name) || !plan_is_ident(f.producer) || !plan_is_ident(f.consumer))
            return plan_bad(r, PLAN_ERR_PLAN, where, "name, producer and consumer must be OpenCL C identifiers");
        snprintf(w2, sizeof w2, "%s.program", where);
        PLAN_TRY(plan_get_hash(r, json_object_get(o, "program"), w2, f.program));
        ks = json_object_get(o, "keep_store");
        if (!json_is_boolean(ks))
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.keep_store: expected true or false", where);
        f.keep_store = json_is_true(ks);
        PLAN_TRY(plan_get_str(r, o, "options", where, 65536, &f.options));
        PLAN_TRY(plan_get_str(r, o, "source", where, PLAN_FUSED_MAX_SOURCE, &f.source));
        f.launches = 2;
        if (json_object_get(o, "launches")) {   /* 1.5: a chain */
            uint64_t nl;
            PLAN_TRY(plan_get_u64(r, o, "launches", where, &nl));
            if (nl < 2 || nl > PLAN_CHAIN_MAX)
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.launches: %llu, expected 2..%d", where,
                                  (unsigned long long)nl, PLAN_CHAIN_MAX);
            f.launches = (unsigned)nl;
        }
        json_t *into = json_object_get(o, "into");
        if (into) {   /* 1.6: a group that is not a chain */
            PLAN_TRY(plan_get_array(r, o, "into", where, PLAN_CHAIN_MAX, &into));
            if (json_array_size(into) + 1 != f.launches)
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.into: %zu entries, expected launches - 1 = %u",
                                  where, json_array_size(into), f.launches - 1);
            for (unsigned k = 0; k + 1 < f.launches; k++) {
                json_t *e = json_array_get(into, k);
                if (!json_is_integer(e) || json_integer_value(e) <= (json_int_t)k ||
                    json_integer_value(e) >= (json_int_t)f.launches)
                    return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.into[%u]: expected a later launch, %u to %u",
                                      where, k, k + 1, f.launches - 1);
                f.into[k] = (uint8_t)json_integer_value(e);
            }
            f.gather = 1;
        }
        json_t *hz = json_object_get(o, "horizontal");
        if (hz) {   /* 1.7: independent launches, every store kept */
            if (!json_is_true(hz) || !f.keep_store || into || json_object_get(o, "storing"))
                return plan_bad(r, PLAN_ERR_PLAN, where,
                               "horizontal: true, only for a kernel that keeps every store (keep_store true) "
                               "and names neither into nor storing");
            f.horizontal = 1;
        }
        PLAN_TRY(plan_get_array(r, o, "params", where, PLAN_FUSED_MAX_PARAMS, &params));
        for (size_t k = 0; k < json_array_size(params); k++) {
            json_t *pk = json_array_get(params, k), *from = json_array_get(pk, 0), *idx = json_array_get(pk, 1);
            if (!json_is_array(pk) || json_array_size(pk) != 2 || !json_is_integer(from) || !json_is_integer(idx) ||
                json_integer_value(from) < 0 || json_integer_value(from) >= (json_int_t)f.launches ||
                json_integer_value(idx) < 0 || json_integer_value(idx) >= 256)
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                                  "%s.params[%zu]: expected [FROM, INDEX], FROM 0 (the first launch) to %u (the "
                                  "consumer), INDEX 0..255", where, k, f.launches - 1);
            prm[k][0] = (uint8_t)json_integer_value(from);
            prm[k][1] = (uint8_t)json_integer_value(idx);
        }
        f.nparams = (unsigned)json_array_size(params);
        f.params = (const uint8_t(*)[2])prm;
        if (json_object_get(o, "storing")) {   /* 1.2: the storing twin, listed before */
            uint64_t tw;
            PLAN_TRY(plan_get_u64(r, o, "storing", where, &tw));
            const plan_fused *t = tw >= 1 && tw <= i ? plan_get_fused(r->p, (size_t)tw - 1) : NULL;
            if (f.keep_store || !t || !t->keep_store || t->launches != f.launches || t->gather != f.gather ||
                (f.gather && memcmp(t->into, f.into, f.launches - 1)) || strcmp(t->producer, f.producer) ||
                strcmp(t->consumer, f.consumer) || memcmp(t->program, f.program, sizeof f.program))
                return plan_bad(r, PLAN_ERR_PLAN, where,
                               "storing: a kernel that does not store names an earlier one of the same pair that does");
            f.storing = (uint32_t)tw;
        }
        PLAN_TRY(plan_add_fused(r->p, &f, NULL));
    }
    return PLAN_OK;
}

/* A byte range [lo, hi) as [LO, HI], or null (*on 0). */
static plan_status plan_rd_range(plan_rd *r, const json_t *v, const char *where, uint8_t *on, uint64_t *lo, uint64_t *hi)
{
    *on = 0;
    *lo = *hi = 0;
    if (json_is_null(v))
        return PLAN_OK;
    json_t *a = json_array_get(v, 0), *b = json_array_get(v, 1);
    if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_integer(a) || !json_is_integer(b) ||
        json_integer_value(a) < 0 || json_integer_value(b) <= json_integer_value(a))
        return plan_bad(r, PLAN_ERR_PLAN, where, "expected null or [LO, HI] with 0 <= LO < HI");
    *on = 1;
    *lo = (uint64_t)json_integer_value(a);
    *hi = (uint64_t)json_integer_value(b);
    return PLAN_OK;
}

/* Picks @p v among @p names (n of them) into *k. */
static plan_status plan_rd_enum(plan_rd *r, const json_t *v, const char *where, const char *const *names, unsigned n,
                              uint8_t *k)
{
    for (unsigned m = 0; m < n && json_is_string(v); m++)
        if (!strcmp(json_string_value(v), names[m])) {
            *k = (uint8_t)m;
            return PLAN_OK;
        }
    return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s: expected %s, %s or %s", where, names[0], names[1], names[2]);
}

static plan_status plan_rd_split(plan_rd *r, const json_t *o, size_t i)
{
    static const char *const names[] = {"id", "kernel", "program", "name", "dim", "groups", "args", "merge",
                                        "parts", "models", "options", "source", NULL};
    static const char *const pn[] = {"device", "groups", "regions", NULL};
    static const char *const rn[] = {"read", "write", NULL};
    static const char *const an[] = {"value", "mem", "local"};
    static const char *const mn[] = {"none", "concat", "diff"};
    char where[48], w2[128];
    plan_split z;
    uint8_t args[PLAN_SPLIT_MAX_ARGS], merge[PLAN_SPLIT_MAX_ARGS];
    plan_split_part parts[PLAN_SPLIT_MAX_PARTS];
    plan_split_region rg[PLAN_SPLIT_MAX_PARTS][PLAN_SPLIT_MAX_ARGS];
    json_t *ja, *jm, *jp;
    uint64_t id, dim;
    memset(&z, 0, sizeof z);
    snprintf(where, sizeof where, "splits[%zu]", i);
    PLAN_TRY(plan_rd_entry(r, o, where, names, i, &id));
    PLAN_TRY(plan_get_str(r, o, "kernel", where, 256, &z.kernel));
    PLAN_TRY(plan_get_str(r, o, "name", where, 256, &z.name));
    if (!plan_is_ident(z.kernel) || !plan_is_ident(z.name))
        return plan_bad(r, PLAN_ERR_PLAN, where, "kernel and name must be OpenCL C identifiers");
    snprintf(w2, sizeof w2, "%s.program", where);
    PLAN_TRY(plan_get_hash(r, json_object_get(o, "program"), w2, z.program));
    PLAN_TRY(plan_get_u64(r, o, "dim", where, &dim));
    if (dim > 2)
        return plan_bad(r, PLAN_ERR_PLAN, where, "dim: 0, 1 or 2");
    z.dim = (unsigned)dim;
    PLAN_TRY(plan_get_u64(r, o, "groups", where, &z.groups));
    if (!z.groups)
        return plan_bad(r, PLAN_ERR_PLAN, where, "groups: at least 1");
    PLAN_TRY(plan_get_str(r, o, "options", where, 65536, &z.options));
    PLAN_TRY(plan_get_str(r, o, "source", where, PLAN_FUSED_MAX_SOURCE, &z.source));
    PLAN_TRY(plan_get_array(r, o, "args", where, PLAN_SPLIT_MAX_ARGS, &ja));
    PLAN_TRY(plan_get_array(r, o, "merge", where, PLAN_SPLIT_MAX_ARGS, &jm));
    z.nargs = (unsigned)json_array_size(ja);
    if (json_array_size(jm) != z.nargs)
        return plan_bad(r, PLAN_ERR_PLAN, where, "args and merge must have one entry per kernel argument");
    for (unsigned k = 0; k < z.nargs; k++) {
        snprintf(w2, sizeof w2, "%s.args[%u]", where, k);
        PLAN_TRY(plan_rd_enum(r, json_array_get(ja, k), w2, an, 3, &args[k]));
        snprintf(w2, sizeof w2, "%s.merge[%u]", where, k);
        PLAN_TRY(plan_rd_enum(r, json_array_get(jm, k), w2, mn, 3, &merge[k]));
        if (merge[k] != PLAN_MERGE_NONE && args[k] != PLAN_SPLIT_ARG_MEM)
            return plan_bad(r, PLAN_ERR_PLAN, w2, "only a mem argument is merged");
    }
    PLAN_TRY(plan_get_array(r, o, "parts", where, PLAN_SPLIT_MAX_PARTS, &jp));
    z.nparts = (unsigned)json_array_size(jp);
    if (!z.nparts)
        return plan_bad(r, PLAN_ERR_PLAN, where, "parts: at least one");
    uint64_t next = 0;
    for (unsigned p = 0; p < z.nparts; p++) {
        json_t *po = json_array_get(jp, p), *jr;
        snprintf(w2, sizeof w2, "%s.parts[%u]", where, p);
        if (!json_is_object(po))
            return plan_bad(r, PLAN_ERR_PLAN, w2, "expected an object");
        PLAN_TRY(plan_members(r, po, w2, pn));
        PLAN_TRY(plan_get_str(r, po, "device", w2, 256, &parts[p].device));
        if (!parts[p].device[0])
            return plan_bad(r, PLAN_ERR_PLAN, w2, "device: an empty spec");
        uint8_t on;
        char w3[160];
        snprintf(w3, sizeof w3, "%s.groups", w2);
        PLAN_TRY(plan_rd_range(r, json_object_get(po, "groups"), w3, &on, &parts[p].lo, &parts[p].hi));
        if (!on || parts[p].lo != next || parts[p].hi > z.groups)
            return plan_bad(r, PLAN_ERR_PLAN, w3, "the parts cover the work-groups [0, groups) in order, each at least one");
        next = parts[p].hi;
        PLAN_TRY(plan_get_array(r, po, "regions", w2, PLAN_SPLIT_MAX_ARGS, &jr));
        if (json_array_size(jr) != z.nargs)
            return plan_bad(r, PLAN_ERR_PLAN, w2, "regions: one entry per kernel argument");
        for (unsigned k = 0; k < z.nargs; k++) {
            json_t *ro = json_array_get(jr, k);
            plan_split_region *g = &rg[p][k];
            memset(g, 0, sizeof *g);
            snprintf(w3, sizeof w3, "%s.regions[%u]", w2, k);
            if (args[k] != PLAN_SPLIT_ARG_MEM) {
                if (!json_is_null(ro))
                    return plan_bad(r, PLAN_ERR_PLAN, w3, "null for an argument that is not mem");
                continue;
            }
            if (!json_is_object(ro))
                return plan_bad(r, PLAN_ERR_PLAN, w3, "expected {\"read\": RANGE, \"write\": RANGE}");
            PLAN_TRY(plan_members(r, ro, w3, rn));
            PLAN_TRY(plan_rd_range(r, json_object_get(ro, "read"), w3, &g->read, &g->rlo, &g->rhi));
            PLAN_TRY(plan_rd_range(r, json_object_get(ro, "write"), w3, &g->write, &g->wlo, &g->whi));
            if (g->write && merge[k] == PLAN_MERGE_NONE)
                return plan_bad(r, PLAN_ERR_PLAN, w3, "a part writes an argument whose merge is none");
        }
        parts[p].regions = rg[p];
    }
    if (next != z.groups)
        return plan_bad(r, PLAN_ERR_PLAN, where, "the parts do not cover every work-group");
    /* concatenation needs disjoint write regions */
    for (unsigned k = 0; k < z.nargs; k++)
        for (unsigned p = 0; merge[k] == PLAN_MERGE_CONCAT && p < z.nparts; p++)
            for (unsigned q = p + 1; q < z.nparts; q++)
                if (rg[p][k].write && rg[q][k].write && rg[p][k].wlo < rg[q][k].whi && rg[q][k].wlo < rg[p][k].whi)
                    return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                                      "%s.merge[%u]: concat, but parts %u and %u write overlapping bytes", where, k,
                                      p, q);
    z.args = args;
    z.merge = merge;
    z.parts = parts;
    /* models: null (fixed parts), or per argument where each range's bytes are */
    plan_split_model md[PLAN_SPLIT_MAX_ARGS];
    json_t *jmod = json_object_get(o, "models");
    if (jmod && !json_is_null(jmod)) {
        snprintf(w2, sizeof w2, "%s.models", where);
        if (!json_is_array(jmod) || json_array_size(jmod) != z.nargs)
            return plan_bad(r, PLAN_ERR_PLAN, w2, "null, or one entry per kernel argument");
        for (unsigned k = 0; k < z.nargs; k++) {
            json_t *mo = json_array_get(jmod, k);
            char w3[160];
            memset(&md[k], 0, sizeof md[k]);
            snprintf(w3, sizeof w3, "%s[%u]", w2, k);
            if (args[k] != PLAN_SPLIT_ARG_MEM) {
                if (!json_is_null(mo))
                    return plan_bad(r, PLAN_ERR_PLAN, w3, "null for an argument that is not mem");
                continue;
            }
            if (!json_is_object(mo))
                return plan_bad(r, PLAN_ERR_PLAN, w3, "expected {\"read\": MODEL, \"write\": MODEL}");
            PLAN_TRY(plan_members(r, mo, w3, rn));
            for (int wr = 0; wr < 2; wr++) {
                json_t *v = json_object_get(mo, wr ? "write" : "read");
                int64_t *c = wr ? md[k].w : md[k].r;
                if (!v || json_is_null(v))
                    continue;
                if (!json_is_array(v) || json_array_size(v) != 4)
                    return plan_bad(r, PLAN_ERR_PLAN, w3, "a model is null or [A, B, C, D]");
                for (int q = 0; q < 4; q++) {
                    json_t *n = json_array_get(v, (size_t)q);
                    if (!json_is_integer(n) || ((q == 1 || q == 3) && json_integer_value(n) < 0))
                        return plan_bad(r, PLAN_ERR_PLAN, w3,
                                       "a model is [A, B, C, D], integers, B and D not negative");
                    c[q] = (int64_t)json_integer_value(n);
                }
                if (wr)
                    md[k].write = 1;
                else
                    md[k].read = 1;
            }
            if (merge[k] == PLAN_MERGE_CONCAT && md[k].write &&
                (md[k].w[1] != md[k].w[3] || md[k].w[2] > md[k].w[0]))
                return plan_bad(r, PLAN_ERR_PLAN, w3, "concat needs a write model whose ranges never overlap");
            if (merge[k] != PLAN_MERGE_NONE && !md[k].write)
                return plan_bad(r, PLAN_ERR_PLAN, w3, "a merged argument needs a write model");
        }
        z.adaptive = 1;
        z.models = md;
    }
    return plan_add_split(r->p, &z, NULL);
}

/* Section @p name (null: none): at most @p max entries, each read by @p one. */
static plan_status plan_rd_section(plan_rd *r, const json_t *root, const char *name, size_t max,
                                 plan_status (*one)(plan_rd *, const json_t *, size_t))
{
    json_t *a = json_object_get(root, name);
    if (!a || json_is_null(a))
        return PLAN_OK;
    PLAN_TRY(plan_get_array(r, root, name, "plan", max, &a));
    for (size_t i = 0; i < json_array_size(a); i++)
        PLAN_TRY(one(r, json_array_get(a, i), i));
    return PLAN_OK;
}

/* specializations[i] (1.7). */
static plan_status plan_rd_spec(plan_rd *r, const json_t *o, size_t i)
{
    static const char *const names[] = {"id", "name", "kernel", "program", "args", "constants", "options", "source",
                                        NULL};
    char where[48], w2[96];
    plan_spec z;
    plan_const cs[PLAN_SPEC_MAX_CONSTS];
    uint64_t id, nargs;
    json_t *a;
    memset(&z, 0, sizeof z);
    memset(cs, 0, sizeof cs);
    snprintf(where, sizeof where, "specializations[%zu]", i);
    PLAN_TRY(plan_rd_entry(r, o, where, names, i, &id));
    PLAN_TRY(plan_get_str(r, o, "name", where, 256, &z.name));
    PLAN_TRY(plan_get_str(r, o, "kernel", where, 256, &z.kernel));
    if (!plan_is_ident(z.name) || !plan_is_ident(z.kernel))
        return plan_bad(r, PLAN_ERR_PLAN, where, "name and kernel must be OpenCL C identifiers");
    snprintf(w2, sizeof w2, "%s.program", where);
    PLAN_TRY(plan_get_hash(r, json_object_get(o, "program"), w2, z.program));
    PLAN_TRY(plan_get_u64(r, o, "args", where, &nargs));
    if (!nargs || nargs > PLAN_FUSED_MAX_PARAMS)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.args: %llu, expected 1..%u", where,
                          (unsigned long long)nargs, PLAN_FUSED_MAX_PARAMS);
    z.nargs = (unsigned)nargs;
    PLAN_TRY(plan_get_array(r, o, "constants", where, PLAN_SPEC_MAX_CONSTS, &a));
    if (!json_array_size(a))
        return plan_bad(r, PLAN_ERR_PLAN, where, "constants: expected 1 to 16 [INDEX, \"BYTES\"]");
    for (size_t k = 0; k < json_array_size(a); k++) {
        json_t *e = json_array_get(a, k), *ix = json_array_get(e, 0), *hx = json_array_get(e, 1);
        const char *h = json_is_string(hx) ? json_string_value(hx) : NULL;
        size_t hl = h ? strlen(h) : 0;
        int ok = json_is_array(e) && json_array_size(e) == 2 && json_is_integer(ix) && json_integer_value(ix) >= 0 &&
                 json_integer_value(ix) < (json_int_t)z.nargs && (hl == 2 || hl == 4 || hl == 8 || hl == 16);
        for (size_t c = 0; ok && c < hl; c++)
            ok = (h[c] >= '0' && h[c] <= '9') || (h[c] >= 'a' && h[c] <= 'f');
        for (size_t j = 0; ok && j < k; j++)
            ok = cs[j].index != (unsigned)json_integer_value(ix);
        if (!ok)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                              "%s.constants[%zu]: expected [INDEX, \"BYTES\"], INDEX 0..%u once, BYTES 1, 2, 4 or 8 "
                              "bytes in lower-case hex", where, k, z.nargs - 1);
        cs[k].index = (unsigned)json_integer_value(ix);
        cs[k].size = (unsigned)(hl / 2);
        for (unsigned b = 0; b < cs[k].size; b++) {
            unsigned v = 0;
            sscanf(h + 2 * b, "%2x", &v);
            cs[k].value[b] = (uint8_t)v;
        }
    }
    z.nconsts = (unsigned)json_array_size(a);
    z.consts = cs;
    PLAN_TRY(plan_get_str(r, o, "options", where, 65536, &z.options));
    PLAN_TRY(plan_get_str(r, o, "source", where, PLAN_FUSED_MAX_SOURCE, &z.source));
    return plan_add_spec(r->p, &z, NULL);
}

/* An array of @p dim integers, each 1..max, at o[name] (NULL allowed
 * when @p null_ok: *has 0). */
static plan_status plan_get_dims(plan_rd *r, const json_t *o, const char *name, const char *where, unsigned dim,
                               uint64_t max, int null_ok, uint64_t v[3], int *has)
{
    json_t *a = json_object_get(o, name);
    if (has)
        *has = 0;
    if (null_ok && json_is_null(a))
        return PLAN_OK;
    if (!json_is_array(a) || json_array_size(a) != dim)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.%s: expected an array of %u integers (one per "
                          "dimension)%s", where, name, dim, null_ok ? " or null" : "");
    for (unsigned d = 0; d < dim; d++) {
        json_t *e = json_array_get(a, d);
        if (!json_is_integer(e) || json_integer_value(e) < 1 || (uint64_t)json_integer_value(e) > max)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.%s[%u]: expected an integer from 1 to %llu", where,
                              name, d, (unsigned long long)max);
        v[d] = (uint64_t)json_integer_value(e);
    }
    if (has)
        *has = 1;
    return PLAN_OK;
}

/* coarsenings[i] (1.12): a coarsened kernel of a plan whose wgsize pass
 * ran; factor 2, 4 or 8, dim 0..2, form blocked, strided, group-blocked or
 * group-strided; or form vector with dim 0 and factor 2, 4, 8 or 16. */
static plan_status plan_rd_coarse(plan_rd *r, const json_t *o, size_t i)
{
    static const char *const names[] = {"id", "name", "kernel", "program", "args", "dim", "factor", "form",
                                        "options", "source", NULL};
    char where[48], w2[96];
    plan_coarse c;
    uint64_t id, nargs, dim, factor;
    const char *form;
    memset(&c, 0, sizeof c);
    snprintf(where, sizeof where, "coarsenings[%zu]", i);
    if (!r->p->passes[PLAN_PASS_WGSIZE].enabled)
        return plan_bad(r, PLAN_ERR_PLAN, where, "the wgsize pass is not enabled in 'passes'");
    PLAN_TRY(plan_rd_entry(r, o, where, names, i, &id));
    PLAN_TRY(plan_get_str(r, o, "name", where, 256, &c.name));
    PLAN_TRY(plan_get_str(r, o, "kernel", where, 256, &c.kernel));
    if (!plan_is_ident(c.name) || !plan_is_ident(c.kernel))
        return plan_bad(r, PLAN_ERR_PLAN, where, "name and kernel must be OpenCL C identifiers");
    snprintf(w2, sizeof w2, "%s.program", where);
    PLAN_TRY(plan_get_hash(r, json_object_get(o, "program"), w2, c.program));
    PLAN_TRY(plan_get_u64(r, o, "args", where, &nargs));
    if (!nargs || nargs > PLAN_FUSED_MAX_PARAMS)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.args: %llu, expected 1..%u", where,
                          (unsigned long long)nargs, PLAN_FUSED_MAX_PARAMS);
    c.nargs = (unsigned)nargs;
    PLAN_TRY(plan_get_u64(r, o, "dim", where, &dim));
    if (dim > 2)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.dim: %llu, expected 0, 1 or 2", where,
                          (unsigned long long)dim);
    c.dim = (unsigned)dim;
    PLAN_TRY(plan_get_str(r, o, "form", where, 64, &form));
    for (c.form = 0; c.form < PLAN_COARSE_FORMS && strcmp(form, plan_coarse_form_name(c.form)); c.form++)
        ;
    if (c.form == PLAN_COARSE_FORMS)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                          "%s.form: '%.64s', expected blocked, strided, vector, group-blocked or group-strided", where,
                          form);
    PLAN_TRY(plan_get_u64(r, o, "factor", where, &factor));
    if (factor != 2 && factor != 4 && factor != 8 && (factor != 16 || c.form != 2))
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.factor: %llu, expected 2, 4 or 8%s", where,
                          (unsigned long long)factor, c.form == 2 ? " or 16" : "");
    c.factor = (unsigned)factor;
    if (c.form == 2 && c.dim)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.dim: %u, the vector form coarsens dimension 0", where,
                          c.dim);
    PLAN_TRY(plan_get_str(r, o, "options", where, 65536, &c.options));
    PLAN_TRY(plan_get_str(r, o, "source", where, PLAN_FUSED_MAX_SOURCE, &c.source));
    return plan_add_coarse(r->p, &c, NULL);
}

/* staging[i] (1.13), unstaged[i] (1.14, @p kept 0): a measured staging
 * decision, one per device across both. */
static plan_status plan_rd_decision(plan_rd *r, const json_t *o, size_t i, int kept)
{
    static const char *const names[] = {"device", "driver", "min_bytes", "transfers", "bytes", "before_ns",
                                        "after_ns", "noise_ns", "reps", NULL};
    char where[48];
    plan_stage s;
    uint64_t reps;
    memset(&s, 0, sizeof s);
    snprintf(where, sizeof where, "%s[%zu]", kept ? "staging" : "unstaged", i);
    if (!json_is_object(o))
        return plan_bad(r, PLAN_ERR_PLAN, where, "expected an object");
    PLAN_TRY(plan_members(r, o, where, names));
    PLAN_TRY(plan_get_str(r, o, "device", where, 256, &s.device));
    PLAN_TRY(plan_get_str(r, o, "driver", where, 256, &s.driver));
    PLAN_TRY(plan_get_u64(r, o, "min_bytes", where, &s.min_bytes));
    if (s.min_bytes < PLAN_STAGE_MIN_BYTES)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.min_bytes: %llu, at least %u", where,
                          (unsigned long long)s.min_bytes, PLAN_STAGE_MIN_BYTES);
    PLAN_TRY(plan_get_u64(r, o, "transfers", where, &s.transfers));
    PLAN_TRY(plan_get_u64(r, o, "bytes", where, &s.bytes));
    if (s.transfers > s.bytes / s.min_bytes)
        return plan_bad(r, PLAN_ERR_PLAN, where, "bytes: fewer than transfers of min_bytes each");
    PLAN_TRY(plan_get_u64(r, o, "before_ns", where, &s.before_ns));
    PLAN_TRY(plan_get_u64(r, o, "after_ns", where, &s.after_ns));
    PLAN_TRY(plan_get_u64(r, o, "noise_ns", where, &s.noise_ns));
    if (kept && s.after_ns > s.before_ns)
        return plan_bad(r, PLAN_ERR_PLAN, where, "after_ns: above before_ns (a decision is kept only when faster)");
    PLAN_TRY(plan_get_u64(r, o, "reps", where, &reps));
    if (!reps || reps > 1000)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.reps: %llu, expected 1 to 1000", where,
                          (unsigned long long)reps);
    s.reps = (unsigned)reps;
    if (plan_stage_for(r->p, s.device, s.driver) || plan_unstaged_for(r->p, s.device, s.driver))
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.device: %s (driver %s) is decided twice", where,
                          s.device, s.driver);
    return kept ? plan_add_stage(r->p, &s) : plan_add_unstaged(r->p, &s);
}

static plan_status plan_rd_stage(plan_rd *r, const json_t *o, size_t i)
{
    return plan_rd_decision(r, o, i, 1);
}

static plan_status plan_rd_unstaged(plan_rd *r, const json_t *o, size_t i)
{
    return plan_rd_decision(r, o, i, 0);
}

/* local_sizes[i] (1.10): a tuned launch shape of a plan whose wgsize pass
 * ran; every local size in range (each dimension 1..global, at most
 * PLAN_LOCAL_MAX_ITEMS work-items in all). */
static plan_status plan_rd_local(plan_rd *r, const json_t *o, size_t i)
{
    static const char *const names[] = {"id", "kernel", "program", "dim", "global", "recorded", "tuned", NULL};
    static const char *const tn[] = {"device", "driver", "local", "before_ns", "after_ns", "noise_ns", "reps",
                                     "coarsen", NULL};
    char where[48], w2[96];
    plan_local l;
    plan_tuned tu[PLAN_LOCAL_MAX_TUNED];
    uint64_t id, dim;
    json_t *a;
    memset(&l, 0, sizeof l);
    memset(tu, 0, sizeof tu);
    snprintf(where, sizeof where, "local_sizes[%zu]", i);
    if (!r->p->passes[PLAN_PASS_WGSIZE].enabled)
        return plan_bad(r, PLAN_ERR_PLAN, where, "the wgsize pass is not enabled in 'passes'");
    PLAN_TRY(plan_rd_entry(r, o, where, names, i, &id));
    PLAN_TRY(plan_get_str(r, o, "kernel", where, 256, &l.kernel));
    snprintf(w2, sizeof w2, "%s.program", where);
    PLAN_TRY(plan_get_hash(r, json_object_get(o, "program"), w2, l.program));
    PLAN_TRY(plan_get_u64(r, o, "dim", where, &dim));
    if (dim < 1 || dim > 3)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.dim: %llu, expected 1, 2 or 3", where,
                          (unsigned long long)dim);
    l.dim = (unsigned)dim;
    PLAN_TRY(plan_get_dims(r, o, "global", where, l.dim, (uint64_t)INT64_MAX, 0, l.global, NULL));
    PLAN_TRY(plan_get_dims(r, o, "recorded", where, l.dim, (uint64_t)INT64_MAX, 1, l.recorded, &l.has_recorded));
    PLAN_TRY(plan_get_array(r, o, "tuned", where, PLAN_LOCAL_MAX_TUNED, &a));
    if (!json_array_size(a))
        return plan_bad(r, PLAN_ERR_PLAN, where, "tuned: expected 1 to 16 devices");
    for (size_t k = 0; k < json_array_size(a); k++) {
        json_t *e = json_array_get(a, k);
        uint64_t reps;
        snprintf(w2, sizeof w2, "%s.tuned[%zu]", where, k);
        if (!json_is_object(e))
            return plan_bad(r, PLAN_ERR_PLAN, w2, "expected an object");
        PLAN_TRY(plan_members(r, e, w2, tn));
        PLAN_TRY(plan_get_str(r, e, "device", w2, 256, &tu[k].device));
        PLAN_TRY(plan_get_str(r, e, "driver", w2, 256, &tu[k].driver));
        const plan_coarse *co = NULL;
        if (json_object_get(e, "coarsen")) {   /* 1.12: a coarsened kernel runs instead */
            uint64_t cid;
            PLAN_TRY(plan_get_u64(r, e, "coarsen", w2, &cid));
            if (!cid || cid > r->p->ncz)
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.coarsen: no coarsened kernel %llu in "
                                  "coarsenings", w2, (unsigned long long)cid);
            co = &r->p->cz[cid - 1];
            if (co->dim >= l.dim)
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.coarsen: coarsenings[%llu] coarsens dimension "
                                  "%u of a launch of %u", w2, (unsigned long long)cid - 1, co->dim, l.dim);
            if (l.global[co->dim] % co->factor)
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.coarsen: the global size %llu is not a "
                                  "multiple of the factor %u", w2, (unsigned long long)l.global[co->dim], co->factor);
            tu[k].coarsen = (uint32_t)cid;
        }
        int has_local = 1;
        PLAN_TRY(plan_get_dims(r, e, "local", w2, l.dim, PLAN_LOCAL_MAX_ITEMS, co != NULL, tu[k].local, &has_local));
        if (co && co->form >= 3) {   /* a group form: the recorded work-groups with F times fewer work-items */
            if (!l.has_recorded || !has_local)
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.coarsen: coarsenings[%u] is %s: the shape needs "
                                  "its recorded local size and a local size", w2, (unsigned)(co - r->p->cz),
                                  plan_coarse_form_name(co->form));
            for (unsigned d = 0; d < l.dim; d++) {
                uint64_t want = d == co->dim ? l.recorded[d] / co->factor : l.recorded[d];
                if (l.global[d] % l.recorded[d] || (d == co->dim && l.recorded[d] % co->factor) ||
                    tu[k].local[d] != want)
                    return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.local[%u]: %llu, the %s form needs the "
                                      "recorded local size %llu%s", w2, d, (unsigned long long)tu[k].local[d],
                                      plan_coarse_form_name(co->form), (unsigned long long)l.recorded[d],
                                      d == co->dim ? " divided by the factor (uniform work-groups)" : "");
            }
        }
        uint64_t items = 1;
        for (unsigned d = 0; d < l.dim && has_local; d++) {
            uint64_t g = co && co->dim == d ? l.global[d] / co->factor : l.global[d];
            if (tu[k].local[d] > g)
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.local[%u]: %llu is larger than the global size "
                                  "%llu", w2, d, (unsigned long long)tu[k].local[d], (unsigned long long)g);
            if (co && g % tu[k].local[d])
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.local[%u]: %llu does not divide the coarsened "
                                  "global size %llu", w2, d, (unsigned long long)tu[k].local[d], (unsigned long long)g);
            items *= tu[k].local[d];
        }
        if (items > PLAN_LOCAL_MAX_ITEMS)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.local: %llu work-items in a work-group, at most %u",
                              w2, (unsigned long long)items, PLAN_LOCAL_MAX_ITEMS);
        PLAN_TRY(plan_get_u64(r, e, "before_ns", w2, &tu[k].before_ns));
        PLAN_TRY(plan_get_u64(r, e, "after_ns", w2, &tu[k].after_ns));
        PLAN_TRY(plan_get_u64(r, e, "noise_ns", w2, &tu[k].noise_ns));
        PLAN_TRY(plan_get_u64(r, e, "reps", w2, &reps));
        if (!reps || reps > 1000)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.reps: %llu, expected 1..1000", w2,
                              (unsigned long long)reps);
        tu[k].reps = (unsigned)reps;
        for (size_t j = 0; j < k; j++)
            if (!strcmp(tu[j].device, tu[k].device) && !strcmp(tu[j].driver, tu[k].driver))
                return plan_bad(r, PLAN_ERR_PLAN, w2, "this device and driver are listed twice");
    }
    l.ntuned = (unsigned)json_array_size(a);
    l.tuned = tu;
    return plan_add_local(r->p, &l, NULL);
}

/* schedule[i] (1.8): a scheduled queue, once, of a plan whose schedule
 * pass ran. */
static plan_status plan_rd_sched(plan_rd *r, const json_t *o, size_t i)
{
    static const char *const names[] = {"id", "queue", "lanes", "commands", "uploads", "downloads", "recorded_ns",
                                        "predicted_ns", "reason", NULL};
    char where[48];
    plan_sched s;
    uint64_t id, lanes;
    memset(&s, 0, sizeof s);
    snprintf(where, sizeof where, "schedule[%zu]", i);
    if (!r->p->passes[PLAN_PASS_SCHEDULE].enabled)
        return plan_bad(r, PLAN_ERR_PLAN, where, "the schedule pass is not enabled in 'passes'");
    PLAN_TRY(plan_rd_entry(r, o, where, names, i, &id));
    PLAN_TRY(plan_get_u64(r, o, "queue", where, &s.queue));
    PLAN_TRY(plan_get_u64(r, o, "lanes", where, &lanes));
    if (lanes != 2 && lanes != 3)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.lanes: %llu, expected 2 or 3", where,
                          (unsigned long long)lanes);
    s.lanes = (unsigned)lanes;
    PLAN_TRY(plan_get_u64(r, o, "commands", where, &s.commands));
    PLAN_TRY(plan_get_u64(r, o, "uploads", where, &s.uploads));
    PLAN_TRY(plan_get_u64(r, o, "downloads", where, &s.downloads));
    if (s.uploads > s.commands || s.downloads > s.commands - s.uploads)
        return plan_bad(r, PLAN_ERR_PLAN, where, "uploads and downloads cannot exceed commands");
    PLAN_TRY(plan_get_u64(r, o, "recorded_ns", where, &s.recorded_ns));
    PLAN_TRY(plan_get_u64(r, o, "predicted_ns", where, &s.predicted_ns));
    if (s.predicted_ns > s.recorded_ns)
        return plan_bad(r, PLAN_ERR_PLAN, where, "predicted_ns cannot exceed recorded_ns");
    PLAN_TRY(plan_get_str(r, o, "reason", where, 1024, &s.reason));
    if (strpbrk(s.reason, "\r\n"))
        return plan_bad(r, PLAN_ERR_PLAN, where, "reason: one line");
    for (size_t k = 0; k < r->p->nsc; k++)
        if (r->p->sc[k].queue == s.queue)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.queue: queue %llu is scheduled by schedule[%zu] "
                              "already", where, (unsigned long long)s.queue, k);
    return plan_add_sched(r->p, &s);
}

static plan_status plan_rd_xform(plan_rd *r, const json_t *o, size_t i, uint64_t counts[PLAN_PASS_COUNT])
{
    static const char *const names[] = {"id", "pass", "action", "call", "occurrence", "pattern", "effect",
                                        "holds", "reason", "verify", "fused", "occurrences", "split",
                                        "specialization", "local_size", "repeat", NULL};
    static const char *const cn[] = {"seq", "function", NULL};
    char where[64], w2[96];
    const char *pass, *action, *fn, *reason, *verify;
    plan_xform x;
    memset(&x, 0, sizeof x);
    snprintf(where, sizeof where, "transformations[%zu]", i);
    uint64_t id;
    PLAN_TRY(plan_rd_entry(r, o, where, names, i, &id));
    PLAN_TRY(plan_get_str(r, o, "pass", where, 64, &pass));
    int p = plan_pass_of(pass);
    if (p < 0)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.pass: unknown pass '%.64s'", where, pass);
    if (!r->p->passes[p].enabled)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.pass: pass '%s' is not enabled in 'passes'", where, pass);
    x.pass = (uint8_t)p;
    counts[p]++;
    PLAN_TRY(plan_get_str(r, o, "action", where, 64, &action));
    if (!strcmp(action, "drop"))
        x.action = PLAN_ACT_DROP;
    else if (!strcmp(action, "hold"))
        x.action = PLAN_ACT_HOLD;
    else if (!strcmp(action, "fuse"))
        x.action = PLAN_ACT_FUSE;
    else if (!strcmp(action, "split"))
        x.action = PLAN_ACT_SPLIT;
    else if (!strcmp(action, "specialize"))
        x.action = PLAN_ACT_SPECIALIZE;
    else if (!strcmp(action, "local_size"))
        x.action = PLAN_ACT_LOCAL_SIZE;
    else if (!strcmp(action, "coarsen"))
        x.action = PLAN_ACT_COARSEN;
    else
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                          "%s.action: unknown action '%.64s' (1.%d knows drop, hold, fuse, split, specialize, "
                          "local_size and coarsen)", where, action, PLAN_MINOR);
    int act_ok = x.pass == PLAN_PASS_FUSE           ? x.action == PLAN_ACT_HOLD || x.action == PLAN_ACT_FUSE
                 : x.pass == PLAN_PASS_SPLIT        ? x.action == PLAN_ACT_SPLIT
                 : x.pass == PLAN_PASS_SPECIALIZE   ? x.action == PLAN_ACT_SPECIALIZE
                 : x.pass == PLAN_PASS_SCHEDULE     ? 0   /* a schedule has no transformation */
                 : x.pass == PLAN_PASS_WGSIZE       ? x.action == PLAN_ACT_LOCAL_SIZE || x.action == PLAN_ACT_COARSEN
                                                   : x.action == PLAN_ACT_DROP;
    if (!act_ok)
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.action: '%s' is not an action of pass '%s'", where,
                          action, pass);
    json_t *fz = json_object_get(o, "fused"), *spl = json_object_get(o, "split");
    json_t *spz = json_object_get(o, "specialization");
    json_t *lsz = json_object_get(o, "local_size");
    if (spz && x.action != PLAN_ACT_SPECIALIZE)
        return plan_bad(r, PLAN_ERR_PLAN, where, "only a specialize names a specialization");
    if (lsz && x.action != PLAN_ACT_LOCAL_SIZE && x.action != PLAN_ACT_COARSEN)
        return plan_bad(r, PLAN_ERR_PLAN, where, "only a local_size or a coarsen names a tuned shape");
    if (x.action == PLAN_ACT_LOCAL_SIZE || x.action == PLAN_ACT_COARSEN) {
        uint64_t lid;
        PLAN_TRY(plan_get_u64(r, o, "local_size", where, &lid));
        if (!lid || lid > r->p->nlz)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.local_size: no tuned shape %llu in local_sizes",
                              where, (unsigned long long)lid);
        if (fz || spl || spz)
            return plan_bad(r, PLAN_ERR_PLAN, where, "a local_size names no fused kernel, split or specialization");
        x.local = (uint32_t)lid;
        int coarse = 0;
        for (unsigned k = 0; k < r->p->lz[lid - 1].ntuned; k++)
            coarse |= r->p->lz[lid - 1].tuned[k].coarsen != 0;
        if (x.action == PLAN_ACT_COARSEN && !coarse)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.local_size: a coarsen names a tuned shape with a "
                              "coarsened kernel, and local_sizes[%llu] has none", where, (unsigned long long)lid - 1);
    } else if (x.action == PLAN_ACT_SPECIALIZE) {
        uint64_t zid;
        PLAN_TRY(plan_get_u64(r, o, "specialization", where, &zid));
        if (!zid || zid > r->p->nsz)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.specialization: no specialization %llu", where,
                              (unsigned long long)zid);
        if (fz || spl)
            return plan_bad(r, PLAN_ERR_PLAN, where, "a specialize names no fused kernel and no split");
        x.spec = (uint32_t)zid;
    } else if (x.action == PLAN_ACT_SPLIT) {
        uint64_t sid;
        PLAN_TRY(plan_get_u64(r, o, "split", where, &sid));
        if (!sid || sid > r->p->nsp)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.split: no split %llu", where, (unsigned long long)sid);
        if (fz)
            return plan_bad(r, PLAN_ERR_PLAN, where, "a split names no fused kernel");
        x.split = (uint32_t)sid;
    } else if (spl) {
        return plan_bad(r, PLAN_ERR_PLAN, where, "only a split names a split");
    } else if (x.action != PLAN_ACT_DROP) {
        uint64_t fid;
        PLAN_TRY(plan_get_u64(r, o, "fused", where, &fid));
        if (!fid || fid > r->p->nfz)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.fused: no fused kernel %llu", where,
                              (unsigned long long)fid);
        x.fused = (uint32_t)fid;
    } else if (fz) {
        return plan_bad(r, PLAN_ERR_PLAN, where, "a drop names no fused kernel");
    }
    json_t *call = json_object_get(o, "call");
    snprintf(w2, sizeof w2, "%s.call", where);
    if (!json_is_object(call))
        return plan_bad(r, PLAN_ERR_PLAN, w2, "expected an object");
    PLAN_TRY(plan_members(r, call, w2, cn));
    PLAN_TRY(plan_get_u64(r, call, "seq", w2, &x.seq));
    PLAN_TRY(plan_get_str(r, call, "function", w2, 64, &fn));
    if (!x.seq)
        return plan_bad(r, PLAN_ERR_PLAN, w2, "seq counts from 1");
    if (!plan_droppable(fn) || (x.action != PLAN_ACT_DROP && strcmp(fn, "clEnqueueNDRangeKernel")))
        return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.function: %.64s cannot be %s", w2, fn,
                          x.action == PLAN_ACT_DROP ? "dropped" : x.action == PLAN_ACT_SPLIT ? "split"
                          : x.action == PLAN_ACT_SPECIALIZE ? "specialized"
                          : x.action == PLAN_ACT_LOCAL_SIZE ? "retuned" : "fused");
    x.function = fn;
    PLAN_TRY(plan_get_u64(r, o, "occurrence", where, &x.occurrence));
    if (json_object_get(o, "occurrences")) {   /* 1.3 */
        PLAN_TRY(plan_get_u64(r, o, "occurrences", where, &x.occurrences));
        if (x.occurrences <= x.occurrence)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                              "%s.occurrences: %llu, but the call is occurrence %llu (from 0) of its pattern", where,
                              (unsigned long long)x.occurrences, (unsigned long long)x.occurrence);
    }
    if (json_object_get(o, "repeat") && (r->p->info.minor >= 11 || !r->lenient)) {   /* 1.11 */
        if (r->p->info.minor < 11)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.repeat: not in a plan of version %u.%u", where,
                              r->p->info.major, r->p->info.minor);
        PLAN_TRY(plan_get_u64(r, o, "repeat", where, &x.repeat));
        if (!x.repeat || x.action != PLAN_ACT_DROP)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.repeat: %s", where,
                              x.repeat ? "only a drop repeats" : "at least 1");
        if (x.repeat > UINT64_MAX - x.occurrence || (x.occurrences && x.occurrence + x.repeat > x.occurrences))
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                              "%s.repeat: %llu occurrences from %llu, past the pattern's %llu", where,
                              (unsigned long long)x.repeat, (unsigned long long)x.occurrence,
                              (unsigned long long)x.occurrences);
    }
    json_t *pat = json_object_get(o, "pattern");
    snprintf(w2, sizeof w2, "%s.pattern", where);
    PLAN_TRY(plan_pattern_check(pat, w2, r->err, r->cap));
    if (strcmp(json_string_value(json_object_get(pat, "function")), fn))
        return plan_bad(r, PLAN_ERR_PLAN, w2, "its function is not the call's");
    if (x.action == PLAN_ACT_SPECIALIZE) {
        /* the launches it applies to pass the constants: their bytes, or
         * (a shape pattern, as the optimizer writes) any bytes of their
         * size, which execution then compares with the constants */
        const plan_spec *z = plan_get_spec(r->p, x.spec - 1);
        json_t *args = json_object_get(pat, "args");
        for (unsigned k = 0; z && k < z->nconsts; k++) {
            char hex[17];
            for (unsigned b = 0; b < z->consts[k].size; b++)
                snprintf(hex + 2 * b, 3, "%02x", z->consts[k].value[b]);
            json_t *a = json_array_get(args, z->consts[k].index), *b = json_object_get(a, "bytes"),
                   *bs = json_object_get(a, "bytes_size");
            if (!(json_is_string(b) && !strcmp(json_string_value(b), hex)) &&
                !(json_is_integer(bs) && json_integer_value(bs) == (json_int_t)z->consts[k].size))
                return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                                  "%s.args[%u]: neither the bytes %s that specialization %u makes a constant nor "
                                  "any %u bytes", w2, z->consts[k].index, hex, z->id, z->consts[k].size);
        }
    }
    char *canon = NULL;
    plan_status st = plan_pattern_canon(pat, &canon, &x.key);
    if (st != PLAN_OK)
        return plan_bad(r, st, w2, st == PLAN_ERR_LIMIT ? "longer than 16384 bytes" : "out of memory");
    x.pattern = canon;
    snprintf(w2, sizeof w2, "%s.effect", where);
    st = plan_rd_effect(r, json_object_get(o, "effect"), w2, &x.effect);
    json_t *holds = json_object_get(o, "holds");
    snprintf(w2, sizeof w2, "%s.holds", where);
    if (st == PLAN_OK && !json_is_null(holds)) {
        static const char *const hn[] = {"seq", NULL};
        if (!json_is_object(holds))
            st = plan_bad(r, PLAN_ERR_PLAN, w2, "expected null or {\"seq\": N}");
        else if ((st = plan_members(r, holds, w2, hn)) == PLAN_OK)
            st = plan_get_u64(r, holds, "seq", w2, &x.holds_seq);
        if (st == PLAN_OK && (!x.holds_seq || x.holds_seq >= x.seq))
            st = plan_bad(r, PLAN_ERR_PLAN, w2, "the call holding the bytes must come before the call");
    }
    if (st == PLAN_OK && (x.pass == PLAN_PASS_REDUNDANT) != (x.holds_seq != 0))
        st = plan_bad(r, PLAN_ERR_PLAN, w2, "a redundant transfer names the call that left its bytes; others none");
    if (st == PLAN_OK)
        st = plan_get_str(r, o, "reason", where, 1024, &reason);
    if (st == PLAN_OK)
        st = plan_get_str(r, o, "verify", where, 64, &verify);
    if (st == PLAN_OK && strcmp(verify, "readbacks"))
        st = plan_seterr(r->err, r->cap, PLAN_ERR_PLAN, "%s.verify: unknown verification '%.64s'", where, verify);
    if (st == PLAN_OK) {
        x.reason = reason;
        st = plan_add_xform(r->p, &x);
    }
    free(canon);
    return st;
}

static int plan_xcmp(const void *a, const void *b)
{
    const plan_xform *x = *(const plan_xform *const *)a, *y = *(const plan_xform *const *)b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    int c = strcmp(x->pattern, y->pattern);
    if (c)
        return c;
    return x->occurrence < y->occurrence ? -1 : x->occurrence > y->occurrence;
}

/* 1 when @p y (after @p x in plan_xcmp's order) names a call @p x names too:
 * the same pattern, and its occurrence inside x's (1.11: repeat). */
static int plan_xoverlap(const plan_xform *x, const plan_xform *y)
{
    uint64_t n = x->repeat > 1 ? x->repeat : 1;
    return x->key == y->key && !strcmp(x->pattern, y->pattern) && y->occurrence - x->occurrence < n;
}

static plan_status plan_rd_xforms(plan_rd *r, const json_t *root)
{
    json_t *a;
    uint64_t counts[PLAN_PASS_COUNT] = {0};
    PLAN_TRY(plan_get_array(r, root, "transformations", "plan", PLAN_MAX_XFORMS, &a));
    for (size_t i = 0; i < json_array_size(a); i++)
        PLAN_TRY(plan_rd_xform(r, json_array_get(a, i), i, counts));
    for (unsigned p = 0; p < PLAN_PASS_COUNT; p++)
        if (counts[p] != r->p->passes[p].transformations)
            return plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                              "passes: '%s' counts %llu transformations, the plan lists %llu", plan_pass_name((plan_pass)p),
                              (unsigned long long)r->p->passes[p].transformations, (unsigned long long)counts[p]);
    /* one call, one transformation */
    size_t n = r->p->nxf;
    const plan_xform **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = &r->p->xf[i];
    qsort(v, n, sizeof *v, plan_xcmp);
    plan_status st = PLAN_OK;
    for (size_t i = 1; i < n && st == PLAN_OK; i++)
        if (plan_xoverlap(v[i - 1], v[i]))
            st = plan_seterr(r->err, r->cap, PLAN_ERR_PLAN,
                            "transformations[%u] and [%u] apply to the same call (same pattern and occurrence)",
                            v[i - 1]->id - 1, v[i]->id - 1);
    free(v);
    return st;
}

plan_status plan_parse(const char *text, size_t len, plan_file **out, char *err, size_t err_cap)
{
    *out = NULL;
    if (len > PLAN_MAX_BYTES)
        return plan_seterr(err, err_cap, PLAN_ERR_LIMIT, "the plan is %zu bytes, at most %zu are accepted", len,
                          PLAN_MAX_BYTES);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return plan_seterr(err, err_cap, PLAN_ERR_PLAN, "not valid JSON: %s (line %d, column %d)", je.text, je.line,
                          je.column);
    plan_status st = PLAN_OK;
    plan_rd r = {plan_new(), 0, err, err_cap};
    if (!r.p)
        st = PLAN_ERR_NOMEM;
    else if (!json_is_object(root))
        st = plan_bad(&r, PLAN_ERR_PLAN, "plan", "expected a JSON object");
    if (st == PLAN_OK)
        st = plan_rd_header(&r, root);
    if (st == PLAN_OK)
        st = plan_rd_passes(&r, root);
    if (st == PLAN_OK)
        st = plan_rd_kernels(&r, root);
    if (st == PLAN_OK)
        st = plan_rd_fused(&r, root);
    if (st == PLAN_OK)
        st = plan_rd_section(&r, root, "splits", PLAN_MAX_SPLITS, plan_rd_split);
    if (st == PLAN_OK)
        st = plan_rd_section(&r, root, "specializations", PLAN_MAX_SPECS, plan_rd_spec);
    if (st == PLAN_OK)
        st = plan_rd_section(&r, root, "schedule", PLAN_MAX_SCHEDS, plan_rd_sched);
    if (st == PLAN_OK && r.p->info.minor >= 12 && json_object_get(root, "coarsenings"))
        st = plan_rd_section(&r, root, "coarsenings", PLAN_MAX_COARSE, plan_rd_coarse);
    if (st == PLAN_OK && r.p->info.minor >= 10)
        st = plan_rd_section(&r, root, "local_sizes", PLAN_MAX_LOCALS, plan_rd_local);
    if (st == PLAN_OK && r.p->info.minor >= 13 && json_object_get(root, "staging"))
        st = plan_rd_section(&r, root, "staging", PLAN_MAX_STAGES, plan_rd_stage);
    if (st == PLAN_OK && r.p->info.minor >= 14 && json_object_get(root, "unstaged"))
        st = plan_rd_section(&r, root, "unstaged", PLAN_MAX_STAGES, plan_rd_unstaged);
    if (st == PLAN_OK)
        st = plan_rd_xforms(&r, root);
    if (st == PLAN_OK && r.p->info.minor < 9)   /* last: what older versions refuse says more */
        st = plan_rd_requires(&r, root, r.p->info.minor);
    if (st == PLAN_OK && r.p->info.minor >= 9) {   /* what it uses, it lists */
        unsigned missing = plan_features(r.p) & ~r.p->info.requires;
        for (unsigned f = 0; missing && f < PLAN_FEAT_COUNT; f++)
            if (missing & 1u << f) {
                st = plan_seterr(err, err_cap, PLAN_ERR_PLAN, "plan.requires: the plan uses '%s' but does not list it",
                                plan_feature_name((plan_feature)f));
                break;
            }
    }
    json_decref(root);
    if (st != PLAN_OK) {
        if (st == PLAN_ERR_NOMEM)
            plan_seterr(err, err_cap, st, "out of memory");
        plan_free(r.p);
        return st;
    }
    *out = r.p;
    return PLAN_OK;
}

plan_status plan_read(const char *path, plan_file **out, char *err, size_t err_cap)
{
    return plan_read_keyed(path, out, NULL, err, err_cap);
}

plan_status plan_read_keyed(const char *path, plan_file **out, char key[PLAN_TRUST_KEY_CAP], char *err,
                            size_t err_cap)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return plan_seterr(err, err_cap, PLAN_ERR_IO, "%s", strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    plan_status st = PLAN_OK;
    for (;;) {
        if (len == cap) {
            if (cap >= PLAN_MAX_BYTES + 1) {
                st = plan_seterr(err, err_cap, PLAN_ERR_LIMIT, "the plan is over %zu bytes", PLAN_MAX_BYTES);
                goto out;
            }
            size_t nc = cap ? cap * 2 : 65536;
            if (nc > PLAN_MAX_BYTES + 1)
                nc = PLAN_MAX_BYTES + 1;
            char *b = realloc(buf, nc);
            if (!b) {
                st = plan_seterr(err, err_cap, PLAN_ERR_NOMEM, "out of memory");
                goto out;
            }
            buf = b;
            cap = nc;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        st = plan_seterr(err, err_cap, PLAN_ERR_IO, "read error");
        goto out;
    }
    st = plan_parse(buf, len, out, err, err_cap);
    if (st == PLAN_OK && key)   /* the bytes parsed are the bytes hashed */
        plan_trust_key(buf, len, key);
out:
    free(buf);
    fclose(f);
    return st;
}

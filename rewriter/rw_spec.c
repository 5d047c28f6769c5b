/* rw_spec.c — rw_specialize(): a copy of a kernel with some of its scalar
 * parameters turned into compile-time constants (rw.h). Parses the
 * program, finds K, checks each constant against its parameter's type
 * (an integer type, float or double, of the value's size), picks new
 * names for the specialized parameters that collide with nothing in the
 * program, and appends the new kernel: K's attributes, K's parameters
 * with those names, then a body that declares each specialized
 * parameter, as its declaration is written, as a local initialized with
 * the exact value, followed by K's body as written. Then checks the
 * result (rw_check.c). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

/* What one specialized parameter becomes. */
typedef struct rw_spec_param {
    const rw_const *c;         /* its value; NULL for a parameter that stays */
    char lit[64];              /* the value as an expression of the parameter's type */
    char show[48];             /* the value for the comment line */
} rw_spec_param;

static rw_status rw_spec_req_ok(const rw_spec_req *req, char *err, size_t cap)
{
    unsigned i, j;

    if (!req || (!req->source && req->len) || !req->kernel || !req->consts)
        return rw_fail(err, cap, RW_ERR_ARG, "incomplete specialization request");
    if (!rw_is_ident(req->name) || strlen(req->name) > 200)
        return rw_fail(err, cap, RW_ERR_ARG, "the new kernel's name is not an identifier");
    if (req->len > RW_MAX_SOURCE)
        return rw_fail(err, cap, RW_ERR_ARG, "program source too large (%zu bytes)", req->len);
    if (req->nconsts < 1 || req->nconsts > RW_MAX_CONSTS)
        return rw_fail(err, cap, RW_ERR_ARG, "%u constants: 1 to %u are specialized",
                       req->nconsts, RW_MAX_CONSTS);
    for (i = 0; i < req->nconsts; i++)
        for (j = 0; j < i; j++)
            if (req->consts[i].index == req->consts[j].index)
                return rw_fail(err, cap, RW_ERR_ARG, "parameter %u is given twice",
                               req->consts[i].index);
    return RW_OK;
}

/* The prefix of the specialized parameters' new names: "__clrr_sp_", else
 * "__clrr1_sp_", ... when one of the prefixed names is an identifier of
 * the program (or the new kernel's name). Refuses a name already used. */
static rw_status rw_spec_prefix(const rw_tu *t, const rw_kernel *k, const rw_spec_param *sp,
                                const char *name, char *pfx, size_t pcap, char *err, size_t cap)
{
    rw_names ids = { 0 };
    char n[RW_NAME_MAX + 32];
    unsigned i, j;
    rw_status st;

    st = rw_idents(t, &ids);
    if (st != RW_OK)
        goto out;
    if (rw_names_has(&ids, name)) {
        st = rw_fail(err, cap, RW_ERR_REFUSED, "the name %s is already used in the program", name);
        goto out;
    }
    for (j = 0; j < 1000; j++) {
        snprintf(pfx, pcap, j ? "__clrr%u_sp_" : "__clrr_sp_", j);
        for (i = 0; i < k->np; i++) {
            if (!sp[i].c)
                continue;
            snprintf(n, sizeof n, "%.31s%.240s", pfx, k->p[i].name);
            if (rw_names_has(&ids, n) || !strcmp(n, name))
                break;
        }
        if (i == k->np)
            break;
    }
    if (j == 1000)
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "no free prefix for the generated names");
out:
    rw_names_free(&ids);
    return st;
}

/* The OpenCL C name of an integer kind, and whether it is signed; NULL
 * for a kind that is not one of the integer types a kernel may take. */
static const char *rw_int_name(enum CXTypeKind kind, int *is_signed)
{
    *is_signed = 1;
    switch (kind) {
    case CXType_Char_S:
    case CXType_SChar: return "char";
    case CXType_Short: return "short";
    case CXType_Int: return "int";
    case CXType_Long: return "long";
    default: break;
    }
    *is_signed = 0;
    switch (kind) {
    case CXType_Char_U:
    case CXType_UChar: return "uchar";
    case CXType_UShort: return "ushort";
    case CXType_UInt: return "uint";
    case CXType_ULong: return "ulong";
    default: return NULL;
    }
}

/* Writes the value of @p c for a parameter of canonical kind @p kind: as
 * an expression of that type (a literal of it, or as_float/as_double of
 * the bits, so NaN payloads and -0.0 stay exact) and for the comment. */
static void rw_spec_value(enum CXTypeKind kind, const rw_const *c, rw_spec_param *sp)
{
    uint64_t u = 0;
    unsigned i, bits = 8 * c->size;
    const char *tn;
    int sgn;

    for (i = 0; i < c->size; i++)
        u |= (uint64_t)c->value[i] << (8 * i);
    if (kind == CXType_Float) {
        uint32_t b = (uint32_t)u;
        float f;
        memcpy(&f, &b, sizeof f);
        snprintf(sp->lit, sizeof sp->lit, "as_float(0x%08xu)", (unsigned)b);
        snprintf(sp->show, sizeof sp->show, "%.9g", (double)f);
        return;
    }
    if (kind == CXType_Double) {
        double d;
        memcpy(&d, &u, sizeof d);
        snprintf(sp->lit, sizeof sp->lit, "as_double(0x%016llxUL)", (unsigned long long)u);
        snprintf(sp->show, sizeof sp->show, "%.17g", d);
        return;
    }
    tn = rw_int_name(kind, &sgn);
    if (!sgn) {
        snprintf(sp->lit, sizeof sp->lit, "(%s)(%llu%s)", tn, (unsigned long long)u,
                 bits == 64 ? "UL" : "u");
        snprintf(sp->show, sizeof sp->show, "%llu", (unsigned long long)u);
        return;
    }
    if (bits < 64 && (u >> (bits - 1) & 1))
        u |= ~(uint64_t)0 << bits;   /* sign-extend */
    {
        long long v;
        const char *sfx = bits == 64 ? "L" : "";
        memcpy(&v, &u, sizeof v);
        snprintf(sp->show, sizeof sp->show, "%lld", v);
        /* the type's minimum has no literal of its own: 2147483648 is a long */
        if (u == ~(uint64_t)0 << (bits - 1))
            snprintf(sp->lit, sizeof sp->lit, "(%s)(-%lld%s - 1%s)", tn, -(v + 1), sfx, sfx);
        else
            snprintf(sp->lit, sizeof sp->lit, "(%s)(%lld%s)", tn, v, sfx);
    }
}

/* Checks constant @p c against K's parameter c->index (a scalar of an
 * integer type, float or double, of the value's size) and fills its
 * entry of @p sp. */
static rw_status rw_spec_param_ok(const rw_kernel *k, const rw_const *c, rw_spec_param *sp,
                                  char *err, size_t cap)
{
    const rw_param *p;
    CXType ty;
    long long size;
    char tname[128];
    int sgn;

    if (c->index >= k->np)
        return rw_fail(err, cap, RW_ERR_ARG, "parameter %u: %s has %u parameters", c->index,
                       k->name, k->np);
    p = &k->p[c->index];
    ty = clang_getCanonicalType(clang_getCursorType(p->c));
    rw_cxcopy(clang_getTypeSpelling(clang_getUnqualifiedType(clang_getCursorType(p->c))), tname,
              sizeof tname);
    switch (ty.kind) {
    case CXType_Pointer:
        return rw_fail(err, cap, RW_ERR_REFUSED, "parameter %u (%s) of %s is a pointer",
                       c->index, p->name, k->name);
    case CXType_Vector:
    case CXType_ExtVector:
        return rw_fail(err, cap, RW_ERR_REFUSED, "parameter %u (%s) of %s is a vector (%s)",
                       c->index, p->name, k->name, tname);
    case CXType_Record:
        return rw_fail(err, cap, RW_ERR_REFUSED,
                       "parameter %u (%s) of %s is a struct or union (%s)", c->index, p->name,
                       k->name, tname);
    case CXType_Float:
    case CXType_Double:
        break;
    default:
        if (!rw_int_name(ty.kind, &sgn))
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "parameter %u (%s) of %s is %s: only integer, float and double "
                           "scalars are specialized",
                           c->index, p->name, k->name, tname);
    }
    size = clang_Type_getSizeOf(ty);
    if (size != (long long)c->size)
        return rw_fail(err, cap, RW_ERR_REFUSED,
                       "parameter %u (%s) of %s is %lld bytes, the value %u", c->index, p->name,
                       k->name, size, c->size);
    sp->c = c;
    rw_spec_value(ty.kind, c, sp);
    return RW_OK;
}

/* The new kernel: K's attributes, K's parameters with the specialized ones
 * renamed (the edits in @p ren), then "{", each specialized parameter's
 * declaration copied as written with its value, and K's body as written
 * from just after its "{": the locals share the body's outermost scope,
 * where OpenCL C wants K's __local variables. */
static rw_status rw_spec_kernel(const rw_tu *t, const rw_kernel *k, const rw_spec_param *sp,
                                const char *name, rw_edits *ren, rw_buf *b, rw_segs *segs,
                                char *err, size_t cap)
{
    rw_edits none = { 0 };
    unsigned i;

    RW_FORWARD(rw_kernel_head(t, k, NULL, name, b, segs, err, cap));
    for (i = 0; i < k->np; i++) {
        if (i)
            rw_buf_adds(b, ",\n        ");
        RW_FORWARD(rw_edits_apply(t, ren, k->p[i].start, k->p[i].end, b, segs, k->name, err,
                                  cap));
    }
    rw_buf_adds(b, ")\n{\n");
    for (i = 0; i < k->np; i++) {
        if (!sp[i].c)
            continue;
        rw_buf_adds(b, "    ");
        RW_FORWARD(rw_edits_apply(t, &none, k->p[i].start, k->p[i].end, b, segs, k->name, err,
                                  cap));
        rw_buf_addf(b, " = %s;\n", sp[i].lit);
    }
    RW_FORWARD(rw_edits_apply(t, &none, k->body_start + 1, k->body_end, b, segs, k->name, err,
                              cap));
    rw_buf_adds(b, "\n");
    return b->oom ? RW_ERR_NOMEM : RW_OK;
}

/* Checks every constant, picks the names, and records the renames of
 * the specialized parameters' declarations in @p ren. */
static rw_status rw_spec_plan(const rw_tu *t, const rw_kernel *k, const rw_spec_req *req,
                              rw_spec_param *sp, rw_edits *ren, char *err, size_t cap)
{
    char pfx[32], n[RW_NAME_MAX + 32];
    const rw_macro *m;
    unsigned i;

    for (i = 0; i < req->nconsts; i++)
        RW_FORWARD(rw_spec_param_ok(k, &req->consts[i], &sp[req->consts[i].index], err, cap));
    /* the local takes over from "{": that brace must be the program's */
    m = rw_macro_edge(t, k->body_start, UINT_MAX);
    if (m || t->src[k->body_start] != '{')
        return rw_fail(err, cap, RW_ERR_REFUSED, "the body of %s opens in macro %s (line %u)",
                       k->name, m ? m->name : "?", rw_line(t, k->body_start));
    RW_FORWARD(rw_spec_prefix(t, k, sp, req->name, pfx, sizeof pfx, err, cap));
    for (i = 0; i < k->np; i++) {
        const rw_param *p = &k->p[i];
        unsigned end = p->name_off + (unsigned)strlen(p->name);
        if (!sp[i].c)
            continue;
        m = rw_macro_edge(t, p->name_off, end);
        if (m || p->name_off < p->start || end > p->end)
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "parameter %u (%s) of %s is named through macro %s (line %u)", i,
                           p->name, k->name, m ? m->name : "?", rw_line(t, p->start));
        snprintf(n, sizeof n, "%.31s%.240s", pfx, p->name);   /* names: at most 240 */
        RW_FORWARD(rw_edit_add(ren, p->name_off, end, n, p->name));
    }
    return RW_OK;
}

/* The comment line before the new kernel: which parameters, what values. */
static void rw_spec_comment(rw_buf *b, const rw_kernel *k, const rw_spec_param *sp,
                            const char *name, unsigned nconsts)
{
    unsigned i, j = 0;

    rw_buf_addf(b, "\n/* %s: %s with %s ", name, k->name, nconsts > 1 ? "parameters" : "parameter");
    for (i = 0; i < k->np; i++)
        if (sp[i].c)
            rw_buf_addf(b, "%s%s (= %s)", j++ ? ", " : "", k->p[i].name, sp[i].show);
    rw_buf_addf(b, " as %s (generated by clrr's rewriter) */\n",
                nconsts > 1 ? "compile-time constants" : "a compile-time constant");
}

rw_status rw_specialize(const rw_spec_req *req, rw_spec_out *out, char *err, size_t cap)
{
    rw_job j;
    rw_kernel *k;
    rw_spec_param *sp = NULL;
    rw_edits ren = { 0 };
    rw_status st = rw_job_open(&j, out, sizeof *out, err, cap);

    if (st == RW_OK)
        st = rw_spec_req_ok(req, err, cap);
    if (st == RW_OK)
        st = rw_job_parse(&j, req->source, req->len, req->options, req->kernel, NULL, err, cap);
    if (st != RW_OK)
        goto out;
    k = j.k[0];
    sp = calloc(RW_MAX_PARAMS, sizeof *sp);
    st = sp ? rw_spec_plan(&j.t, k, req, sp, &ren, err, cap) : RW_ERR_NOMEM;
    if (st != RW_OK)
        goto out;
    rw_buf_program(&j.b, &j.t);
    rw_spec_comment(&j.b, k, sp, req->name, req->nconsts);
    rw_job_start(&j);
    st = rw_spec_kernel(&j.t, k, sp, req->name, &ren, &j.b, &j.segs, err, cap);
    if (st == RW_OK)
        st = rw_job_end(&j, req->name, k->np, k->name, NULL, &out->source, &out->len, err, cap);
    if (st == RW_OK)
        out->nparams = k->np;
out:
    rw_job_close(&j, st, out, sizeof *out);
    rw_edits_free(&ren);
    free(sp);
    return st;
}

void rw_specialize_free(rw_spec_out *out)
{
    if (!out)
        return;
    free(out->source);
    memset(out, 0, sizeof *out);
}

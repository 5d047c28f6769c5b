/* rw_fuse.c — rw_fuse(): vertical fusion of a producer and a consumer
 * kernel (rw.h). Parses the program, checks that B is a __global buffer
 * of one element type in both, that the kernels agree on attributes and
 * have no inactive preprocessor branch, picks names that collide with
 * nothing in the program, walks both bodies into edits (rw_walk.c; P's
 * first: whether its store may not run decides how C reads B), writes the
 * fused kernel from the edited text and checks it (rw_check.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

/* Names the fused kernel uses, none of them an identifier of the program. */
typedef struct rw_names_out {
    char var[64], flag[64], label[64], pp[16], cp[16];
    char b_name[2 * RW_NAME_MAX];   /* B in the fused kernel, for C's fallback loads */
} rw_names_out;

static int rw_prefix_free(const rw_names *ids, const rw_kernel *k, const char *prefix,
                          const char *name)
{
    char n[2 * RW_NAME_MAX];
    unsigned i;

    for (i = 0; i < k->np; i++) {
        snprintf(n, sizeof n, "%s%s", prefix, k->p[i].name);
        if (rw_names_has(ids, n) || !strcmp(n, name))
            return 0;
    }
    return 1;
}

static rw_status rw_pick_names(const rw_tu *t, const rw_kernel *p, const rw_kernel *c,
                               const char *name, rw_names_out *o, char *err, size_t cap)
{
    rw_names ids = { 0 };
    rw_status st;
    unsigned n;

    st = rw_idents(t, &ids);
    if (st != RW_OK)
        goto out;
    if (rw_names_has(&ids, name)) {
        st = rw_fail(err, cap, RW_ERR_REFUSED, "the name %s is already used in the program", name);
        goto out;
    }
    for (n = 0; n < 1000; n++) {
        snprintf(o->var, sizeof o->var, n ? "__clrr_v%u" : "__clrr_v", n);
        snprintf(o->flag, sizeof o->flag, n ? "__clrr_stored%u" : "__clrr_stored", n);
        snprintf(o->label, sizeof o->label, n ? "__clrr_p_done%u" : "__clrr_p_done", n);
        if (!rw_names_has(&ids, o->var) && !rw_names_has(&ids, o->flag) &&
            !rw_names_has(&ids, o->label) && strcmp(o->var, name) && strcmp(o->flag, name) &&
            strcmp(o->label, name))
            break;
    }
    if (n == 1000) {
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "no free name for the private variable");
        goto out;
    }
    for (n = 0; n < 1000; n++) {
        snprintf(o->pp, sizeof o->pp, n ? "p%u_" : "p_", n);
        snprintf(o->cp, sizeof o->cp, n ? "c%u_" : "c_", n);
        if (rw_prefix_free(&ids, p, o->pp, name) && rw_prefix_free(&ids, c, o->cp, name))
            break;
    }
    if (n == 1000)
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "no free prefix for parameter names");
out:
    rw_names_free(&ids);
    return st;
}

/* B in @p k (parameter @p i): a __global pointer; its unqualified element
 * type as spelled and canonical. */
static rw_status rw_buffer(const rw_kernel *k, unsigned i, char *elem, size_t ecap, char *canon,
                           size_t ccap, char *err, size_t cap)
{
    CXType pt;

    if (i >= k->np)
        return rw_fail(err, cap, RW_ERR_ARG, "%s has %u parameters, not a parameter %u", k->name,
                       k->np, i);
    if (rw_param_as(k, i) != RW_AS_GLOBAL)
        return rw_fail(err, cap, RW_ERR_REFUSED, "%s: parameter %u (%s) is not a __global pointer",
                       k->name, i, k->p[i].name);
    pt = clang_getPointeeType(clang_getCursorType(k->p[i].c));
    if (clang_isVolatileQualifiedType(pt))
        return rw_fail(err, cap, RW_ERR_REFUSED, "%s: %s is volatile", k->name, k->p[i].name);
    rw_cxcopy(clang_getTypeSpelling(clang_getUnqualifiedType(pt)), elem, ecap);
    rw_cxcopy(clang_getTypeSpelling(clang_getCanonicalType(clang_getUnqualifiedType(pt))), canon,
              ccap);
    return RW_OK;
}

/* What both kernels must satisfy before their bodies are walked. */
static rw_status rw_pair_ok(const rw_tu *t, const rw_kernel *p, const rw_kernel *c,
                            const rw_fuse_req *req, char *elem, size_t ecap, char *err, size_t cap)
{
    char pc[256], ce[256], cc[256];
    const rw_kernel *ks[2] = { p, c };
    unsigned i, j, n;

    if ((req->p_buf == RW_NO_BUF) != (req->c_buf == RW_NO_BUF))
        return rw_fail(err, cap, RW_ERR_ARG, "a horizontal fusion names no buffer in either kernel");
    if (req->p_buf == RW_NO_BUF)
        elem[0] = '\0';
    else {
        RW_FORWARD(rw_buffer(p, req->p_buf, elem, ecap, pc, sizeof pc, err, cap));
        RW_FORWARD(rw_buffer(c, req->c_buf, ce, sizeof ce, cc, sizeof cc, err, cap));
    }
    if (req->p_buf != RW_NO_BUF && strcmp(pc, cc))
        return rw_fail(err, cap, RW_ERR_REFUSED,
                       "%s's %s holds %s but %s's %s holds %s", p->name,
                       p->p[req->p_buf].name, elem, c->name, c->p[req->c_buf].name, ce);
    for (j = 0; j < 2; j++) {
        for (i = 0; i < ks[j]->np; i++)
            if (rw_param_as(ks[j], i) == RW_AS_LOCAL)
                return rw_fail(err, cap, RW_ERR_REFUSED,
                               "%s takes __local memory (%s): work-group semantics are not fused",
                               ks[j]->name, ks[j]->p[i].name);
        if (rw_skipped_in(t, ks[j]->start, ks[j]->end))
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "%s holds a preprocessor branch that is not compiled", ks[j]->name);
    }
    if (p->na != c->na)
        return rw_fail(err, cap, RW_ERR_REFUSED, "%s and %s have different attributes", p->name,
                       c->name);
    for (i = 0; i < p->na; i++) {
        for (j = 0; j < c->na && strcmp(p->a[i].key, c->a[j].key); j++)
            ;
        if (j == c->na)
            return rw_fail(err, cap, RW_ERR_REFUSED, "%s has attribute %s, %s does not", p->name,
                           p->a[i].key, c->name);
    }
    n = req->p_buf == RW_NO_BUF ? p->np + c->np : p->np - (req->keep_store ? 0u : 1u) + c->np - 1u;
    if (n > RW_MAX_PARAMS)
        return rw_fail(err, cap, RW_ERR_REFUSED, "the fused kernel would have %u parameters", n);
    return RW_OK;
}

/* Writes the fused kernel after the program in @p b; fills out's params.
 * B is a parameter when P keeps its store (P's), or when C may have to
 * load it (C's). */
static rw_status rw_compose(const rw_tu *t, const rw_kernel *p, const rw_kernel *c,
                            const rw_fuse_req *req, const rw_names_out *nm, const char *elem,
                            int may_skip, int returns, rw_edits *pe, rw_edits *ce, rw_buf *b, rw_segs *segs,
                            rw_fuse_out *out, char *err, size_t cap)
{
    unsigned i, j;
    const rw_kernel *ks[2] = { p, c };
    rw_edits *es[2] = { pe, ce };
    unsigned skip[2] = { req->keep_store ? ~0u : req->p_buf,
                         may_skip && !req->keep_store ? ~0u : req->c_buf };

    RW_FORWARD(rw_kernel_head(t, c, ce, req->name, b, segs, err, cap));
    for (j = 0; j < 2; j++)
        for (i = 0; i < ks[j]->np; i++) {
            if (i == skip[j])
                continue;
            if (out->nparams)
                rw_buf_adds(b, ",\n        ");
            RW_FORWARD(rw_edits_apply(t, es[j], ks[j]->p[i].start, ks[j]->p[i].end, b, segs,
                                      ks[j]->name, err, cap));
            out->params[out->nparams].from = (unsigned char)j;
            out->params[out->nparams].index = (unsigned char)i;
            out->nparams++;
        }
    if (!out->nparams)
        rw_buf_adds(b, "void");
    if (req->p_buf == RW_NO_BUF)
        rw_buf_adds(b, ")\n{\n");
    else
        rw_buf_addf(b, ")\n{\n    %s %s;\n", elem, nm->var);
    if (may_skip)
        rw_buf_addf(b, "    int %s = 0;\n", nm->flag);
    RW_FORWARD(rw_edits_apply(t, pe, p->body_start, p->body_end, b, segs, p->name, err, cap));
    if (returns)   /* (a kernel with no label can be a later fusion's producer) */
        rw_buf_addf(b, "\n%s: ;\n", nm->label);
    RW_FORWARD(rw_edits_apply(t, ce, c->body_start, c->body_end, b, segs, c->name, err, cap));
    rw_buf_adds(b, "\n}\n");
    return b->oom ? RW_ERR_NOMEM : RW_OK;
}

/* Renames of the parameters' own declarations. */
static rw_status rw_decl_renames(const rw_kernel *k, const char *prefix, rw_edits *e)
{
    char text[RW_NAME_MAX + 16];
    unsigned i;

    for (i = 0; i < k->np; i++) {
        snprintf(text, sizeof text, "%s%s", prefix, k->p[i].name);
        RW_FORWARD(rw_edit_add(e, k->p[i].name_off,
                               k->p[i].name_off + (unsigned)strlen(k->p[i].name), text,
                               k->p[i].name));
    }
    return RW_OK;
}

static rw_status rw_req_ok(const rw_fuse_req *req, char *err, size_t cap)
{
    if (!req || (!req->source && req->len) || !req->producer || !req->consumer)
        return rw_fail(err, cap, RW_ERR_ARG, "incomplete fusion request");
    if (!rw_is_ident(req->name) || strlen(req->name) > 200)
        return rw_fail(err, cap, RW_ERR_ARG, "the fused kernel's name is not an identifier");
    if (req->len > RW_MAX_SOURCE)
        return rw_fail(err, cap, RW_ERR_ARG, "program source too large (%zu bytes)", req->len);
    return RW_OK;
}

rw_status rw_fuse(const rw_fuse_req *req, rw_fuse_out *out, char *err, size_t cap)
{
    rw_job j;
    rw_kernel *p, *c;
    rw_names_out nm;
    rw_edits pe = { 0 }, ce = { 0 };
    rw_role pr, cr;
    char elem[256];
    int may_skip = 0, returns = 0;
    rw_status st = rw_job_open(&j, out, sizeof *out, err, cap);

    if (st == RW_OK)
        st = rw_req_ok(req, err, cap);
    if (st == RW_OK)
        st = rw_job_parse(&j, req->source, req->len, req->options, req->producer, req->consumer, err, cap);
    if (st != RW_OK)
        goto out;
    p = j.k[0];
    c = j.k[1];
    st = rw_pair_ok(&j.t, p, c, req, elem, sizeof elem, err, cap);
    if (st == RW_OK)
        st = rw_pick_names(&j.t, p, c, req->name, &nm, err, cap);
    if (st != RW_OK)
        goto out;
    pr = (rw_role){ 1, req->p_buf, req->keep_store ? 1 : 0, nm.var, nm.flag, NULL, nm.label,
                    nm.pp };
    st = rw_walk(&j.t, p, &pr, &pe, &may_skip, &returns, err, cap);
    if (st != RW_OK)
        goto out;
    /* where P's store may not run, C loads B: P's (kept) or its own */
    if (req->p_buf == RW_NO_BUF)
        nm.b_name[0] = '\0';
    else if (req->keep_store)
        snprintf(nm.b_name, sizeof nm.b_name, "%s%s", nm.pp, p->p[req->p_buf].name);
    else
        snprintf(nm.b_name, sizeof nm.b_name, "%s%s", nm.cp, c->p[req->c_buf].name);
    cr = (rw_role){ 0, req->c_buf, 0, nm.var, may_skip ? nm.flag : NULL,
                    req->p_buf == RW_NO_BUF ? NULL : nm.b_name, NULL, nm.cp };
    st = rw_walk(&j.t, c, &cr, &ce, NULL, NULL, err, cap);
    if (st == RW_OK)
        st = rw_decl_renames(p, nm.pp, &pe);
    if (st == RW_OK)
        st = rw_decl_renames(c, nm.cp, &ce);
    if (st != RW_OK)
        goto out;
    rw_buf_program(&j.b, &j.t);
    if (req->p_buf == RW_NO_BUF)
        rw_buf_addf(&j.b, "\n/* %s: %s beside %s, one launch (generated by clrr's rewriter) */\n", req->name,
                    p->name, c->name);
    else
        rw_buf_addf(&j.b, "\n/* %s: %s then %s, %s handed over in a private variable "
                          "(generated by clrr's rewriter) */\n",
                    req->name, p->name, c->name, p->p[req->p_buf].name);
    rw_job_start(&j);
    st = rw_compose(&j.t, p, c, req, &nm, elem, may_skip, returns, &pe, &ce, &j.b, &j.segs, out, err, cap);
    if (st == RW_OK)
        st = rw_job_end(&j, req->name, out->nparams, c->name, NULL, &out->source, &out->len, err, cap);
out:
    rw_job_close(&j, st, out, sizeof *out);
    rw_edits_free(&pe);
    rw_edits_free(&ce);
    return st;
}

void rw_fuse_free(rw_fuse_out *out)
{
    if (!out)
        return;
    free(out->source);
    memset(out, 0, sizeof *out);
}

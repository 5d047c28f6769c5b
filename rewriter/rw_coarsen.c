/* rw_coarsen.c — rw_coarsen(): a thread-coarsened copy of a kernel (rw.h).
 * Parses the program, finds K, refuses what coarsening could change (a
 * barrier or another work-group or sub-group function, __local memory,
 * get_local_id, get_group_id, get_local_size, get_num_groups,
 * get_enqueued_local_size in dimension D or in a dimension not known at
 * compile time, get_local_linear_id, reqd_work_group_size, a function K
 * reaches that calls a redirected builtin or one of those, a program that
 * defines a redirected builtin's name itself), picks reserved names that
 * collide with nothing in the program, and appends: the helper functions,
 * one #define per redirected builtin (get_global_id, get_global_size,
 * get_global_linear_id) that sends its calls to a helper with the loop's
 * counter, the new kernel (K's attributes and parameters, then a loop of
 * F iterations around K's body, whose returns go to the loop's next
 * iteration) and the #undefs; then checks the result (rw_check.c).
 * The group forms coarsen inside each work-group instead: the local size
 * is divided too, get_local_id, get_local_size, get_enqueued_local_size
 * and get_local_linear_id are redirected as well, and get_group_id and
 * get_num_groups stay what they were, so a kernel that indexes by its
 * work-group keeps its meaning (barriers and __local variables are still
 * refused). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

/* The builtins the coarsened kernel redirects. */
static const char *const rw_co_builtins[] = {
    "get_global_id", "get_global_size", "get_global_linear_id", NULL,
};
#define RW_CO_NBUILTINS 3u

/* The group forms' (RW_COARSEN_GROUP_BLOCKED, RW_COARSEN_GROUP_STRIDED). */
static const char *const rw_co_gbuiltins[] = {
    "get_global_id", "get_global_size", "get_global_linear_id", "get_local_id", "get_local_size",
    "get_enqueued_local_size", "get_local_linear_id", NULL,
};
#define RW_CO_NGBUILTINS 7u

static int rw_co_is_grouped(unsigned form)
{
    return form == RW_COARSEN_GROUP_BLOCKED || form == RW_COARSEN_GROUP_STRIDED;
}

/* The builtins a form redirects (NULL-terminated), their count in *n. */
static const char *const *rw_co_redirected(int grouped, size_t *n)
{
    *n = grouped ? RW_CO_NGBUILTINS : RW_CO_NBUILTINS;
    return grouped ? rw_co_gbuiltins : rw_co_builtins;
}

/* Builtins that tie a work-item to its work-group or sub-group: refused
 * wherever K reaches them (prefixes work_group_ and sub_group_ too). */
static const char *const rw_co_group[] = {
    "barrier", "work_group_barrier", "sub_group_barrier", "get_local_linear_id",
    "async_work_group_copy", "async_work_group_strided_copy", "wait_group_events",
    "get_sub_group_id", "get_sub_group_local_id", "get_sub_group_size", "get_num_sub_groups",
};
#define RW_CO_NGROUP (sizeof rw_co_group / sizeof rw_co_group[0])

/* Builtins that are fine in the dimensions other than D. */
static const char *const rw_co_dimmed[] = {
    "get_local_id", "get_group_id", "get_local_size", "get_num_groups", "get_enqueued_local_size",
};
#define RW_CO_NDIMMED (sizeof rw_co_dimmed / sizeof rw_co_dimmed[0])

static const char *const rw_co_suffixes[] = {
    "co_gid", "co_gsz", "co_lin", "co_j", "co_d", "co_next", "co_vs", "co_lid", "co_lsz", "co_llin",
};

const char *rw_coarsen_form_name(unsigned form)
{
    return form == RW_COARSEN_BLOCKED   ? "blocked"
           : form == RW_COARSEN_STRIDED ? "strided"
           : form == RW_COARSEN_VECTOR  ? "vector"
           : form == RW_COARSEN_GROUP_BLOCKED ? "group-blocked"
           : form == RW_COARSEN_GROUP_STRIDED ? "group-strided"
                                        : NULL;
}

static rw_status rw_co_prefix(const rw_tu *t, const char *name, unsigned np, char *pfx, size_t pcap, char *err,
                              size_t cap)
{
    rw_names ids = { 0 };
    char n[RW_NAME_MAX];
    unsigned i, k;
    rw_status st;

    st = rw_idents(t, &ids);
    if (st != RW_OK)
        goto out;
    if (rw_names_has(&ids, name)) {
        st = rw_fail(err, cap, RW_ERR_REFUSED, "the name %s is already used in the program", name);
        goto out;
    }
    for (k = 0; k < 1000; k++) {
        snprintf(pfx, pcap, k ? "__clrr%u_" : "__clrr_", k);
        for (i = 0; i < sizeof rw_co_suffixes / sizeof rw_co_suffixes[0]; i++) {
            snprintf(n, sizeof n, "%s%s", pfx, rw_co_suffixes[i]);
            if (rw_names_has(&ids, n) || !strcmp(n, name))
                break;
        }
        int free_ = i == sizeof rw_co_suffixes / sizeof rw_co_suffixes[0];
        for (unsigned q = 0; free_ && q < np; q++) {
            snprintf(n, sizeof n, "%sco_p%u", pfx, q);   /* a parameter the body changes, renamed */
            free_ = !rw_names_has(&ids, n) && strcmp(n, name);
        }
        if (free_)
            break;
    }
    if (k == 1000)
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "no free prefix for the generated names");
out:
    rw_names_free(&ids);
    return st;
}

/* The walk of K's body: refusals and the edits of its returns. */
typedef struct rw_co_walk {
    const rw_tu *t;
    const rw_kernel *k;
    unsigned dim;
    int grouped;               /* a group form: the local builtins are redirected too */
    int vector;                /* the vector form: a parameter the body changes is refused */
    unsigned char *written;    /* per parameter: the body changes it or takes its address */
    const char *next;          /* the label returns go to */
    rw_edits *edits;
    rw_status st;
    char *err;
    size_t cap;
} rw_co_walk;

static int rw_co_is_group(const char *name)
{
    return rw_in_set(name, rw_co_group, RW_CO_NGROUP) || !strncmp(name, "work_group_", 11) ||
           !strncmp(name, "sub_group_", 10);
}

/* A call of a dimensioned builtin: its dimension must be a constant other
 * than D. */
static void rw_co_dim_call(rw_co_walk *w, CXCursor c, const char *name)
{
    CXCursor a;
    CXEvalResult ev;
    long long d = -1;
    int known = 0;

    if (clang_Cursor_getNumArguments(c) != 1) {
        w->st = rw_fail(w->err, w->cap, RW_ERR_REFUSED, "%s calls %s (line %u) without one argument",
                        w->k->name, name, rw_line_of(w->t, c));
        return;
    }
    a = clang_Cursor_getArgument(c, 0);
    ev = clang_Cursor_Evaluate(a);
    if (ev) {
        if (clang_EvalResult_getKind(ev) == CXEval_Int) {
            d = clang_EvalResult_getAsLongLong(ev);
            known = 1;
        }
        clang_EvalResult_dispose(ev);
    }
    if (!known)
        w->st = rw_fail(w->err, w->cap, RW_ERR_REFUSED,
                        "%s calls %s (line %u) with a dimension not known at compile time: it may "
                        "be the coarsened dimension %u",
                        w->k->name, name, rw_line_of(w->t, c), w->dim);
    else if (d == (long long)w->dim)
        w->st = rw_fail(w->err, w->cap, RW_ERR_REFUSED,
                        "%s calls %s(%u) (line %u): coarsening dimension %u changes its work-groups",
                        w->k->name, name, w->dim, rw_line_of(w->t, c), w->dim);
}

/* The kernel parameter @p c names (through parentheses and implicit
 * conversions), or a null cursor. */
static CXCursor rw_co_param_of(const rw_co_walk *w, CXCursor c)
{
    for (unsigned depth = 0; depth < 64; depth++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr) {
            c = rw_child(c, 0);
            continue;
        }
        if (k != CXCursor_DeclRefExpr)
            break;
        CXCursor r = clang_getCursorReferenced(c);
        for (unsigned i = 0; i < w->k->np; i++)
            if (clang_equalCursors(r, w->k->p[i].c))
                return r;
        break;
    }
    return clang_getNullCursor();
}

/* An assignment, increment, decrement or address of a parameter: each of
 * the F work-items must start from the launch's value, so the parameter
 * is renamed and each iteration declares a copy under its name (marked in
 * w->written); refused in the vector form. @return 1 when refused. */
static int rw_co_param_write(rw_co_walk *w, CXCursor c, enum CXCursorKind kind)
{
    char op[8], name[RW_NAME_MAX];
    unsigned end;
    CXCursor target = clang_getNullCursor();

    if (kind == CXCursor_CompoundAssignOperator) {
        target = rw_co_param_of(w, rw_child(c, 0));
    } else if (kind == CXCursor_BinaryOperator) {
        rw_binop(w->t, c, op, sizeof op, &end);
        if (!strcmp(op, "=") || (!op[0] && rw_macro_op_may(w->t, c, 0)))
            target = rw_co_param_of(w, rw_child(c, 0));
    } else if (kind == CXCursor_UnaryOperator) {
        rw_unop(w->t, c, op, sizeof op);
        if (!strcmp(op, "++") || !strcmp(op, "--") || !strcmp(op, "&") || (!op[0] && rw_macro_op_may(w->t, c, 1)))
            target = rw_co_param_of(w, rw_child(c, 0));
    }
    if (clang_Cursor_isNull(target))
        return 0;
    if (!w->vector) {
        for (unsigned i = 0; i < w->k->np; i++)
            if (clang_equalCursors(target, w->k->p[i].c))
                w->written[i] = 1;
        return 0;
    }
    rw_cxcopy(clang_getCursorSpelling(target), name, sizeof name);
    w->st = rw_fail(w->err, w->cap, RW_ERR_REFUSED,
                    "%s changes or takes the address of its parameter %s (line %u): each coarsened work-item "
                    "starts from the launch's value",
                    w->k->name, name, rw_line_of(w->t, c));
    return 1;
}

static enum CXChildVisitResult rw_co_visit(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_co_walk *w = d;
    enum CXCursorKind kind = clang_getCursorKind(c);
    char name[RW_NAME_MAX];

    (void)parent;
    if ((kind == CXCursor_CompoundAssignOperator || kind == CXCursor_BinaryOperator ||
         kind == CXCursor_UnaryOperator) && rw_co_param_write(w, c, kind))
        return CXChildVisit_Break;
    if (kind == CXCursor_CallExpr) {
        CXCursor f = rw_callee(c, name, sizeof name);
        (void)f;
        if (rw_co_is_group(name) && !(w->grouped && !strcmp(name, "get_local_linear_id"))) {
            w->st = rw_fail(w->err, w->cap, RW_ERR_REFUSED,
                            "%s calls %s (line %u): its work-items do not run on their own",
                            w->k->name, name, rw_line_of(w->t, c));
            return CXChildVisit_Break;
        }
        if (!w->grouped && rw_in_set(name, rw_co_dimmed, RW_CO_NDIMMED)) {
            rw_co_dim_call(w, c, name);
            if (w->st != RW_OK)
                return CXChildVisit_Break;
        }
        return CXChildVisit_Recurse;
    }
    if (kind == CXCursor_VarDecl) {
        CXType ty = clang_getCursorType(c);
        unsigned as = clang_getAddressSpace(ty);
        if (as == RW_AS_LOCAL) {
            rw_cxcopy(clang_getCursorSpelling(c), name, sizeof name);
            w->st = rw_fail(w->err, w->cap, RW_ERR_REFUSED,
                            "%s declares __local %s (line %u): its work-items share local memory",
                            w->k->name, name, rw_line_of(w->t, c));
            return CXChildVisit_Break;
        }
        if (clang_getCursorKind(clang_getCursorSemanticParent(c)) == CXCursor_FunctionDecl &&
            clang_Cursor_getStorageClass(c) == CX_SC_Static) {
            rw_cxcopy(clang_getCursorSpelling(c), name, sizeof name);
            w->st = rw_fail(w->err, w->cap, RW_ERR_REFUSED,
                            "%s declares static %s (line %u)", w->k->name, name,
                            rw_line_of(w->t, c));
            return CXChildVisit_Break;
        }
        return CXChildVisit_Recurse;
    }
    if (kind == CXCursor_ReturnStmt) {
        unsigned s, e;
        char text[RW_NAME_MAX + 8];
        if (rw_extent(w->t, c, &s, &e) < 0) {
            w->st = rw_fail(w->err, w->cap, RW_ERR_REFUSED,
                            "%s: a return is not in the program's text", w->k->name);
            return CXChildVisit_Break;
        }
        snprintf(text, sizeof text, "goto %s", w->next);
        w->st = rw_edit_add(w->edits, s, s + 6, text, "return");
        return w->st == RW_OK ? CXChildVisit_Recurse : CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* A refusal of rw_reach_check for a work-group builtin, said as such; the
 * group forms let functions K calls ask for their work-group. */
static rw_status rw_co_reach(const rw_tu *t, const rw_kernel *k, int grouped, char *err, size_t cap)
{
    static const char *const names[] = {
        "barrier", "work_group_barrier", "sub_group_barrier",
        "async_work_group_copy", "async_work_group_strided_copy", "wait_group_events",
        "get_sub_group_id", "get_sub_group_local_id", "get_sub_group_size", "get_num_sub_groups",
        "get_local_linear_id", "get_local_id", "get_group_id", "get_local_size", "get_num_groups",
        "get_enqueued_local_size",
    };
    const size_t n = sizeof names / sizeof names[0], ngroup = 10;   /* the first 10: refused in every form */
    char *tail;
    rw_status st;

    size_t nr;
    const char *const *redirected = rw_co_redirected(grouped, &nr);

    RW_FORWARD(rw_reach_check(t, k, redirected, nr, err, cap));
    st = rw_reach_check(t, k, names, grouped ? ngroup : n, err, cap);
    if (st == RW_ERR_REFUSED && err && cap && (tail = strstr(err, ": only calls")) != NULL)
        snprintf(tail, cap - (size_t)(tail - err), ": coarsening keeps only calls in the kernel's own body");
    return st;
}

/* The helpers and the #defines, P the prefix, D, F the dimension and the
 * factor. Blocked: work-item i' of the coarsened launch does the original
 * work-items F*i' .. F*i' + F-1 of dimension D (offsets kept); strided:
 * i', i' + G/F, ..., i' + (F-1)*G/F. The group forms the same inside each
 * work-group: local ids l' * F + j (group-blocked) or l' + j * L/F
 * (group-strided), the group ids and counts the launch's, as the local
 * size is divided with the global size (uniform work-groups: the caller
 * makes sure L divides G, so get_enqueued_local_size is get_local_size);
 * the local builtins are redirected too. */
static void rw_co_text(rw_buf *b, const char *P, unsigned D, unsigned F, unsigned form)
{
    int grouped = rw_co_is_grouped(form);

    if (grouped) {
        rw_buf_addf(b,
                    "size_t %sco_lsz(uint %sco_d)\n"
                    "{\n"
                    "    return %sco_d == %uu ? get_local_size(%uu) * %uu : get_local_size(%sco_d);\n"
                    "}\n",
                    P, P, P, D, D, F, P);
        rw_buf_addf(b,
                    "size_t %sco_lid(uint %sco_d, uint %sco_j)\n"
                    "{\n"
                    "    if (%sco_d != %uu)\n"
                    "        return get_local_id(%sco_d);\n",
                    P, P, P, P, D, P);
        if (form == RW_COARSEN_GROUP_BLOCKED)
            rw_buf_addf(b, "    return get_local_id(%uu) * %uu + %sco_j;\n}\n", D, F, P);
        else
            rw_buf_addf(b, "    return get_local_id(%uu) + (size_t)%sco_j * get_local_size(%uu);\n}\n", D, P, D);
    }
    rw_buf_addf(b,
                "size_t %sco_gsz(uint %sco_d)\n"
                "{\n"
                "    return %sco_d == %uu ? get_global_size(%uu) * %uu : get_global_size(%sco_d);\n"
                "}\n",
                P, P, P, D, D, F, P);
    rw_buf_addf(b,
                "size_t %sco_gid(uint %sco_d, uint %sco_j)\n"
                "{\n"
                "    if (%sco_d != %uu)\n"
                "        return get_global_id(%sco_d);\n",
                P, P, P, P, D, P);
    if (grouped)
        rw_buf_addf(b, "    return get_global_offset(%uu) + get_group_id(%uu) * %sco_lsz(%uu) + %sco_lid(%uu, %sco_j);\n",
                    D, D, P, D, P, D, P);
    else if (form == RW_COARSEN_BLOCKED)
        rw_buf_addf(b,
                    "    return get_global_offset(%uu) + (get_global_id(%uu) - get_global_offset(%uu)) * "
                    "%uu + %sco_j;\n",
                    D, D, D, F, P);
    else
        rw_buf_addf(b, "    return get_global_id(%uu) + (size_t)%sco_j * get_global_size(%uu);\n", D, P,
                    D);
    rw_buf_adds(b, "}\n");
    rw_buf_addf(b,
                "size_t %sco_lin(uint %sco_j)\n"
                "{\n"
                "    return ((%sco_gid(2u, %sco_j) - get_global_offset(2u)) * %sco_gsz(1u) +\n"
                "            (%sco_gid(1u, %sco_j) - get_global_offset(1u))) * %sco_gsz(0u) +\n"
                "           (%sco_gid(0u, %sco_j) - get_global_offset(0u));\n"
                "}\n",
                P, P, P, P, P, P, P, P, P, P);
    if (grouped)
        rw_buf_addf(b,
                    "size_t %sco_llin(uint %sco_j)\n"
                    "{\n"
                    "    return (%sco_lid(2u, %sco_j) * %sco_lsz(1u) + %sco_lid(1u, %sco_j)) * %sco_lsz(0u) +\n"
                    "           %sco_lid(0u, %sco_j);\n"
                    "}\n",
                    P, P, P, P, P, P, P, P, P, P);
    rw_buf_addf(b, "#define get_global_id(d) %sco_gid((d), %sco_j)\n", P, P);
    rw_buf_addf(b, "#define get_global_size(d) %sco_gsz(d)\n", P);
    rw_buf_addf(b, "#define get_global_linear_id() %sco_lin(%sco_j)\n", P, P);
    if (!grouped)
        return;
    rw_buf_addf(b, "#define get_local_id(d) %sco_lid((d), %sco_j)\n", P, P);
    rw_buf_addf(b, "#define get_local_size(d) %sco_lsz(d)\n", P);
    rw_buf_addf(b, "#define get_enqueued_local_size(d) %sco_lsz(d)\n", P);
    rw_buf_addf(b, "#define get_local_linear_id() %sco_llin(%sco_j)\n", P, P);
}

/* The vector form's body: K's body with the vector edits @p ve for lane 0
 * (get_global_id(0) is the blocked form's with j = 0), and when K has a
 * bounds guard, the blocked loop over the F lanes as the remainder that
 * the guard's last-lane test jumps to. */
static rw_status rw_co_vector_body(const rw_tu *t, const rw_kernel *k, const rw_coarsen_req *req,
                                   const char *P, rw_edits *e, rw_edits *ve, int guarded, rw_buf *b,
                                   rw_segs *segs, char *err, size_t cap)
{
    rw_buf_addf(b, ")\n{\n    {\n    const uint %sco_j = 0u;\n    ", P);
    RW_FORWARD(rw_edits_apply(t, ve, k->body_start, k->body_end, b, segs, k->name, err, cap));
    rw_buf_adds(b, "\n    }\n");
    if (guarded) {
        rw_buf_addf(b, "    return;\n%sco_vs:\n    for (uint %sco_j = 0u; %sco_j < %uu; %sco_j++) {\n",
                    P, P, P, req->factor, P);
        RW_FORWARD(rw_edits_apply(t, e, k->body_start, k->body_end, b, segs, k->name, err, cap));
        rw_buf_addf(b, "\n    %sco_next: ;\n    }\n", P);
    }
    rw_buf_adds(b, "}\n");
    for (unsigned i = 0; rw_co_builtins[i]; i++)
        rw_buf_addf(b, "#undef %s\n", rw_co_builtins[i]);
    return b->oom ? RW_ERR_NOMEM : RW_OK;
}

/* K's parameter @p i as the new kernel's: renamed P co_p<i> when the body
 * changes it (@p written), else as written. */
static rw_status rw_co_param(const rw_tu *t, const rw_kernel *k, unsigned i, const char *P, int written,
                             rw_buf *b, rw_segs *segs, char *err, size_t cap)
{
    rw_edits pe = { 0 };
    char to[RW_NAME_MAX + 16];
    rw_status st = RW_OK;

    snprintf(to, sizeof to, "%sco_p%u", P, i);
    if (written)
        st = rw_edit_add(&pe, k->p[i].name_off, k->p[i].name_off + (unsigned)strlen(k->p[i].name), to,
                         k->p[i].name);
    if (st == RW_OK)
        st = rw_edits_apply(t, &pe, k->p[i].start, k->p[i].end, b, segs, k->name, err, cap);
    rw_edits_free(&pe);
    return st;
}

static rw_status rw_co_kernel(const rw_tu *t, const rw_kernel *k, const rw_coarsen_req *req,
                              const char *P, const unsigned char *written, rw_edits *e, rw_edits *ve,
                              int guarded, rw_buf *b, rw_segs *segs, char *err, size_t cap)
{
    rw_edits none = { 0 };
    unsigned i;

    RW_FORWARD(rw_kernel_head(t, k, NULL, req->name, b, segs, err, cap));
    for (i = 0; i < k->np; i++) {
        if (i)
            rw_buf_adds(b, ",\n        ");
        RW_FORWARD(rw_co_param(t, k, i, P, written[i], b, segs, err, cap));
    }
    if (req->form == RW_COARSEN_VECTOR)
        return rw_co_vector_body(t, k, req, P, e, ve, guarded, b, segs, err, cap);
    rw_buf_addf(b, ")\n{\n    for (uint %sco_j = 0u; %sco_j < %uu; %sco_j++) {\n", P, P,
                req->factor, P);
    for (i = 0; i < k->np; i++) {   /* each work-item starts from the launch's value */
        if (!written[i])
            continue;
        rw_buf_adds(b, "    ");
        RW_FORWARD(rw_edits_apply(t, &none, k->p[i].start, k->p[i].end, b, segs, k->name, err, cap));
        rw_buf_addf(b, " = %sco_p%u;\n", P, i);
    }
    RW_FORWARD(rw_edits_apply(t, e, k->body_start, k->body_end, b, segs, k->name, err, cap));
    rw_buf_addf(b, "\n    %sco_next: ;\n    }\n}\n", P);
    size_t nr;
    const char *const *undef = rw_co_redirected(rw_co_is_grouped(req->form), &nr);
    for (i = 0; undef[i]; i++)
        rw_buf_addf(b, "#undef %s\n", undef[i]);
    return b->oom ? RW_ERR_NOMEM : RW_OK;
}

static rw_status rw_co_req_ok(const rw_coarsen_req *req, char *err, size_t cap)
{
    if (!req || (!req->source && req->len) || !req->kernel)
        return rw_fail(err, cap, RW_ERR_ARG, "incomplete coarsening request");
    if (!rw_is_ident(req->name) || strlen(req->name) > 200)
        return rw_fail(err, cap, RW_ERR_ARG, "the new kernel's name is not an identifier");
    if (req->len > RW_MAX_SOURCE)
        return rw_fail(err, cap, RW_ERR_ARG, "program source too large (%zu bytes)", req->len);
    if (req->dim > 2)
        return rw_fail(err, cap, RW_ERR_ARG, "dimension %u: 0, 1 or 2", req->dim);
    if (!rw_coarsen_form_name(req->form))
        return rw_fail(err, cap, RW_ERR_ARG, "form %u: blocked, strided, vector, group-blocked or group-strided",
                       req->form);
    if (req->factor != 2 && req->factor != 4 && req->factor != 8 &&
        (req->factor != 16 || req->form != RW_COARSEN_VECTOR))
        return rw_fail(err, cap, RW_ERR_ARG, "factor %u: 2, 4 or 8 (16 for the vector form)",
                       req->factor);
    if (req->form == RW_COARSEN_VECTOR && req->dim != 0)
        return rw_fail(err, cap, RW_ERR_ARG, "the vector form coarsens dimension 0 only");
    return RW_OK;
}

/* Every refusal of K itself, and the edits of its returns into @p e. */
static rw_status rw_co_check(const rw_tu *t, const rw_kernel *k, const rw_coarsen_req *req,
                             const char *next, rw_edits *e, unsigned char *written, char *err, size_t cap)
{
    rw_co_walk w;
    const rw_macro *m;
    unsigned i;

    for (i = 0; i < k->na; i++)
        if (strstr(k->a[i].key, "reqd_work_group_size"))
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "%s has reqd_work_group_size: its launches' global sizes are fixed",
                           k->name);
    for (i = 0; i < k->np && !rw_co_is_grouped(req->form); i++)
        if (rw_param_as(k, i) == RW_AS_LOCAL)
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "parameter %u (%s) of %s is __local: its work-items share local memory",
                           i, k->p[i].name, k->name);
    m = rw_macro_edge(t, k->body_start, k->body_end);
    if (m || t->src[k->body_start] != '{')
        return rw_fail(err, cap, RW_ERR_REFUSED, "the body of %s comes from macro %s (line %u)",
                       k->name, m ? m->name : "?", rw_line(t, k->body_start));
    memset(&w, 0, sizeof w);
    w.t = t;
    w.k = k;
    w.dim = req->dim;
    w.grouped = rw_co_is_grouped(req->form);
    w.vector = req->form == RW_COARSEN_VECTOR;
    w.written = written;
    w.next = next;
    w.edits = e;
    w.err = err;
    w.cap = cap;
    clang_visitChildren(k->body, rw_co_visit, &w);
    if (w.st != RW_OK)
        return w.st;
    size_t nr;
    const char *const *redirected = rw_co_redirected(w.grouped, &nr);
    RW_FORWARD(rw_own_names(t, redirected, nr, "coarsened kernel", err, cap));
    return rw_co_reach(t, k, w.grouped, err, cap);
}

rw_status rw_coarsen(const rw_coarsen_req *req, rw_coarsen_out *out, char *err, size_t cap)
{
    rw_job j;
    rw_kernel *k;
    rw_edits e = { 0 }, ve = { 0 };
    int guarded = 0;
    char pfx[32], next[48];
    unsigned char written[RW_MAX_PARAMS] = { 0 };
    size_t nr;
    rw_status st = rw_job_open(&j, out, sizeof *out, err, cap);

    if (st == RW_OK)
        st = rw_co_req_ok(req, err, cap);
    if (st == RW_OK)
        st = rw_job_parse(&j, req->source, req->len, req->options, req->kernel, NULL, err, cap);
    if (st != RW_OK)
        goto out;
    k = j.k[0];
    st = rw_co_prefix(&j.t, req->name, k->np, pfx, sizeof pfx, err, cap);
    if (st == RW_OK) {
        snprintf(next, sizeof next, "%sco_next", pfx);
        st = rw_co_check(&j.t, k, req, next, &e, written, err, cap);
    }
    if (st == RW_OK && req->form == RW_COARSEN_VECTOR)
        st = rw_vec_edits(&j.t, k, req->factor, pfx, &ve, &guarded, err, cap);
    if (st != RW_OK)
        goto out;
    rw_buf_program(&j.b, &j.t);
    rw_buf_addf(&j.b, "\n/* %s: %s coarsened, each work-item doing the work of %u work-items of "
                      "dimension %u (%s), over a global size%s %u times smaller (generated by clrr's "
                      "rewriter) */\n",
                req->name, k->name, req->factor, req->dim, rw_coarsen_form_name(req->form),
                rw_co_is_grouped(req->form) ? " and a local size" : "", req->factor);
    rw_job_start(&j);
    rw_co_text(&j.b, pfx, req->dim, req->factor, req->form == RW_COARSEN_VECTOR ? RW_COARSEN_BLOCKED : req->form);
    st = rw_co_kernel(&j.t, k, req, pfx, written, &e, &ve, guarded, &j.b, &j.segs, err, cap);
    if (st == RW_OK)
        st = rw_job_end(&j, req->name, k->np, k->name, rw_co_redirected(rw_co_is_grouped(req->form), &nr),
                        &out->source, &out->len, err, cap);
    if (st == RW_OK)
        out->nparams = k->np;
out:
    rw_job_close(&j, st, out, sizeof *out);
    rw_edits_free(&e);
    rw_edits_free(&ve);
    return st;
}

void rw_coarsen_free(rw_coarsen_out *out)
{
    if (!out)
        return;
    free(out->source);
    memset(out, 0, sizeof *out);
}

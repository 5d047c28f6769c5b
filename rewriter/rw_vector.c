/* rw_vector.c — the vector form of rw_coarsen() (rw.h): the edits that
 * turn K's body into the body of one work-item doing F consecutive
 * work-items of dimension 0 with vector types. Every global access
 * p[gid] (gid: get_global_id(0), or a local initialized with it and never
 * changed) becomes vloadF(0, p + (gid)) / vstoreF(..., 0, p + (gid)) of
 * lane 0's id; locals whose values derive from such loads are declared
 * TF; scalar arguments of a builtin call that takes a loaded value are
 * broadcast. A plain bounds guard (`if (gid < n) S` or `if (gid >= n)
 * return;` at the top of the body, also with gid-free terms joined by &&
 * or || as fits) is preceded by the same test of the last lane, which
 * sends the work-item to the scalar remainder (rw_coarsen.c writes it: the
 * blocked loop). Everything else that vectors could change is refused
 * with one line (see rw_vec_edits in rw_int.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

#define RW_VEC_MAX 256u   /* gid variables, vector locals, edited type tokens */

/* Builtins with overloads for every vector width whose arguments all have
 * the type of the first (gentype), kept on loaded values. */
static const char *const rw_vec_builtins[] = {
    /* exact by definition, the same per lane in a vector */
    "ceil", "copysign", "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "rint", "round",
    "sqrt", "trunc", "clamp", "max", "min", "sign", "step", "add_sat", "sub_sat", "hadd",
    "rhadd", "clz", "popcount", "mul_hi", "mad_hi", "mad_sat", "rotate", "mad24", "mul24",
    /* Not kept: exp, log, pow, sin ... and mad, native_*, half_*: their precision is the
     * implementation's, and PoCL's vector exp differs from its scalar exp in the last bit
     * (exposure's well_exposed at F = 4: test_rw_vector's history). */
};
#define RW_VEC_NBUILTINS (sizeof rw_vec_builtins / sizeof rw_vec_builtins[0])

typedef struct rw_vw {
    const rw_tu *t;
    const rw_kernel *k;
    unsigned F;
    const char *P;             /* the generated names' prefix */
    rw_edits *e;
    const char *elem[RW_MAX_PARAMS];   /* element type of a vectorizable buffer, else NULL */
    CXCursor gid[RW_VEC_MAX];
    unsigned ngid;
    CXCursor vloc[RW_VEC_MAX];
    unsigned nvloc;
    unsigned typed[RW_VEC_MAX];        /* offsets of type tokens already edited */
    unsigned ntyped;
    CXCursor guard;            /* the bounds guard, or null */
    int guard_ret;             /* it is `if (...) return;` */
    unsigned first_store;      /* offset of the first store, UINT_MAX */
    unsigned naccess;
    int changed;
    rw_status st;
    char *err;
    size_t cap;
} rw_vw;

#define RW_VFAIL(w, ...)                                                  \
    do {                                                                  \
        (w)->st = rw_fail((w)->err, (w)->cap, RW_ERR_REFUSED, __VA_ARGS__); \
    } while (0)

/* ------------------------------------------------------------ helpers */

typedef struct rw_kids {
    CXCursor v[16];
    unsigned n;
} rw_kids;

static enum CXChildVisitResult rw_vk(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_kids *k = d;
    (void)parent;
    if (k->n < 16)
        k->v[k->n] = c;
    k->n++;
    return CXChildVisit_Continue;
}

static void rw_vkids(CXCursor c, rw_kids *k)
{
    k->n = 0;
    clang_visitChildren(c, rw_vk, k);
    if (k->n > 16)
        k->n = 16;
}

static CXCursor rw_vstrip(CXCursor c)
{
    for (unsigned d = 0; d < 64; d++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k != CXCursor_ParenExpr && k != CXCursor_UnexposedExpr)
            break;
        rw_kids ks;
        rw_vkids(c, &ks);
        if (ks.n != 1)
            break;
        c = ks.v[0];
    }
    return c;
}

static int rw_vin(const CXCursor *v, unsigned n, CXCursor c)
{
    for (unsigned i = 0; i < n; i++)
        if (clang_equalCursors(v[i], c))
            return 1;
    return 0;
}

static int rw_vparam(const rw_vw *w, CXCursor r)
{
    for (unsigned i = 0; i < w->k->np; i++)
        if (clang_equalCursors(r, w->k->p[i].c))
            return (int)i;
    return -1;
}

/* The vector element name of a type, or NULL. */
static const char *rw_vtype(CXType ty)
{
    switch (clang_getCanonicalType(ty).kind) {
    case CXType_Float: return "float";
    case CXType_Int: return "int";
    case CXType_UInt: return "uint";
    case CXType_Long: return "long";
    case CXType_ULong: return "ulong";
    case CXType_Double: return "double";   /* K itself needs fp64: a device that runs it has it */
    default: return NULL;
    }
}

/* get_global_id(0) */
static int rw_vgid_call(CXCursor c)
{
    char name[RW_NAME_MAX];
    CXEvalResult ev;
    int zero = 0;

    if (clang_getCursorKind(c) != CXCursor_CallExpr)
        return 0;
    rw_callee(c, name, sizeof name);
    if (strcmp(name, "get_global_id") || clang_Cursor_getNumArguments(c) != 1)
        return 0;
    ev = clang_Cursor_Evaluate(clang_Cursor_getArgument(c, 0));
    if (ev) {
        zero = clang_EvalResult_getKind(ev) == CXEval_Int && clang_EvalResult_getAsLongLong(ev) == 0;
        clang_EvalResult_dispose(ev);
    }
    return zero;
}

/* The work-item's id of dimension 0: the call or a gid variable. */
static int rw_vis_gid(const rw_vw *w, CXCursor c)
{
    c = rw_vstrip(c);
    if (rw_vgid_call(c))
        return 1;
    return clang_getCursorKind(c) == CXCursor_DeclRefExpr &&
           rw_vin(w->gid, w->ngid, clang_getCursorReferenced(c));
}

/* p[gid] of a vectorizable buffer p: its parameter index, else -1. */
static int rw_velig(const rw_vw *w, CXCursor c)
{
    rw_kids ks;
    CXCursor b;
    int p;

    if (clang_getCursorKind(c) != CXCursor_ArraySubscriptExpr)
        return -1;
    rw_vkids(c, &ks);
    if (ks.n != 2)
        return -1;
    b = rw_vstrip(ks.v[0]);
    if (clang_getCursorKind(b) != CXCursor_DeclRefExpr)
        return -1;
    p = rw_vparam(w, clang_getCursorReferenced(b));
    if (p < 0 || !w->elem[p] || !rw_vis_gid(w, ks.v[1]))
        return -1;
    return p;
}

/* 1 when expression @p c holds a value loaded per lane. */
static int rw_vis_vec(const rw_vw *w, CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    rw_kids ks;

    if (rw_velig(w, c) >= 0)
        return 1;
    if (k == CXCursor_DeclRefExpr)
        return rw_vin(w->vloc, w->nvloc, clang_getCursorReferenced(c));
    rw_vkids(c, &ks);
    for (unsigned i = 0; i < ks.n; i++)
        if (rw_vis_vec(w, ks.v[i]))
            return 1;
    return 0;
}

/* 1 when @p c mentions the id of dimension 0. */
static int rw_vmentions_gid(const rw_vw *w, CXCursor c)
{
    rw_kids ks;

    if (rw_vis_gid(w, c))
        return 1;
    rw_vkids(c, &ks);
    for (unsigned i = 0; i < ks.n; i++)
        if (rw_vmentions_gid(w, ks.v[i]))
            return 1;
    return 0;
}

static void rw_vtext(const rw_tu *t, CXCursor c, char *buf, size_t cap)
{
    unsigned s, e;
    if (rw_extent(t, c, &s, &e) < 0 || e - s >= cap) {
        buf[0] = '\0';
        return;
    }
    memcpy(buf, t->src + s, e - s);
    buf[e - s] = '\0';
}

static void rw_vadd_loc(rw_vw *w, CXCursor d)
{
    if (rw_vin(w->vloc, w->nvloc, d) || rw_vin(w->gid, w->ngid, d))
        return;
    if (w->nvloc == RW_VEC_MAX) {
        RW_VFAIL(w, "%s has more than %u locals holding loaded values", w->k->name, RW_VEC_MAX);
        return;
    }
    w->vloc[w->nvloc++] = d;
    w->changed = 1;
}

/* The initializer of a VarDecl, or null. */
static CXCursor rw_vinit(CXCursor d)
{
    rw_kids ks;
    rw_vkids(d, &ks);
    for (unsigned i = ks.n; i-- > 0;)
        if (clang_isExpression(clang_getCursorKind(ks.v[i])))
            return ks.v[i];
    return clang_getNullCursor();
}

/* ------------------------------------------- finding gid and vector locals */

static enum CXChildVisitResult rw_vmark(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_vw *w = d;
    enum CXCursorKind k = clang_getCursorKind(c);
    (void)parent;

    if (w->st != RW_OK)
        return CXChildVisit_Break;
    if (k == CXCursor_VarDecl) {
        CXCursor in = rw_vinit(c);
        if (!clang_Cursor_isNull(in) && rw_vis_vec(w, in))
            rw_vadd_loc(w, c);
    } else if (k == CXCursor_DeclStmt) {
        rw_kids ks;
        int any = 0;
        rw_vkids(c, &ks);
        for (unsigned i = 0; i < ks.n; i++)
            any |= rw_vin(w->vloc, w->nvloc, ks.v[i]);
        for (unsigned i = 0; any && i < ks.n; i++)
            if (clang_getCursorKind(ks.v[i]) == CXCursor_VarDecl)
                rw_vadd_loc(w, ks.v[i]);
    } else if (k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) {
        rw_kids ks;
        char op[8];
        unsigned end;
        rw_vkids(c, &ks);
        if (k == CXCursor_BinaryOperator) {
            rw_binop(w->t, c, op, sizeof op, &end);
            if (strcmp(op, "="))
                return CXChildVisit_Recurse;
        }
        if (ks.n == 2 && rw_vis_vec(w, ks.v[1])) {
            CXCursor l = rw_vstrip(ks.v[0]);
            if (clang_getCursorKind(l) == CXCursor_DeclRefExpr) {
                CXCursor r = clang_getCursorReferenced(l);
                if (clang_getCursorKind(r) == CXCursor_VarDecl && rw_vparam(w, r) < 0)
                    rw_vadd_loc(w, r);
            }
        }
    }
    return CXChildVisit_Recurse;
}

static enum CXChildVisitResult rw_vgids(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_vw *w = d;
    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_VarDecl) {
        CXCursor in = rw_vinit(c);
        if (!clang_Cursor_isNull(in) && rw_vgid_call(rw_vstrip(in)) && w->ngid < RW_VEC_MAX)
            w->gid[w->ngid++] = c;
    }
    return CXChildVisit_Recurse;
}

/* ------------------------------------------------------------ the guard */

typedef struct rw_vg {
    unsigned s[16], e[16];     /* gid references in the condition */
    int call[16];              /* that one is get_global_id(0) itself */
    unsigned n;
} rw_vg;

static int rw_vguard_ok(rw_vw *w, CXCursor c, rw_vg *g)
{
    char op[8], callee[RW_NAME_MAX];
    unsigned end;
    rw_kids ks;

    c = rw_vstrip(c);
    if (!rw_vmentions_gid(w, c))
        return !rw_vis_vec(w, c) && !rw_effect(w->t, c, callee, sizeof callee);
    if (clang_getCursorKind(c) != CXCursor_BinaryOperator)
        return 0;
    rw_binop(w->t, c, op, sizeof op, &end);
    rw_vkids(c, &ks);
    if (ks.n != 2)
        return 0;
    if (!strcmp(op, w->guard_ret ? "||" : "&&"))
        return rw_vguard_ok(w, ks.v[0], g) && rw_vguard_ok(w, ks.v[1], g);
    int left = rw_vis_gid(w, ks.v[0]), right = rw_vis_gid(w, ks.v[1]);
    if (left == right)
        return 0;
    CXCursor id = left ? ks.v[0] : ks.v[1], other = left ? ks.v[1] : ks.v[0];
    if (rw_vmentions_gid(w, other) || rw_vis_vec(w, other) ||
        rw_effect(w->t, other, callee, sizeof callee))
        return 0;
    /* in bounds (if-form): gid < E, gid <= E, E > gid, E >= gid; out (return-form): the rest */
    int lt = !strcmp(op, "<") || !strcmp(op, "<="), gt = !strcmp(op, ">") || !strcmp(op, ">=");
    if (!lt && !gt)
        return 0;
    int in_bounds = left ? lt : gt;
    if (in_bounds == w->guard_ret)
        return 0;
    if (g->n == 16 || rw_extent(w->t, rw_vstrip(id), &g->s[g->n], &g->e[g->n]) < 0)
        return 0;
    g->call[g->n] = rw_vgid_call(rw_vstrip(id));
    g->n++;
    return 1;
}

/* Recognizes the guard among the body's statements and adds the last
 * lane's test before it. */
static void rw_vguard(rw_vw *w)
{
    rw_kids top, ks;
    CXCursor cond;
    unsigned s, e, is, ie;
    rw_vg g;
    char text[RW_NAME_MAX + 16];
    rw_buf b = { 0 };

    memset(&g, 0, sizeof g);
    rw_vkids(w->k->body, &top);
    for (unsigned i = 0; i < top.n; i++) {
        if (clang_getCursorKind(top.v[i]) != CXCursor_IfStmt)
            continue;
        rw_vkids(top.v[i], &ks);
        if (ks.n < 2 || !rw_vmentions_gid(w, ks.v[0]) || rw_vis_vec(w, ks.v[0]))
            continue;   /* a condition on loaded values: the walk refuses it */
        w->guard = top.v[i];
        break;
    }
    if (clang_Cursor_isNull(w->guard))
        return;
    unsigned line = rw_line_of(w->t, w->guard);
    if (ks.n != 2) {
        RW_VFAIL(w, "%s: the bounds guard at line %u has an else", w->k->name, line);
        return;
    }
    cond = ks.v[0];
    CXCursor then = ks.v[1];
    if (clang_getCursorKind(then) == CXCursor_CompoundStmt) {
        rw_kids tk;
        rw_vkids(then, &tk);
        if (tk.n == 1 && clang_getCursorKind(tk.v[0]) == CXCursor_ReturnStmt)
            w->guard_ret = 1;
    } else if (clang_getCursorKind(then) == CXCursor_ReturnStmt) {
        w->guard_ret = 1;
    }
    if (rw_extent(w->t, cond, &s, &e) < 0 || rw_extent(w->t, w->guard, &is, &ie) < 0 ||
        !rw_vguard_ok(w, cond, &g)) {
        RW_VFAIL(w,
                 "%s: the condition on the global id at line %u is not a plain bounds guard "
                 "(if (gid < n) ... or if (gid >= n) return;)",
                 w->k->name, line);
        return;
    }
    for (size_t m = 0; m < w->t->nmx; m++)
        if (w->t->mx[m].start < e && w->t->mx[m].end > s) {
            RW_VFAIL(w, "%s: the bounds guard at line %u uses macro %s", w->k->name, line,
                     w->t->mx[m].name);
            return;
        }
    /* the condition's text with each gid reference as the last lane's */
    rw_buf_adds(&b, w->guard_ret ? "if (" : "if (!(");
    unsigned pos = s;
    for (unsigned i = 0; i < g.n; i++) {
        char id[RW_NAME_MAX];
        rw_buf_add(&b, w->t->src + pos, g.s[i] - pos);
        if (g.e[i] - g.s[i] < sizeof id && !g.call[i]) {
            memcpy(id, w->t->src + g.s[i], g.e[i] - g.s[i]);
            id[g.e[i] - g.s[i]] = '\0';
        } else {
            snprintf(id, sizeof id, "%sco_gid(0u, %sco_j)", w->P, w->P);
        }
        rw_buf_addf(&b, "(%s + %u)", id, w->F - 1);   /* gid's own type: the comparison's kept */
        pos = g.e[i];
    }
    rw_buf_add(&b, w->t->src + pos, e - pos);
    rw_buf_addf(&b, w->guard_ret ? ") goto %sco_vs;\n    " : ")) goto %sco_vs;\n    ", w->P);
    if (b.oom || b.len >= sizeof text) {
        rw_buf_free(&b);
        RW_VFAIL(w, "%s: the bounds guard at line %u is too long to repeat", w->k->name, line);
        return;
    }
    snprintf(text, sizeof text, "%s", b.s);
    rw_buf_free(&b);
    w->st = rw_edit_add(w->e, is, is, text, NULL);
}

/* ------------------------------------------------- checks and edits */

/* The text of the index of p[gid] for the new kernel (lane 0's id). */
static void rw_vindex(const rw_vw *w, CXCursor idx, char *buf, size_t cap)
{
    idx = rw_vstrip(idx);
    if (rw_vgid_call(idx))
        snprintf(buf, cap, "%sco_gid(0u, %sco_j)", w->P, w->P);
    else
        rw_vtext(w->t, idx, buf, cap);
}

static void rw_vaccess(rw_vw *w, CXCursor c, int p, CXCursor parent, CXCursor grand)
{
    enum CXCursorKind pk = clang_getCursorKind(parent);
    rw_kids ks, pks;
    char base[96], idx[96], text[RW_NAME_MAX + 16], op[8];
    unsigned s, e, line = rw_line_of(w->t, c), end;
    const char *name = w->k->p[p].name;

    rw_vkids(c, &ks);
    rw_vtext(w->t, ks.v[0], base, sizeof base);
    rw_vindex(w, ks.v[1], idx, sizeof idx);
    if (!base[0] || !idx[0] || rw_extent(w->t, c, &s, &e) < 0) {
        RW_VFAIL(w, "%s: the access to %s at line %u is not in the program's text", w->k->name,
                 name, line);
        return;
    }
    w->naccess++;
    if (pk == CXCursor_UnexposedExpr) {
        snprintf(text, sizeof text, "vload%u(0, %s + (%s))", w->F, base, idx);
        w->st = rw_edit_add(w->e, s, e, text, NULL);
        return;
    }
    rw_vkids(parent, &pks);
    int is_lhs = pks.n == 2 && clang_equalCursors(pks.v[0], c);
    if (pk == CXCursor_BinaryOperator)
        rw_binop(w->t, parent, op, sizeof op, &end);
    else
        op[0] = '\0';
    if (!is_lhs || !(pk == CXCursor_CompoundAssignOperator ||
                     (pk == CXCursor_BinaryOperator && !strcmp(op, "=")))) {
        RW_VFAIL(w, "%s uses %s[i] at line %u other than as a load or a store", w->k->name, name,
                 line);
        return;
    }
    enum CXCursorKind gk = clang_getCursorKind(grand);
    if (!clang_isStatement(gk) || gk == CXCursor_ReturnStmt) {
        RW_VFAIL(w, "%s: the store to %s at line %u is not a statement of its own", w->k->name,
                 name, line);
        return;
    }
    unsigned rs, re;
    if (rw_extent(w->t, pks.v[1], &rs, &re) < 0) {
        RW_VFAIL(w, "%s: the store to %s at line %u is not in the program's text", w->k->name,
                 name, line);
        return;
    }
    if (s < w->first_store)
        w->first_store = s;
    if (pk == CXCursor_CompoundAssignOperator) {
        /* the operator token follows the target: "+=" -> "+" */
        static const char *const cops[] = { "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=",
                                            "|=", "^=" };
        size_t ol = 0;
        if (!rw_one_token(w->t, e, rs, op, sizeof op, &end) ||
            !rw_in_set(op, cops, sizeof cops / sizeof cops[0]) || (ol = strlen(op)) < 2) {
            RW_VFAIL(w, "%s: cannot tell the operator of the update of %s at line %u", w->k->name,
                     name, line);
            return;
        }
        op[ol - 1] = '\0';
        snprintf(text, sizeof text, "vstore%u(vload%u(0, %s + (%s)) %s (", w->F, w->F, base, idx,
                 op);
    } else {
        snprintf(text, sizeof text, "vstore%u((%s%u)(", w->F, w->elem[p], w->F);
    }
    w->st = rw_edit_add(w->e, s, rs, text, NULL);
    snprintf(text, sizeof text, "), 0, %s + (%s))", base, idx);
    if (w->st == RW_OK)
        w->st = rw_edit_add(w->e, re, re, text, NULL);
}

/* The type token of vector local @p d becomes TF. */
static void rw_vdecl(rw_vw *w, CXCursor d, CXCursor stmt)
{
    unsigned s, e, ss, se, name_off, line = rw_line_of(w->t, d);
    CXFile f;
    char nm[RW_NAME_MAX];
    const char *el = rw_vtype(clang_getCursorType(d));
    CXToken *toks = NULL;
    unsigned nt = 0, at = 0, found = 0;

    rw_cxcopy(clang_getCursorSpelling(d), nm, sizeof nm);
    clang_getFileLocation(clang_getCursorLocation(d), &f, NULL, NULL, &name_off);
    if (!el) {
        RW_VFAIL(w, "%s: %s (line %u) would hold loaded values but its type has no vector form here "
                    "(int, uint, long, ulong, float, double)",
                 w->k->name, nm, line);
        return;
    }
    if (rw_extent(w->t, d, &s, &e) < 0 || rw_extent(w->t, stmt, &ss, &se) < 0 ||
        !clang_File_isEqual(f, w->t->file) || name_off < ss) {
        RW_VFAIL(w, "%s: the declaration of %s (line %u) is not in the program's text", w->k->name,
                 nm, line);
        return;
    }
    s = ss;   /* the type is spelled once, before the first declarator */
    clang_tokenize(w->t->tu, clang_getRange(clang_getLocationForOffset(w->t->tu, w->t->file, s),
                                            clang_getLocationForOffset(w->t->tu, w->t->file, name_off)),
                   &toks, &nt);
    for (unsigned i = 0; i < nt; i++) {
        char sp[64];
        unsigned off;
        CXSourceLocation l = clang_getTokenLocation(w->t->tu, toks[i]);
        clang_getFileLocation(l, NULL, NULL, NULL, &off);
        if (off >= name_off)
            break;
        rw_cxcopy(clang_getTokenSpelling(w->t->tu, toks[i]), sp, sizeof sp);
        if (!strcmp(sp, el)) {
            found++;
            at = off;
        } else if (strcmp(sp, "const") && strcmp(sp, "__private") && strcmp(sp, "private")) {
            found = 99;
        }
    }
    if (toks)
        clang_disposeTokens(w->t->tu, toks, nt);
    if (found != 1) {
        RW_VFAIL(w, "%s: the type of %s (line %u) is not spelled %s: no vector name for it",
                 w->k->name, nm, line, el);
        return;
    }
    if (w->ntyped == RW_VEC_MAX) {
        RW_VFAIL(w, "%s declares too many vector locals", w->k->name);
        return;
    }
    w->typed[w->ntyped++] = at;
    char text[32], chk[16];
    snprintf(text, sizeof text, "%s%u", el, w->F);
    snprintf(chk, sizeof chk, "%s", el);
    w->st = rw_edit_add(w->e, at, at + (unsigned)strlen(el), text, chk);
}

static void rw_vcall(rw_vw *w, CXCursor c)
{
    char name[RW_NAME_MAX];
    CXCursor f = rw_callee(c, name, sizeof name);
    unsigned line = rw_line_of(w->t, c), na = (unsigned)clang_Cursor_getNumArguments(c);
    int anyv = 0;

    if (!strcmp(name, "get_global_id")) {
        CXEvalResult ev = clang_Cursor_Evaluate(clang_Cursor_getArgument(c, 0));
        int known = ev && clang_EvalResult_getKind(ev) == CXEval_Int;
        if (ev)
            clang_EvalResult_dispose(ev);
        if (!known)
            RW_VFAIL(w, "%s calls get_global_id (line %u) with a dimension not known at compile time",
                     w->k->name, line);
        else if (rw_vgid_call(c))
            RW_VFAIL(w, "%s uses get_global_id(0) at line %u other than as the index of a buffer or "
                        "in the bounds guard",
                     w->k->name, line);
        return;
    }
    if (!strcmp(name, "get_global_linear_id")) {
        RW_VFAIL(w, "%s calls get_global_linear_id (line %u): it differs per lane", w->k->name, line);
        return;
    }
    if (!strncmp(name, "atomic_", 7) || !strncmp(name, "atom_", 5)) {
        RW_VFAIL(w, "%s calls %s (line %u): atomics are not vectorized", w->k->name, name, line);
        return;
    }
    for (unsigned i = 0; i < na; i++)
        anyv |= rw_vis_vec(w, clang_Cursor_getArgument(c, i));
    if (!anyv)
        return;
    CXCursor def = clang_Cursor_isNull(f) ? f : clang_getCursorDefinition(f);
    if (!clang_Cursor_isNull(def) && rw_in_program(w->t, def)) {
        RW_VFAIL(w, "%s passes a loaded value to its function %s (line %u)", w->k->name, name, line);
        return;
    }
    if (!rw_in_set(name, rw_vec_builtins, RW_VEC_NBUILTINS)) {
        RW_VFAIL(w, "%s calls %s on a loaded value (line %u): no vector overload kept", w->k->name,
                 name, line);
        return;
    }
    for (unsigned i = 0; i < na; i++) {
        CXCursor a = clang_Cursor_getArgument(c, i);
        unsigned s, e;
        const char *el;
        char text[48];
        if (rw_vis_vec(w, a))
            continue;
        el = rw_vtype(clang_getCursorType(a));
        if (!el || rw_extent(w->t, a, &s, &e) < 0) {
            RW_VFAIL(w, "%s: argument %u of %s (line %u) cannot be broadcast", w->k->name, i + 1,
                     name, line);
            return;
        }
        snprintf(text, sizeof text, "((%s%u)(", el, w->F);
        if ((w->st = rw_edit_add(w->e, s, s, text, NULL)) == RW_OK)
            w->st = rw_edit_add(w->e, e, e, "))", NULL);
        if (w->st != RW_OK)
            return;
    }
}

static void rw_vwalk(rw_vw *w, CXCursor c, CXCursor parent, CXCursor grand);

static void rw_vwalk_kids(rw_vw *w, CXCursor c, CXCursor parent, unsigned from)
{
    rw_kids ks;
    rw_vkids(c, &ks);
    for (unsigned i = from; i < ks.n && w->st == RW_OK; i++)
        rw_vwalk(w, ks.v[i], c, parent);
}

static void rw_vwalk(rw_vw *w, CXCursor c, CXCursor parent, CXCursor grand)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    unsigned line = rw_line_of(w->t, c);
    char name[RW_NAME_MAX], op[8];
    unsigned end;
    rw_kids ks;
    int p;

    if (w->st != RW_OK)
        return;
    switch (k) {
    case CXCursor_ArraySubscriptExpr:
        if ((p = rw_velig(w, c)) >= 0) {
            rw_vaccess(w, c, p, parent, grand);
            return;
        }
        rw_vkids(c, &ks);
        if (ks.n == 2) {
            CXCursor b = rw_vstrip(ks.v[0]);
            if (clang_getCursorKind(b) == CXCursor_DeclRefExpr &&
                (p = rw_vparam(w, clang_getCursorReferenced(b))) >= 0) {
                CXType pt = clang_getPointeeType(clang_getCursorType(w->k->p[p].c));
                if (!w->elem[p] && rw_param_as(w->k, (unsigned)p) == RW_AS_GLOBAL) {
                    char ts[RW_NAME_MAX];
                    rw_cxcopy(clang_getTypeSpelling(pt), ts, sizeof ts);
                    RW_VFAIL(w, "%s: %s holds %s (line %u): no vector form here (int, uint, long, "
                                "ulong, float, double)",
                             w->k->name, w->k->p[p].name, ts, line);
                } else {
                    RW_VFAIL(w, "%s accesses %s with an index other than the global id (line %u)",
                             w->k->name, w->k->p[p].name, line);
                }
                return;
            }
            if (rw_vis_vec(w, ks.v[1])) {
                RW_VFAIL(w, "%s indexes with a loaded value (line %u)", w->k->name, line);
                return;
            }
        }
        break;
    case CXCursor_DeclRefExpr: {
        CXCursor r = clang_getCursorReferenced(c);
        rw_cxcopy(clang_getCursorSpelling(c), name, sizeof name);
        p = rw_vparam(w, r);
        if (p >= 0 && clang_getCursorType(r).kind == CXType_Pointer) {
            RW_VFAIL(w, "%s uses %s other than as %s[global id] (line %u)", w->k->name, name, name,
                     line);
            return;
        }
        if (rw_vin(w->gid, w->ngid, r)) {
            RW_VFAIL(w, "%s uses the global id %s at line %u other than as the index of a buffer or "
                        "in the bounds guard",
                     w->k->name, name, line);
            return;
        }
        return;
    }
    case CXCursor_CallExpr:
        rw_vcall(w, c);
        if (w->st != RW_OK)
            return;
        break;
    case CXCursor_VarDecl:
        if (rw_vin(w->gid, w->ngid, c))
            return;   /* its initializer is get_global_id(0) */
        if (clang_getAddressSpace(clang_getCursorType(c)) == RW_AS_LOCAL)
            break;   /* rw_co_check refuses it */
        break;
    case CXCursor_DeclStmt:
        rw_vkids(c, &ks);
        if (ks.n && rw_vin(w->vloc, w->nvloc, ks.v[0])) {
            rw_vdecl(w, ks.v[0], c);   /* its declarators are all vector locals (rw_vmark) */
            if (w->st != RW_OK)
                return;
        }
        for (unsigned i = 0; i < ks.n; i++)
            if (rw_vin(w->gid, w->ngid, ks.v[i]))
                for (unsigned j = 0; j < ks.n; j++)
                    if (rw_vin(w->vloc, w->nvloc, ks.v[j])) {
                        RW_VFAIL(w, "%s declares the global id with a local holding loaded values "
                                    "(line %u)",
                                 w->k->name, line);
                        return;
                    }
        break;
    case CXCursor_UnexposedExpr:
        rw_vkids(c, &ks);
        if (ks.n == 1 && rw_vis_vec(w, ks.v[0])) {
            CXType a = clang_getCanonicalType(clang_getCursorType(c));
            CXType b = clang_getCanonicalType(clang_getCursorType(ks.v[0]));
            if (a.kind != b.kind) {
                char ta[64], tb[64];
                rw_cxcopy(clang_getTypeSpelling(b), tb, sizeof tb);
                rw_cxcopy(clang_getTypeSpelling(a), ta, sizeof ta);
                RW_VFAIL(w, "%s converts a loaded value from %s to %s (line %u)", w->k->name, tb, ta,
                         line);
                return;
            }
        }
        break;
    case CXCursor_GotoStmt:
    case CXCursor_IndirectGotoStmt:
    case CXCursor_LabelStmt:
        RW_VFAIL(w, "%s uses goto or a label (line %u): the vector form copies the body twice", w->k->name,
                 line);
        return;
    case CXCursor_CStyleCastExpr:
        if (rw_vis_vec(w, c)) {
            RW_VFAIL(w, "%s casts a loaded value (line %u)", w->k->name, line);
            return;
        }
        break;
    case CXCursor_ConditionalOperator:
        if (rw_vis_vec(w, c)) {
            RW_VFAIL(w, "%s chooses with ?: on or between loaded values (line %u)", w->k->name, line);
            return;
        }
        break;
    case CXCursor_MemberRefExpr:
        if (rw_vis_vec(w, c)) {
            RW_VFAIL(w, "%s takes a member of a loaded value (line %u)", w->k->name, line);
            return;
        }
        break;
    case CXCursor_BinaryOperator:
        rw_binop(w->t, c, op, sizeof op, &end);
        rw_vkids(c, &ks);
        if (ks.n == 2 && (rw_vis_vec(w, ks.v[0]) || rw_vis_vec(w, ks.v[1])) &&
            (!op[0] || !strcmp(op, "<") || !strcmp(op, ">") || !strcmp(op, "<=") ||
             !strcmp(op, ">=") || !strcmp(op, "==") || !strcmp(op, "!=") || !strcmp(op, "&&") ||
             !strcmp(op, "||"))) {
            RW_VFAIL(w, "%s compares loaded values (line %u): a truth value or control flow would "
                        "depend on them",
                     w->k->name, line);
            return;
        }
        if (ks.n == 2 && !strcmp(op, "=") && rw_vis_vec(w, ks.v[1]) && rw_velig(w, ks.v[0]) < 0) {
            CXCursor l = rw_vstrip(ks.v[0]);
            rw_kids lk;
            rw_vkids(l, &lk);
            if (clang_getCursorKind(l) == CXCursor_ArraySubscriptExpr && lk.n == 2 &&
                clang_getCursorKind(rw_vstrip(lk.v[0])) == CXCursor_DeclRefExpr &&
                rw_vparam(w, clang_getCursorReferenced(rw_vstrip(lk.v[0]))) >= 0)
                break;   /* the walk into it says what is wrong with the index */
            if (clang_getCursorKind(l) != CXCursor_DeclRefExpr ||
                !rw_vin(w->vloc, w->nvloc, clang_getCursorReferenced(l))) {
                RW_VFAIL(w, "%s stores a loaded value other than into a buffer element or a local "
                            "(line %u)",
                         w->k->name, line);
                return;
            }
        }
        break;
    case CXCursor_CompoundAssignOperator:
        rw_vkids(c, &ks);
        if (ks.n == 2 && rw_vis_vec(w, ks.v[1]) && rw_velig(w, ks.v[0]) < 0) {
            CXCursor l = rw_vstrip(ks.v[0]);
            if (clang_getCursorKind(l) != CXCursor_DeclRefExpr ||
                !rw_vin(w->vloc, w->nvloc, clang_getCursorReferenced(l))) {
                RW_VFAIL(w, "%s updates something other than a buffer element or a local with a "
                            "loaded value (line %u)",
                         w->k->name, line);
                return;
            }
        }
        break;
    case CXCursor_UnaryOperator:
        rw_unop(w->t, c, op, sizeof op);
        if (rw_vis_vec(w, c) && (!op[0] || !strcmp(op, "!") || !strcmp(op, "&") || !strcmp(op, "*"))) {
            RW_VFAIL(w, "%s applies %s to a loaded value (line %u)", w->k->name, op[0] ? op : "?",
                     line);
            return;
        }
        break;
    case CXCursor_IfStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
    case CXCursor_ForStmt:
    case CXCursor_SwitchStmt:
        if (clang_equalCursors(c, w->guard)) {
            rw_vwalk_kids(w, c, parent, 1);   /* the condition stays lane 0's: in bounds */
            return;
        }
        rw_kids ks2;
        rw_vkids(c, &ks2);
        ks.n = 0;   /* the conditions (and a for's init and increment), not the bodies */
        if (k == CXCursor_DoStmt && ks2.n)
            ks.v[ks.n++] = ks2.v[ks2.n - 1];
        else if (k == CXCursor_ForStmt)
            for (unsigned i = 0; i + 1 < ks2.n; i++)
                ks.v[ks.n++] = ks2.v[i];
        else if (ks2.n)
            ks.v[ks.n++] = ks2.v[0];
        for (unsigned i = 0; i < ks.n; i++) {
            if (rw_vis_vec(w, ks.v[i])) {
                RW_VFAIL(w, "%s: control flow at line %u depends on a loaded value", w->k->name,
                         line);
                return;
            }
            if (rw_vmentions_gid(w, ks.v[i])) {
                RW_VFAIL(w, "%s: the condition at line %u depends on the global id and is not the "
                            "bounds guard",
                         w->k->name, line);
                return;
            }
        }
        break;
    default:
        break;
    }
    rw_vwalk_kids(w, c, parent, 0);
}

rw_status rw_vec_edits(const rw_tu *t, const rw_kernel *k, unsigned F, const char *P, rw_edits *e,
                       int *guarded, char *err, size_t cap)
{
    rw_vw *w = calloc(1, sizeof *w);
    rw_status st;

    *guarded = 0;
    if (!w)
        return RW_ERR_NOMEM;
    w->t = t;
    w->k = k;
    w->F = F;
    w->P = P;
    w->e = e;
    w->err = err;
    w->cap = cap;
    w->guard = clang_getNullCursor();
    w->first_store = UINT_MAX;
    for (unsigned i = 0; i < k->np; i++) {
        CXType ty = clang_getCursorType(k->p[i].c);
        if (ty.kind != CXType_Pointer || rw_param_as(k, i) != RW_AS_GLOBAL)
            continue;
        CXType pt = clang_getPointeeType(ty);
        if (clang_isVolatileQualifiedType(pt))
            continue;
        w->elem[i] = rw_vtype(pt);
    }
    clang_visitChildren(k->body, rw_vgids, w);
    for (unsigned round = 0; round < 64 && w->st == RW_OK; round++) {
        w->changed = 0;
        clang_visitChildren(k->body, rw_vmark, w);
        if (!w->changed)
            break;
    }
    if (w->st == RW_OK)
        rw_vguard(w);
    if (w->st == RW_OK)
        rw_vwalk_kids(w, k->body, clang_getNullCursor(), 0);
    if (w->st == RW_OK && !w->naccess)
        RW_VFAIL(w, "%s has no access p[global id] of a buffer to vectorize", k->name);
    if (w->st == RW_OK && !clang_Cursor_isNull(w->guard)) {
        unsigned gs, ge;
        rw_extent(t, w->guard, &gs, &ge);
        if (w->first_store < gs)
            RW_VFAIL(w, "%s stores (line %u) before the bounds guard", k->name,
                     rw_line(t, w->first_store));
        *guarded = 1;
    }
    st = w->st;
    free(w);
    return st;
}

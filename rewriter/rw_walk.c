/* rw_walk.c — walks a kernel body's syntax tree (cursors, with the path
 * from the body to the current node) and turns it into edits: renamed
 * parameters, P's store to B (and the flag it sets when it may not run)
 * and its returns, C's reads of B. Refuses what
 * the fusion cannot keep equivalent: P's store to B not alone, conditional
 * on a loop or a goto, B used any other way; C writing B; work-group
 * synchronization or __local memory in the kernel or any function it calls. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

typedef struct rw_node {
    CXCursor c;
    enum CXCursorKind k;
    unsigned idx;              /* index among its parent's children */
    unsigned nchild;           /* children visited so far */
} rw_node;

typedef struct rw_walker {
    const rw_tu *t;
    const rw_kernel *k;        /* NULL while walking a function the kernel calls */
    const rw_role *role;
    rw_edits *edits;
    char fn[RW_NAME_MAX];      /* the function being walked */
    rw_node st[RW_MAX_DEPTH];  /* st[0]: the body; st[depth - 1]: the current node */
    unsigned depth;
    unsigned stores, store_line;
    unsigned returns;          /* P: returns seen so far */
    int may_skip;              /* P: its store may not run */
    CXCursor helpers[RW_MAX_HELPERS];
    unsigned nhelpers;
    rw_status status;
    char *err;
    size_t cap;
} rw_walker;

/* how an element of B is used */
enum { RW_USE_READ, RW_USE_ASSIGN, RW_USE_UPDATE, RW_USE_ADDRESS, RW_USE_UNKNOWN };

static const char *const rw_wg_funcs[] = {
    "barrier", "work_group_barrier", "sub_group_barrier", "async_work_group_copy",
    "async_work_group_strided_copy", "wait_group_events",
};

static rw_status rw_refuse(rw_walker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static rw_status rw_refuse(rw_walker *w, const char *fmt, ...)
{
    va_list ap;

    if (w->err && w->cap) {
        va_start(ap, fmt);
        vsnprintf(w->err, w->cap, fmt, ap);
        va_end(ap);
    }
    w->status = RW_ERR_REFUSED;
    return w->status;
}

/* Refuses when the index of B[index] at @p a has side effects (the fused
 * kernel drops the index). */
static rw_status rw_index_pure(rw_walker *w, CXCursor a)
{
    char callee[RW_NAME_MAX];
    const char *why = rw_effect(w->t, rw_child(a, 1), callee, sizeof callee);

    if (why)
        return rw_refuse(w, "%s: the index of %s at line %u holds %s%s%s, which the fused kernel "
                            "would drop",
                         w->fn, w->k->p[w->role->buf].name, rw_line_of(w->t, a), why,
                         callee[0] ? " to " : "", callee);
    return RW_OK;
}

/* ------------------------------------------------------------ B's uses */

/* From B[i] at st[a], up through parentheses, implicit conversions, vector
 * components, members and element subscripts: the outermost node that
 * still designates (part of) the element. */
static unsigned rw_climb(const rw_walker *w, unsigned a)
{
    unsigned j = a;

    while (j > 1) {
        enum CXCursorKind p = w->st[j - 1].k;
        if (p == CXCursor_ParenExpr || p == CXCursor_UnexposedExpr ||
            ((p == CXCursor_MemberRefExpr || p == CXCursor_ArraySubscriptExpr) &&
             w->st[j].idx == 0))
            j--;
        else
            break;
    }
    return j;
}

/* How the parent of st[j] uses it. */
static int rw_use(const rw_walker *w, unsigned j, unsigned *op_end)
{
    const rw_node *p = &w->st[j - 1];
    char op[8];

    if (p->k == CXCursor_CompoundAssignOperator && w->st[j].idx == 0)
        return RW_USE_UPDATE;
    if (p->k == CXCursor_BinaryOperator && w->st[j].idx == 0) {
        rw_binop(w->t, p->c, op, sizeof op, op_end);
        if (!op[0])
            return rw_macro_op_may(w->t, p->c, 0) ? RW_USE_UNKNOWN : RW_USE_READ;
        return !strcmp(op, "=") ? RW_USE_ASSIGN : RW_USE_READ;
    }
    if (p->k == CXCursor_UnaryOperator) {
        rw_unop(w->t, p->c, op, sizeof op);
        if (!op[0])
            return rw_macro_op_may(w->t, p->c, 1) ? RW_USE_UNKNOWN : RW_USE_READ;
        if (!strcmp(op, "++") || !strcmp(op, "--"))
            return RW_USE_UPDATE;
        if (!strcmp(op, "&"))
            return RW_USE_ADDRESS;
    }
    return RW_USE_READ;
}

/* P: the one store B[i] = e; as a statement of its own, outside loops. */
static rw_status rw_store(rw_walker *w, unsigned a, unsigned s, unsigned op_end)
{
    const char *b = w->k->p[w->role->buf].name;
    unsigned line = rw_line_of(w->t, w->st[s].c), i, as, ae;
    enum CXCursorKind ctx = w->st[s - 1].k;

    if (++w->stores > 1)
        return rw_refuse(w, "%s stores %s twice (lines %u and %u)", w->fn, b, w->store_line, line);
    w->store_line = line;
    for (i = 1; i < s; i++)
        if (w->st[i].k == CXCursor_ForStmt || w->st[i].k == CXCursor_WhileStmt ||
            w->st[i].k == CXCursor_DoStmt)
            return rw_refuse(w, "%s stores %s inside a loop (line %u)", w->fn, b, line);
    if (!(ctx == CXCursor_CompoundStmt || (ctx == CXCursor_IfStmt && w->st[s].idx >= 1) ||
          (ctx == CXCursor_CaseStmt && w->st[s].idx >= 1) || ctx == CXCursor_DefaultStmt))
        return rw_refuse(w, "%s: the store to %s at line %u is not a plain statement "
                            "%s[index] = value;",
                         w->fn, b, line, b);
    if (rw_extent(w->t, w->st[a].c, &as, &ae) < 0)
        return rw_refuse(w, "%s: the store to %s at line %u is not in the program's text", w->fn,
                         b, line);
    /* a statement of the body's own with no return before it always runs */
    w->may_skip = s != 1 || w->returns > 0;
    if (w->may_skip) {
        char text[RW_NAME_MAX + 8];
        snprintf(text, sizeof text, "%s = 1, ", w->role->flag);
        RW_FORWARD(w->status = rw_edit_add(w->edits, as, as, text, NULL));
    }
    if (w->role->keep_store) {
        char text[RW_NAME_MAX + 8];
        snprintf(text, sizeof text, " %s =", w->role->var);
        return w->status = rw_edit_add(w->edits, op_end, op_end, text, NULL);
    }
    RW_FORWARD(rw_index_pure(w, w->st[a].c));
    return w->status = rw_edit_add(w->edits, as, ae, w->role->var, NULL);
}

/* C: the read of B at st[a] becomes the variable, or with a flag
 * (flag ? var : B[index]): B is loaded only where P did not store. */
static rw_status rw_read(rw_walker *w, unsigned a, unsigned line)
{
    const char *b = w->k->p[w->role->buf].name;
    const rw_macro *m;
    char text[2 * RW_NAME_MAX + 16];
    unsigned as, ae;

    if (rw_extent(w->t, w->st[a].c, &as, &ae) < 0)
        return rw_refuse(w, "%s: the read of %s at line %u is not in the program's text", w->fn,
                         b, line);
    RW_FORWARD(rw_index_pure(w, w->st[a].c));
    if (!w->role->flag)
        return w->status = rw_edit_add(w->edits, as, ae, w->role->var, NULL);
    m = rw_macro_edge(w->t, as, ae);
    if (!m)
        m = rw_macro_crossing(w->t, as, ae);
    if (m)
        return rw_refuse(w, "%s: line %u cannot be rewritten: the code to change there comes "
                            "from macro %s",
                         w->fn, line, m->name);
    snprintf(text, sizeof text, "(%s ? %s : ", w->role->flag, w->role->var);
    RW_FORWARD(w->status = rw_edit_add(w->edits, as, as, text, NULL));
    return w->status = rw_edit_add(w->edits, ae, ae, ")", NULL);
}

/* A DeclRefExpr to B at the top of the path. */
static rw_status rw_use_b(rw_walker *w)
{
    const char *b = w->k->p[w->role->buf].name;
    unsigned i = w->depth - 1, a, j, line, op_end = 0;
    int use;

    while (i > 1 && (w->st[i - 1].k == CXCursor_UnexposedExpr || w->st[i - 1].k == CXCursor_ParenExpr))
        i--;
    line = rw_line_of(w->t, w->st[w->depth - 1].c);
    if (w->st[i - 1].k != CXCursor_ArraySubscriptExpr || w->st[i].idx != 0) {
        if (w->st[i - 1].k == CXCursor_CallExpr)
            return rw_refuse(w, "%s passes %s to a function (line %u)", w->fn, b, line);
        return rw_refuse(w, "%s uses %s other than as %s[index] (line %u)", w->fn, b, b, line);
    }
    a = i - 1;
    j = rw_climb(w, a);
    use = rw_use(w, j, &op_end);
    if (w->role->producer) {
        if (use == RW_USE_ASSIGN && j == a)
            return rw_store(w, a, j - 1, op_end);
        if (use == RW_USE_ASSIGN || use == RW_USE_UPDATE)
            return rw_refuse(w, "%s updates %s in place (line %u): the store must be %s[index] = "
                                "value;",
                             w->fn, b, line, b);
        if (use == RW_USE_ADDRESS)
            return rw_refuse(w, "%s takes the address of an element of %s (line %u)", w->fn, b,
                             line);
        if (use == RW_USE_UNKNOWN)
            return rw_refuse(w, "%s: cannot tell how line %u uses %s (macro)", w->fn, line, b);
        return rw_refuse(w, "%s reads %s (line %u)", w->fn, b, line);
    }
    if (use == RW_USE_ASSIGN || use == RW_USE_UPDATE)
        return rw_refuse(w, "%s writes %s (line %u)", w->fn, b, line);
    if (use == RW_USE_ADDRESS)
        return rw_refuse(w, "%s takes the address of an element of %s (line %u)", w->fn, b, line);
    if (use == RW_USE_UNKNOWN)
        return rw_refuse(w, "%s: cannot tell whether line %u writes %s (macro)", w->fn, line, b);
    return rw_read(w, a, line);
}

/* --------------------------------------------------------------- nodes */

static rw_status rw_param_ref(rw_walker *w, CXCursor c, CXCursor decl)
{
    const rw_kernel *k = w->k;
    unsigned off = 0, i, s, e;
    char text[RW_NAME_MAX + 16];
    CXFile f = NULL;

    clang_getSpellingLocation(clang_getCursorLocation(decl), &f, NULL, NULL, &off);
    for (i = 0; i < k->np; i++)
        if (k->p[i].name_off == off && f && clang_File_isEqual(f, w->t->file))
            break;
    if (i == k->np)
        return RW_OK;   /* a parameter of another function */
    if (rw_extent(w->t, c, &s, &e) < 0)
        return rw_refuse(w, "%s: a use of %s is not in the program's text", w->fn, k->p[i].name);
    if (i == w->role->buf && w->role->b_name)
        snprintf(text, sizeof text, "%s", w->role->b_name);
    else
        snprintf(text, sizeof text, "%s%s", w->role->prefix, k->p[i].name);
    RW_FORWARD(w->status = rw_edit_add(w->edits, s, s + (unsigned)strlen(k->p[i].name), text,
                                       k->p[i].name));
    if (i == w->role->buf)
        return rw_use_b(w);
    return RW_OK;
}

static rw_status rw_call(rw_walker *w, CXCursor c)
{
    char name[RW_NAME_MAX];
    CXCursor f = rw_callee(c, name, sizeof name), def;
    unsigned i;

    if (clang_Cursor_isNull(f))
        return RW_OK;
    def = clang_getCursorDefinition(f);
    if (rw_in_program(w->t, def)) {
        for (i = 0; i < w->nhelpers; i++)
            if (clang_equalCursors(w->helpers[i], def))
                return RW_OK;
        if (w->nhelpers == RW_MAX_HELPERS)
            return rw_refuse(w, "%s calls more than %u functions", w->fn, RW_MAX_HELPERS);
        w->helpers[w->nhelpers++] = def;
        return RW_OK;
    }
    for (i = 0; i < sizeof rw_wg_funcs / sizeof rw_wg_funcs[0]; i++)
        if (!strcmp(name, rw_wg_funcs[i]))
            break;
    if (i < sizeof rw_wg_funcs / sizeof rw_wg_funcs[0] || !strncmp(name, "work_group_", 11) ||
        !strncmp(name, "sub_group_", 10))
        return rw_refuse(w, "%s calls %s() (line %u): work-group semantics are not fused", w->fn,
                         name, rw_line_of(w->t, c));
    return RW_OK;
}

static rw_status rw_var(rw_walker *w, CXCursor c)
{
    CXType ty = clang_getCursorType(c);
    char name[RW_NAME_MAX];

    while (ty.kind == CXType_ConstantArray || ty.kind == CXType_IncompleteArray ||
           ty.kind == CXType_VariableArray || ty.kind == CXType_DependentSizedArray)
        ty = clang_getArrayElementType(ty);
    if (ty.kind == CXType_Invalid || clang_getAddressSpace(ty) != RW_AS_LOCAL)
        return RW_OK;
    rw_cxcopy(clang_getCursorSpelling(c), name, sizeof name);
    return rw_refuse(w, "%s declares __local %s (line %u): work-group semantics are not fused",
                     w->fn, name, rw_line_of(w->t, c));
}

static rw_status rw_node_check(rw_walker *w)
{
    const rw_node *n = &w->st[w->depth - 1];

    switch (n->k) {
    case CXCursor_DeclRefExpr: {
        CXCursor d = clang_getCursorReferenced(n->c);
        if (w->k && !clang_Cursor_isNull(d) && clang_getCursorKind(d) == CXCursor_ParmDecl)
            return rw_param_ref(w, n->c, d);
        return RW_OK;
    }
    case CXCursor_CallExpr:
        return rw_call(w, n->c);
    case CXCursor_VarDecl:
        return rw_var(w, n->c);
    case CXCursor_ReturnStmt: {
        unsigned s, e;
        char text[RW_NAME_MAX + 8];
        if (!w->k || !w->role->producer)
            return RW_OK;
        w->returns++;
        if (rw_extent(w->t, n->c, &s, &e) < 0)
            return rw_refuse(w, "%s: a return is not in the program's text", w->fn);
        snprintf(text, sizeof text, "goto %s", w->role->label);
        return w->status = rw_edit_add(w->edits, s, s + 6, text, "return");
    }
    case CXCursor_LabelStmt:
    case CXCursor_GotoStmt:
    case CXCursor_IndirectGotoStmt:
        if (w->k && w->role->producer)
            return rw_refuse(w, "%s uses goto (line %u): its store could run twice", w->fn,
                             rw_line_of(w->t, n->c));
        return RW_OK;
    default:
        return RW_OK;
    }
}

static enum CXChildVisitResult rw_visit(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_walker *w = d;
    rw_node *n;

    (void)parent;
    if (w->depth == RW_MAX_DEPTH) {
        rw_refuse(w, "%s nests deeper than %u levels", w->fn, RW_MAX_DEPTH);
        return CXChildVisit_Break;
    }
    n = &w->st[w->depth];
    n->c = c;
    n->k = clang_getCursorKind(c);
    n->idx = w->st[w->depth - 1].nchild++;
    n->nchild = 0;
    w->depth++;
    if (rw_node_check(w) == RW_OK && w->status == RW_OK)
        clang_visitChildren(c, rw_visit, w);
    w->depth--;
    return w->status == RW_OK ? CXChildVisit_Continue : CXChildVisit_Break;
}

static rw_status rw_walk_body(rw_walker *w, CXCursor body)
{
    w->st[0].c = body;
    w->st[0].k = clang_getCursorKind(body);
    w->st[0].idx = 0;
    w->st[0].nchild = 0;
    w->depth = 1;
    clang_visitChildren(body, rw_visit, w);
    return w->status;
}

static CXCursor rw_body_of(CXCursor fn)
{
    unsigned i;

    for (i = 0;; i++) {
        CXCursor c = rw_child(fn, i);
        if (clang_Cursor_isNull(c) || clang_getCursorKind(c) == CXCursor_CompoundStmt)
            return c;
    }
}

rw_status rw_walk(const rw_tu *t, const rw_kernel *k, const rw_role *role, rw_edits *edits,
                  int *may_skip, int *returns, char *err, size_t cap)
{
    rw_walker *w = calloc(1, sizeof *w);
    rw_status st;
    unsigned h;

    if (!w)
        return RW_ERR_NOMEM;
    w->t = t;
    w->k = k;
    w->role = role;
    w->edits = edits;
    w->err = err;
    w->cap = cap;
    snprintf(w->fn, sizeof w->fn, "%s", k->name);
    st = rw_walk_body(w, k->body);
    if (st == RW_OK && role->producer && role->buf != RW_NO_BUF && w->stores == 0)
        st = rw_refuse(w, "%s never stores %s", k->name, k->p[role->buf].name);
    if (may_skip)
        *may_skip = w->may_skip;
    if (returns)
        *returns = w->returns > 0;
    /* the functions it calls, and those they call: work-group semantics only */
    w->k = NULL;
    for (h = 0; st == RW_OK && h < w->nhelpers; h++) {
        CXCursor body = rw_body_of(w->helpers[h]);
        rw_cxcopy(clang_getCursorSpelling(w->helpers[h]), w->fn, sizeof w->fn);
        if (!clang_Cursor_isNull(body))
            st = rw_walk_body(w, body);
    }
    free(w);
    return st;
}

/* rw_expr.c — what an expression is and does, from its cursors: the n-th
 * child, a binary or unary operator as the program spells it (or what the
 * macro that wrote it may do), side effects. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

typedef struct rw_nth {
    unsigned want, seen;
    CXCursor found;
} rw_nth;

static enum CXChildVisitResult rw_visit_nth(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_nth *n = d;

    (void)parent;
    if (n->seen++ == n->want) {
        n->found = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

CXCursor rw_child(CXCursor c, unsigned i)
{
    rw_nth n = { i, 0, clang_getNullCursor() };

    clang_visitChildren(c, rw_visit_nth, &n);
    return n.found;
}

/* The operator of binary operator @p c as the program spells it between
 * the operands, or "" when a macro body wrote it (the token between the
 * operands is then no operator, or the ',' between two macro arguments);
 * *op_end: where the operator ends. */
void rw_binop(const rw_tu *t, CXCursor c, char *op, size_t cap, unsigned *op_end)
{
    static const char *const ops[] = {
        "=", "+", "-", "*", "/", "%", "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&", "|",
        "^", "&&", "||", ",",
    };
    unsigned ls, le, rs, re;
    size_t i;

    op[0] = '\0';
    if (rw_extent(t, rw_child(c, 0), &ls, &le) < 0 || rw_extent(t, rw_child(c, 1), &rs, &re) < 0 ||
        !rw_one_token(t, le, rs, op, cap, op_end) || !rw_in_set(op, ops, sizeof ops / sizeof ops[0])) {
        op[0] = '\0';
        return;
    }
    if (!strcmp(op, ","))
        for (i = 0; i < t->nmx; i++)
            if (t->mx[i].start < le && rs < t->mx[i].end)
                op[0] = '\0';
}

/* The operator of unary operator @p c as the program spells it, or "". */
void rw_unop(const rw_tu *t, CXCursor c, char *op, size_t cap)
{
    static const char *const ops[] = { "++", "--", "&", "*", "+", "-", "~", "!" };
    unsigned us, ue, os, oe, end;

    op[0] = '\0';
    if (rw_extent(t, c, &us, &ue) < 0 || rw_extent(t, rw_child(c, 0), &os, &oe) < 0)
        return;
    if (!(us < os ? rw_one_token(t, us, os, op, cap, &end) : rw_one_token(t, oe, ue, op, cap, &end)) ||
        !rw_in_set(op, ops, sizeof ops / sizeof ops[0]))
        op[0] = '\0';
}

/* For an operator a macro body wrote ("" above): 1 when that macro may
 * assign (or, with @p amp, take an address). */
int rw_macro_op_may(const rw_tu *t, CXCursor c, int amp)
{
    unsigned s, e;

    return rw_extent(t, c, &s, &e) < 0 || rw_macro_assigns(t, s, amp);
}

unsigned rw_line_of(const rw_tu *t, CXCursor c)
{
    unsigned s, e;

    return rw_extent(t, c, &s, &e) < 0 ? 0 : rw_line(t, s);
}

int rw_in_program(const rw_tu *t, CXCursor c)
{
    CXFile f = NULL;

    if (clang_Cursor_isNull(c))
        return 0;
    clang_getSpellingLocation(clang_getCursorLocation(c), &f, NULL, NULL, NULL);
    return f && clang_File_isEqual(f, t->file);
}

typedef struct rw_pure {
    const rw_tu *t;
    const char *why;
    char *what;
    size_t cap;
} rw_pure;

static enum CXChildVisitResult rw_visit_pure(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_pure *p = d;
    char op[8];
    unsigned end;

    (void)parent;
    switch (clang_getCursorKind(c)) {
    case CXCursor_CompoundAssignOperator:
        p->why = "an assignment";
        return CXChildVisit_Break;
    case CXCursor_BinaryOperator:
        rw_binop(p->t, c, op, sizeof op, &end);
        if (!op[0] && !rw_macro_op_may(p->t, c, 0))
            break;   /* an operator of a macro body that holds no assignment */
        if (!op[0] || !strcmp(op, "=")) {
            p->why = "an assignment";
            return CXChildVisit_Break;
        }
        break;
    case CXCursor_UnaryOperator:
        rw_unop(p->t, c, op, sizeof op);
        if (!op[0] && !rw_macro_op_may(p->t, c, 0))
            break;
        if (!op[0] || !strcmp(op, "++") || !strcmp(op, "--")) {
            p->why = "an increment";
            return CXChildVisit_Break;
        }
        break;
    case CXCursor_CallExpr: {
        CXCursor f = clang_getCursorReferenced(c);
        rw_cxcopy(clang_getCursorSpelling(c), p->what, p->cap);
        if (clang_Cursor_isNull(f) || rw_in_program(p->t, clang_getCursorDefinition(f)) ||
            !strncmp(p->what, "atom", 4)) {
            p->why = "a call";
            return CXChildVisit_Break;
        }
        break;
    }
    default:
        break;
    }
    return CXChildVisit_Recurse;
}

const char *rw_effect(const rw_tu *t, CXCursor e, char *callee, size_t cap)
{
    rw_pure p;

    callee[0] = '\0';
    p.t = t;
    p.why = NULL;
    p.what = callee;
    p.cap = cap;
    if (rw_visit_pure(e, clang_getNullCursor(), &p) != CXChildVisit_Break)
        clang_visitChildren(e, rw_visit_pure, &p);
    if (!p.why || strcmp(p.why, "a call"))
        callee[0] = '\0';
    return p.why;
}

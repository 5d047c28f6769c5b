/* rw_int.h — the rewriter's internals (not part of rw.h): a parsed program
 * with its macro expansions, kernels and their parameters, the walk that
 * turns a kernel body into edits, edits applied by source range, the
 * functions a kernel reaches, and the check of the generated kernel. */
#ifndef CLRR_RW_INT_H
#define CLRR_RW_INT_H

#include <clang-c/Index.h>
#include <stddef.h>

#include "rewriter/rw.h"

/* the program's name in the parse and in messages ("program.cl:3:5: error: ...") */
#define RW_FILE "program.cl"
#define RW_MAX_SOURCE (64u << 20)
#define RW_MAX_OPTIONS 65536u
#define RW_MAX_DEPTH 512u          /* nesting of one kernel's syntax tree */
#define RW_NAME_MAX 256u           /* identifiers we copy or generate */
#define RW_MAX_ATTRS 16u
#define RW_MAX_HELPERS 256u        /* functions reached from one kernel */

/* Returns from the enclosing function when @p expr is not RW_OK. */
#define RW_FORWARD(expr)                      \
    do {                                      \
        rw_status rw_fwd_ = (expr);           \
        if (rw_fwd_ != RW_OK)                 \
            return rw_fwd_;                   \
    } while (0)

/* ------------------------------------------------------------ rw_util.c */

/* A growable string; after a failed allocation it stays empty and oom is 1. */
typedef struct rw_buf {
    char *s;
    size_t len, cap;
    int oom;
} rw_buf;

void rw_buf_add(rw_buf *b, const char *p, size_t n);
void rw_buf_adds(rw_buf *b, const char *s);
void rw_buf_addf(rw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rw_buf_free(rw_buf *b);

/* Writes a one-line reason to err (when cap > 0) and returns @p st. */
rw_status rw_fail(char *err, size_t cap, rw_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A set of identifiers (owned copies). */
typedef struct rw_names {
    char **v;
    size_t n, cap;
} rw_names;

rw_status rw_names_add(rw_names *s, const char *name);
void rw_names_seal(rw_names *s);   /* sorts; call once before rw_names_has */
int rw_names_has(const rw_names *s, const char *name);
void rw_names_free(rw_names *s);

/* 1 when @p s is one of the @p n strings of @p set. */
int rw_in_set(const char *s, const char *const *set, size_t n);

/* 1 when @p s is a C identifier (NULL and "" are not). */
int rw_is_ident(const char *s);

/* A copy of a CXString into buf (truncated to cap); disposes @p s. */
void rw_cxcopy(CXString s, char *buf, size_t cap);

/* The function call expression @p c calls (a null cursor when it cannot be
 * told) and its name into @p name ("" then). */
CXCursor rw_callee(CXCursor c, char *name, size_t cap);

/* ----------------------------------------------------------- rw_parse.c */

/* A macro expansion written in the program (top-level, or inside another
 * expansion's arguments), by file offsets. */
typedef struct rw_macro {
    unsigned start, end;       /* the invocation, end exclusive */
    unsigned long long def;    /* its definition: hash of file name and offset (or name) */
    char name[64];
} rw_macro;

/* A macro definition (the program's or a header's). */
typedef struct rw_mdef {
    char name[64];
    CXCursor c;
} rw_mdef;

/* A parsed program. The source is borrowed. */
typedef struct rw_tu {
    CXIndex idx;
    CXTranslationUnit tu;
    CXFile file;
    const char *src;
    size_t len;
    rw_macro *mx;              /* sorted by start */
    size_t nmx;
    rw_mdef *defs;             /* sorted by name */
    size_t ndefs;
    CXSourceRangeList *skipped;   /* inactive preprocessor branches */
} rw_tu;

/* Refuses (RW_ERR_REFUSED, one line in @p err) a program of @p t that
 * defines one of the @p n names of @p set itself, as a macro (anywhere) or
 * as a function (outside the system headers): a rewrite that redirects
 * those builtins would replace what the program means by them. @p what
 * names the generated kernel in the message ("coarsened kernel"). */
rw_status rw_own_names(const rw_tu *t, const char *const *set, size_t n, const char *what, char *err,
                       size_t cap);

/* The parse's command line from the program's build options: NUL-separated
 * strings in *args (malloc'd), their count in *nargs. */
rw_status rw_parse_args(const char *options, char **args, int *nargs, char *err, size_t cap);

/* Parses @p src; RW_ERR_PARSE with the first error when it has errors (its
 * macro expansions are recorded all the same). Close with rw_tu_close()
 * whatever the result. */
rw_status rw_tu_parse(rw_tu *t, const char *src, size_t len, const char *args, int nargs,
                      char *err, size_t cap);
void rw_tu_close(rw_tu *t);

/* ------------------------------------------------------------- rw_pos.c */

/* File offsets of cursor @p c's extent; -1 when it is not in the program. */
int rw_extent(const rw_tu *t, CXCursor c, unsigned *start, unsigned *end);
/* The 1-based line of a file offset. */
unsigned rw_line(const rw_tu *t, unsigned off);
/* An expansion that starts at @p start or ends at @p end, or NULL: the
 * start (end) of a node that is there came from a macro body, not from the
 * program text. Pass UINT_MAX for a side not asked about. */
const rw_macro *rw_macro_edge(const rw_tu *t, unsigned start, unsigned end);
/* An expansion that overlaps [start, end) without containing it or lying
 * inside it, or NULL. */
const rw_macro *rw_macro_crossing(const rw_tu *t, unsigned start, unsigned end);
/* 0 when the expansion at @p off (the one starting there, else the
 * innermost one around it) cannot assign, increment or decrement (nor,
 * with @p amp, take an address): no such operator in its definition nor in
 * those of the macros it names; else 1 (also when there is no expansion
 * there). For code of macro bodies, whose operators have no position of
 * their own in the program. */
int rw_macro_assigns(const rw_tu *t, unsigned off, int amp);
/* 1 when an inactive preprocessor branch overlaps [start, end). */
int rw_skipped_in(const rw_tu *t, unsigned start, unsigned end);
/* The file offsets of inactive branch @p i (< t->skipped->count); -1
 * when they are not in the program. */
int rw_skipped_range(const rw_tu *t, unsigned i, unsigned *start, unsigned *end);
/* When [start, end) holds exactly one token: 1, its spelling in buf and
 * its end offset in *tok_end; else 0. */
int rw_one_token(const rw_tu *t, unsigned start, unsigned end, char *buf, size_t cap,
                 unsigned *tok_end);
/* 1 when the token at @p off is the identifier (or keyword) @p name. */
int rw_token_is(const rw_tu *t, unsigned off, const char *name);
/* Every identifier token of the program into @p set. */
rw_status rw_idents(const rw_tu *t, rw_names *set);

/* ---------------------------------------------------------- rw_kernel.c */

typedef struct rw_param {
    CXCursor c;
    unsigned start, end;       /* the declaration */
    unsigned name_off;         /* its name */
    char name[RW_NAME_MAX];
} rw_param;

typedef struct rw_attr {
    unsigned start, end;       /* e.g. reqd_work_group_size(16, 16, 1) */
    char key[512];             /* its tokens joined by spaces, for comparisons */
} rw_attr;

typedef struct rw_kernel {
    char name[RW_NAME_MAX];
    CXCursor fn, body;
    unsigned start, end;       /* the whole definition */
    unsigned body_start, body_end;
    unsigned np;
    rw_param p[RW_MAX_PARAMS];
    unsigned na;               /* attributes other than __kernel itself */
    rw_attr a[RW_MAX_ATTRS];
} rw_kernel;

/* Finds the definition of kernel @p name; RW_ERR_REFUSED when there is
 * none, when it is not a kernel, or when its text is not the program's. */
rw_status rw_kernel_find(const rw_tu *t, const char *name, rw_kernel *k, char *err, size_t cap);

/* The address space of pointer parameter @p i's pointee (RW_AS_*), or -1
 * when it is not a pointer. */
#define RW_AS_GLOBAL 1     /* clang's LangAS::opencl_global */
#define RW_AS_LOCAL 2      /* LangAS::opencl_local */
int rw_param_as(const rw_kernel *k, unsigned i);

/* ------------------------------------------------------------ rw_edit.c */

/* Replaces [start, end) (start == end: inserts) by text. When check is set,
 * the range must hold exactly that identifier (a rename). Insertions are
 * not checked: they go where a checked edit or a token of the program's
 * text begins or ends (the walk checks the range it wraps). */
typedef struct rw_edit {
    unsigned start, end;
    char check[RW_NAME_MAX];
    char text[RW_NAME_MAX + 16];
} rw_edit;

typedef struct rw_edits {
    rw_edit *v;
    size_t n, cap;
} rw_edits;

rw_status rw_edit_add(rw_edits *e, unsigned start, unsigned end, const char *text,
                      const char *check);
void rw_edits_free(rw_edits *e);

/* A piece of output copied unchanged from the program. */
typedef struct rw_seg {
    size_t orig, out, len;
} rw_seg;

typedef struct rw_segs {
    rw_seg *v;
    size_t n, cap;
} rw_segs;

void rw_segs_free(rw_segs *s);

/* Appends [from, to) of the program to @p out with the edits that fall in
 * it; an edit inside another's replaced range is dropped. Refuses edits
 * at a position that a macro body produced, or across a macro invocation
 * (@p what names the kernel in messages). Records copied pieces in segs. */
/* Appends the whole program to @p b, ending with a newline: what every
 * generated kernel follows. */
void rw_buf_program(rw_buf *b, const rw_tu *t);

/* Appends "__kernel __attribute__((A)) ... void NAME(" with @p k's
 * attributes A, copied with the edits @p e (NULL: none). */
rw_status rw_kernel_head(const rw_tu *t, const rw_kernel *k, rw_edits *e, const char *name, rw_buf *b,
                         rw_segs *segs, char *err, size_t cap);

rw_status rw_edits_apply(const rw_tu *t, rw_edits *e, unsigned from, unsigned to, rw_buf *out,
                         rw_segs *segs, const char *what, char *err, size_t cap);

/* ------------------------------------------------------------ rw_expr.c */

/* The @p i-th child of @p c, or the null cursor. */
CXCursor rw_child(CXCursor c, unsigned i);
/* The operator of binary operator @p c as the program spells it between
 * its operands, or "" when a macro body wrote it; *op_end: where it ends. */
void rw_binop(const rw_tu *t, CXCursor c, char *op, size_t cap, unsigned *op_end);
/* The operator of unary operator @p c as the program spells it, or "". */
void rw_unop(const rw_tu *t, CXCursor c, char *op, size_t cap);
/* For an operator that a macro body wrote: 1 when that macro may assign
 * (or, with @p amp, take an address). */
int rw_macro_op_may(const rw_tu *t, CXCursor c, int amp);
/* The line where @p c starts (0 when it is not in the program). */
unsigned rw_line_of(const rw_tu *t, CXCursor c);
/* 1 when @p c is declared in the program's own text. */
int rw_in_program(const rw_tu *t, CXCursor c);
/* NULL when expression @p e has no side effect; else what it holds ("an
 * assignment", "an increment", "a call": then the callee in @p callee).
 * Calls of the program's own functions and of atomics count; builtins not. */
const char *rw_effect(const rw_tu *t, CXCursor e, char *callee, size_t cap);

/* ------------------------------------------------------------ rw_walk.c */

/* What the walk of one kernel body does. */
typedef struct rw_role {
    int producer;              /* 1: P's rules for B, returns to the label; 0: C's */
    unsigned buf;              /* B's parameter index */
    int keep_store;            /* P: keep the store to B */
    const char *var;           /* the private variable that replaces B */
    const char *flag;          /* P: the flag its store sets (used when the store may
                                * not run); C: that flag, or NULL when P always stores */
    const char *b_name;        /* C with a flag: what B is called in the fused kernel */
    const char *label;         /* P: where returns go */
    const char *prefix;        /* parameter renaming */
} rw_role;

/* Walks kernel @p k: checks the rules of its role and of work-group
 * semantics (also in the functions it calls) and adds the edits that
 * rename its parameters and replace its uses of B (and P's returns). For
 * P, *may_skip says whether its store may not run (it is not a statement
 * of the body's own, or a return comes before it): then the store sets
 * role->flag, and C must fall back on B where it is not set; *returns
 * (may be NULL) says whether it has returns (sent to role->label). */
rw_status rw_walk(const rw_tu *t, const rw_kernel *k, const rw_role *role, rw_edits *edits,
                  int *may_skip, int *returns, char *err, size_t cap);

/* ----------------------------------------------------------- rw_reach.c */

/* Refuses (RW_ERR_REFUSED, "helper f calls get_group_id (line 12): ...")
 * when a function that kernel @p k calls, directly or through others, and
 * that is defined outside the system headers, calls one of the @p n
 * builtins @p names: only calls in the kernel's own body are redirected. */
rw_status rw_reach_check(const rw_tu *t, const rw_kernel *k, const char *const *names, size_t n,
                         char *err, size_t cap);

/* ----------------------------------------------------------- rw_check.c */

/* A generated program to check: the original program (its first
 * orig->len bytes), then text of the rewriter's from gen_off on, where the
 * pieces copied from the program are listed in segs. */
typedef struct rw_check_req {
    const rw_tu *orig;         /* the program's parse */
    const char *src;           /* the generated program */
    size_t len;
    const char *args;          /* the parse's arguments (rw_parse_args) */
    int nargs;
    size_t gen_off;            /* where the generated text starts */
    const rw_segs *segs;       /* what it copied from the program */
    const char *name;          /* the new kernel */
    unsigned nparams;          /* its parameter count */
    const char *from;          /* the kernel it copies, for messages */
    const char *const *redirected;   /* NULL, or the builtins (NULL-terminated) that
                                      * macros of the generated text redirect: their
                                      * expansions in copied text are expected, and
                                      * the new kernel must call none of them */
} rw_check_req;

/* Parses the generated program with the same arguments and checks it: no
 * error, kernel name with nparams parameters, every inactive preprocessor
 * branch of the copied text inactive there too and no other, every macro
 * in the copied text expanding to what it expanded to where it was written
 * (or being a redirected builtin), and no call of a redirected builtin left
 * in the new kernel. RW_ERR_INTERNAL or RW_ERR_REFUSED otherwise. */
rw_status rw_check(const rw_check_req *r, char *err, size_t cap);

/* ------------------------------------------------------------- rw_job.c */

/* One rewrite, the frame every entry point (rw_coarsen, rw_partition,
 * rw_specialize, rw_fuse) shares: rw_job_open empties the result and err,
 * the entry point checks its request and rw_job_parse parses the program
 * and finds its kernels; the entry point writes the new program into b
 * (the program itself, its comment, then rw_job_start and its own text,
 * what it copies listed in segs); rw_job_end checks it (rw_check) and hands
 * it out; rw_job_close frees the rest, whatever happened. */
typedef struct rw_job {
    rw_tu t;                   /* the program's parse */
    rw_kernel *k[2];           /* the kernels named: k[1] only for a fusion */
    char *args;                /* the parse's arguments (rw_parse_args) */
    int nargs;
    rw_buf b;                  /* the new program */
    size_t gen_off;            /* where the rewriter's own text starts in b */
    rw_segs segs;              /* what that text copies from the program */
} rw_job;

/* Empties *j, err and *out (@p size bytes); RW_ERR_ARG when out is NULL. */
rw_status rw_job_open(rw_job *j, void *out, size_t size, char *err, size_t cap);

/* The request's program: its parse's command line from @p options, its
 * parse (@p src NULL with len 0: an empty program), the kernel named @p k0
 * into k[0] and, unless NULL, @p k1 into k[1]. */
rw_status rw_job_parse(rw_job *j, const char *src, size_t len, const char *options, const char *k0,
                       const char *k1, char *err, size_t cap);

/* Marks where the rewriter's own text starts in b (its length now). */
void rw_job_start(rw_job *j);

/* Checks the new program (rw_check: kernel @p name with @p nparams
 * parameters, copied from @p from; @p redirected as there) and on success
 * hands b over: *source (malloc'd, NUL-terminated) and *len. */
rw_status rw_job_end(rw_job *j, const char *name, unsigned nparams, const char *from,
                     const char *const *redirected, char **source, size_t *len, char *err, size_t cap);

/* Frees the job; when @p st is not RW_OK also empties *out (@p size bytes;
 * NULL: nothing), so that a failed rewrite hands out nothing. */
void rw_job_close(rw_job *j, rw_status st, void *out, size_t size);

/* ---------------------------------------------------------- rw_vector.c */

/* The edits (into @p e) that make K's body the vector form's body for
 * factor @p F (2, 4, 8, 16) along dimension 0, names with prefix @p P (the
 * blocked form's helpers P##co_gid and P##co_j give lane 0's id, P##co_vs
 * is the scalar remainder's label). *guarded is 1 when K has a bounds
 * guard (then the remainder is needed). RW_ERR_REFUSED with one line for
 * what vectors could change: a global pointer used other than as p[gid]
 * (another index, an address, a call), a buffer of another element type
 * than int, uint, long, ulong, float, double (structs, char, short, half,
 * volatile), the global id used other than as such an index or in the
 * guard, a condition other than the guard on the global id, control flow,
 * a comparison, ?:, a cast, a conversion, a member, an address or a
 * dereference of a loaded value, a loaded value passed to a function of
 * the program or to a builtin without a kept vector overload, atomics,
 * get_global_linear_id, a store before the guard, a local holding loaded
 * values whose type is spelled other than as its element type. */
rw_status rw_vec_edits(const rw_tu *t, const rw_kernel *k, unsigned F, const char *P, rw_edits *e,
                       int *guarded, char *err, size_t cap);

#endif

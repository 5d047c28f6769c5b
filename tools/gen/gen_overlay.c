/* gen_overlay.c — reads recorder/api.overlay and attaches its annotations
 * to the functions parsed from the headers; fails on any pointer parameter
 * left without one. Also the generator's main(). */
#include "tools/gen/gen.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void gen_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("clrr-gen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

char *gen_strdup(const char *s)
{
    char *r = strdup(s ? s : "");
    if (!r)
        gen_die("out of memory");
    return r;
}

gen_func *gen_find_func(gen_api *api, const char *name)
{
    for (int i = 0; i < api->nf; i++)
        if (!strcmp(api->f[i].name, name))
            return &api->f[i];
    return NULL;
}

/* Splits a line into tokens; "quoted" tokens keep their blanks. */
static int gen_tokens(char *line, char **tok, int max)
{
    int n = 0;
    char *p = line;
    while (*p && n < max) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#' || *p == '\n')
            break;
        if (*p == '"') {
            tok[n++] = ++p;
            while (*p && *p != '"')
                p++;
        } else {
            tok[n++] = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '\n')
                p++;
        }
        if (*p)
            *p++ = 0;
    }
    return n;
}

static int gen_kind_of(const char *s)
{
    static const char *const names[] = {"value", "handle", "string", "array", "blob", "callback",
                                        "userdata", "props", "ptr", "struct", "custom"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (!strcmp(s, names[i]))
            return i;
    return GK_NONE;
}

static void gen_parse_annot(gen_annot *a, char **tok, int n, const char *where)
{
    memset(a, 0, sizeof *a);
    a->elem = GK_NONE;
    if (n < 2)
        gen_die("%s: DIR and KIND expected", where);
    a->dir = !strcmp(tok[0], "in") ? GD_IN : !strcmp(tok[0], "out") ? GD_OUT
           : !strcmp(tok[0], "inout") ? GD_INOUT : 0;
    if (!a->dir)
        gen_die("%s: bad direction '%s'", where, tok[0]);
    if ((a->kind = gen_kind_of(tok[1])) == GK_NONE)
        gen_die("%s: bad kind '%s'", where, tok[1]);
    for (int i = 2; i < n; i++) {
        char *eq = strchr(tok[i], '=');
        const char *v = eq ? eq + 1 : "";
        if (eq)
            *eq = 0;
        if (i == 2 && !eq && a->kind == GK_ARRAY) {
            if ((a->elem = gen_kind_of(tok[i])) == GK_NONE)
                gen_die("%s: bad element kind '%s'", where, tok[i]);
        } else if (!strcmp(tok[i], "len")) a->len = gen_strdup(v);
        else if (!strcmp(tok[i], "count")) a->count = gen_strdup(v);
        else if (!strcmp(tok[i], "valid")) a->valid = gen_strdup(v);
        else if (!strcmp(tok[i], "blocking")) a->blocking = gen_strdup(v);
        else if (!strcmp(tok[i], "struct")) a->struct_t = gen_strdup(v);
        else if (!strcmp(tok[i], "props")) a->props = gen_strdup(v);
        else if (!strcmp(tok[i], "shadow")) a->shadow = 1;
        else if (!strcmp(tok[i], "complete")) a->complete = 1;
        else if (!strcmp(tok[i], "timing")) a->timing = 1;
        else gen_die("%s: unknown key '%s'", where, tok[i]);
    }
    if (a->kind == GK_ARRAY && (a->elem == GK_NONE || !a->len))
        gen_die("%s: arrays need an element kind and len=", where);
    if (a->kind == GK_BLOB && !a->len)
        gen_die("%s: blobs need len=", where);
    if (a->complete && !a->blocking)
        gen_die("%s: complete needs blocking=", where);
}

typedef struct gen_rule { char *pname, *type; gen_annot a; } gen_rule;

static int gen_type_eq(const char *a, const char *b)
{
    return !strcmp(b, "*") || !strcmp(a, b);
}

int gen_apply_overlay(gen_api *api, const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        gen_die("cannot open %s", path);
    static gen_rule rules[256];
    int nrules = 0, lineno = 0;
    char line[1024], where[1200];
    char *tok[32];
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        int n = gen_tokens(line, tok, 32);
        if (!n)
            continue;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (!strcmp(tok[0], "rule")) {
            if (n < 3 || nrules >= 256)
                gen_die("%s: bad rule", where);
            rules[nrules].pname = gen_strdup(tok[1]);
            rules[nrules].type = gen_strdup(tok[2]);
            gen_parse_annot(&rules[nrules].a, tok + 3, n - 3, where);
            nrules++;
            continue;
        }
        if (n < 2)
            gen_die("%s: too few fields", where);
        gen_func *f = gen_find_func(api, tok[1]);
        if (!f)
            gen_die("%s: no function %s in the headers", where, tok[1]);
        if (!strcmp(tok[0], "param")) {
            gen_param *p = NULL;
            for (int i = 0; n > 2 && i < f->np; i++)
                if (!strcmp(f->p[i].name, tok[2]))
                    p = &f->p[i];
            if (!p)
                gen_die("%s: %s has no parameter %s", where, tok[1], n > 2 ? tok[2] : "?");
            gen_parse_annot(&p->a, tok + 3, n - 3, where);
            p->annotated = 2;
        } else if (!strcmp(tok[0], "hook")) {
            if (n < 4 || !tok[3][0])
                gen_die("%s: hook needs pre|post and a reason", where);
            f->hook_pre |= !!strstr(tok[2], "pre");
            f->hook_post |= !!strstr(tok[2], "post");
        } else if (!strcmp(tok[0], "replay")) {
            if (n < 4 || !tok[3][0])
                gen_die("%s: replay needs pre|post and a reason", where);
            f->rpl_pre |= !!strstr(tok[2], "pre");
            f->rpl_post |= !!strstr(tok[2], "post");
        } else if (!strcmp(tok[0], "ext")) {
            f->ext = 1;
        } else if (!strcmp(tok[0], "overlap")) {
            if (n < 3 || !tok[2][0])
                gen_die("%s: overlap needs a reason", where);
            if (f->ret_void)
                gen_die("%s: overlap: %s returns nothing to hold while the capture is joined", where, tok[1]);
            f->overlap = 1;
        } else if (!strcmp(tok[0], "stage")) {
            if (n < 3 || !tok[2][0])
                gen_die("%s: stage needs a reason", where);
            if (strcmp(f->ret, "cl_int"))
                gen_die("%s: stage: %s does not return cl_int", where, tok[1]);
            f->stage = 1;
        } else if (gen_sem_directive(api, f, tok, n, where)) {
            /* cat, op, mem, waits, drop, unknown (gen_sem.c) */
        } else if (!strcmp(tok[0], "enum") || !strcmp(tok[0], "bits")) {
            if (n < 4 || api->nnamed >= 512)
                gen_die("%s: enum/bits need FUNC PARAM PREFIX", where);
            gen_named *m = &api->named[api->nnamed++];
            m->func = gen_strdup(tok[1]);
            m->param = gen_strdup(tok[2]);
            m->prefix = gen_strdup(tok[3]);
            m->bits = tok[0][0] == 'b';
        } else {
            gen_die("%s: unknown directive '%s'", where, tok[0]);
        }
    }
    fclose(fp);

    /* Rules, then the check that nothing is left, then the call semantics. */
    int missing = 0;
    for (int i = 0; i < api->nf; i++) {
        gen_func *f = &api->f[i];
        if (!f->in_dispatch && !f->ext)
            continue;
        for (int j = 0; j < f->np; j++) {
            gen_param *p = &f->p[j];
            for (int r = 0; r < nrules && !p->annotated; r++)
                if (!strcmp(rules[r].pname, p->name) && gen_type_eq(p->type, rules[r].type)) {
                    p->a = rules[r].a;
                    p->annotated = 1;
                }
            if (!p->annotated && !p->is_ptr) {
                p->a.dir = GD_IN;
                p->a.kind = p->handle_kind ? GK_HANDLE : GK_VALUE;
                p->a.elem = GK_NONE;
                p->annotated = 1;
            }
            if (!p->annotated) {
                fprintf(stderr, "clrr-gen: %s: pointer parameter '%s %s' has no annotation in %s\n",
                        f->name, p->type, p->name, path);
                missing++;
            }
        }
    }
    if (missing)
        gen_die("%d pointer parameters without annotation", missing);
    gen_sem_finish(api, path);   /* categories, operations, effects: defaults and checks */
    return 0;
}

int main(int argc, char **argv)
{
    /* clrr-gen OVERLAY OUTDIR TU.c [clang args...] */
    if (argc < 4)
        gen_die("usage: clrr-gen OVERLAY OUTDIR TU.c [clang args...]");
    static gen_api api;
    gen_parse_headers(&api, argv[3], argc - 4, (const char **)argv + 4);
    gen_apply_overlay(&api, argv[1]);
    return gen_emit_all(&api, argv[2], argv[1]);
}

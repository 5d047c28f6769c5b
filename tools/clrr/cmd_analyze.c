/* cmd_analyze.c — `clrr analyze FILE [--json]`: the kernel analysis of
 * every program in a trace, per kernel: arguments, accesses with their
 * index expressions and guards, and for the most frequent launch shape the
 * regions, contiguity and features. Gathering here; printing in
 * analyze_print.c. */
#include "tools/clrr/analyze_int.h"
#include "tools/clrr/cli_ana.h"

#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char cli_analyze_usage[] =
    "Usage: clrr analyze FILE [--json]\n"
    "Analyze the kernels of every program a trace built (Clang/LLVM, loaded from\n"
    "libclrr-ana.so): per kernel its arguments (kind, access), each memory access's\n"
    "byte offset as an affine expression of work-item ids and scalar arguments (or\n"
    "unknown, with why) and its guards; then, for its most frequent launch shape,\n"
    "the region each argument reads and writes over all work-groups, whether its\n"
    "writes split contiguously across work-groups, and code features. Kernels the\n"
    "analysis does not handle are listed with the reason.\n"
    "\n"
    "Options:\n"
    "  --json         one JSON object (schema in analyzer/README.md)\n"
    "  -h, --help     show this help\n"
    "\n"
    "Exit status: 0 ok, 2 usage error, 3 error (one line on stderr).\n";

typedef struct cli_shape {
    const ana_cmd *first;
    uint64_t count;
} cli_shape;

static int cli_same_shape(const ana_cmd *a, const ana_cmd *b)
{
    if (a->work_dim != b->work_dim)
        return 0;
    for (int d = 0; d < 3; d++)
        if (a->global[d] != b->global[d] || a->local[d] != b->local[d] || a->goff[d] != b->goff[d])
            return 0;
    return 1;
}

/* Adds program object @p o to the reports (merging those that share an analysis). */
static int cli_an_add_program(const ana_model *m, const ana_object *o, cli_an_program **ps, size_t *np)
{
    const char *why = NULL;
    const ana_program *p = ana_model_program(m, o->id, &why);
    for (size_t i = 0; p && i < *np; i++) {
        cli_an_program *x = &(*ps)[i];
        if (x->p == p) {
            uint64_t *ids = realloc((void *)x->ids, (x->nids + 1) * sizeof *ids);
            if (!ids)
                return -1;
            ids[x->nids++] = o->id;
            x->ids = ids;
            return 0;
        }
    }
    cli_an_program *n = realloc(*ps, (*np + 1) * sizeof *n);
    if (!n)
        return -1;
    *ps = n;
    cli_an_program *x = &n[(*np)++];
    memset(x, 0, sizeof *x);
    x->prog = o;
    x->p = p;
    x->why = why;
    uint64_t *ids = malloc(sizeof *ids);
    if (!ids)
        return -1;
    ids[0] = o->id;
    x->ids = ids;
    x->nids = 1;
    if (p) {
        x->nkernels = ana_program_kernel_count(p);
        x->kernels = calloc(x->nkernels ? x->nkernels : 1, sizeof *x->kernels);
        if (!x->kernels)
            return -1;
        for (size_t k = 0; k < x->nkernels; k++) {
            x->kernels[k].k = ana_program_kernel(p, (unsigned)k);
            x->kernels[k].name = x->kernels[k].k->name;
        }
        return 0;
    }
    /* no analysis: the kernels the trace created from it, by name */
    for (size_t i = 0; i < ana_model_object_count(m); i++) {
        const ana_object *k = ana_model_object(m, i);
        if (k->kind != ANA_OBJ_KERNEL || k->parent != o->id || !k->name || !k->name[0])
            continue;
        size_t j;
        for (j = 0; j < x->nkernels; j++)
            if (!strcmp(x->kernels[j].name, k->name))
                break;
        if (j < x->nkernels)
            continue;
        cli_an_kernel *kk = realloc(x->kernels, (x->nkernels + 1) * sizeof *kk);
        if (!kk)
            return -1;
        x->kernels = kk;
        memset(&kk[x->nkernels], 0, sizeof kk[0]);
        kk[x->nkernels++].name = k->name;
    }
    return 0;
}

/* The report entry of launch @p c's kernel, or NULL. */
static cli_an_kernel *cli_an_find(const ana_model *m, cli_an_program *ps, size_t np, const ana_cmd *c)
{
    const ana_object *k = ana_model_find(m, c->kernel);
    if (!k || !k->name)
        return NULL;
    for (size_t i = 0; i < np; i++)
        for (size_t n = 0; n < ps[i].nids; n++)
            if (ps[i].ids[n] == k->parent)
                for (size_t j = 0; j < ps[i].nkernels; j++)
                    if (!strcmp(ps[i].kernels[j].name, k->name))
                        return &ps[i].kernels[j];
    return NULL;
}

/* Counts launches and picks each kernel's most frequent launch shape. */
static int cli_an_launches(const ana_model *m, cli_an_program *ps, size_t np)
{
    size_t total = 0;
    for (size_t i = 0; i < np; i++)
        total += ps[i].nkernels;
    cli_shape **shapes = calloc(total ? total : 1, sizeof *shapes);
    size_t *nshapes = calloc(total ? total : 1, sizeof *nshapes);
    int rc = -1;
    if (!shapes || !nshapes)
        goto out;
    for (size_t ci = 0; ci < ana_model_command_count(m); ci++) {
        const ana_cmd *c = ana_model_command(m, ci);
        if (c->kind != ANA_CMD_KERNEL)
            continue;
        cli_an_kernel *k = cli_an_find(m, ps, np, c);
        if (!k)
            continue;
        size_t idx = 0;   /* flat index of k */
        for (size_t i = 0; i < np; i++) {
            if (k >= ps[i].kernels && k < ps[i].kernels + ps[i].nkernels) {
                idx += (size_t)(k - ps[i].kernels);
                break;
            }
            idx += ps[i].nkernels;
        }
        k->launches++;
        size_t s;
        for (s = 0; s < nshapes[idx]; s++)
            if (cli_same_shape(shapes[idx][s].first, c))
                break;
        if (s == nshapes[idx]) {
            cli_shape *n = realloc(shapes[idx], (s + 1) * sizeof *n);
            if (!n)
                goto out;
            shapes[idx] = n;
            n[s].first = c;
            n[s].count = 0;
            nshapes[idx]++;
        }
        shapes[idx][s].count++;
    }
    size_t idx = 0;
    for (size_t i = 0; i < np; i++) {
        for (size_t j = 0; j < ps[i].nkernels; j++, idx++) {
            cli_an_kernel *k = &ps[i].kernels[j];
            k->shapes = nshapes[idx];
            for (size_t s = 0; s < nshapes[idx]; s++) {
                if (!k->rep || shapes[idx][s].count > k->shape_count) {
                    k->rep = shapes[idx][s].first;
                    k->shape_count = shapes[idx][s].count;
                }
            }
            if (!k->rep || !k->k || k->k->unsupported)
                continue;
            if (ana_model_launch(m, k->rep, k->k, &k->l, k->vals, CLI_AN_MAXARGS) != ANA_OK) {
                k->rep = NULL;
                continue;
            }
            for (unsigned d = 0; d < 3; d++) {
                uint64_t g = d < k->rep->work_dim ? k->rep->global[d] : 1;
                uint64_t ls = d < k->rep->work_dim ? k->rep->local[d] : 1;
                k->groups[d] = ls ? g / ls + (g % ls != 0) : g;
            }
        }
    }
    rc = 0;
out:
    for (size_t i = 0; shapes && i < total; i++)
        free(shapes[i]);
    free(shapes);
    free(nshapes);
    return rc;
}

static int cli_analyze_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int json = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'h': fputs(cli_analyze_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    int urc = cli_one_file(argc, argv, &path);
    if (urc != CLI_EXIT_OK)
        return urc;
    tf_reader *r = NULL;
    ana_model *m = NULL;
    cli_an_program *ps = NULL;
    size_t np = 0;
    int rc = cli_ana_load(path, 1, &r, &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    for (size_t i = 0; i < ana_model_object_count(m); i++) {
        const ana_object *o = ana_model_object(m, i);
        if (o->kind == ANA_OBJ_PROGRAM && cli_an_add_program(m, o, &ps, &np)) {
            rc = cli_ana_status_err(path, ANA_ERR_NOMEM, NULL);
            goto out;
        }
    }
    if (cli_an_launches(m, ps, np)) {
        rc = cli_ana_status_err(path, ANA_ERR_NOMEM, NULL);
        goto out;
    }
    if (json) {
        json_t *o = json_object(), *a = json_array();
        json_object_set_new(o, "schema", json_string("clrr-analyze/1"));
        json_object_set_new(o, "file", cli_json_ctext(path));
        json_object_set_new(o, "launches", cli_json_u64(ana_model_get_info(m)->launches));
        for (size_t i = 0; i < np; i++)
            json_array_append_new(a, cli_an_program_json(m, &ps[i]));
        json_object_set_new(o, "programs", a);
        if (cli_json_put(stdout, o) < 0) {
            rc = cli_ana_status_err(path, ANA_ERR_NOMEM, NULL);
            goto out;
        }
        putchar('\n');
    } else {
        if (!np)
            printf("%s: no program in the trace\n", path);
        for (size_t i = 0; i < np; i++)
            cli_an_print_human(stdout, m, &ps[i]);
    }
out:
    for (size_t i = 0; i < np; i++) {
        free((void *)ps[i].ids);
        free(ps[i].kernels);
    }
    free(ps);
    ana_model_free(m);
    tf_reader_close(r);
    return rc;
}

const cli_command cli_cmd_analyze = {
    "analyze", "kernel analysis: argument accesses, index expressions, regions, features",
    cli_analyze_usage, cli_analyze_run, NULL,
};

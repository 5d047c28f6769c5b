/* analyze_int.h — internal to `clrr analyze`: one kernel's report as
 * gathered from the model (cmd_analyze.c) and its printing in human and
 * JSON form (analyze_print.c). */
#ifndef CLRR_CLI_ANALYZE_INT_H
#define CLRR_CLI_ANALYZE_INT_H

#include <stdio.h>

#include "analyzer/ana.h"
#include "tools/clrr/cli.h"

#define CLI_AN_MAXARGS 256

/* One kernel of an analyzed program, with its representative launch. */
typedef struct cli_an_kernel {
    const ana_kernel *k;          /* NULL: the analysis has no such kernel */
    const char *name;
    uint64_t launches, shapes;    /* launches; distinct launch shapes */
    uint64_t shape_count;         /* launches of the representative's shape */
    const ana_cmd *rep;           /* first launch of the most frequent shape, or NULL */
    ana_launch l;                 /* rep's values (valid when rep) */
    ana_argval vals[CLI_AN_MAXARGS];
    uint64_t groups[3];           /* work-groups per dimension of rep */
} cli_an_kernel;

/* One program report: the program objects that share a source, the
 * analysis or why there is none, and its kernels. */
typedef struct cli_an_program {
    const ana_object *prog;       /* the first program object with this source */
    const uint64_t *ids;          /* every program object with it */
    size_t nids;
    const ana_program *p;         /* NULL: see why */
    const char *why;
    cli_an_kernel *kernels;
    size_t nkernels;
} cli_an_program;

/*! cli_an_print_human() : writes one program's report. */
void cli_an_print_human(FILE *f, const ana_model *m, const cli_an_program *p);
/*! cli_an_program_json() : one program's report as a new jansson object
 *  (the caller's reference; NULL when out of memory). */
struct json_t *cli_an_program_json(const ana_model *m, const cli_an_program *p);

#endif /* CLRR_CLI_ANALYZE_INT_H */

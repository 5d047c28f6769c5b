/* test_opt_plan.c — the plan file (plan/PLAN.md) as untrusted input:
 * a valid plan reads, writes back and reads again to the same text; every
 * prefix of it (a truncated file) is refused; a table of corruptions
 * (versions, types, ranges, counts that disagree, unknown members, reserved
 * sections, calls that cannot be dropped, two transformations for one call,
 * oversized input, deep nesting) each gives its status and a one-line
 * message naming where; random byte mutations never crash and, when they
 * still read, write back to a plan that reads again. Also the pass list
 * syntax and the readable form of patterns. OPT_TEST_ROUNDS=N for more
 * mutation rounds (default 3000). */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "optimizer/opt.h"

static const char *valid =
    "{\n"
    "\"format\": \"clrr-plan\",\n"
    "\"version\": \"1.0\",\n"
    "\"generator\": \"clrr 0.1.0\",\n"
    "\"trace\": {\"file\":\"t.clrr\",\"calls\":74,\"fingerprint\":\"a2414dda42a724e7\","
    "\"programs\":[\"dd36658719cd909a9bfe41b6885b311a\"]},\n"
    "\"passes\": [\n"
    "  {\"name\":\"dead\",\"enabled\":true,\"transformations\":1,\"effect\":{\"commands\":1,\"kernels\":1,\"bytes\":0,"
    "\"device_ns\":8187,\"timed\":1}},\n"
    "  {\"name\":\"redundant\",\"enabled\":true,\"transformations\":1,\"effect\":{\"commands\":1,\"kernels\":0,"
    "\"bytes\":4096,\"device_ns\":500,\"timed\":1}}\n"
    "],\n"
    "\"kernels\": [\n"
    "  {\"name\":\"scale_lo\",\"program\":\"dd36658719cd909a9bfe41b6885b311a\",\"args\":[\"read\",\"write\"]}\n"
    "],\n"
    "\"transformations\": [\n"
    "  {\"id\":1,\"pass\":\"dead\",\"action\":\"drop\",\"call\":{\"seq\":26,\"function\":\"clEnqueueNDRangeKernel\"},"
    "\"occurrence\":0,\"pattern\":{\"args\":[{\"flags\":1,\"mem\":1,\"size\":8192},{\"bytes\":\"00040000\"},"
    "{\"local\":256},null],\"function\":\"clEnqueueNDRangeKernel\",\"global_work_offset\":null,"
    "\"global_work_size\":[1024],\"kernel\":{\"kernel\":\"scale_lo\",\"program\":\"dd36658719cd909a9bfe41b6885b311a\"},"
    "\"local_work_size\":[64],\"work_dim\":1},\"effect\":{\"commands\":1,\"kernels\":1,\"bytes\":0,\"device_ns\":8187,"
    "\"timed\":1},\"holds\":null,\"reason\":\"what it writes to z is never read\",\"verify\":\"readbacks\"},\n"
    "  {\"id\":2,\"pass\":\"redundant\",\"action\":\"drop\",\"call\":{\"seq\":44,\"function\":\"clEnqueueWriteBuffer\"},"
    "\"occurrence\":1,\"pattern\":{\"blocking_write\":0,\"buffer\":{\"flags\":1,\"mem\":1,\"size\":8192},"
    "\"function\":\"clEnqueueWriteBuffer\",\"offset\":0,\"size\":4096},\"effect\":{\"commands\":1,\"kernels\":0,"
    "\"bytes\":4096,\"device_ns\":500,\"timed\":1},\"holds\":{\"seq\":30},\"reason\":\"the memory already holds these "
    "bytes\",\"verify\":\"readbacks\"}\n"
    "],\n"
    "\"device_selection\": null,\n"
    "\"splits\": null,\n"
    "\"fused_kernels\": null,\n"
    "\"specializations\": null,\n"
    "\"schedule\": null\n"
    "}\n";

static char *write_text(const plan_file *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT(plan_write(p, f) == PLAN_OK);
    fclose(f);
    return buf;
}

static void test_valid_roundtrip(void)
{
    plan_file *p = NULL;
    char err[256] = "";
    plan_status st = plan_parse(valid, strlen(valid), &p, err, sizeof err);
    if (st != PLAN_OK)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_FATAL(st == PLAN_OK);
    const plan_info *in = plan_get_info(p);
    CU_ASSERT(in->major == 1 && in->minor == 0 && in->trace_calls == 74 && in->fingerprint == 0xa2414dda42a724e7ull);
    CU_ASSERT(in->nprograms == 1 && !strcmp(in->trace_file, "t.clrr") && !strcmp(in->generator, "clrr 0.1.0"));
    CU_ASSERT(plan_xform_count(p) == 2 && plan_kernel_count(p) == 1);
    const plan_xform *x = plan_get_xform(p, 1);
    CU_ASSERT(x->id == 2 && x->pass == PLAN_PASS_REDUNDANT && x->seq == 44 && x->holds_seq == 30 && x->occurrence == 1);
    CU_ASSERT(!strcmp(x->pattern, "{\"blocking_write\":0,\"buffer\":{\"flags\":1,\"mem\":1,\"size\":8192},"
                                  "\"function\":\"clEnqueueWriteBuffer\",\"offset\":0,\"size\":4096}"));
    CU_ASSERT(plan_kernel(p, 0)->nargs == 2 && plan_kernel(p, 0)->access[1] == PLAN_ACC_WRITE);
    CU_ASSERT(plan_get_pass(p, PLAN_PASS_DEAD)->effect.device_ns == 8187);
    char *t1 = write_text(p);
    CU_ASSERT(!strcmp(t1, valid));   /* the writer's own layout, byte for byte */
    plan_file *q = NULL;
    CU_ASSERT_FATAL(plan_parse(t1, strlen(t1), &q, err, sizeof err) == PLAN_OK);
    char *t2 = write_text(q);
    CU_ASSERT(!strcmp(t1, t2));
    CU_ASSERT(plan_get_xform(q, 0)->key == plan_get_xform(p, 0)->key);
    char fmt[512];
    plan_pattern_format(plan_get_xform(p, 0)->pattern, fmt, sizeof fmt);
    CU_ASSERT(strstr(fmt, "clEnqueueNDRangeKernel") == fmt && strstr(fmt, "scale_lo@dd366587") &&
              strstr(fmt, "mem#1(8192 B)") && strstr(fmt, "local 256"));
    CU_ASSERT(plan_pattern_format(plan_get_xform(p, 0)->pattern, fmt, 8) > 8 && strlen(fmt) == 7);
    free(t1);
    free(t2);
    plan_free(p);
    plan_free(q);
}

/* 1.3: `occurrences` is read, kept and written back. */
static void test_occurrences(void)
{
    const char *from = "\"occurrence\":1,", *to = "\"occurrence\":1,\"occurrences\":5,";
    const char *at = strstr(valid, from);
    CU_ASSERT_FATAL(at != NULL);
    size_t k = (size_t)(at - valid), n = strlen(valid) - strlen(from) + strlen(to);
    char *t = malloc(n + 1);
    CU_ASSERT_FATAL(t != NULL);
    memcpy(t, valid, k);
    strcpy(t + k, to);
    strcat(t, at + strlen(from));
    plan_file *p = NULL, *q = NULL;
    char err[256] = "";
    CU_ASSERT_FATAL(plan_parse(t, n, &p, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_get_xform(p, 1)->occurrences == 5 && plan_get_xform(p, 0)->occurrences == 0);
    char *w = write_text(p);
    CU_ASSERT(strstr(w, "\"occurrences\":5") != NULL && strstr(w, "\"occurrences\":0") == NULL);
    CU_ASSERT_FATAL(plan_parse(w, strlen(w), &q, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_get_xform(q, 1)->occurrences == 5);
    free(w);
    free(t);
    plan_free(p);
    plan_free(q);
}

/* @p text with the first @p from replaced by @p to (malloc'd). */
static char *subst(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    CU_ASSERT_FATAL(at != NULL);
    size_t k = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to);
    char *t = malloc(n + 1);
    CU_ASSERT_FATAL(t != NULL);
    memcpy(t, text, k);
    strcpy(t + k, to);
    strcat(t, at + strlen(from));
    return t;
}

/* @p text with each steps[i][0] in turn replaced by steps[i][1] (malloc'd). */
static char *substs(const char *text, const char *const (*steps)[2], size_t n)
{
    char *t = strdup(text);
    for (size_t i = 0; i < n; i++) {
        char *u = subst(t, steps[i][0], steps[i][1]);
        free(t);
        t = u;
    }
    return t;
}

/* @p text parsed; @p what names it in the message when it is not. */
static plan_file *parse_ok(const char *text, const char *what)
{
    plan_file *p = NULL;
    char err[256] = "";
    plan_status st = plan_parse(text, strlen(text), &p, err, sizeof err);
    if (st != PLAN_OK)
        fprintf(stderr, "\n  %s: %s\n", what, err);
    CU_ASSERT_FATAL(st == PLAN_OK && p);
    return p;
}

/* Each bad[i]: @p text with bad[i][0] replaced by bad[i][1] is refused
 * with one line containing bad[i][2]. */
static void refusals(const char *text, const char *const (*bad)[3], size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        char *u = subst(text, bad[i][0], bad[i][1]);
        char err[256] = "";
        plan_file *q = NULL;
        plan_status st = plan_parse(u, strlen(u), &q, err, sizeof err);
        int ok = st < 0 && !q && strstr(err, bad[i][2]) && !strchr(err, '\n');
        if (!ok)
            fprintf(stderr, "\n  %s refusal %zu: status %d, '%s'\n", what, i, st, err);
        CU_ASSERT(ok);
        plan_free(q);
        free(u);
    }
}

/* A 1.4 plan: the first transformation a split with models. */
static char *split_plan(void)
{
    static const char *const steps[][2] = {
        {"\"version\": \"1.0\"", "\"version\": \"1.4\""},
        {"{\"name\":\"dead\",\"enabled\":true,\"transformations\":1,\"effect\":{\"commands\":1,\"kernels\":1,",
         "{\"name\":\"split\",\"enabled\":true,\"transformations\":1,\"effect\":{\"commands\":1,\"kernels\":1,"},
        {"\"pass\":\"dead\",\"action\":\"drop\"", "\"pass\":\"split\",\"action\":\"split\",\"split\":1"},
        {"\"splits\": null", "\"splits\": [{\"id\":1,\"kernel\":\"scale_lo\","
         "\"program\":\"dd36658719cd909a9bfe41b6885b311a\",\"name\":\"__clrr_part_scale_lo\",\"dim\":0,\"groups\":16,"
         "\"args\":[\"mem\",\"value\"],\"merge\":[\"concat\",\"none\"],\"parts\":["
         "{\"device\":\"gpu0\",\"groups\":[0,5],\"regions\":[{\"read\":[0,1280],\"write\":[0,1280]},null]},"
         "{\"device\":\"cpu\",\"groups\":[5,16],\"regions\":[{\"read\":[1280,4096],\"write\":[1280,4096]},null]}],"
         "\"models\":[{\"read\":[0,256,0,256],\"write\":[0,256,0,256]},null],\"options\":\"\","
         "\"source\":\"__kernel void scale_lo() {}\"}]"},
    };
    return substs(valid, steps, sizeof steps / sizeof steps[0]);
}

static void test_splits(void)
{
    char *t = split_plan();
    plan_file *p = parse_ok(t, "split plan"), *q = NULL;
    char err[256] = "";
    const plan_split *z = plan_get_split(p, 0);
    CU_ASSERT_FATAL(plan_split_count(p) == 1 && z != NULL);
    CU_ASSERT(plan_get_xform(p, 0)->action == PLAN_ACT_SPLIT && plan_get_xform(p, 0)->split == 1);
    CU_ASSERT(z->nparts == 2 && z->parts[1].lo == 5 && z->parts[1].hi == 16 && !strcmp(z->parts[1].device, "cpu"));
    CU_ASSERT(z->parts[1].regions[0].write && z->parts[1].regions[0].wlo == 1280 && z->merge[0] == PLAN_MERGE_CONCAT);
    CU_ASSERT(z->adaptive && z->models[0].write && z->models[0].w[1] == 256 && !z->models[1].read);
    /* written back and read again: the same split */
    char *w = write_text(p);
    CU_ASSERT_FATAL(plan_parse(w, strlen(w), &q, err, sizeof err) == PLAN_OK);
    const plan_split *y = plan_get_split(q, 0);
    CU_ASSERT_FATAL(plan_split_count(q) == 1 && y != NULL);
    CU_ASSERT(y->nparts == 2 && y->parts[1].lo == 5 && !strcmp(y->parts[0].device, "gpu0") && y->adaptive &&
              !memcmp(y->models[0].r, z->models[0].r, sizeof y->models[0].r) &&
              y->parts[0].regions[0].rhi == 1280 && !strcmp(y->source, z->source) && y->groups == 16);
    free(w);
    plan_free(q);
    q = NULL;
    /* refusals, each naming where */
    static const char *const bad[][3] = {
        {"\"groups\":[5,16]", "\"groups\":[6,16]", "cover the work-groups"},
        {"[1280,4096],\"write\":[1280,4096]", "[1280,4096],\"write\":[1000,4096]", "overlapping bytes"},
        {"\"write\":[0,256,0,256]}", "\"write\":[0,256,8,256]}", "never overlap"},
        {"\"models\":[{\"read\":[0,256,0,256]", "\"models\":[{\"read\":[0,-1,0,256]", "not negative"},
        {"\"split\":1", "\"split\":2", "no split 2"},
        {"\"dim\":0", "\"dim\":3", "dim"},
        {"\"merge\":[\"concat\",\"none\"]", "\"merge\":[\"concat\",\"diff\"]", "only a mem argument"},
    };
    refusals(t, bad, sizeof bad / sizeof bad[0], "split");
    free(t);
    plan_free(p);
}

/* A 1.7 plan: the first transformation a specialization. */
static char *spec_plan(void)
{
    static const char *const steps[][2] = {
        {"\"version\": \"1.0\"", "\"version\": \"1.7\""},
        {"{\"name\":\"dead\",\"enabled\":true,\"transformations\":1,\"effect\":{\"commands\":1,\"kernels\":1,\"bytes\":0,"
         "\"device_ns\":8187,\"timed\":1}}",
         "{\"name\":\"specialize\",\"enabled\":true,\"transformations\":1,\"effect\":{\"commands\":0,\"kernels\":0,"
         "\"bytes\":0,\"device_ns\":0,\"timed\":0}}"},
        {"\"pass\":\"dead\",\"action\":\"drop\"", "\"pass\":\"specialize\",\"action\":\"specialize\",\"specialization\":1"},
        {"\"effect\":{\"commands\":1,\"kernels\":1,\"bytes\":0,\"device_ns\":8187,\"timed\":1},\"holds\"",
         "\"effect\":{\"commands\":0,\"kernels\":0,\"bytes\":0,\"device_ns\":0,\"timed\":0},\"holds\""},
        {"\"specializations\": null", "\"specializations\": [{\"id\":1,\"name\":\"__clrr_spec_1\",\"kernel\":\"scale_lo\","
         "\"program\":\"dd36658719cd909a9bfe41b6885b311a\",\"args\":3,\"constants\":[[1,\"00040000\"]],\"options\":\"\","
         "\"source\":\"__kernel void scale_lo() {}\"}]"},
    };
    return substs(valid, steps, sizeof steps / sizeof steps[0]);
}

static void test_specs(void)
{
    char *t = spec_plan();
    plan_file *p = parse_ok(t, "spec plan"), *q = NULL;
    char err[256] = "";
    plan_status st;
    const plan_spec *z = plan_get_spec(p, 0);
    CU_ASSERT_FATAL(plan_spec_count(p) == 1 && z != NULL);
    CU_ASSERT(plan_get_xform(p, 0)->action == PLAN_ACT_SPECIALIZE && plan_get_xform(p, 0)->spec == 1);
    CU_ASSERT(z->nargs == 3 && z->nconsts == 1 && z->consts[0].index == 1 && z->consts[0].size == 4 &&
              z->consts[0].value[1] == 4 && !strcmp(z->kernel, "scale_lo"));
    /* its execution view: a fused kernel of one launch, every argument its own */
    CU_ASSERT(z->as.launches == 1 && z->as.nparams == 3 && z->as.params[2][0] == 0 && z->as.params[2][1] == 2 &&
              z->as.id == PLAN_SPEC_ID_BASE + 1 && z->as.keep_store && !strcmp(z->as.name, "__clrr_spec_1"));
    char *w = write_text(p);
    CU_ASSERT(strstr(w, "\"specializations\": [\n  {\"id\":1,") && strstr(w, "\"constants\":[[1,\"00040000\"]]") &&
              strstr(w, "\"specialization\":1"));
    CU_ASSERT_FATAL(plan_parse(w, strlen(w), &q, err, sizeof err) == PLAN_OK);
    CU_ASSERT(plan_spec_count(q) == 1 && !memcmp(plan_get_spec(q, 0)->consts, z->consts, sizeof *z->consts));
    free(w);
    plan_free(q);
    q = NULL;
    /* a shape pattern (the constant's argument by size, as the optimizer
     * writes it) is read too */
    char *sh = subst(t, "{\"bytes\":\"00040000\"}", "{\"bytes_size\":4}");
    st = plan_parse(sh, strlen(sh), &q, err, sizeof err);
    CU_ASSERT(st == PLAN_OK && q && strstr(plan_get_xform(q, 0)->pattern, "{\"bytes_size\":4}"));
    plan_free(q);
    q = NULL;
    free(sh);
    static const char *const bad[][3] = {
        {"\"specialization\":1", "\"specialization\":2", "no specialization 2"},
        {"[[1,\"00040000\"]]", "[[3,\"00040000\"]]", "constants[0]"},
        {"[[1,\"00040000\"]]", "[[1,\"000400\"]]", "constants[0]"},
        {"[[1,\"00040000\"]]", "[[1,\"0004000G\"]]", "constants[0]"},
        {"[[1,\"00040000\"]]", "[[1,\"00040000\"],[1,\"01\"]]", "constants[1]"},
        {"[[1,\"00040000\"]]", "[]", "constants"},
        {"[[1,\"00040000\"]]", "[[1,\"00050000\"]]", "args[1]: neither the bytes 00050000"},
        {"[[1,\"00040000\"]]", "[[2,\"00040000\"]]", "args[2]: neither the bytes"},
        {"[[1,\"00040000\"]]", "[[1,\"0004\"]]", "nor any 2 bytes"},
        {"\"args\":3", "\"args\":0", "args"},
        {"\"name\":\"__clrr_spec_1\",\"kernel\":\"scale_lo\"", "\"name\":\"__clrr_spec_1\",\"kernel\":\"a-b\"",
         "identifiers"},
        {"\"action\":\"specialize\",\"specialization\":1", "\"action\":\"drop\",\"specialization\":1",
         "not an action of pass"},
        {"\"version\": \"1.7\"", "\"version\": \"1.6\"", "before 1.7"},
    };
    refusals(t, bad, sizeof bad / sizeof bad[0], "spec");
    free(t);
    plan_free(p);
}

/* A 1.8 plan: the schedule pass and two scheduled queues (the second with
 * downloads only, on lane 1 of 2). */
static char *sched_plan(void)
{
    static const char *const steps[][2] = {
        {"\"version\": \"1.0\"", "\"version\": \"1.8\""},
        {"\"bytes\":4096,\"device_ns\":500,\"timed\":1}}\n],",
         "\"bytes\":4096,\"device_ns\":500,\"timed\":1}},\n  {\"name\":\"schedule\",\"enabled\":true,"
         "\"transformations\":0,\"effect\":{\"commands\":0,\"kernels\":0,\"bytes\":0,\"device_ns\":0,\"timed\":0}}\n],"},
        {"\"schedule\": null", "\"schedule\": [\n"
         "  {\"id\":1,\"queue\":0,\"lanes\":3,\"commands\":20,\"uploads\":10,\"downloads\":5,\"recorded_ns\":3120000,"
         "\"predicted_ns\":2200000,\"reason\":\"10 uploads and 5 downloads overlap 5 launches\"},\n"
         "  {\"id\":2,\"queue\":2,\"lanes\":2,\"commands\":9,\"uploads\":0,\"downloads\":4,\"recorded_ns\":900,"
         "\"predicted_ns\":900,\"reason\":\"4 downloads overlap 5 launches\"}\n]"},
    };
    return substs(valid, steps, sizeof steps / sizeof steps[0]);
}

static void sched_expect(const plan_file *p)
{
    const plan_sched *a = plan_get_sched(p, 0), *b = plan_get_sched(p, 1);
    CU_ASSERT_FATAL(plan_sched_count(p) == 2 && a && b && !plan_get_sched(p, 2));
    CU_ASSERT(a->id == 1 && a->queue == 0 && a->lanes == 3 && a->commands == 20 && a->uploads == 10 &&
              a->downloads == 5 && a->recorded_ns == 3120000 && a->predicted_ns == 2200000 &&
              !strcmp(a->reason, "10 uploads and 5 downloads overlap 5 launches"));
    CU_ASSERT(b->id == 2 && b->queue == 2 && b->lanes == 2 && b->commands == 9 && b->uploads == 0 &&
              b->downloads == 4 && b->recorded_ns == 900 && b->predicted_ns == 900 &&
              !strcmp(b->reason, "4 downloads overlap 5 launches"));
    const plan_pass_result *r = plan_get_pass(p, PLAN_PASS_SCHEDULE);
    CU_ASSERT(r->enabled && r->transformations == 0);
}

static void test_schedule(void)
{
    char *t = sched_plan();
    plan_file *p = parse_ok(t, "schedule plan"), *q = NULL;
    char err[256] = "";
    CU_ASSERT(plan_get_info(p)->minor == 8);
    sched_expect(p);
    /* written back (1.8, one entry a line) and read again: every field */
    char *w = write_text(p);
    CU_ASSERT(strstr(w, "\"version\": \"1.8\"") && strstr(w, "{\"name\":\"schedule\",\"enabled\":true,") &&
              strstr(w, "\n\"schedule\": [\n  {\"id\":1,\"queue\":0,\"lanes\":3,\"commands\":20,\"uploads\":10,"
                        "\"downloads\":5,\"recorded_ns\":3120000,\"predicted_ns\":2200000,\"reason\":\"10 uploads "
                        "and 5 downloads overlap 5 launches\"},\n  {\"id\":2,"));
    CU_ASSERT_FATAL(plan_parse(w, strlen(w), &q, err, sizeof err) == PLAN_OK);
    sched_expect(q);
    char *w2 = write_text(q);
    CU_ASSERT(!strcmp(w, w2));
    free(w2);
    free(w);
    plan_free(q);
    /* a 1.7 plan (no schedule pass, schedule null) is written back as 1.7 */
    char *t7 = spec_plan();
    q = parse_ok(t7, "1.7 plan");
    w = write_text(q);
    CU_ASSERT(strstr(w, "\"version\": \"1.7\"") && strstr(w, "\"schedule\": null") && !strstr(w, "\"schedule\"}"));
    CU_ASSERT(!strstr(w, "{\"name\":\"schedule\""));
    free(w);
    plan_free(q);
    free(t7);
    char big[1100];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    char longer[1200];
    snprintf(longer, sizeof longer, "\"reason\":\"%s\"},\n  {\"id\":2", big);
    const char *const bad[][3] = {   /* not static: one entry is built above */
        {"\"reason\":\"10 uploads", "\"lane\":1,\"reason\":\"10 uploads", "schedule[0]: unknown member 'lane'"},
        {"{\"id\":2,\"queue\":2", "{\"id\":3,\"queue\":2", "schedule[1].id: 3, expected 2"},
        {"\"lanes\":3", "\"lanes\":4", "schedule[0].lanes: 4, expected 2 or 3"},
        {"\"lanes\":2", "\"lanes\":1", "schedule[1].lanes: 1, expected 2 or 3"},
        {"\"lanes\":3", "\"lanes\":\"3\"", "schedule[0].lanes: expected a non-negative integer"},
        {"\"commands\":20", "\"commands\":14", "schedule[0]: uploads and downloads cannot exceed commands"},
        {"\"uploads\":0", "\"uploads\":9223372036854775807", "schedule[1]: uploads and downloads cannot exceed"},
        {"\"predicted_ns\":900", "\"predicted_ns\":901", "schedule[1]: predicted_ns cannot exceed recorded_ns"},
        {"\"queue\":2", "\"queue\":0", "schedule[1].queue: queue 0 is scheduled by schedule[0] already"},
        {"\"queue\":0", "\"queue\":-1", "schedule[0].queue"},
        {"overlap 5 launches\"},", "overlap\\n5 launches\"},", "schedule[0]: reason: one line"},
        {"\"reason\":\"10 uploads and 5 downloads overlap 5 launches\"},\n  {\"id\":2", longer,
         "schedule[0].reason: expected a string of at most 1024 bytes"},
        {"{\"name\":\"schedule\",\"enabled\":true", "{\"name\":\"schedule\",\"enabled\":false",
         "schedule[0]: the schedule pass is not enabled"},
        {",\n  {\"name\":\"schedule\",\"enabled\":true,\"transformations\":0,", ",\n  {\"name\":\"fuse\",\"enabled\":true,"
         "\"transformations\":0,", "schedule[0]: the schedule pass is not enabled"},
        {"\"schedule\": [", "\"schedule\": {", "JSON"},
        {"\"version\": \"1.8\"", "\"version\": \"1.7\"", "plan.schedule: this section is reserved for later versions "
         "and must be null before 1.8"},
        {"\"pass\":\"dead\",\"action\":\"drop\"", "\"pass\":\"schedule\",\"action\":\"drop\"",
         "transformations[0].action: 'drop' is not an action of pass 'schedule'"},
    };
    refusals(t, bad, sizeof bad / sizeof bad[0], "schedule");
    /* the pass itself before 1.8, with the section null */
    char *t1 = subst(t, "\"version\": \"1.8\"", "\"version\": \"1.7\"");
    strcpy(strstr(t1, "\"schedule\": ["), "\"schedule\": null\n}\n");
    plan_status st = plan_parse(t1, strlen(t1), &q, err, sizeof err);
    int ok = st == PLAN_ERR_PLAN && !q && !strchr(err, '\n') &&
             strstr(err, "passes[2].name: pass 'schedule' comes with 1.8 (this plan is 1.7)");
    if (!ok)
        fprintf(stderr, "\n  the schedule pass in 1.7: status %d, '%s'\n", st, err);
    CU_ASSERT(ok);
    plan_free(q);
    free(t1);
    free(t);
    plan_free(p);
}

/* 1.9: `requires` names the features a plan uses; a reader refuses a
 * feature it does not know (one line, whatever the minor version), reads a
 * newer minor whose features it knows, and refuses a plan that uses a
 * feature without listing it. The writer fills it from the contents. */
static void test_requires(void)
{
    char *t8 = sched_plan();
    char *t = subst(t8, "\"version\": \"1.8\",\n", "\"version\": \"1.9\",\n\"requires\": [\"schedule\"],\n");
    plan_file *p = parse_ok(t, "1.9 plan"), *q = NULL;
    char err[256] = "";
    CU_ASSERT(plan_get_info(p)->minor == 9 && plan_get_info(p)->requires == 1u << PLAN_FEAT_SCHEDULE);
    CU_ASSERT(plan_features(p) == 1u << PLAN_FEAT_SCHEDULE);
    sched_expect(p);
    char *w = write_text(p);
    CU_ASSERT(strstr(w, "\"version\": \"1.9\",\n\"requires\": [\"schedule\"],\n\"generator\": ") != NULL);
    CU_ASSERT_FATAL(plan_parse(w, strlen(w), &q, err, sizeof err) == PLAN_OK);
    char *w2 = write_text(q);
    CU_ASSERT(!strcmp(w, w2));
    free(w2);
    free(w);
    plan_free(q);
    q = NULL;
    /* a newer minor: its unknown members ignored, its features known */
    char *tn = subst(t, "\"version\": \"1.9\"", "\"version\": \"1.42\"");
    char *tn2 = subst(tn, "\"generator\": ", "\"lanes_v2\": {\"x\": 1},\n\"generator\": ");
    q = parse_ok(tn2, "1.42 plan");
    CU_ASSERT(plan_get_info(q)->minor == 42);
    sched_expect(q);
    plan_free(q);
    q = NULL;
    /* ... but one that needs a feature this build does not know */
    char *tu = subst(tn2, "[\"schedule\"]", "[\"schedule\", \"teleport\"]");
    plan_status st = plan_parse(tu, strlen(tu), &q, err, sizeof err);
    int ok = st == PLAN_ERR_VERSION && !q && !strchr(err, '\n') &&
             strstr(err, "plan.requires[1]: feature 'teleport' is unknown to this build (it knows fuse, split, chain, "
                         "specialize, schedule, local_size, coarsen)");
    if (!ok)
        fprintf(stderr, "\n  unknown feature: status %d, '%s'\n", st, err);
    CU_ASSERT(ok);
    free(tu);
    free(tn2);
    free(tn);
    const char *const bad[][3] = {
        {"[\"schedule\"]", "[\"teleport\"]", "plan.requires[0]: feature 'teleport' is unknown to this build"},
        {"[\"schedule\"]", "[]", "plan.requires: the plan uses 'schedule' but does not list it"},
        {"[\"schedule\"]", "[\"schedule\", \"schedule\"]", "plan.requires[1]: 'schedule' is listed twice"},
        {"[\"schedule\"]", "[\"schedule\", 3]", "plan.requires[1]: expected a feature name"},
        {"[\"schedule\"]", "[\"\"]", "plan.requires[0]: expected a feature name"},
        {"[\"schedule\"]", "\"schedule\"", "plan.requires: expected an array"},
        {"\"requires\": [\"schedule\"],\n", "", "plan.requires: expected an array"},
        {"\"version\": \"1.9\"", "\"version\": \"1.8\"", "plan.requires: comes with 1.9 (this plan is 1.8)"},
    };
    refusals(t, bad, sizeof bad / sizeof bad[0], "requires");
    /* listing more than it uses is allowed, and kept */
    char *tm = subst(t, "[\"schedule\"]", "[\"fuse\", \"schedule\"]");
    q = parse_ok(tm, "1.9 plan requiring more");
    w = write_text(q);
    CU_ASSERT(strstr(w, "\"requires\": [\"fuse\", \"schedule\"],\n") != NULL);
    free(w);
    plan_free(q);
    free(tm);
    /* what plans use: a 1.7 plan specializes; a new, empty plan uses nothing */
    char *t7 = spec_plan();
    q = parse_ok(t7, "1.7 plan");
    CU_ASSERT(plan_features(q) & 1u << PLAN_FEAT_SPECIALIZE);
    w = write_text(q);
    CU_ASSERT(!strstr(w, "\"requires\""));   /* written back as 1.7 */
    free(w);
    plan_free(q);
    free(t7);
    plan_file *e = plan_new();
    CU_ASSERT_FATAL(e != NULL);
    w = write_text(e);
    CU_ASSERT(strstr(w, "\"version\": \"1.14\",\n\"requires\": [],\n") != NULL);
    free(w);
    plan_free(e);
    CU_ASSERT(!strcmp(plan_feature_name(PLAN_FEAT_CHAIN), "chain") && plan_feature_name(PLAN_FEAT_COUNT) == NULL);
    free(t);
    free(t8);
    plan_free(p);
}

static void test_truncated(void)
{
    size_t n = strlen(valid);
    while (n && (valid[n - 1] == '\n' || valid[n - 1] == ' '))
        n--;
    for (size_t len = 0; len < n; len++) {
        plan_file *p = NULL;
        char err[256] = "";
        plan_status st = plan_parse(valid, len, &p, err, sizeof err);
        CU_ASSERT(st == PLAN_ERR_PLAN && p == NULL && err[0] && !strchr(err, '\n'));
    }
}

typedef struct corruption {
    const char *from, *to;
    plan_status want;
    const char *msg;         /* a part of the message */
} corruption;

static const corruption corruptions[] = {
    {"\"version\": \"1.0\"", "\"version\": \"2.0\"", PLAN_ERR_VERSION, "this build reads 1.x"},
    {"\"version\": \"1.0\"", "\"version\": \"1.x\"", PLAN_ERR_PLAN, "plan.version"},
    {"\"version\": \"1.0\"", "\"version\": 1", PLAN_ERR_PLAN, "plan.version"},
    {"\"format\": \"clrr-plan\"", "\"format\": \"clrr-trace\"", PLAN_ERR_PLAN, "plan.format"},
    {"\"calls\":74", "\"calls\":-1", PLAN_ERR_PLAN, "plan.trace.calls"},
    {"\"calls\":74", "\"calls\":1e30", PLAN_ERR_PLAN, "plan.trace.calls"},
    {"\"calls\":74", "\"calls\":99999999999999999999999999", PLAN_ERR_PLAN, "JSON"},
    {"\"calls\":74", "\"calls\":\"74\"", PLAN_ERR_PLAN, "plan.trace.calls"},
    {"\"fingerprint\":\"a2414dda42a724e7\"", "\"fingerprint\":\"a2414dda\"", PLAN_ERR_PLAN, "fingerprint"},
    {"\"programs\":[\"dd3", "\"programs\":[\"DD3", PLAN_ERR_PLAN, "programs[0]"},
    {"\"transformations\":1,\"effect\":{\"commands\":1,\"kernels\":1",
     "\"transformations\":1000000,\"effect\":{\"commands\":1,\"kernels\":1", PLAN_ERR_PLAN, "counts 1000000"},
    {"\"kernels\":1,\"bytes\":0,\"device_ns\":8187,\"timed\":1}},",
     "\"kernels\":2,\"bytes\":0,\"device_ns\":8187,\"timed\":1}},", PLAN_ERR_PLAN, "cannot exceed"},
    {"\"enabled\":true,\"transformations\":1,\"effect\":{\"commands\":1,\"kernels\":0",
     "\"enabled\":1,\"transformations\":1,\"effect\":{\"commands\":1,\"kernels\":0", PLAN_ERR_PLAN, "passes[1].enabled"},
    {"{\"name\":\"dead\"", "{\"name\":\"fusion\"", PLAN_ERR_PLAN, "unknown pass 'fusion'"},
    {"{\"id\":2,", "{\"id\":7,", PLAN_ERR_PLAN, "transformations[1].id"},
    {"\"action\":\"drop\",\"call\":{\"seq\":26", "\"action\":\"frob\",\"call\":{\"seq\":26", PLAN_ERR_PLAN,
     "unknown action"},
    {"\"seq\":26", "\"seq\":0", PLAN_ERR_PLAN, "seq counts from 1"},
    {"\"function\":\"clEnqueueWriteBuffer\"},", "\"function\":\"clFinish\"},", PLAN_ERR_PLAN, "cannot be dropped"},
    {"\"function\":\"clEnqueueWriteBuffer\",\"offset\"", "\"function\":\"clEnqueueFillBuffer\",\"offset\"", PLAN_ERR_PLAN,
     "not the call's"},
    {"\"global_work_size\":[1024]", "\"global_work_size\":[1024,-3]", PLAN_ERR_PLAN, "global_work_size"},
    {"\"global_work_size\":[1024]", "\"global_work_size\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]", PLAN_ERR_PLAN,
     "more than 16"},
    {"{\"bytes\":\"00040000\"}", "{\"bytes\":\"00040000\",\"mem\":1}", PLAN_ERR_PLAN, "args"},
    {"{\"local\":256}", "{\"local\":256,\"x\":1}", PLAN_ERR_PLAN, "args"},
    {"{\"local\":256}", "{\"warp\":256}", PLAN_ERR_PLAN, "unknown role"},
    {"\"work_dim\":1}", "\"work_dim\":1,\"Bad-Name\":1}", PLAN_ERR_PLAN, "bad member name"},
    {"\"holds\":{\"seq\":30}", "\"holds\":null", PLAN_ERR_PLAN, "names the call that left"},
    {"\"holds\":{\"seq\":30}", "\"holds\":{\"seq\":44}", PLAN_ERR_PLAN, "must come before"},
    {"\"holds\":null", "\"holds\":{\"seq\":3}", PLAN_ERR_PLAN, "names the call that left"},
    {"\"verify\":\"readbacks\"},\n  {\"id\":2", "\"verify\":\"nothing\"},\n  {\"id\":2", PLAN_ERR_PLAN,
     "unknown verification"},
    {"\"splits\": null", "\"splits\": {}", PLAN_ERR_VERSION, "reserved for later versions"},
    {"\"generator\": \"clrr 0.1.0\",", "\"generator\": \"clrr 0.1.0\", \"bogus\": 1,", PLAN_ERR_PLAN,
     "unknown member 'bogus'"},
    {"\"generator\": \"clrr 0.1.0\",", "\"generator\": \"clrr 0.1.0\", \"generator\": \"x\",", PLAN_ERR_PLAN,
     "duplicate"},
    {"\"args\":[\"read\",\"write\"]", "\"args\":[\"read\",\"written\"]", PLAN_ERR_PLAN, "kernels[0].args[1]"},
    {"\"reason\":\"what it writes to z is never read\"", "\"reason\":7", PLAN_ERR_PLAN, "reason"},
    {"\"occurrence\":1,", "\"occurrence\":0.5,", PLAN_ERR_PLAN, "occurrence"},
    /* 1.3: how often the recording met the pattern, more than the call's own occurrence */
    {"\"occurrence\":1,", "\"occurrence\":1,\"occurrences\":1,", PLAN_ERR_PLAN,
     "occurrences: 1, but the call is occurrence 1"},
    {"\"occurrence\":1,", "\"occurrence\":1,\"occurrences\":\"x\",", PLAN_ERR_PLAN, "occurrences"},
    {"\"occurrence\":1,", "\"occurrence\":1,\"occurrences\":5,", PLAN_OK, ""},
    {"\"transformations\": [", "\"transformations\": {", PLAN_ERR_PLAN, "JSON"},
    {"\"file\":\"t.clrr\"", "\"file\":\"t\\u0000x\"", PLAN_ERR_PLAN, ""},
    {"\"pass\":\"redundant\"", "\"pass\":\"dead\"", PLAN_ERR_PLAN, "others none"},
    /* a newer minor version: unknown members are ignored */
    {"\"version\": \"1.0\",", "\"version\": \"1.99\", \"requires\": [], \"extra\": {\"a\": [1]},", PLAN_OK, ""},
};

static void test_corruptions(void)
{
    for (size_t i = 0; i < sizeof corruptions / sizeof corruptions[0]; i++) {
        const corruption *c = &corruptions[i];
        const char *at = strstr(valid, c->from);
        CU_ASSERT_FATAL(at != NULL);
        size_t n = strlen(valid) - strlen(c->from) + strlen(c->to);
        char *t = malloc(n + 1);
        size_t k = (size_t)(at - valid);
        memcpy(t, valid, k);
        strcpy(t + k, c->to);
        strcat(t, at + strlen(c->from));
        plan_file *p = NULL;
        char err[256] = "";
        plan_status st = plan_parse(t, n, &p, err, sizeof err);
        int ok = st == c->want && (st == PLAN_OK) == (p != NULL) && (st == PLAN_OK || (err[0] && !strchr(err, '\n'))) &&
                 strstr(err, c->msg) != NULL;
        if (!ok)
            fprintf(stderr, "\n  corruption %zu (%s -> %s): status %d, '%s'\n", i, c->from, c->to, st, err);
        CU_ASSERT(ok);
        plan_free(p);
        free(t);
    }
}

static void test_limits(void)
{
    plan_file *p = NULL;
    char err[256] = "";
    /* oversized: refused before parsing */
    size_t big = PLAN_MAX_BYTES + 1;
    char *t = malloc(big);
    CU_ASSERT_FATAL(t != NULL);
    memset(t, ' ', big);
    CU_ASSERT(plan_parse(t, big, &p, err, sizeof err) == PLAN_ERR_LIMIT && strstr(err, "at most"));
    /* deep nesting */
    size_t depth = 200000;
    for (size_t i = 0; i < depth; i++)
        t[i] = '[';
    CU_ASSERT(plan_parse(t, depth, &p, err, sizeof err) == PLAN_ERR_PLAN && !p);
    /* a pattern with too many arguments */
    const char *at = strstr(valid, "{\"local\":256},null]");
    size_t k = (size_t)(at - valid);
    memcpy(t, valid, k);
    size_t n = k;
    for (int i = 0; i < 300; i++)
        n += (size_t)sprintf(t + n, "null,");
    n += (size_t)sprintf(t + n, "%s", at);
    CU_ASSERT(plan_parse(t, n, &p, err, sizeof err) == PLAN_ERR_PLAN && strstr(err, "more than 256 arguments"));
    /* two transformations for one call */
    const char *t2 = strstr(valid, "  {\"id\":2");
    const char *t2e = strstr(t2, "}\n],");
    n = 0;
    memcpy(t, valid, (size_t)(t2e + 1 - valid));
    n = (size_t)(t2e + 1 - valid);
    n += (size_t)sprintf(t + n, ",\n");
    memcpy(t + n, t2, (size_t)(t2e + 1 - t2));
    n += (size_t)(t2e + 1 - t2);
    t[n] = 0;
    strcat(t, t2e + 1);
    n = strlen(t);
    char *idp = strstr(strstr(t, "{\"id\":2") + 5, "{\"id\":2");
    idp[6] = '3';
    char *cnt = strstr(t, "\"name\":\"redundant\",\"enabled\":true,\"transformations\":1");
    cnt[strlen("\"name\":\"redundant\",\"enabled\":true,\"transformations\":")] = '2';
    CU_ASSERT(plan_parse(t, n, &p, err, sizeof err) == PLAN_ERR_PLAN && strstr(err, "the same call"));
    free(t);
    CU_ASSERT(plan_read("/nonexistent/plan.json", &p, err, sizeof err) == PLAN_ERR_IO && !p);
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void test_mutations(void)
{
    static const char alphabet[] = "{}[]\",:0123456789-.e truefalsnul\\ab";
    size_t n = strlen(valid);
    char *t = malloc(n + 64);
    int rounds = getenv("OPT_TEST_ROUNDS") ? atoi(getenv("OPT_TEST_ROUNDS")) : 3000, accepted = 0;
    for (int r = 0; r < rounds; r++) {
        memcpy(t, valid, n);
        size_t len = n;
        int edits = 1 + (int)(rnd() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = rnd() % len;
            switch (rnd() % 3) {
            case 0: t[at] = alphabet[rnd() % (sizeof alphabet - 1)]; break;
            case 1: memmove(t + at, t + at + 1, len - at - 1); len--; break;
            default: t[at] = (char)(rnd() & 0xff); break;
            }
        }
        plan_file *p = NULL;
        char err[256] = "";
        plan_status st = plan_parse(t, len, &p, err, sizeof err);
        if (st != PLAN_OK) {
            CU_ASSERT(!p && err[0] && !strchr(err, '\n'));
            continue;
        }
        accepted++;
        char *w = write_text(p);
        plan_file *q = NULL;
        CU_ASSERT(plan_parse(w, strlen(w), &q, err, sizeof err) == PLAN_OK);
        plan_free(q);
        free(w);
        plan_free(p);
    }
    CU_ASSERT(accepted > 0);   /* some mutations (in strings) still read */
    free(t);
}

/* plan_add_local's rules for tuned shapes that name a coarsening (the
 * optimizer's side; the reader's check of the same rules is
 * tests/e2e/opt_coarsen.sh): a group form (3, 4) keeps the recorded
 * work-groups, each `factor` times fewer work-items along its dimension,
 * so it needs the recorded local size and exactly that divided; a plain
 * form takes any local size that divides the coarsened global one, or
 * none. */
static void test_group_locals(void)
{
    plan_file *p = plan_new();
    CU_ASSERT_FATAL(p != NULL);
    plan_coarse cb = {.name = "k_gb2", .kernel = "k", .source = "kernel void k_gb2(){}", .options = "",
                      .dim = 0, .factor = 2, .form = 3, .nargs = 1};
    plan_coarse cs = cb;
    cs.name = "k_s2";
    cs.form = 1;
    uint32_t gb = 0, st = 0;
    CU_ASSERT_FATAL(plan_add_coarse(p, &cb, &gb) == PLAN_OK);
    CU_ASSERT_FATAL(plan_add_coarse(p, &cs, &st) == PLAN_OK);
    struct { uint32_t coarsen; int has_recorded; uint64_t recorded0, local0, local1; plan_status want; } cases[] = {
        {gb, 1, 64, 32, 4, PLAN_OK},         /* the recorded 64x4, halved along 0 */
        {gb, 1, 64, 64, 4, PLAN_ERR_ARG},    /* not divided */
        {gb, 1, 64, 16, 4, PLAN_ERR_ARG},    /* divided by 4, not by the factor */
        {gb, 1, 64, 32, 2, PLAN_ERR_ARG},    /* the other dimension changed */
        {gb, 0, 0, 32, 4, PLAN_ERR_ARG},     /* no recorded local size */
        {gb, 1, 64, 0, 0, PLAN_ERR_ARG},     /* no local size at all */
        {gb, 1, 3, 1, 4, PLAN_ERR_ARG},      /* a recorded size the factor does not divide (and 1024 % 3) */
        {st, 1, 64, 64, 4, PLAN_OK},         /* strided: any size dividing 512 x 16 */
        {st, 0, 0, 0, 0, PLAN_OK},           /* strided, no local size */
        {st, 0, 0, 1024, 4, PLAN_ERR_ARG},   /* more than the coarsened global 512 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan_tuned t = {.device = "d", .driver = "v", .local = {cases[i].local0, cases[i].local1, 0},
                        .reps = 5, .coarsen = cases[i].coarsen};
        plan_local l = {.kernel = "k", .dim = 2, .global = {1024, 16, 0}, .has_recorded = cases[i].has_recorded,
                        .recorded = {cases[i].recorded0, 4, 0}, .ntuned = 1, .tuned = &t};
        plan_status got = plan_add_local(p, &l, NULL);
        if (got != cases[i].want)
            fprintf(stderr, "case %zu: plan_add_local %d, want %d\n", i, got, cases[i].want);
        CU_ASSERT(got == cases[i].want);
    }
    CU_ASSERT(plan_local_count(p) == 3);
    plan_free(p);
}

/* opt_live_check credits a plan with its parts' measured gain (here one
 * tuned shape: 0.1 ms a launch, 100 launches) or the whole plan's, where
 * that is smaller: a whole replay's noise must not keep a plan live that
 * its parts do not pay for (the layer's default cost for 10 calls: 5.04
 * ms; kept above 1.5 times that). */
static void test_live_gain(void)
{
    struct { int whole; double final_ms, want_ms; int kept; } cases[] = {
        {0, 0, 10, 1},       /* no final check: the parts */
        {1, 17, 10, 1},      /* the whole plan measured more: the parts */
        {1, 8, 8, 1},        /* the whole plan measured less: the whole */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan_file *p = plan_new();
        CU_ASSERT_FATAL(p != NULL);
        plan_info_mut(p)->trace_calls = 10;
        plan_tuned t = {.device = "d", .driver = "v", .local = {32, 0, 0}, .before_ns = 300000, .after_ns = 200000,
                        .reps = 5};
        plan_local l = {.kernel = "k", .dim = 1, .global = {1024, 0, 0}, .ntuned = 1, .tuned = &t};
        uint32_t lid = 0;
        CU_ASSERT_FATAL(plan_add_local(p, &l, &lid) == PLAN_OK);
        plan_xform x = {.pass = PLAN_PASS_WGSIZE, .action = PLAN_ACT_LOCAL_SIZE, .seq = 7,
                        .function = "clEnqueueNDRangeKernel", .pattern = "{}", .occurrences = 100, .local = lid};
        CU_ASSERT_FATAL(plan_add_xform(p, &x) == PLAN_OK);
        opt_verify_result vr;
        memset(&vr, 0, sizeof vr);
        vr.final_checked = cases[i].whole;
        vr.final_gain_ns = cases[i].final_ms * 1e6;
        opt_options o;
        memset(&o, 0, sizeof o);
        opt_live_result res;
        char err[256];
        CU_ASSERT(opt_live_check("/nonexistent.clrr", &o, &vr, NULL, NULL, NULL, &p, &res, err, sizeof err) == PLAN_OK);
        CU_ASSERT(res.checked == 1);
        CU_ASSERT(res.dropped == !cases[i].kept);
        CU_ASSERT(res.gain_ns > cases[i].want_ms * 1e6 - 1 && res.gain_ns < cases[i].want_ms * 1e6 + 1);
        CU_ASSERT(plan_xform_count(p) == 1);
        plan_free(p);
    }
}

/* 1.13, 1.14: staging decisions, one per device, kept only when faster
 * (unstaged: measured, not kept); written
 * and read back as they were; weighed live by their measured gain alone
 * (a plan with no transformation but a staging decision loads the layer). */
static void test_stages(void)
{
    plan_file *p = plan_new();
    CU_ASSERT_FATAL(p != NULL);
    plan_info_mut(p)->trace_calls = 10;
    plan_stage s = {.device = "NVIDIA H200", .driver = "580.1", .min_bytes = 524288, .transfers = 3,
                    .bytes = 3u << 20, .before_ns = 30000000, .after_ns = 10000000, .noise_ns = 600000, .reps = 5};
    plan_stage bad = s;
    bad.min_bytes = 100;
    CU_ASSERT(plan_add_stage(p, &bad) == PLAN_ERR_ARG);
    bad = s;
    bad.after_ns = bad.before_ns + 1;
    CU_ASSERT(plan_add_stage(p, &bad) == PLAN_ERR_ARG);
    bad = s;
    bad.reps = 0;
    CU_ASSERT(plan_add_stage(p, &bad) == PLAN_ERR_ARG);
    bad = s;
    bad.bytes = 1;
    CU_ASSERT(plan_add_stage(p, &bad) == PLAN_ERR_ARG);
    CU_ASSERT_FATAL(plan_add_stage(p, &s) == PLAN_OK);
    CU_ASSERT(plan_add_stage(p, &s) == PLAN_ERR_ARG);   /* the same device twice */
    CU_ASSERT(plan_stage_count(p) == 1 && plan_stage_for(p, "NVIDIA H200", "580.1") == plan_get_stage(p, 0));
    CU_ASSERT(plan_stage_for(p, "NVIDIA H200", "580.2") == NULL);
    char *w = write_text(p);
    CU_ASSERT(strstr(w, "\"version\": \"1.14\"") && strstr(w, "\n\"staging\": [\n  {\"device\":\"NVIDIA H200\","));
    plan_file *q = NULL;
    char err[256] = "";
    plan_status st = plan_parse(w, strlen(w), &q, err, sizeof err);
    if (st != PLAN_OK)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_FATAL(st == PLAN_OK);
    const plan_stage *g = plan_get_stage(q, 0);
    CU_ASSERT_FATAL(plan_stage_count(q) == 1 && g != NULL);
    CU_ASSERT(!strcmp(g->device, s.device) && !strcmp(g->driver, s.driver) && g->min_bytes == s.min_bytes &&
              g->transfers == s.transfers && g->bytes == s.bytes && g->before_ns == s.before_ns &&
              g->after_ns == s.after_ns && g->noise_ns == s.noise_ns && g->reps == s.reps);
    char *w2 = write_text(q);
    CU_ASSERT(!strcmp(w, w2));
    free(w2);
    free(w);
    plan_free(q);
    /* 1.14: a measured decision not kept, slower or not (after_ns any);
       one entry per device across both sections; written after staging,
       read back as it was, and not a staging decision */
    plan_stage u = s;
    u.device = "NVIDIA H100";
    u.after_ns = u.before_ns + 5000000;
    plan_stage dup = u;
    dup.device = s.device;
    CU_ASSERT(plan_add_unstaged(p, &dup) == PLAN_ERR_ARG);   /* decided already, kept */
    bad = u;
    bad.min_bytes = 4095;
    CU_ASSERT(plan_add_unstaged(p, &bad) == PLAN_ERR_ARG);
    CU_ASSERT_FATAL(plan_add_unstaged(p, &u) == PLAN_OK);
    CU_ASSERT(plan_add_stage(p, &(plan_stage){.device = u.device, .driver = u.driver, .min_bytes = 524288, .reps = 1}) ==
              PLAN_ERR_ARG);   /* decided already, not kept */
    CU_ASSERT(plan_unstaged_count(p) == 1 && plan_stage_count(p) == 1 &&
              plan_unstaged_for(p, "NVIDIA H100", "580.1") == plan_get_unstaged(p, 0) &&
              plan_stage_for(p, "NVIDIA H100", "580.1") == NULL && plan_unstaged_for(p, "NVIDIA H200", "580.1") == NULL);
    w = write_text(p);
    const char *ws = strstr(w, "\n\"staging\": ["), *wu = strstr(w, "\n\"unstaged\": [\n  {\"device\":\"NVIDIA H100\",");
    CU_ASSERT(ws && wu && ws < wu);
    q = NULL;
    st = plan_parse(w, strlen(w), &q, err, sizeof err);
    if (st != PLAN_OK)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_FATAL(st == PLAN_OK);
    g = plan_get_unstaged(q, 0);
    CU_ASSERT_FATAL(plan_unstaged_count(q) == 1 && plan_stage_count(q) == 1 && g != NULL);
    CU_ASSERT(!strcmp(g->device, u.device) && g->before_ns == u.before_ns && g->after_ns == u.after_ns &&
              g->reps == u.reps && g->transfers == u.transfers);
    w2 = write_text(q);
    CU_ASSERT(!strcmp(w, w2));
    free(w2);
    free(w);
    plan_free(q);
    plan_remove_stages(p);
    CU_ASSERT(plan_stage_count(p) == 0 && plan_unstaged_count(p) == 0);
    /* live: 20 ms against the layer's default 5.04 ms for 10 calls: kept;
       4 ms: below 1.5 times it, the decision removed */
    for (int k = 0; k < 2; k++) {
        opt_verify_result vr;
        memset(&vr, 0, sizeof vr);
        vr.measured = 1;
        vr.stage_kept = 1;
        vr.stage_gain_ns = k ? 4e6 : 20e6;
        opt_options o;
        memset(&o, 0, sizeof o);
        opt_live_result res;
        plan_file *r = plan_new();
        CU_ASSERT_FATAL(r != NULL);
        plan_info_mut(r)->trace_calls = 10;
        CU_ASSERT_FATAL(plan_add_stage(r, &s) == PLAN_OK);
        st = opt_live_check("/nonexistent.clrr", &o, &vr, NULL, NULL, NULL, &r, &res, err, sizeof err);
        if (!k) {
            CU_ASSERT(st == PLAN_OK && res.checked == 1 && res.dropped == 0 && plan_stage_count(r) == 1);
        } else {   /* dropped: the plan is made again, from the trace (which does not exist here) */
            CU_ASSERT(res.checked == 1 && (st != PLAN_OK || plan_stage_count(r) == 0));
        }
        plan_free(r);
    }
    plan_free(p);
}

static void test_passes_parse(void)
{
    unsigned m = 0;
    char err[128];
    CU_ASSERT(plan_passes_parse("dead,redundant", &m, err, sizeof err) == 0 && m == 3);
    CU_ASSERT(plan_passes_parse("redundant", &m, err, sizeof err) == 0 && m == 2);
    CU_ASSERT(plan_passes_parse("all", &m, err, sizeof err) == 0 && m == PLAN_PASSES_ALL);
    CU_ASSERT(plan_passes_parse("none", &m, err, sizeof err) == 0 && m == 0);
    CU_ASSERT(plan_passes_parse("dead,fuse", &m, err, sizeof err) == 0 && m == 5);
    CU_ASSERT(plan_passes_parse("dead,fusion", &m, err, sizeof err) < 0 && strstr(err, "unknown pass 'fusion'"));
    CU_ASSERT(plan_passes_parse("dead,", &m, err, sizeof err) < 0);
    CU_ASSERT(plan_passes_parse("", &m, err, sizeof err) < 0);
    CU_ASSERT(!strcmp(plan_pass_name(PLAN_PASS_DEAD), "dead") && plan_pass_name(PLAN_PASS_COUNT) == NULL);
    CU_ASSERT(!strcmp(plan_strerror(PLAN_ERR_VERSION), "unsupported plan version"));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("opt_plan", NULL, NULL);
    CU_add_test(s, "a valid plan reads and writes back identically", test_valid_roundtrip);
    CU_add_test(s, "1.3: occurrences read, kept, written back", test_occurrences);
    CU_add_test(s, "1.4: splits and their models read, kept, written back; refused when broken", test_splits);
    CU_add_test(s, "1.7: specializations read, kept, written back; refused when broken", test_specs);
    CU_add_test(s, "1.8: scheduled queues read, kept, written back; refused when broken", test_schedule);
    CU_add_test(s, "1.9: requires read, checked, written from the contents; unknown features refused", test_requires);
    CU_add_test(s, "every truncation is refused", test_truncated);
    CU_add_test(s, "corruptions: status and where", test_corruptions);
    CU_add_test(s, "limits: size, nesting, arguments, one call twice", test_limits);
    CU_add_test(s, "random mutations", test_mutations);
    CU_add_test(s, "pass lists", test_passes_parse);
    CU_add_test(s, "1.12: tuned shapes of group coarsenings keep the recorded work-groups", test_group_locals);
    CU_add_test(s, "1.13, 1.14: staging decisions (kept and not), their rules, round trip and live weighing", test_stages);
    CU_add_test(s, "never slower live: the plan credited with no more than its parts measured", test_live_gain);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

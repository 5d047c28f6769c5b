/* report_plan.c — `clrr report --plan PLAN --replay-json FILE`: what each
 * transformation of a plan changes (read through plan/, validated as a
 * replay reads it) and the measured effect (the output of `clrr replay
 * --plan PLAN --json`). */
#include "tools/clrr/report_int.h"
#include "plan/plan.h"

#include <inttypes.h>
#include <string.h>

static json_int_t cli_pi(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (json_int_t)v;
}

static json_t *cli_effect(const plan_effect *e)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I}", "commands", cli_pi(e->commands), "kernels", cli_pi(e->kernels),
                     "bytes", cli_pi(e->bytes), "device_ns", cli_pi(e->device_ns), "timed", cli_pi(e->timed));
}

/* A string from the plan (checked UTF-8 by its reader's JSON parser) or "". */
static json_t *cli_pstr(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    return j ? j : json_string("");
}

json_t *cli_report_plan(const char *path, char *err, size_t err_cap)
{
    plan_file *p = NULL;
    plan_status st = plan_read(path, &p, err, err_cap);
    if (st != PLAN_OK) {
        if (!err[0])
            snprintf(err, err_cap, "%s", plan_strerror(st));
        return NULL;
    }
    const plan_info *in = plan_get_info(p);
    json_t *passes = json_array();
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++) {
        const plan_pass_result *r = plan_get_pass(p, (plan_pass)i);
        json_array_append_new(passes, json_pack("{s:s,s:b,s:I,s:o}", "pass", plan_pass_name((plan_pass)i),
                                                "enabled", r->enabled, "transformations",
                                                cli_pi(r->transformations), "effect", cli_effect(&r->effect)));
    }
    json_t *xs = json_array();
    size_t n = plan_xform_count(p);
    for (size_t i = 0; i < n && i < 5000; i++) {
        const plan_xform *x = plan_get_xform(p, i);
        json_array_append_new(xs, json_pack("{s:I,s:s,s:s,s:I,s:o,s:I,s:o,s:o}", "id", (json_int_t)x->id, "pass",
                                            plan_pass_name((plan_pass)x->pass), "action",
                                            plan_action_name((plan_action)x->action), "seq", cli_pi(x->seq),
                                            "function", cli_pstr(x->function), "occurrence",
                                            cli_pi(x->occurrence), "reason", cli_pstr(x->reason), "saves",
                                            cli_effect(&x->effect)));
    }
    char fp[24];
    snprintf(fp, sizeof fp, "%016" PRIx64, in->fingerprint);
    json_t *o = json_pack("{s:o,s:s,s:o,s:o,s:I,s:s,s:o,s:o,s:I}", "file", cli_pstr(path), "format", PLAN_FORMAT,
                          "generator", cli_pstr(in->generator), "trace_file", cli_pstr(in->trace_file),
                          "trace_calls", cli_pi(in->trace_calls), "fingerprint", fp, "passes", passes,
                          "transformations", xs, "transformations_total", (json_int_t)n);
    plan_free(p);
    if (!o)
        snprintf(err, err_cap, "out of memory (or a path that is not UTF-8)");
    return o;
}

json_t *cli_report_replay(const char *path, char *err, size_t err_cap)
{
    json_error_t je;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        snprintf(err, err_cap, "not the JSON of 'clrr replay --json': %s (line %d)", je.text, je.line);
        return NULL;
    }
    if (!json_is_object(j) || !json_is_integer(json_object_get(j, "calls")) ||
        !json_is_boolean(json_object_get(j, "ok"))) {
        snprintf(err, err_cap, "not the JSON of 'clrr replay --json' (no \"calls\" and \"ok\")");
        json_decref(j);
        return NULL;
    }
    return j;
}

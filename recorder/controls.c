/* controls.c — the recorder settings table (REC_CONTROLS in rec.h):
 * defaults, CLRR_* environment parsing, validation. Shared by the layer and
 * by `clrr record`. */
#include "recorder/rec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REC_STR(x) #x
#define REC_XSTR(x) REC_STR(x)

static const rec_control_desc rec_ctl_table[] = {
#define REC_CTL_DESC(type, field, env, opt, def, doc) \
    { #type, "CLRR_" #env, opt, REC_XSTR(def), doc },
    REC_CONTROLS(REC_CTL_DESC)
#undef REC_CTL_DESC
};

const rec_control_desc *rec_control_table(size_t *n)
{
    *n = sizeof rec_ctl_table / sizeof rec_ctl_table[0];
    return rec_ctl_table;
}

void rec_controls_defaults(rec_controls *c)
{
#define REC_CTL_DEFAULT(type, field, env, opt, def, doc) c->field = def;
    REC_CONTROLS(REC_CTL_DEFAULT)
#undef REC_CTL_DEFAULT
}

/* Parsers: return 0 and store on success, -1 on invalid text. */
static int rec_parse_str(const char *s, const char **out)
{
    if (!*s)
        return -1;
    *out = s;
    return 0;
}

static int rec_parse_stage(const char *s, const char **out)
{
    if (strcmp(s, "auto") && strcmp(s, "writes") && strcmp(s, "all") && strcmp(s, "off"))
        return -1;
    *out = s;
    return 0;
}

static int rec_parse_bool(const char *s, int *out)
{
    if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") || !strcasecmp(s, "true"))
        *out = 1;
    else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") || !strcasecmp(s, "false"))
        *out = 0;
    else
        return -1;
    return 0;
}

static int rec_parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < -1000000 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

static int rec_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (*s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

static int rec_parse_size(const char *s, size_t *out)
{
    char *end;
    if (*s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end || v > (~0ULL >> shift))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

int rec_controls_from_env(rec_controls *c, char *err, size_t errcap)
{
    rec_controls_defaults(c);
    const char *v;
#define REC_CTL_ENV(type, field, env, opt, def, doc) \
    if ((v = getenv("CLRR_" #env)) && rec_parse_##type(v, &c->field)) { \
        snprintf(err, errcap, "invalid value '%s' for CLRR_" #env, v); \
        return -1; \
    }
    REC_CONTROLS(REC_CTL_ENV)
#undef REC_CTL_ENV
    return 0;
}

int rec_control_parse(const rec_control_desc *d, const char *value)
{
    rec_controls scratch;
    if (!strcmp(d->type, "str"))
        return rec_parse_str(value, &scratch.output);
    if (!strcmp(d->type, "bool"))
        return rec_parse_bool(value, &scratch.capture_data);
    if (!strcmp(d->type, "int"))
        return rec_parse_int(value, &scratch.level);
    if (!strcmp(d->type, "u64"))
        return rec_parse_u64(value, &scratch.first_call);
    if (!strcmp(d->type, "size"))
        return rec_parse_size(value, &scratch.memory);
    if (!strcmp(d->type, "stage"))
        return rec_parse_stage(value, &scratch.stage);
    return -1;
}

/* tf_devspec.c — the device spec of --device (`clrr replay`, `clrr record`,
 * `clrr run`, the split engine, the layer's device override): which of a
 * list of devices, numbered as `clrr devices` numbers them, a spec names.
 * Pure string matching over names and types: the replayer and the
 * recorder (which may use trace-format only) share it. */
#include "trace-format/tf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int tf_devspec_pick(const tf_devspec_dev *devs, unsigned n, const char *spec, char *err, size_t cap)
{
    char *end;
    if (!spec || !*spec) {
        snprintf(err, cap, "--device: an empty device spec (see 'clrr devices')");
        return -1;
    }
    unsigned long idx = strtoul(spec, &end, 10);
    if (!*end) {
        if (idx >= n) {
            if (n == 1)
                snprintf(err, cap, "--device %s: there is one device here, 0 (see 'clrr devices')", spec);
            else if (!n)
                snprintf(err, cap, "--device %s: there is no device here (see 'clrr devices')", spec);
            else
                snprintf(err, cap, "--device %s: there are %u devices here, 0 to %u (see 'clrr devices')", spec, n,
                         n - 1);
            return -1;
        }
        return (int)idx;
    }
    static const struct { const char *n; uint64_t t; } types[] = {
        {"cpu", TF_DEVTYPE_CPU}, {"gpu", TF_DEVTYPE_GPU},
        {"accelerator", TF_DEVTYPE_ACCELERATOR}, {"custom", TF_DEVTYPE_CUSTOM}};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        /* "gpu1": the second GPU (in `clrr devices` order) */
        size_t k = strlen(types[t].n);
        if (!strncasecmp(spec, types[t].n, k) && spec[k] >= '0' && spec[k] <= '9') {
            unsigned long want = strtoul(spec + k, &end, 10), seen = 0;
            for (unsigned i = 0; !*end && i < n; i++)
                if ((devs[i].type & types[t].t) && seen++ == want)
                    return (int)i;
            if (!*end) {
                snprintf(err, cap, "--device %s: there %s %lu %s device%s here (see 'clrr devices')", spec,
                         seen == 1 ? "is" : "are", seen, types[t].n, seen == 1 ? "" : "s");
                return -1;
            }
        }
    }
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        if (!strcasecmp(spec, types[t].n)) {
            for (unsigned i = 0; i < n; i++)
                if (devs[i].type & types[t].t)
                    return (int)i;
            snprintf(err, cap, "--device %s: no %s device here (see 'clrr devices')", spec, types[t].n);
            return -1;
        }
    for (unsigned i = 0; i < n; i++)
        if ((devs[i].name && strcasestr(devs[i].name, spec)) || (devs[i].pname && strcasestr(devs[i].pname, spec)))
            return (int)i;
    snprintf(err, cap, "--device %s: no device here matches (see 'clrr devices')", spec);
    return -1;
}

/* rpl_devices.c — recorded platforms and devices (the trace's ENV record)
 * mapped onto the ones present here.
 *
 * Default: each recorded device goes to the live device with the same name
 * and vendor; failing that, the closest one (same type, then same vendor,
 * then any). --device SPEC sends every recorded device to one device: an
 * index as numbered by `clrr devices`, a type (cpu, gpu, accelerator), or a
 * case-insensitive substring of the device or platform name. A recorded
 * platform goes to the platform of the device its first device went to.
 * The bindings are made at open, so the application's own discovery calls
 * (replayed as they were) do not decide where the work runs.
 * In exact-calls mode nothing is discovered: the recorded discovery calls
 * bind their outputs by position. */
#include "replayer/rpl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct rpl_devmap {
    rpl_live_dev *live;
    unsigned nlive;
    int remapped;
    int first_live;           /* index of the first recorded device's target, -1 */
    char rec_name[256];       /* "NAME (TYPE)": the first device a queue was made
                               * for (until then, the first recorded device) */
    struct rpl_rec_dev { uint64_t id; char name[256]; } *rec;
    unsigned nrec;
    int named_by_queue;
    int forced;               /* --device: index of the live device, -1 */
    int exact;                /* --exact-calls: nothing is bound */
};

static const char *rpl_type_name(uint64_t ty)
{
    return ty & CL_DEVICE_TYPE_GPU ? "GPU" : ty & CL_DEVICE_TYPE_CPU ? "CPU"
           : ty & CL_DEVICE_TYPE_ACCELERATOR ? "ACCELERATOR" : "OTHER";
}

static void rpl_vstr(const tf_value *m, const char *key, char *dst, size_t cap)
{
    const tf_value *v = tf_map_get(m, key);
    dst[0] = 0;
    if (v && v->type == TF_STR)
        snprintf(dst, cap, "%.*s", (int)v->v.str.len, v->v.str.ptr);
}

int rpl_devmap_resolve(rpl_session *s, const char *spec, cl_device_id *dev, cl_platform_id *plat, char *err,
                       size_t cap)
{
    rpl_devmap *dm = s->dm;
    if (!dm || !dm->nlive) {
        snprintf(err, cap, "device %s: no devices enumerated (exact-calls mode?)", spec);
        return -1;
    }
    char e2[256];
    int i = rpl_devices_pick(dm->live, dm->nlive, spec, e2, sizeof e2);
    if (i < 0) {
        snprintf(err, cap, "%s", !strncmp(e2, "--device ", 9) ? e2 + 9 : e2);
        return -1;
    }
    *dev = dm->live[i].dev;
    *plat = dm->live[i].plat;
    return 0;
}

unsigned rpl_devmap_count(rpl_session *s)
{
    return s->dm ? s->dm->nlive : 0;
}

int rpl_devmap_at(rpl_session *s, unsigned i, cl_device_id *dev, cl_platform_id *plat)
{
    if (!s->dm || i >= s->dm->nlive)
        return -1;
    *dev = s->dm->live[i].dev;
    *plat = s->dm->live[i].plat;
    return 0;
}

/* The closest live device to a recorded one: name+vendor, type+vendor, type, any. */
static int rpl_closest(rpl_devmap *dm, const char *name, const char *vendor, cl_device_type type, int *exact)
{
    int best = 0, score = -1;
    for (unsigned i = 0; i < dm->nlive; i++) {
        rpl_live_dev *l = &dm->live[i];
        int sc = 0;
        if (!strcmp(l->name, name) && !strcmp(l->vendor, vendor))
            sc = 8;
        else
            sc = ((l->type & type) ? 4 : 0) + (!strcmp(l->vendor, vendor) ? 2 : 0);
        if (sc > score) {
            score = sc;
            best = (int)i;
        }
    }
    *exact = score == 8;
    return best;
}

/* Notes the recorded devices @p devs (names for the summary) and, unless
 * exact, binds them and their platform @p pid to live ones. */
static int rpl_devmap_platform(rpl_session *s, uint64_t pid, const tf_value *devs, char *err, size_t cap)
{
    rpl_devmap *dm = s->dm;
    for (uint32_t d = 0; devs && devs->type == TF_ARRAY && d < devs->v.arr.n && dm->nrec < 4096; d++) {
        uint64_t rid = 0;
        unsigned seen = 0;
        tf_value_u64(tf_map_get(&devs->v.arr.items[d], "id"), &rid);
        while (seen < dm->nrec && (!rid || dm->rec[seen].id != rid))
            seen++;
        if (seen < dm->nrec)
            continue;   /* again (a loop replay reads the trace again) */
        struct rpl_rec_dev *a = realloc(dm->rec, (dm->nrec + 1) * sizeof *a);
        if (!a) {
            snprintf(err, cap, "out of memory");
            return RPL_ERR_NOMEM;
        }
        dm->rec = a;
        struct rpl_rec_dev *r = &dm->rec[dm->nrec++];
        char n[200];
        uint64_t ty = 0;
        r->id = 0;
        rpl_vstr(&devs->v.arr.items[d], "name", n, sizeof n);
        tf_value_u64(tf_map_get(&devs->v.arr.items[d], "type"), &ty);
        tf_value_u64(tf_map_get(&devs->v.arr.items[d], "id"), &r->id);
        snprintf(r->name, sizeof r->name, "%s (%s)", n, rpl_type_name(ty));
        if (!dm->rec_name[0])
            snprintf(dm->rec_name, sizeof dm->rec_name, "%s", r->name);
    }
    if (dm->exact)
        return RPL_OK;
    int plat_target = -1;
    for (uint32_t d = 0; devs && devs->type == TF_ARRAY && d < devs->v.arr.n; d++) {
        const tf_value *dv = &devs->v.arr.items[d];
        char name[256], vendor[256];
        rpl_vstr(dv, "name", name, sizeof name);
        rpl_vstr(dv, "vendor", vendor, sizeof vendor);
        uint64_t type = 0, did = 0;
        tf_value_u64(tf_map_get(dv, "type"), &type);
        tf_value_u64(tf_map_get(dv, "id"), &did);
        int same = 0;
        int target = dm->forced >= 0 ? dm->forced : rpl_closest(dm, name, vendor, type, &same);
        if (dm->forced >= 0)
            same = !strcmp(dm->live[target].name, name) && !strcmp(dm->live[target].vendor, vendor);
        if (!same)
            dm->remapped = 1;
        if (dm->first_live < 0)
            dm->first_live = target;
        if (plat_target < 0)
            plat_target = target;
        if (did && !rpl_obj_bind(s, did, dm->live[target].dev, RPL_OBJ_DEVICE, 0)) {
            snprintf(err, cap, "out of memory");
            return RPL_ERR_NOMEM;
        }
    }
    if (plat_target < 0)
        plat_target = dm->first_live >= 0 ? dm->first_live : dm->forced >= 0 ? dm->forced : 0;
    if (pid && !rpl_obj_bind(s, pid, dm->live[plat_target].plat, RPL_OBJ_PLATFORM, 0)) {
        snprintf(err, cap, "out of memory");
        return RPL_ERR_NOMEM;
    }
    return RPL_OK;
}

int rpl_devmap_build(rpl_session *s, const tf_value *env, const char *spec, int exact, char *err, size_t cap)
{
    rpl_devmap *dm = calloc(1, sizeof *dm);
    if (!dm) {
        snprintf(err, cap, "out of memory");
        return RPL_ERR_NOMEM;
    }
    s->dm = dm;
    dm->first_live = -1;
    dm->forced = -1;
    dm->exact = exact;
    const tf_value *plats = env ? tf_map_get(env, "platforms") : NULL;
    if (exact) {
        if (spec) {
            snprintf(err, cap, "--exact-calls replays on the recorded devices; it cannot take --device");
            return RPL_ERR_ARG;
        }
    } else {
        int st = rpl_devices_enumerate(&s->api, &dm->live, &dm->nlive, err, cap);
        if (st < 0)
            return st;
        if (spec && (dm->forced = rpl_devices_pick(dm->live, dm->nlive, spec, err, cap)) < 0)
            return RPL_ERR_DEVICE;
        if (!plats || plats->type != TF_ARRAY) {
            /* no environment (a damaged trace): everything goes to one device */
            dm->first_live = dm->forced >= 0 ? dm->forced : 0;
            dm->remapped = 1;
            return RPL_OK;
        }
    }
    /* devices in ENV (format 1.0); from 1.1 they come later, in DEVICES
     * items (rpl_devmap_devices), and their platforms are bound again then */
    for (uint32_t p = 0; plats && plats->type == TF_ARRAY && p < plats->v.arr.n; p++) {
        const tf_value *pm = &plats->v.arr.items[p];
        uint64_t pid = 0;
        tf_value_u64(tf_map_get(pm, "id"), &pid);
        int st = rpl_devmap_platform(s, pid, tf_map_get(pm, "devices"), err, cap);
        if (st < 0)
            return st;
    }
    return RPL_OK;
}

int rpl_devmap_devices(rpl_session *s, const tf_devices *d)
{
    char err[256];
    if (!s->dm)
        return RPL_OK;
    int st = rpl_devmap_platform(s, d->platform, d->devices, err, sizeof err);
    return st < 0 ? rpl_set_error(s, st, "%s", err) : RPL_OK;
}

int rpl_devmap_remapped(rpl_session *s)
{
    return s->dm && s->dm->remapped;
}

void rpl_devmap_names(rpl_session *s, char *rec, size_t rec_cap, char *live, size_t live_cap)
{
    rpl_devmap *dm = s->dm;
    snprintf(rec, rec_cap, "%s", dm && dm->rec_name[0] ? dm->rec_name : "(unknown)");
    if (!dm || !dm->live) {
        snprintf(live, live_cap, "(the recorded devices, bound by the recorded calls)");
        return;
    }
    const rpl_live_dev *l = &dm->live[dm->first_live >= 0 ? dm->first_live : dm->forced >= 0 ? dm->forced : 0];
    snprintf(live, live_cap, "%s (%s)", l->name, rpl_type_name(l->type));
}

void rpl_devmap_note_queue(rpl_session *s, uint64_t rec_dev, cl_device_id live)
{
    rpl_devmap *dm = s->dm;
    if (!dm || dm->named_by_queue)
        return;
    dm->named_by_queue = 1;
    for (unsigned i = 0; i < dm->nrec; i++)
        if (dm->rec[i].id == rec_dev)
            snprintf(dm->rec_name, sizeof dm->rec_name, "%s", dm->rec[i].name);
    for (unsigned i = 0; live && i < dm->nlive; i++)
        if (dm->live[i].dev == live)
            dm->first_live = (int)i;
    rpl_devmap_names(s, s->sum.recorded_device, sizeof s->sum.recorded_device, s->sum.device, sizeof s->sum.device);
}

void rpl_devmap_free(rpl_session *s)
{
    if (s->dm) {
        free(s->dm->rec);
        free(s->dm->live);
        free(s->dm);
        s->dm = NULL;
    }
}

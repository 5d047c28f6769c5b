/* plan_int.h — internals of plan/ shared by plan/plan_*.c: the plan's
 * layout, the pattern canonicalizer, known contents (plan_hold.c). Not a
 * public header. */
#ifndef CLRR_PLAN_INT_H
#define CLRR_PLAN_INT_H

#include <jansson.h>

#include "plan/plan.h"

/* ------------------------------------------------------------ the plan */

struct opt_plan {
    opt_arena arena;
    opt_plan_info info;
    uint8_t (*programs)[16];
    size_t capprograms;
    opt_pass_result passes[OPT_PASS_COUNT];
    opt_xform *xf;
    size_t nxf, capxf;
    opt_kernel_facts *kf;
    size_t nkf, capkf;
    opt_fused *fz;
    size_t nfz, capfz;
    opt_split *sp;
    size_t nsp, capsp;
    opt_spec *sz;
    size_t nsz, capsz;
    opt_sched *sc;
    size_t nsc, capsc;
};

/* ------------------------------------------------------------ patterns */

/*! opt_pattern_canon() : the canonical text of pattern object @p pat
 *  (compact JSON, keys sorted) into a malloc'ed string (*out, caller frees)
 *  and its key. @return OPT_OK, OPT_ERR_LIMIT (over OPT_PATTERN_MAX) or
 *  OPT_ERR_NOMEM. */
opt_status opt_pattern_canon(const json_t *pat, char **out, uint64_t *key);
/*! opt_pattern_key() : XXH64 of a canonical text. */
uint64_t opt_pattern_key(const char *canon, size_t len);
/*! opt_pattern_check() : validates an untrusted pattern object (PLAN.md,
 *  "Patterns"); on error writes "where: what" using @p where. */
opt_status opt_pattern_check(const json_t *pat, const char *where, char *err, size_t err_cap);

/* opt_hold.c */
/*! opt_key_combine() : the key of data with hash @p h laid out by geometry key @p g
 *  (@p out may be @p g). */
void opt_key_combine(const uint8_t h[16], const uint8_t g[16], uint8_t out[16]);
void opt_hold_kill(opt_obj *root, uint64_t lo, uint64_t hi);
void opt_hold_kill_all(opt_track *t);
opt_status opt_hold_add(opt_obj *root, const opt_content *c);
/*! opt_hold_find() : a known content with @p key and @p origin covering
 *  [lo, hi) that a command on @p queue may rely on (settled, or from the
 *  same in-order queue); NULL when none. */
const opt_content *opt_hold_find(const opt_track *t, const opt_obj *root, const uint8_t key[16], uint64_t origin,
                                 uint64_t lo, uint64_t hi, uint64_t queue);
/*! opt_hold_data() : the late data of call @p seq: pending contents get
 *  their key (@p key combined as each content's kind requires). */
void opt_hold_data(opt_track *t, uint64_t seq, const uint8_t hash[16]);
/*! opt_hold_settle() : every content left by a command of @p queue (0: all
 *  queues) is known complete. */
void opt_hold_settle(opt_track *t, uint64_t queue);

/* Root @p r may have been written by one more command. */
static inline void opt_obj_written(opt_obj *r)
{
    if (r && r->writes < 2)
        r->writes++;
}

/*! opt_mem_range() : the bytes of memory object @p o in its root. */
opt_obj *opt_mem_range(const opt_track *t, const opt_obj *o, uint64_t *lo, uint64_t *hi);

#endif /* CLRR_PLAN_INT_H */

/* plan_int.h — internals of plan/ shared by plan/plan_*.c: the plan's
 * layout, the pattern canonicalizer, known contents (plan_hold.c). Not a
 * public header. */
#ifndef CLRR_PLAN_INT_H
#define CLRR_PLAN_INT_H

#include <jansson.h>

#include "plan/plan.h"

/* ------------------------------------------------------------ the plan */

struct plan_file {
    plan_arena arena;
    plan_info info;
    uint8_t (*programs)[16];
    size_t capprograms;
    plan_pass_result passes[PLAN_PASS_COUNT];
    plan_xform *xf;
    size_t nxf, capxf;
    plan_kernel_facts *kf;
    size_t nkf, capkf;
    plan_fused *fz;
    size_t nfz, capfz;
    plan_split *sp;
    size_t nsp, capsp;
    plan_spec *sz;
    size_t nsz, capsz;
    plan_sched *sc;
    size_t nsc, capsc;
    plan_local *lz;
    size_t nlz, caplz;
    plan_coarse *cz;
    size_t ncz, capcz;
    plan_stage *st;
    size_t nst, capst;
    plan_stage *un;           /* measured, not kept (1.14) */
    size_t nun, capun;
};

/* ------------------------------------------------------------ patterns */

/*! plan_pattern_canon() : the canonical text of pattern object @p pat
 *  (compact JSON, keys sorted) into a malloc'ed string (*out, caller frees)
 *  and its key. @return PLAN_OK, PLAN_ERR_LIMIT (over PLAN_PATTERN_MAX) or
 *  PLAN_ERR_NOMEM. */
plan_status plan_pattern_canon(const json_t *pat, char **out, uint64_t *key);
/*! plan_pattern_key() : XXH64 of a canonical text. */
uint64_t plan_pattern_key(const char *canon, size_t len);
/*! plan_pattern_check() : validates an untrusted pattern object (PLAN.md,
 *  "Patterns"); on error writes "where: what" using @p where. */
plan_status plan_pattern_check(const json_t *pat, const char *where, char *err, size_t err_cap);

/* plan_hold.c */
/*! plan_key_combine() : the key of data with hash @p h laid out by geometry key @p g
 *  (@p out may be @p g). */
void plan_key_combine(const uint8_t h[16], const uint8_t g[16], uint8_t out[16]);
void plan_hold_kill(plan_obj *root, uint64_t lo, uint64_t hi);
void plan_hold_kill_all(plan_track *t);
plan_status plan_hold_add(plan_track *t, plan_obj *root, const plan_content *c);
/*! plan_hold_find() : a known content with @p key and @p origin covering
 *  [lo, hi) that a command on @p queue may rely on (settled, or from the
 *  same in-order queue); NULL when none. */
const plan_content *plan_hold_find(const plan_track *t, const plan_obj *root, const uint8_t key[16], uint64_t origin,
                                 uint64_t lo, uint64_t hi, uint64_t queue);
/*! plan_hold_data() : the late data of call @p seq: pending contents get
 *  their key (@p key combined as each content's kind requires). */
void plan_hold_data(plan_track *t, uint64_t seq, const uint8_t hash[16]);
/*! plan_hold_settle() : every content left by a command of @p queue (0: all
 *  queues) is known complete. */
void plan_hold_settle(plan_track *t, uint64_t queue);

/* Root @p r may have been written by one more command. */
static inline void plan_obj_written(plan_obj *r)
{
    if (r && r->writes < 2)
        r->writes++;
}

/*! plan_mem_range() : the bytes of memory object @p o in its root. */
plan_obj *plan_mem_range(const plan_track *t, const plan_obj *o, uint64_t *lo, uint64_t *hi);

#endif /* CLRR_PLAN_INT_H */

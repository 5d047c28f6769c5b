/* rec_objs.c — the handle table: OpenCL object pointers to stable trace
 * ids, application reference counts, and the facts hooks keep per object.
 * One mutex; never held while taking the writer's record lock. */
#include "recorder/rec_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define REC_BUCKETS 4096u
#define REC_MAX_KARGS 64

typedef struct rec_obj {
    struct rec_obj *next;
    const void *h;
    int32_t refs;
    rec_obj_info info;
    uint64_t hostargs;                  /* kernels: bit i set when kargs[i] is one */
    const void *kargs[REC_MAX_KARGS];   /* kernels: host-pointer buffer per argument */
} rec_obj;

static rec_obj *rec_buckets[REC_BUCKETS];
static pthread_mutex_t rec_obj_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rec_next_id = 1;

/* Each thread keeps the ids it looked up last (rec_obj_id): a loop of calls
 * on one queue and one kernel would otherwise take the table's mutex for
 * every handle it passes, two locked instructions each. An entry holds while
 * no object has left the table since it was filled: rec_unlink bumps
 * rec_obj_gen, so a pointer the driver reuses for a new object is never
 * given the old one's id. The slot comes from a multiplicative hash of the
 * pointer: drivers allocate objects with a large alignment (PoCL's queue
 * and kernel shared a slot of the low bits, and a launch missed twice,
 * about 100 instructions each). */
__thread rec_idc rec_idcache[REC_IDC];   /* rec_int.h: rec_obj_id reads it inline */
_Atomic uint64_t rec_obj_gen = 1;

/* Kernels with a host-pointer buffer argument (hostargs != 0): while there
 * are none, clSetKernelArg of a plain value and every launch skip the table. */
static _Atomic int rec_nhostk;

static unsigned rec_hash_ptr(const void *h)
{
    uintptr_t x = (uintptr_t)h;
    x ^= x >> 17;
    x *= 0xed5ad4bbu;
    x ^= x >> 11;
    return (unsigned)(x % REC_BUCKETS);
}

static rec_obj *rec_find(const void *h)
{
    for (rec_obj *o = rec_buckets[rec_hash_ptr(h)]; o; o = o->next)
        if (o->h == h)
            return o;
    return NULL;
}

static rec_obj *rec_insert(const void *h, unsigned kind)
{
    rec_obj *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->h = h;
    o->refs = 1;
    o->info.kind = kind;
    o->info.id = rec_next_id++;
    o->info.nprops = -1;
    unsigned b = rec_hash_ptr(h);
    o->next = rec_buckets[b];
    rec_buckets[b] = o;
    return o;
}

/* Frees an entry that is out of the table, with its share of rec_nhostk. */
static void rec_obj_free(rec_obj *o)
{
    if (o && o->hostargs)
        atomic_fetch_sub(&rec_nhostk, 1);
    free(o);
}

/* Unlinks the entry of @p h (lock held). @return it, or NULL. */
static rec_obj *rec_unlink(const void *h)
{
    rec_obj **pp = &rec_buckets[rec_hash_ptr(h)];
    for (; *pp; pp = &(*pp)->next) {
        if ((*pp)->h == h) {
            rec_obj *o = *pp;
            *pp = o->next;
            atomic_fetch_add_explicit(&rec_obj_gen, 1, memory_order_release);   /* cached ids of it go stale */
            return o;
        }
    }
    return NULL;
}

void rec_objs_atfork(int phase)
{
    if (phase == REC_FORK_PREPARE)
        pthread_mutex_lock(&rec_obj_lock);
    else
        pthread_mutex_unlock(&rec_obj_lock);   /* the forking thread holds it */
}

uint64_t rec_obj_id_slow(const void *h, rec_idc *c, uint64_t gen)
{
    pthread_mutex_lock(&rec_obj_lock);
    rec_obj *o = rec_find(h);
    if (!o)
        o = rec_insert(h, REC_OBJ_UNKNOWN);   /* made before we saw it (or by the driver) */
    uint64_t id = o ? o->info.id : 0;
    pthread_mutex_unlock(&rec_obj_lock);
    if (id)   /* gen was read before the lookup: an unlink since makes it stale */
        *c = (rec_idc){ h, id, gen };
    return id;
}

uint64_t rec_obj_created(const void *h, unsigned kind)
{
    if (!h)
        return 0;
    pthread_mutex_lock(&rec_obj_lock);
    rec_obj *o = rec_find(h);
    if (o && kind != REC_OBJ_PLATFORM && kind != REC_OBJ_DEVICE && o->info.kind == kind
        && o->refs > 0 && kind != REC_OBJ_UNKNOWN) {
        /* the same pointer handed out again while we think it is alive:
         * root devices, platforms and queries returning existing objects */
    } else if (!o) {
        o = rec_insert(h, kind);
    } else if (o->info.kind == REC_OBJ_UNKNOWN) {
        o->info.kind = kind;
    }
    uint64_t id = o ? o->info.id : 0;
    pthread_mutex_unlock(&rec_obj_lock);
    return id;
}

/* platforms and root devices are not reference counted */
static int rec_counted(const rec_obj *o)
{
    return o->info.kind != REC_OBJ_PLATFORM && o->info.kind != REC_OBJ_DEVICE;
}

void rec_obj_change_begin(rec_obj_change *ch, const void *h, int delta)
{
    ch->h = h;
    ch->delta = 0;
    ch->detached = NULL;
    if (!h)
        return;
    pthread_mutex_lock(&rec_obj_lock);
    rec_obj *o = rec_find(h);
    if (o && rec_counted(o)) {
        o->refs += delta;
        ch->delta = delta;
        if (o->refs <= 0)
            ch->detached = rec_unlink(h);   /* kept until the driver answered */
    }
    pthread_mutex_unlock(&rec_obj_lock);
}

void rec_obj_change_end(rec_obj_change *ch, int ok)
{
    rec_obj *o = ch->detached;
    if (ok || !ch->delta) {
        if (ok && o && o->info.kind == REC_OBJ_MEM)
            rec_plan_released(o->info.id);   /* plan mode: kept work that only writes it is freed */
        if (ok && o && o->info.kind == REC_OBJ_EVENT)
            rec_plan_event_released((cl_event)ch->h);   /* plan mode: a stand-in marker is forgotten */
        rec_obj_free(o);
        return;
    }
    /* the driver refused: the application's count is what it was */
    pthread_mutex_lock(&rec_obj_lock);
    if (o && !rec_find(ch->h)) {
        unsigned b = rec_hash_ptr(ch->h);
        o->refs -= ch->delta;
        o->next = rec_buckets[b];
        rec_buckets[b] = o;
        o = NULL;
    } else if (!o) {
        rec_obj *live = rec_find(ch->h);
        if (live)
            live->refs -= ch->delta;
    }
    pthread_mutex_unlock(&rec_obj_lock);
    rec_obj_free(o);   /* another object has its address now */
}

int rec_obj_get(const void *h, rec_obj_info *out)
{
    if (!h)
        return 0;
    pthread_mutex_lock(&rec_obj_lock);
    rec_obj *o = rec_find(h);
    if (o)
        *out = o->info;
    pthread_mutex_unlock(&rec_obj_lock);
    return o != NULL;
}

void rec_obj_set(const void *h, const rec_obj_info *in)
{
    if (!h)
        return;
    pthread_mutex_lock(&rec_obj_lock);
    rec_obj *o = rec_find(h);
    if (!o)
        o = rec_insert(h, in->kind);
    if (o) {
        uint64_t id = o->info.id;
        unsigned kind = o->info.kind != REC_OBJ_UNKNOWN ? o->info.kind : in->kind;
        o->info = *in;
        o->info.id = id;
        o->info.kind = kind;
    }
    pthread_mutex_unlock(&rec_obj_lock);
}

uint64_t rec_kernel_set_arg(const void *kernel, unsigned index, const void *arg)
{
    if (!arg && !atomic_load_explicit(&rec_nhostk, memory_order_relaxed))
        return 0;   /* a plain value, and no kernel has a host-pointer argument to forget */
    uint64_t id = 0;
    pthread_mutex_lock(&rec_obj_lock);
    rec_obj *a = arg ? rec_find(arg) : NULL;
    if (a && (a->info.kind == REC_OBJ_MEM || a->info.kind == REC_OBJ_SAMPLER
              || a->info.kind == REC_OBJ_QUEUE))
        id = a->info.id;
    rec_obj *k = index < REC_MAX_KARGS ? rec_find(kernel) : NULL;
    if (k) {
        int host = id && a->info.kind == REC_OBJ_MEM && a->info.host_ptr && a->info.size;
        uint64_t was = k->hostargs;
        k->kargs[index] = host ? arg : NULL;
        k->hostargs = host ? k->hostargs | (uint64_t)1 << index : k->hostargs & ~((uint64_t)1 << index);
        if (!was != !k->hostargs)
            atomic_fetch_add(&rec_nhostk, k->hostargs ? 1 : -1);
    }
    pthread_mutex_unlock(&rec_obj_lock);
    return id;
}

int rec_kernel_host_mems(const void *kernel, const void **mems, int max)
{
    if (!atomic_load_explicit(&rec_nhostk, memory_order_relaxed))
        return 0;
    int n = 0;
    pthread_mutex_lock(&rec_obj_lock);
    rec_obj *o = rec_find(kernel);
    for (uint64_t b = o ? o->hostargs : 0; b && n < max; b &= b - 1)
        mems[n++] = o->kargs[__builtin_ctzll(b)];
    pthread_mutex_unlock(&rec_obj_lock);
    return n;
}

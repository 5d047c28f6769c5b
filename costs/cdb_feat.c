/* costs/cdb_feat.c — launch features (`f` records, COSTS.md): what the
 * kernel analysis says of a launch shape, stored beside its measured times
 * so that a learned model (model/model.h) trains from the database alone;
 * and the walk over every measured launch shape that training needs. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "costs/cdb_int.h"

int cdb_feat_vec_ok(const char *vec)
{
    /* name=value{,name=value}: names [a-z0-9_], values of a number's characters */
    const char *p = vec;
    if (!p || !*p || strlen(p) > CDB_MAX_STRING)
        return 0;
    for (;;) {
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
        if (!n || p[n] != '=')
            return 0;
        p += n + 1;
        n = strspn(p, "0123456789.eE+-");
        if (!n)
            return 0;
        p += n;
        if (!*p)
            return 1;
        if (*p++ != ',')
            return 0;
    }
}

cdb_status cdb_feat_store(cdb *db, uint32_t kernel, const cdb_key *k, const char *vec)
{
    char *v = strdup(vec);
    if (!v || cdb_grow((void **)&db->feats, &db->cap_feats, db->nfeats + 1, sizeof *db->feats)) {
        free(v);
        return CDB_ERR_NOMEM;
    }
    cdb_frec *f = &db->feats[db->nfeats++];
    memset(f, 0, sizeof *f);
    cdb_skey_kernel(&f->key, 0, kernel, k);
    f->vec = v;
    return CDB_OK;
}

void cdb_feat_free(cdb *db)
{
    for (size_t i = 0; i < db->nfeats; i++)
        free(db->feats[i].vec);
    free(db->feats);
    db->feats = NULL;
    db->nfeats = db->cap_feats = 0;
}

/* the latest record of @p k, or NULL */
static const cdb_frec *cdb_feat_find(const cdb *db, const cdb_key *k)
{
    if (!db || !k || !k->kernel || k->dim < 1 || k->dim > 3)
        return NULL;
    int64_t kn = cdb_str_find(db, k->kernel, strlen(k->kernel));
    if (kn < 0)
        return NULL;
    cdb_skey sk;
    cdb_skey_kernel(&sk, 0, (uint32_t)kn, k);
    for (size_t i = db->nfeats; i-- > 0;)
        if (!memcmp(&db->feats[i].key, &sk, sizeof sk))
            return &db->feats[i];
    return NULL;
}

cdb_status cdb_add_features(cdb *db, const cdb_key *k, const char *vec)
{
    if (!db || !k || k->dim < 1 || k->dim > 3 || !cdb_str_ok(k->kernel, 0) || !cdb_feat_vec_ok(vec))
        return CDB_ERR_ARG;
    const cdb_frec *old = cdb_feat_find(db, k);
    if (old && !strcmp(old->vec, vec))
        return CDB_OK;   /* the same analysis again: nothing new */
    int64_t kn = cdb_str_intern(db, k->kernel, strlen(k->kernel));
    if (kn < 0)
        return CDB_ERR_NOMEM;
    cdb_skey sk;
    cdb_skey_kernel(&sk, 0, (uint32_t)kn, k);
    char hex[33];
    cdb_hex16(hex, k->program);
    size_t mark = db->pend.len;
    if (cdb_buf_printf(&db->pend, "f\t%s\t%s\t%u\t%llu,%llu,%llu\t%llu,%llu,%llu\t%s\t%llu\n", hex, k->kernel, k->dim,
                       (unsigned long long)sk.gsz[0], (unsigned long long)sk.gsz[1], (unsigned long long)sk.gsz[2],
                       (unsigned long long)sk.lsz[0], (unsigned long long)sk.lsz[1], (unsigned long long)sk.lsz[2],
                       vec, (unsigned long long)time(NULL)))
        return CDB_ERR_NOMEM;
    if (cdb_feat_store(db, (uint32_t)kn, k, vec) != CDB_OK) {
        db->pend.len = mark;
        return CDB_ERR_NOMEM;
    }
    return CDB_OK;
}

const char *cdb_get_features(const cdb *db, const cdb_key *k)
{
    const cdb_frec *f = cdb_feat_find(db, k);
    return f ? f->vec : NULL;
}

size_t cdb_kernel_series_count(const cdb *db)
{
    return db ? db->nser : 0;
}

int cdb_kernel_series_at(const cdb *db, size_t i, const char **identity, cdb_key *k)
{
    if (!db || i >= db->nser || db->ser[i].key.kind != CDB_SER_KERNEL)
        return 0;
    const cdb_skey *sk = &db->ser[i].key;
    memset(k, 0, sizeof *k);
    memcpy(k->program, sk->program, 16);
    k->kernel = db->strs[sk->kernel];
    k->dim = sk->dim;
    memcpy(k->gsz, sk->gsz, sizeof k->gsz);
    memcpy(k->lsz, sk->lsz, sizeof k->lsz);
    *identity = db->strs[sk->ident];
    return 1;
}

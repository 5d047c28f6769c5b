/* ana_model_xfer.c — the memory ranges of transfers and other non-kernel
 * commands: buffer, rect and image reads/writes/copies/fills (byte hulls of
 * their regions), maps and their unmaps, migrations, native kernels, GL/EGL
 * objects, SVM copies, fills, maps, frees and migrations. */
#include "analyzer/ana_model_int.h"

#include <CL/cl.h>
#include <string.h>

/* Byte hull of a buffer rectangle; @return its bytes. */
static uint64_t ana_rect(const uint64_t o[3], const uint64_t r[3], uint64_t row, uint64_t slice,
                         uint64_t *lo, uint64_t *hi)
{
    row = row ? row : r[0];
    slice = slice ? slice : ana_sat_mul(r[1], row);
    *lo = ana_sat_add(ana_sat_add(ana_sat_mul(o[2], slice), ana_sat_mul(o[1], row)), o[0]);
    if (!r[0] || !r[1] || !r[2]) {
        *hi = *lo;
        return 0;
    }
    uint64_t last = ana_sat_add(ana_sat_mul(r[2] - 1, slice), ana_sat_mul(r[1] - 1, row));
    *hi = ana_sat_add(ana_sat_add(*lo, last), r[0]);
    return ana_sat_mul(ana_sat_mul(r[0], r[1]), r[2]);
}

/* Byte hull of an image region in the image's tight layout. */
static uint64_t ana_img(ana_model *m, uint64_t id, const uint64_t o[3], const uint64_t r[3],
                        uint64_t *lo, uint64_t *hi)
{
    uint32_t i;
    uint64_t w = 1, h = 1, e = 1;
    if (ana_idmap_get(&m->objmap, id, &i) && m->xo[i].elem) {
        w = m->xo[i].img_w;
        h = m->xo[i].img_h;
        e = m->xo[i].elem;
    }
    uint64_t oo[3] = { ana_sat_mul(o[0], e), o[1], o[2] }, rr[3] = { ana_sat_mul(r[0], e), r[1], r[2] };
    return ana_rect(oo, rr, ana_sat_mul(w, e), ana_sat_mul(ana_sat_mul(w, e), h), lo, hi);
}

/* The mapping of pointer @p ptr, removed from the live list; 0 when none. */
static int ana_unmap_take(ana_model *m, uint64_t ptr, ana_mapping *out)
{
    for (size_t i = m->nmaps; i-- > 0;) {
        if (m->maps[i].ptr == ptr) {
            *out = m->maps[i];
            m->maps[i] = m->maps[--m->nmaps];
            return 1;
        }
    }
    return 0;
}

static ana_status ana_map_add(ana_model *m, uint64_t ptr, uint64_t seq, uint64_t obj, uint64_t lo,
                              uint64_t hi, uint64_t flags)
{
    if (!ptr)
        return ANA_OK;
    if (ana_grow((void **)&m->maps, &m->capmaps, m->nmaps + 1, sizeof *m->maps))
        return ANA_ERR_NOMEM;
    ana_mapping x = { ptr, seq, obj, lo, hi, flags };
    m->maps[m->nmaps++] = x;
    return ANA_OK;
}

/* Memory of the list parameter @p name, each whole. */
static ana_status ana_ref_list(ana_cb *b, const char *name, int access, const char *why)
{
    const tf_value *v = ana_call_arg(b->c, name);
    uint64_t id;
    if (!v || v->type != TF_ARRAY)
        return ANA_OK;
    for (uint32_t i = 0; i < v->v.arr.n; i++) {
        if (v->v.arr.items[i].type == TF_BOOL || !tf_value_u64(&v->v.arr.items[i], &id))
            return ana_model_fail(b->m, b->c, "%s holds a non-object", name);
        ana_status st = ana_cb_ref(b, id, 0, 0, access, 1, why);
        if (st != ANA_OK)
            return st;
    }
    return ANA_OK;
}

ana_status ana_model_transfer(ana_cb *b, const ana_cmd_desc *d)
{
    ana_model *m = b->m;
    const tf_call *c = b->c;
    ana_cmd *k = b->k;
    uint64_t a = 0, a2 = 0, off = 0, off2 = 0, size = 0, lo, hi, lo2, hi2, flags = 0;
    uint64_t o[3], o2[3], r[3], p[4] = { 0, 0, 0, 0 };
    ana_status st = ANA_OK;
    switch (d->shape) {
    case SH_BUF:
    case SH_FILLBUF:
        if (!ana_call_u64(c, "buffer", 0, &a) || !ana_call_u64(c, "offset", 0, &off) ||
            !ana_call_u64(c, "size", 0, &size))
            return ana_model_fail(m, c, "buffer, offset or size is malformed");
        k->bytes = size;
        return ana_cb_ref(b, a, off, ana_sat_add(off, size), d->access, 0, NULL);
    case SH_RECT:
        if (!ana_call_u64(c, "buffer", 0, &a) || (st = ana_cb_vec3(b, "buffer_origin", o, 0)) ||
            (st = ana_cb_vec3(b, "region", r, 1)))
            return st ? st : ana_model_fail(m, c, "buffer is not an object");
        ana_call_u64(c, "buffer_row_pitch", 0, &p[0]);
        ana_call_u64(c, "buffer_slice_pitch", 0, &p[1]);
        k->bytes = ana_rect(o, r, p[0], p[1], &lo, &hi);
        return ana_cb_ref(b, a, lo, hi, d->access, 0, NULL);
    case SH_IMG:
        if (!ana_call_u64(c, "image", 0, &a) || (st = ana_cb_vec3(b, "origin", o, 0)) ||
            (st = ana_cb_vec3(b, "region", r, 1)))
            return st ? st : ana_model_fail(m, c, "image is not an object");
        k->bytes = ana_img(m, a, o, r, &lo, &hi);
        return ana_cb_ref(b, a, lo, hi, d->access, 0, NULL);
    case SH_COPYBUF:
        if (!ana_call_u64(c, "src_buffer", 0, &a) || !ana_call_u64(c, "dst_buffer", 0, &a2) ||
            !ana_call_u64(c, "src_offset", 0, &off) || !ana_call_u64(c, "dst_offset", 0, &off2) ||
            !ana_call_u64(c, "size", 0, &size))
            return ana_model_fail(m, c, "a buffer, offset or size is malformed");
        k->bytes = size;
        if ((st = ana_cb_ref(b, a, off, ana_sat_add(off, size), ANA_ACC_READ, 0, NULL)))
            return st;
        return ana_cb_ref(b, a2, off2, ana_sat_add(off2, size), ANA_ACC_WRITE, 0, NULL);
    case SH_COPYRECT:
        if (!ana_call_u64(c, "src_buffer", 0, &a) || !ana_call_u64(c, "dst_buffer", 0, &a2) ||
            (st = ana_cb_vec3(b, "src_origin", o, 0)) || (st = ana_cb_vec3(b, "dst_origin", o2, 0)) ||
            (st = ana_cb_vec3(b, "region", r, 1)))
            return st ? st : ana_model_fail(m, c, "a buffer is not an object");
        ana_call_u64(c, "src_row_pitch", 0, &p[0]);
        ana_call_u64(c, "src_slice_pitch", 0, &p[1]);
        ana_call_u64(c, "dst_row_pitch", 0, &p[2]);
        ana_call_u64(c, "dst_slice_pitch", 0, &p[3]);
        k->bytes = ana_rect(o, r, p[0], p[1], &lo, &hi);
        ana_rect(o2, r, p[2], p[3], &lo2, &hi2);
        if ((st = ana_cb_ref(b, a, lo, hi, ANA_ACC_READ, 0, NULL)))
            return st;
        return ana_cb_ref(b, a2, lo2, hi2, ANA_ACC_WRITE, 0, NULL);
    case SH_COPYIMG:
        if (!ana_call_u64(c, "src_image", 0, &a) || !ana_call_u64(c, "dst_image", 0, &a2) ||
            (st = ana_cb_vec3(b, "src_origin", o, 0)) || (st = ana_cb_vec3(b, "dst_origin", o2, 0)) ||
            (st = ana_cb_vec3(b, "region", r, 1)))
            return st ? st : ana_model_fail(m, c, "an image is not an object");
        k->bytes = ana_img(m, a, o, r, &lo, &hi);
        ana_img(m, a2, o2, r, &lo2, &hi2);
        if ((st = ana_cb_ref(b, a, lo, hi, ANA_ACC_READ, 0, NULL)))
            return st;
        return ana_cb_ref(b, a2, lo2, hi2, ANA_ACC_WRITE, 0, NULL);
    case SH_IMG2BUF:
        if (!ana_call_u64(c, "src_image", 0, &a) || !ana_call_u64(c, "dst_buffer", 0, &a2) ||
            !ana_call_u64(c, "dst_offset", 0, &off2) || (st = ana_cb_vec3(b, "src_origin", o, 0)) ||
            (st = ana_cb_vec3(b, "region", r, 1)))
            return st ? st : ana_model_fail(m, c, "an object or offset is malformed");
        k->bytes = ana_img(m, a, o, r, &lo, &hi);
        if ((st = ana_cb_ref(b, a, lo, hi, ANA_ACC_READ, 0, NULL)))
            return st;
        return ana_cb_ref(b, a2, off2, ana_sat_add(off2, k->bytes), ANA_ACC_WRITE, 0, NULL);
    case SH_BUF2IMG:
        if (!ana_call_u64(c, "src_buffer", 0, &a) || !ana_call_u64(c, "dst_image", 0, &a2) ||
            !ana_call_u64(c, "src_offset", 0, &off) || (st = ana_cb_vec3(b, "dst_origin", o2, 0)) ||
            (st = ana_cb_vec3(b, "region", r, 1)))
            return st ? st : ana_model_fail(m, c, "an object or offset is malformed");
        k->bytes = ana_img(m, a2, o2, r, &lo2, &hi2);
        if ((st = ana_cb_ref(b, a, off, ana_sat_add(off, k->bytes), ANA_ACC_READ, 0, NULL)))
            return st;
        return ana_cb_ref(b, a2, lo2, hi2, ANA_ACC_WRITE, 0, NULL);
    case SH_MAPBUF:
    case SH_MAPIMG: {
        uint64_t ptr = 0;
        const char *obj = d->shape == SH_MAPBUF ? "buffer" : "image";
        if (!ana_call_u64(c, obj, 0, &a) || !ana_call_u64(c, "map_flags", 0, &flags))
            return ana_model_fail(m, c, "%s or map_flags is malformed", obj);
        if (d->shape == SH_MAPBUF) {
            if (!ana_call_u64(c, "offset", 0, &off) || !ana_call_u64(c, "size", 0, &size))
                return ana_model_fail(m, c, "offset or size is malformed");
            lo = off;
            hi = ana_sat_add(off, size);
            k->bytes = size;
        } else {
            if ((st = ana_cb_vec3(b, "origin", o, 0)) || (st = ana_cb_vec3(b, "region", r, 1)))
                return st;
            k->bytes = ana_img(m, a, o, r, &lo, &hi);
        }
        if (c->ret.type != TF_BOOL)
            tf_value_u64(&c->ret, &ptr);
        int reads = (flags & (CL_MAP_READ | CL_MAP_WRITE)) || !(flags & CL_MAP_WRITE_INVALIDATE_REGION);
        if ((st = ana_map_add(m, ptr, c->seq, a, lo, hi, flags)))
            return st;
        if (reads)
            return ana_cb_ref(b, a, lo, hi, ANA_ACC_READ, 0, NULL);
        ana_cb_use(m, a, c->seq);
        return ANA_OK;
    }
    case SH_UNMAP:
    case SH_SVMUNMAP: {
        uint64_t ptr = 0;
        ana_mapping mp;
        if (!ana_call_u64(c, d->shape == SH_UNMAP ? "mapped_ptr" : "svm_ptr", 0, &ptr))
            return ana_model_fail(m, c, "the mapped pointer is malformed");
        if (d->shape == SH_UNMAP && ana_call_u64(c, "memobj", 0, &a))
            ana_cb_use(m, a, c->seq);
        if (!ana_unmap_take(m, ptr, &mp))
            return ANA_OK;
        k->map_seq = mp.seq;
        k->bytes = mp.hi - mp.lo;
        int acc = mp.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) ? ANA_ACC_WRITE : ANA_ACC_READ;
        if (d->shape == SH_SVMUNMAP) {
            long s = ana_svm_find(m, mp.object);
            return s < 0 ? ANA_OK : ana_cb_ref_svm(b, mp.object + mp.lo, mp.hi - mp.lo, acc);
        }
        return ana_cb_ref(b, mp.object, mp.lo, mp.hi, acc, 0, NULL);
    }
    case SH_MIGRATE:
        ana_call_u64(c, "flags", 0, &flags);
        return ana_ref_list(b, "mem_objects",
                            flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED ? ANA_ACC_WRITE : ANA_ACC_READ,
                            "migration of the whole object");
    case SH_NATIVE:
        return ana_ref_list(b, "mem_list", ANA_ACC_RW, "native kernel: effects unknown");
    case SH_MEMLIST:
        return ana_ref_list(b, "mem_objects", ANA_ACC_RW, "shared with GL/EGL");
    case SH_SVMCPY: {
        if (!ana_call_u64(c, "size", 0, &size))
            return ana_model_fail(m, c, "size is malformed");
        k->bytes = size;
        const tf_value *src = ana_call_arg(c, "src_ptr");
        if (src && (src->type == TF_UINT || src->type == TF_INT) && tf_value_u64(src, &a) &&
            (st = ana_cb_ref_svm(b, a, size, ANA_ACC_READ)))
            return st;
        const tf_value *dst = ana_call_arg(c, "dst_ptr");
        if (dst && (dst->type == TF_UINT || dst->type == TF_INT) && tf_value_u64(dst, &a2))
            return ana_cb_ref_svm(b, a2, size, ANA_ACC_WRITE);
        return ANA_OK;
    }
    case SH_SVMFILL:
        if (!ana_call_u64(c, "svm_ptr", 0, &a) || !ana_call_u64(c, "size", 0, &size))
            return ana_model_fail(m, c, "svm_ptr or size is malformed");
        k->bytes = size;
        return ana_cb_ref_svm(b, a, size, ANA_ACC_WRITE);
    case SH_SVMMAP: {
        if (!ana_call_u64(c, "svm_ptr", 0, &a) || !ana_call_u64(c, "size", 0, &size) ||
            !ana_call_u64(c, "flags", 0, &flags))
            return ana_model_fail(m, c, "svm_ptr, size or flags is malformed");
        k->bytes = size;
        long s = ana_svm_find(m, a);
        if (s < 0)
            return ANA_OK;
        uint64_t base = m->objs[s].id;
        if ((st = ana_map_add(m, a, c->seq, base, a - base, ana_sat_add(a - base, size), flags)))
            return st;
        if ((flags & (CL_MAP_READ | CL_MAP_WRITE)) || !(flags & CL_MAP_WRITE_INVALIDATE_REGION))
            return ana_cb_ref_svm(b, a, size, ANA_ACC_READ);
        return ANA_OK;
    }
    case SH_SVMFREE:
    case SH_SVMMIGRATE: {
        const tf_value *v = ana_call_arg(c, "svm_pointers");
        uint64_t sizes[ANA_CMD_MAXREF];
        int ns = d->shape == SH_SVMMIGRATE ? ana_u64_array(ana_call_arg(c, "sizes"), sizes, ANA_CMD_MAXREF) : 0;
        for (uint32_t i = 0; v && v->type == TF_ARRAY && i < v->v.arr.n; i++) {
            if (v->v.arr.items[i].type == TF_BOOL || !tf_value_u64(&v->v.arr.items[i], &a))
                return ana_model_fail(m, c, "svm_pointers holds a non-pointer");
            if ((st = ana_cb_ref_svm(b, a, ns > 0 && (int)i < ns ? sizes[i] : 0, d->access)))
                return st;
            if (d->shape == SH_SVMFREE)
                ana_svm_release(m, a, c->seq);
        }
        return ANA_OK;
    }
    default:
        return ANA_OK;
    }
}

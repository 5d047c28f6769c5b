/* test_api_sem.c — the call semantics generated from the API description
 * (build/gen/api_sem.h from the OpenCL headers and recorder/api.overlay)
 * against what the OpenCL specification says of a handful of calls: which
 * parameter each command reads or writes and over which range, categories,
 * wait lists, what a plan may drop (the list plan/PLAN.md gives); and
 * the overflow checks of the rect and image lengths (trace-format/tf_len.h)
 * that the recorder and the replayer share. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_sem.h"
#include "trace-format/tf_len.h"

/* The description of @p fn; fails the test when there is none. */
static const api_sem *sem(const char *fn)
{
    const api_sem *a = api_sem_find(fn);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_STRING_EQUAL(a->name, fn);
    return a;
}

/* Name of the parameter an index refers to ("" for -1). */
static const char *pn(const api_sem *a, int i)
{
    const char *n = api_sem_param(a, i);
    return n ? n : "";
}

static void test_find(void)
{
    CU_ASSERT_PTR_NULL(api_sem_find("clNoSuchFunction"));
    CU_ASSERT_PTR_NULL(api_sem_find(NULL));
    CU_ASSERT_PTR_NULL(api_sem_find("clEnqueueWriteBufferX"));
    /* every entry is found under its name, at its own index */
    for (unsigned i = 0; i < API_FN_COUNT; i++)
        CU_ASSERT_PTR_EQUAL(api_sem_find(api_sem_table[i].name), &api_sem_table[i]);
}

static void test_write_buffer(void)
{
    const api_sem *a = sem("clEnqueueWriteBuffer");
    CU_ASSERT_EQUAL(a->cat, API_CAT_ENQUEUE);
    CU_ASSERT_EQUAL(a->op, API_OP_WRITE);
    CU_ASSERT_EQUAL(a->neffects, 1);
    const api_effect *e = &a->eff[0];
    CU_ASSERT_STRING_EQUAL(pn(a, e->obj), "buffer");
    CU_ASSERT_EQUAL(e->access, API_ACC_WRITE);
    CU_ASSERT_EQUAL(e->range, API_RANGE_BYTES);
    CU_ASSERT_STRING_EQUAL(pn(a, e->off), "offset");
    CU_ASSERT_STRING_EQUAL(pn(a, e->size), "size");
    CU_ASSERT_STRING_EQUAL(pn(a, a->queue), "command_queue");
    CU_ASSERT_STRING_EQUAL(pn(a, a->blocking), "blocking_write");
    CU_ASSERT_STRING_EQUAL(pn(a, a->nwait), "num_events_in_wait_list");
    CU_ASSERT_STRING_EQUAL(pn(a, a->wait), "event_wait_list");
    CU_ASSERT_STRING_EQUAL(pn(a, a->event), "event");
    CU_ASSERT(a->flags & API_F_DROP);
    CU_ASSERT_FALSE(a->flags & API_F_UNKNOWN);

    a = sem("clEnqueueReadBuffer");
    CU_ASSERT_EQUAL(a->op, API_OP_READ);
    CU_ASSERT_EQUAL(a->eff[0].access, API_ACC_READ);
    CU_ASSERT_STRING_EQUAL(pn(a, a->blocking), "blocking_read");
    CU_ASSERT_FALSE(a->flags & API_F_DROP);   /* a read-back is what the application observes */
}

static void test_copy(void)
{
    const api_sem *a = sem("clEnqueueCopyBuffer");
    CU_ASSERT_EQUAL(a->op, API_OP_COPY);
    CU_ASSERT_EQUAL_FATAL(a->neffects, 2);
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[0].obj), "src_buffer");
    CU_ASSERT_EQUAL(a->eff[0].access, API_ACC_READ);
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[0].off), "src_offset");
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[1].obj), "dst_buffer");
    CU_ASSERT_EQUAL(a->eff[1].access, API_ACC_WRITE);
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[1].off), "dst_offset");
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[1].size), "size");
    CU_ASSERT_EQUAL(a->blocking, -1);

    /* a buffer rectangle: origin, region and pitches of each side */
    a = sem("clEnqueueCopyBufferRect");
    CU_ASSERT_EQUAL_FATAL(a->neffects, 2);
    CU_ASSERT_EQUAL(a->eff[1].range, API_RANGE_RECT);
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[1].origin), "dst_origin");
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[1].region), "region");
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[1].row), "dst_row_pitch");
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[1].slice), "dst_slice_pitch");

    /* image to buffer: the buffer range is as long as the image region */
    a = sem("clEnqueueCopyImageToBuffer");
    CU_ASSERT_EQUAL_FATAL(a->neffects, 2);
    CU_ASSERT_EQUAL(a->eff[0].range, API_RANGE_IMAGE);
    CU_ASSERT_EQUAL(a->eff[0].access, API_ACC_READ);
    CU_ASSERT_EQUAL(a->eff[1].range, API_RANGE_BYTES);
    CU_ASSERT_EQUAL(a->eff[1].size, API_SIZE_REGION);
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[1].obj), "dst_buffer");
}

static void test_kernel(void)
{
    const api_sem *a = sem("clEnqueueNDRangeKernel");
    CU_ASSERT_EQUAL(a->op, API_OP_KERNEL);
    CU_ASSERT_EQUAL_FATAL(a->neffects, 1);
    CU_ASSERT_EQUAL(a->eff[0].range, API_RANGE_KERNEL);   /* from the kernel's arguments */
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[0].obj), "kernel");
    CU_ASSERT(a->flags & API_F_DROP);
    a = sem("clEnqueueTask");
    CU_ASSERT_EQUAL(a->op, API_OP_TASK);
    CU_ASSERT_EQUAL(a->eff[0].range, API_RANGE_KERNEL);
    /* a host function: its effects are unknown beyond its memory list */
    a = sem("clEnqueueNativeKernel");
    CU_ASSERT(a->flags & API_F_UNKNOWN);
    CU_ASSERT_EQUAL(a->eff[0].range, API_RANGE_LIST);
    CU_ASSERT_FALSE(a->flags & API_F_DROP);
}

static void test_maps(void)
{
    const api_sem *a = sem("clEnqueueMapBuffer");
    CU_ASSERT_EQUAL(a->cat, API_CAT_MAP);
    CU_ASSERT_EQUAL(a->eff[0].access, API_ACC_MAP);
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[0].flags), "map_flags");
    CU_ASSERT_STRING_EQUAL(pn(a, a->blocking), "blocking_map");
    a = sem("clEnqueueUnmapMemObject");
    CU_ASSERT_EQUAL(a->cat, API_CAT_ENQUEUE);
    CU_ASSERT_EQUAL(a->eff[0].access, API_ACC_MAPPED);
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[0].ptr), "mapped_ptr");
    CU_ASSERT_STRING_EQUAL(pn(a, a->eff[0].obj), "memobj");
    CU_ASSERT_EQUAL(sem("clEnqueueSVMMap")->cat, API_CAT_MAP);
    /* map flags (CL_MAP_READ 1, CL_MAP_WRITE 2, CL_MAP_WRITE_INVALIDATE_REGION 4) */
    CU_ASSERT_EQUAL(api_map_access(1), API_ACC_READ);
    CU_ASSERT_EQUAL(api_map_access(2), API_ACC_READ | API_ACC_WRITE);
    CU_ASSERT_EQUAL(api_map_access(4), API_ACC_WRITE);
    CU_ASSERT_EQUAL(api_map_access(0), API_ACC_READ);
    /* CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED (2) leaves nothing readable */
    CU_ASSERT_EQUAL(api_migrate_access(2), API_ACC_WRITE);
    CU_ASSERT_EQUAL(api_migrate_access(1), API_ACC_READ);
    CU_ASSERT_EQUAL(sem("clEnqueueMigrateMemObjects")->eff[0].access, API_ACC_MIGRATE);
}

static void test_categories(void)
{
    CU_ASSERT_EQUAL(sem("clRetainMemObject")->cat, API_CAT_RETAIN);
    CU_ASSERT_EQUAL(sem("clReleaseKernel")->cat, API_CAT_RELEASE);
    CU_ASSERT_EQUAL(sem("clCreateBuffer")->cat, API_CAT_CREATE);
    CU_ASSERT_EQUAL(sem("clGetDeviceInfo")->cat, API_CAT_QUERY);
    CU_ASSERT_EQUAL(sem("clSetKernelArg")->cat, API_CAT_OTHER);
    CU_ASSERT_EQUAL(sem("clSetKernelArg")->op, API_OP_NONE);
    const api_sem *a = sem("clFinish");
    CU_ASSERT_EQUAL(a->cat, API_CAT_SYNC);
    CU_ASSERT_EQUAL(a->op, API_OP_FINISH);
    /* clWaitForEvents waits for its own list, as clEnqueueWaitForEvents */
    a = sem("clWaitForEvents");
    CU_ASSERT_EQUAL(a->cat, API_CAT_SYNC);
    CU_ASSERT_STRING_EQUAL(pn(a, a->nwait), "num_events");
    CU_ASSERT_STRING_EQUAL(pn(a, a->wait), "event_list");
    CU_ASSERT_EQUAL(a->event, -1);
    a = sem("clEnqueueWaitForEvents");
    CU_ASSERT_EQUAL(a->op, API_OP_WAIT_EVENTS);
    CU_ASSERT_STRING_EQUAL(pn(a, a->wait), "event_list");
    /* markers and barriers: no effect, and known to have none */
    a = sem("clEnqueueMarkerWithWaitList");
    CU_ASSERT_EQUAL(a->neffects, 0);
    CU_ASSERT_FALSE(a->flags & API_F_UNKNOWN);
    /* GL objects: their contents change outside OpenCL */
    CU_ASSERT(sem("clEnqueueAcquireGLObjects")->flags & API_F_UNKNOWN);
}

/* The plan's drop list (plan/PLAN.md) is exactly the calls flagged
 * droppable, each with its queue first and the wait list last. */
static void test_drop(void)
{
    static const char *const plan_md[] = {
        "clEnqueueNDRangeKernel", "clEnqueueTask", "clEnqueueWriteBuffer", "clEnqueueWriteBufferRect",
        "clEnqueueWriteImage", "clEnqueueFillBuffer", "clEnqueueFillImage", "clEnqueueCopyBuffer",
        "clEnqueueCopyBufferRect", "clEnqueueCopyImage", "clEnqueueCopyImageToBuffer", "clEnqueueCopyBufferToImage"};
    unsigned n = 0;
    for (unsigned i = 0; i < API_FN_COUNT; i++) {
        const api_sem *a = &api_sem_table[i];
        if (!(a->flags & API_F_DROP))
            continue;
        n++;
        int listed = 0;
        for (size_t j = 0; j < sizeof plan_md / sizeof plan_md[0]; j++)
            listed |= !strcmp(plan_md[j], a->name);
        CU_ASSERT(listed);
        CU_ASSERT_EQUAL(a->queue, 0);
        CU_ASSERT_EQUAL(a->event, a->nparams - 1);
        CU_ASSERT_EQUAL(a->wait, a->nparams - 2);
        CU_ASSERT_EQUAL(a->nwait, a->nparams - 3);
    }
    CU_ASSERT_EQUAL(n, sizeof plan_md / sizeof plan_md[0]);
}

/* Every enqueue of a memory object or kernel says what it does to memory. */
static void test_complete(void)
{
    for (unsigned i = 0; i < API_FN_COUNT; i++) {
        const api_sem *a = &api_sem_table[i];
        if (a->op == API_OP_READ || a->op == API_OP_WRITE || a->op == API_OP_COPY || a->op == API_OP_FILL)
            CU_ASSERT(a->neffects > 0);
        for (unsigned k = 0; k < a->neffects; k++)
            CU_ASSERT(a->eff[k].obj >= 0 && a->eff[k].obj < a->nparams);
    }
}

static void test_len(void)
{
    size_t o[3] = {0, 0, 0}, r[3] = {16, 4, 2};
    /* tight: 16 bytes * 4 rows * 2 slices */
    CU_ASSERT_EQUAL(tf_len_rect(o, r, 0, 0), 128);
    /* pitches 32 and 256, origin (1, 2, 1): the last byte of the hull */
    size_t o2[3] = {1, 2, 1};
    CU_ASSERT_EQUAL(tf_len_rect(o2, r, 32, 256), (size_t)(2 * 256 + 5 * 32 + 17));
    CU_ASSERT_EQUAL(tf_len_rect(NULL, r, 0, 0), 0);
    size_t empty[3] = {16, 0, 1};
    CU_ASSERT_EQUAL(tf_len_rect(o, empty, 0, 0), 0);
    /* overflow: of the origin, the pitches, the slice product */
    size_t big[3] = {SIZE_MAX, 0, 0};
    CU_ASSERT_EQUAL(tf_len_rect(big, r, 0, 0), TF_LEN_OVERFLOW);
    CU_ASSERT_EQUAL(tf_len_rect(o, r, SIZE_MAX / 2, 0), TF_LEN_OVERFLOW);
    CU_ASSERT_EQUAL(tf_len_rect(o, r, 16, SIZE_MAX), TF_LEN_OVERFLOW);
    size_t huge[3] = {1, SIZE_MAX / 2 + 2, 1};
    CU_ASSERT_EQUAL(tf_len_rect(o, huge, 4, 0), TF_LEN_OVERFLOW);
    /* images: 4-byte pixels, 8 x 4 x 1 tight, then pitched */
    size_t ir[3] = {8, 4, 1};
    CU_ASSERT_EQUAL(tf_len_image(4, ir, 0, 0), 128);
    CU_ASSERT_EQUAL(tf_len_image(4, ir, 64, 0), (size_t)(3 * 64 + 32));
    CU_ASSERT_EQUAL(tf_len_image(0, ir, 0, 0), 0);
    CU_ASSERT_EQUAL(tf_len_image(4, NULL, 0, 0), 0);
    size_t iw[3] = {SIZE_MAX / 2, 1, 1};
    CU_ASSERT_EQUAL(tf_len_image(4, iw, 0, 0), TF_LEN_OVERFLOW);
    size_t id[3] = {8, 4, SIZE_MAX / 16};
    CU_ASSERT_EQUAL(tf_len_image(4, id, 0, 0), TF_LEN_OVERFLOW);
    CU_ASSERT_EQUAL(tf_len_3d(1, 1, 1, SIZE_MAX, SIZE_MAX), 1);   /* one row: the pitches are not used */
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("api_sem", NULL, NULL);
    CU_add_test(s, "lookup by name: every entry, nothing else", test_find);
    CU_add_test(s, "clEnqueueWriteBuffer writes buffer [offset, offset+size); reads read", test_write_buffer);
    CU_add_test(s, "copies read the source, write the destination", test_copy);
    CU_add_test(s, "launches: effects from the kernel; native kernels unknown", test_kernel);
    CU_add_test(s, "maps, unmaps, migrations: flags decide", test_maps);
    CU_add_test(s, "categories, operations, wait lists", test_categories);
    CU_add_test(s, "what a plan may drop: PLAN.md's list, with queue and wait list", test_drop);
    CU_add_test(s, "every transfer has its effects, on its own parameters", test_complete);
    CU_add_test(s, "rect and image lengths: values and overflow", test_len);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}

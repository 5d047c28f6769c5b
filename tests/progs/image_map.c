/* image_map.c — maps of a 2-D and a 3-D image, for replay across devices
 * whose image pitches differ (tests/e2e/replay_pitch.sh).
 *
 *   image_map [--quiet]
 *
 * Calls: an RGBA8 13x7 image and a R32F 5x3x4 image, each created with
 * CL_MEM_COPY_HOST_PTR; a write map of a sub-region (the host fills it, then
 * unmaps); a blocking read map of the whole image (checked here, and
 * verified by a replay against the recorded bytes). Exit 0 when the mapped
 * bytes are those written. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "image_map: %s failed: %d\n", #x, e_); exit(2); } } while (0)

/* one image: create, write-map a box, read-map everything, check */
static int run(cl_context ctx, cl_command_queue q, const cl_image_format *fmt, const cl_image_desc *desc,
               size_t elem, const size_t box_origin[3], const size_t box[3])
{
    size_t w = desc->image_width, h = desc->image_height ? desc->image_height : 1;
    size_t d = desc->image_depth ? desc->image_depth : 1;
    size_t n = w * h * d * elem;
    unsigned char *init = malloc(n), *want = malloc(n);
    if (!init || !want)
        exit(2);
    for (size_t i = 0; i < n; i++)
        init[i] = (unsigned char)(i * 7 + 3);
    memcpy(want, init, n);
    cl_int err;
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, fmt, desc, init, &err);
    CHECK(err);
    size_t rp = 0, sp = 0;
    unsigned char *p = clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_WRITE, box_origin, box, &rp, &sp, 0, NULL, NULL,
                                         &err);
    CHECK(err);
    for (size_t z = 0; z < box[2]; z++)
        for (size_t y = 0; y < box[1]; y++)
            for (size_t x = 0; x < box[0] * elem; x++) {
                unsigned char v = (unsigned char)(0xA5 ^ (x + 3 * y + 11 * z));
                p[z * sp + y * rp + x] = v;
                want[((box_origin[2] + z) * h + box_origin[1] + y) * w * elem + box_origin[0] * elem + x] = v;
            }
    CHECK(clEnqueueUnmapMemObject(q, img, p, 0, NULL, NULL));
    size_t o[3] = {0, 0, 0}, all[3] = {w, h, d};
    p = clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ, o, all, &rp, &sp, 0, NULL, NULL, &err);
    CHECK(err);
    int bad = 0;
    for (size_t z = 0; z < d; z++)
        for (size_t y = 0; y < h; y++)
            bad |= memcmp(p + z * sp + y * rp, want + (z * h + y) * w * elem, w * elem) != 0;
    CHECK(clEnqueueUnmapMemObject(q, img, p, 0, NULL, NULL));
    CHECK(clFinish(q));
    CHECK(clReleaseMemObject(img));
    free(init);
    free(want);
    return bad;
}

int main(int argc, char **argv)
{
    int quiet = argc > 1 && !strcmp(argv[1], "--quiet");
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_image_format rgba = {CL_RGBA, CL_UNSIGNED_INT8}, r32 = {CL_R, CL_FLOAT};
    cl_image_desc d2 = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 13, .image_height = 7};
    cl_image_desc d3 = {.image_type = CL_MEM_OBJECT_IMAGE3D, .image_width = 5, .image_height = 3, .image_depth = 4};
    size_t o2[3] = {2, 1, 0}, b2[3] = {9, 4, 1}, o3[3] = {1, 0, 1}, b3[3] = {3, 2, 2};
    int bad = run(ctx, q, &rgba, &d2, 4, o2, b2) | run(ctx, q, &r32, &d3, 4, o3, b3);
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    if (bad) {
        fprintf(stderr, "image_map: the mapped bytes are not those written\n");
        return 1;
    }
    if (!quiet)
        printf("image_map: ok\n");
    return 0;
}

/* overlap.c — host memory that calls read, in every form the recorder
 * captures while the driver runs (recorder/rec_data.c rec_slot_fill_ov),
 * for tests/e2e/record_overlap.sh.
 *
 *   overlap SEED
 *
 * Random bytes from SEED (xorshift64*), all larger than one 1 MiB piece
 * except where said: a non-blocking and a blocking clEnqueueWriteBuffer
 * (6 MiB; 5 MiB + 3 bytes), the same 6 MiB written again (a blob already
 * stored), one of 40 MiB (more than one capture window), a
 * clEnqueueWriteBufferRect (a 1100 x 1500 region of a 1200-byte pitch),
 * buffers made with CL_MEM_COPY_HOST_PTR (3 MiB) and CL_MEM_USE_HOST_PTR
 * (2.5 MiB), a 512 x 512 RGBA float image made with COPY_HOST_PTR (4 MiB)
 * and a clEnqueueWriteImage of 512 x 300 of it, a small write (48 bytes,
 * inline), and a clEnqueueSVMMemcpy from host memory (4 MiB; "svm:
 * none" when the device has no SVM). Each buffer is read back (blocking)
 * and compared with what was written; a kernel folds every buffer into a
 * checksum, printed with the device's name. Exit 0 unless a call fails
 * or a value is wrong. */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "overlap: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char src[] =
    "__kernel void fold(__global const uint *a, uint n, __global uint *out) {\n"
    "    uint s = 0;\n"
    "    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) s += a[i] * (i | 1u);\n"
    "    out[get_global_id(0)] = s;\n"
    "}\n";

static uint64_t rng;

static void fill(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        if ((i & 7) == 0) {
            rng ^= rng >> 12;
            rng ^= rng << 25;
            rng ^= rng >> 27;
        }
        b[i] = (uint8_t)((rng * 0x2545F4914F6CDD1DULL) >> (8 * (i & 7)));
    }
}

static void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "overlap: out of memory\n");
        exit(2);
    }
    return p;
}

static cl_context ctx;
static cl_command_queue q;
static cl_kernel k;
static cl_mem outb;
static uint32_t total;

/* Reads @p m back (blocking), compares with @p want (@p n bytes), adds
 * the kernel's fold of its words to the checksum. */
static void check(const char *what, cl_mem m, const void *want, size_t n)
{
    uint8_t *got = xalloc(n);
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n, got, 0, NULL, NULL));
    if (memcmp(got, want, n)) {
        fprintf(stderr, "overlap: %s: read back differs\n", what);
        exit(1);
    }
    free(got);
    cl_uint words = (cl_uint)(n / 4);
    size_t g = 256;
    uint32_t part[256];
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    CHECK(clSetKernelArg(k, 1, sizeof words, &words));
    CHECK(clSetKernelArg(k, 2, sizeof outb, &outb));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, outb, CL_TRUE, 0, sizeof part, part, 0, NULL, NULL));
    uint32_t s = 0;
    for (int i = 0; i < 256; i++)
        s += part[i];
    printf("%s: %zu bytes, fold %08x\n", what, n, s);
    total = total * 31u + s;
}

static cl_mem buffer(size_t n)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, NULL, &err);
    CHECK(err);
    return m;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: overlap SEED\n");
        return 2;
    }
    rng = strtoull(argv[1], NULL, 10) | 1;
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    char name[256] = "";
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    const char *s = src;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    k = clCreateKernel(prog, "fold", &err);
    CHECK(err);
    outb = buffer(256 * 4);

    /* non-blocking write, then blocking ones */
    size_t na = (size_t)6 << 20, nb = ((size_t)5 << 20) + 3, nbig = (size_t)40 << 20;
    uint8_t *ha = xalloc(na), *hb = xalloc(nb), *hbig = xalloc(nbig);
    fill(ha, na);
    fill(hb, nb);
    fill(hbig, nbig);
    cl_mem a = buffer(na), a2 = buffer(na), b = buffer(nb), big = buffer(nbig);
    CHECK(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, na, ha, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, nb, hb, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, a2, CL_FALSE, 0, na, ha, 0, NULL, NULL));   /* stored already */
    CHECK(clEnqueueWriteBuffer(q, big, CL_TRUE, 0, nbig, hbig, 0, NULL, NULL));
    CHECK(clFinish(q));
    check("write nonblocking", a, ha, na);
    check("write blocking", b, hb, nb);
    check("write again", a2, ha, na);
    check("write 40 MiB", big, hbig, nbig);

    /* a rect: 1100 x 1500 bytes at (40, 7) of a 1200-byte pitch host array */
    size_t pitch = 1200, rows = 1600, w = 1100, h = 1500;
    uint8_t *hr = xalloc(pitch * rows), *want = xalloc(w * h);
    fill(hr, pitch * rows);
    for (size_t y = 0; y < h; y++)
        memcpy(want + y * w, hr + (y + 7) * pitch + 40, w);
    cl_mem r = buffer(w * h);
    size_t bo[3] = {0, 0, 0}, ho[3] = {40, 7, 0}, reg[3] = {w, h, 1};
    CHECK(clEnqueueWriteBufferRect(q, r, CL_TRUE, bo, ho, reg, w, 0, pitch, 0, hr, 0, NULL, NULL));
    check("write rect", r, want, w * h);

    /* contents at creation */
    size_t nc = (size_t)3 << 20, nu = ((size_t)5 << 20) / 2;
    uint8_t *hc = xalloc(nc), *hu = xalloc(nu);
    fill(hc, nc);
    fill(hu, nu);
    cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, nc, hc, &err);
    CHECK(err);
    cl_mem u = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, nu, hu, &err);
    CHECK(err);
    check("copy host ptr", c, hc, nc);
    check("use host ptr", u, hu, nu);

    /* an image: made from host memory, then part of it written */
    cl_image_format fmt = {CL_RGBA, CL_FLOAT};
    cl_image_desc d;
    memset(&d, 0, sizeof d);
    d.image_type = CL_MEM_OBJECT_IMAGE2D;
    d.image_width = 512;
    d.image_height = 512;
    size_t ni = 512 * 512 * 16, nw = 512 * 300 * 16;
    float *hi = xalloc(ni), *hw = xalloc(nw), *gi = xalloc(ni);
    uint32_t *bits = (uint32_t *)hi;
    fill(hi, ni);
    fill(hw, nw);
    for (size_t i = 0; i < ni / 4; i++)   /* finite floats, compared as bits */
        bits[i] &= 0xbf7fffffu;
    for (size_t i = 0; i < nw / 4; i++)
        ((uint32_t *)hw)[i] &= 0xbf7fffffu;
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &fmt, &d, hi, &err);
    CHECK(err);
    size_t io[3] = {0, 100, 0}, ir[3] = {512, 300, 1};
    CHECK(clEnqueueWriteImage(q, img, CL_TRUE, io, ir, 0, 0, hw, 0, NULL, NULL));
    memcpy((uint8_t *)hi + (size_t)100 * 512 * 16, hw, nw);
    size_t z[3] = {0, 0, 0}, all[3] = {512, 512, 1};
    CHECK(clEnqueueReadImage(q, img, CL_TRUE, z, all, 0, 0, gi, 0, NULL, NULL));
    if (memcmp(gi, hi, ni)) {
        fprintf(stderr, "overlap: image: read back differs\n");
        return 1;
    }
    cl_mem ib = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, ni, gi, &err);
    CHECK(err);
    check("image", ib, hi, ni);

    /* small: inline in the record */
    uint8_t hs[48];
    fill(hs, sizeof hs);
    cl_mem sm = buffer(sizeof hs);
    CHECK(clEnqueueWriteBuffer(q, sm, CL_TRUE, 0, sizeof hs, hs, 0, NULL, NULL));
    check("small", sm, hs, sizeof hs);

    /* SVM from host memory */
    cl_device_svm_capabilities caps = 0;
    size_t nsvm = (size_t)4 << 20;
    void *svm = NULL;
    if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL) == CL_SUCCESS &&
        (caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER))
        svm = clSVMAlloc(ctx, CL_MEM_READ_WRITE, nsvm, 0);
    if (svm) {
        uint8_t *hv = xalloc(nsvm), *gv = xalloc(nsvm);
        fill(hv, nsvm);
        CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, svm, hv, nsvm, 0, NULL, NULL));
        CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, gv, svm, nsvm, 0, NULL, NULL));
        if (memcmp(gv, hv, nsvm)) {
            fprintf(stderr, "overlap: svm: read back differs\n");
            return 1;
        }
        cl_mem vb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, nsvm, gv, &err);
        CHECK(err);
        check("svm", vb, hv, nsvm);
        clSVMFree(ctx, svm);
    } else {
        printf("svm: none\n");
    }
    CHECK(clFinish(q));
    printf("overlap: device %s, checksum %08x ok\n", name, total);
    return 0;
}

/* show_out.c — the forms `clrr show` gives bytes: typed text (--as), a
 * hex dump, .npy (numpy's format 1.0, written here: magic, version, a
 * little-endian header length and a Python dict literal padded to 64
 * bytes), and PNG through libpng (8 or 16 bits per channel). */
#include "tools/clrr/show_int.h"

#include <inttypes.h>
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ types */

int cli_show_type_parse(const char *s, cli_show_type *t)
{
    static const struct { const char *name; char kind; unsigned size; } base[] = {
        {"int8", 'i', 1}, {"char", 'i', 1}, {"uint8", 'u', 1}, {"uchar", 'u', 1},
        {"int16", 'i', 2}, {"short", 'i', 2}, {"uint16", 'u', 2}, {"ushort", 'u', 2},
        {"int32", 'i', 4}, {"int", 'i', 4}, {"uint32", 'u', 4}, {"uint", 'u', 4},
        {"int64", 'i', 8}, {"long", 'i', 8}, {"uint64", 'u', 8}, {"ulong", 'u', 8},
        {"half", 'f', 2}, {"float16", 'f', 2}, {"float", 'f', 4}, {"float32", 'f', 4},
        {"double", 'f', 8}, {"float64", 'f', 8},
    };
    memset(t, 0, sizeof *t);
    if (!s || strlen(s) >= sizeof t->name)
        return -1;
    /* the longest base name that prefixes s, then an optional vector width */
    size_t best = 0;
    int bi = -1;
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
        size_t n = strlen(base[i].name);
        if (!strncmp(s, base[i].name, n) && n > best) {
            /* "int8" vs "int" + "8": a width follows only a name without digits */
            best = n;
            bi = (int)i;
        }
    }
    if (bi < 0)
        return -1;
    const char *rest = s + best;
    unsigned n = 1;
    if (*rest) {
        if (strpbrk(base[bi].name, "0123456789"))
            return -1;   /* int32x4 is not a type name: int4 is */
        char *end;
        unsigned long v = strtoul(rest, &end, 10);
        if (*end || (v != 2 && v != 3 && v != 4 && v != 8 && v != 16))
            return -1;
        n = (unsigned)v;
    }
    t->kind = base[bi].kind;
    t->size = base[bi].size;
    t->n = n;
    t->stride = n == 3 ? 4 : n;   /* OpenCL stores a 3-vector as a 4-vector */
    snprintf(t->name, sizeof t->name, "%s", s);
    return 0;
}

int cli_show_type_of_image(uint32_t order, uint32_t type, cli_show_type *t)
{
    uint64_t elem = cli_show_image_elem(order, type);
    const char *base;
    switch (type) {
    case 0x10D0: case 0x10D7: base = "char"; break;
    case 0x10D2: case 0x10DA: base = "uchar"; break;
    case 0x10D1: case 0x10D8: base = "short"; break;
    case 0x10D3: case 0x10DB: base = "ushort"; break;
    case 0x10D9: base = "int"; break;
    case 0x10DC: base = "uint"; break;
    case 0x10DD: base = "half"; break;
    case 0x10DE: base = "float"; break;
    default: return -1;
    }
    char name[24];
    cli_show_type b;
    if (cli_show_type_parse(base, &b))
        return -1;
    unsigned ch = elem ? (unsigned)(elem / b.size) : 0;
    if (!ch)
        return -1;
    if (ch == 1)
        snprintf(name, sizeof name, "%s", base);
    else
        snprintf(name, sizeof name, "%s%u", base, ch);
    if (cli_show_type_parse(name, t))
        return -1;
    t->stride = ch;   /* an RGB image's pixels are 3 channels, packed */
    return 0;
}

static double cli_show_half(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static void cli_show_print_comp(FILE *f, const uint8_t *p, const cli_show_type *t)
{
    uint64_t u = 0;
    memcpy(&u, p, t->size);   /* little-endian host */
    if (t->kind == 'u') {
        fprintf(f, "%" PRIu64, u);
    } else if (t->kind == 'i') {
        int64_t v = t->size == 1 ? (int8_t)u : t->size == 2 ? (int16_t)u : t->size == 4 ? (int32_t)u : (int64_t)u;
        fprintf(f, "%" PRId64, v);
    } else if (t->size == 2) {
        fprintf(f, "%.5g", cli_show_half((uint16_t)u));
    } else if (t->size == 4) {
        float v;
        memcpy(&v, p, 4);
        fprintf(f, "%.9g", (double)v);
    } else {
        double v;
        memcpy(&v, p, 8);
        fprintf(f, "%.17g", v);
    }
}

void cli_show_print_typed(FILE *f, const void *data, size_t len, const cli_show_type *t, uint64_t first, uint64_t count)
{
    size_t esz = (size_t)t->size * t->stride, n = esz ? len / esz : 0;
    const uint8_t *p = data;
    for (uint64_t i = first; i < n && i - first < count; i++) {
        fprintf(f, "[%" PRIu64 "]", i);
        for (unsigned k = 0; k < t->n; k++) {
            putc(' ', f);
            cli_show_print_comp(f, p + i * esz + (size_t)k * t->size, t);
        }
        putc('\n', f);
    }
}

void cli_show_print_hex(FILE *f, const void *data, size_t len, uint64_t first, uint64_t count)
{
    const uint8_t *p = data;
    uint64_t end = first + count < first || first + count > len ? len : first + count;
    for (uint64_t o = first; o < end; o += 16) {
        fprintf(f, "%08" PRIx64 " ", o);
        for (uint64_t k = o; k < o + 16; k++) {
            if (k < end)
                fprintf(f, " %02x", p[k]);
            else
                fputs("   ", f);
        }
        fputs("  |", f);
        for (uint64_t k = o; k < o + 16 && k < end; k++)
            putc(p[k] >= 0x20 && p[k] < 0x7f ? p[k] : '.', f);
        fputs("|\n", f);
    }
}

/* ------------------------------------------------------------ .npy */

int cli_show_write_npy(FILE *f, const void *data, size_t len, const cli_show_type *t, const uint64_t *dims,
                       unsigned ndims)
{
    char descr[8], shape[160], hdr[256];
    snprintf(descr, sizeof descr, "%s%c%u", t->size == 1 ? "|" : "<", t->kind, t->size);
    size_t esz = (size_t)t->size * t->stride, n = esz ? len / esz : 0;
    int k = 0;
    if (!ndims) {
        if (t->n > 1)
            k = snprintf(shape, sizeof shape, "(%zu, %u)", n, t->n);
        else
            k = snprintf(shape, sizeof shape, "(%zu,)", n);
    } else {
        k = snprintf(shape, sizeof shape, "(");
        for (unsigned i = 0; i < ndims && k < (int)sizeof shape - 24; i++)
            k += snprintf(shape + k, sizeof shape - (size_t)k, "%s%" PRIu64, i ? ", " : "", dims[i]);
        if (t->n > 1 && k < (int)sizeof shape - 24)
            k += snprintf(shape + k, sizeof shape - (size_t)k, ", %u", t->n);
        snprintf(shape + k, sizeof shape - (size_t)k, "%s)", ndims == 1 && t->n == 1 ? "," : "");
    }
    int h = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    size_t total = 10 + (size_t)h + 1, pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)h + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                             (unsigned char)(hlen >> 8)};
    if (fwrite(pre, 1, sizeof pre, f) != sizeof pre || fwrite(hdr, 1, (size_t)h, f) != (size_t)h)
        return -1;
    for (size_t i = 0; i < pad; i++)
        putc(' ', f);
    putc('\n', f);
    /* vectors of 3 are stored as 4: the 4th component is left out */
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++)
        if (fwrite(p + i * esz, 1, (size_t)t->size * t->n, f) != (size_t)t->size * t->n)
            return -1;
    return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------ PNG */

/* channel layout: which source channel feeds R, G, B, A (-1: none, -2: zero) */
typedef struct cli_show_png_map {
    int color;                /* PNG_COLOR_TYPE_* */
    int nout;                 /* channels written */
    int src[4];               /* per written channel: the source channel index; -2 zero */
    int nin;                  /* channels in a pixel */
} cli_show_png_map;

static int cli_show_png_layout(uint32_t order, cli_show_png_map *m)
{
    switch (order) {
    case 0x10B0: case 0x10B1: case 0x10B8: case 0x10B9: case 0x10BD:   /* R A INTENSITY LUMINANCE DEPTH */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_GRAY, 1, {0, -1, -1, -1}, 1}; return 0;
    case 0x10B3:   /* RA */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_GRAY_ALPHA, 2, {0, 1, -1, -1}, 2}; return 0;
    case 0x10B2:   /* RG: blue 0 */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_RGB, 3, {0, 1, -2, -1}, 2}; return 0;
    case 0x10BA:   /* Rx */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_GRAY, 1, {0, -1, -1, -1}, 2}; return 0;
    case 0x10B4: case 0x10BF:   /* RGB sRGB */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_RGB, 3, {0, 1, 2, -1}, 3}; return 0;
    case 0x10BB:   /* RGx */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_RGB, 3, {0, 1, -2, -1}, 3}; return 0;
    case 0x10B5: case 0x10C1:   /* RGBA sRGBA */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_RGBA, 4, {0, 1, 2, 3}, 4}; return 0;
    case 0x10BC: case 0x10C0:   /* RGBx, sRGBx */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_RGB, 3, {0, 1, 2, -1}, 4}; return 0;
    case 0x10B6: case 0x10C2:   /* BGRA sBGRA */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_RGBA, 4, {2, 1, 0, 3}, 4}; return 0;
    case 0x10B7:   /* ARGB */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_RGBA, 4, {1, 2, 3, 0}, 4}; return 0;
    case 0x10C3:   /* ABGR */
        *m = (cli_show_png_map){PNG_COLOR_TYPE_RGBA, 4, {3, 2, 1, 0}, 4}; return 0;
    default: return -1;
    }
}

const char *cli_show_png_check(uint32_t order, uint32_t type)
{
    cli_show_png_map m;
    if (cli_show_png_layout(order, &m))
        return "its channel order has no PNG form";
    switch (type) {
    case 0x10D2: case 0x10DA: case 0x10D3: case 0x10DB: case 0x10DD: case 0x10DE:
        return NULL;   /* UNORM_INT8 UNSIGNED_INT8 UNORM_INT16 UNSIGNED_INT16 HALF_FLOAT FLOAT */
    default:
        return "its channel type has no PNG form (8- or 16-bit unsigned, UNORM, HALF_FLOAT and FLOAT have)";
    }
}

/* one channel as a PNG sample (8 or 16 bits) */
static unsigned cli_show_png_sample(const uint8_t *p, uint32_t type)
{
    uint16_t h;
    float v;
    switch (type) {
    case 0x10D2: case 0x10DA: return p[0];
    case 0x10D3: case 0x10DB: memcpy(&h, p, 2); return h;
    case 0x10DD: memcpy(&h, p, 2); v = (float)cli_show_half(h); break;
    default: memcpy(&v, p, 4); break;
    }
    if (!(v > 0.0f))   /* NaN too */
        return 0;
    return v >= 1.0f ? 65535u : (unsigned)lrintf(v * 65535.0f);
}

typedef struct cli_show_png_err {
    char *err;
    size_t cap;
    jmp_buf jb;
} cli_show_png_err;

static void cli_show_png_error(png_structp png, png_const_charp msg)
{
    cli_show_png_err *e = png_get_error_ptr(png);
    snprintf(e->err, e->cap, "PNG: %s", msg);
    longjmp(e->jb, 1);
}

static void cli_show_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

int cli_show_write_png(FILE *f, const void *px, uint64_t w, uint64_t h, uint32_t order, uint32_t type, uint64_t elem,
                   char *err, size_t cap)
{
    cli_show_png_map m;
    const char *why = cli_show_png_check(order, type);
    if (why || cli_show_png_layout(order, &m)) {
        snprintf(err, cap, "%s", why ? why : "no PNG form");
        return -1;
    }
    if (!w || !h || w > 0x7fffffff || h > 0x7fffffff) {
        snprintf(err, cap, "PNG: a %" PRIu64 "x%" PRIu64 " image has no PNG form", w, h);
        return -1;
    }
    int depth = type == 0x10D2 || type == 0x10DA ? 8 : 16;
    size_t csz = (size_t)(elem / (uint64_t)m.nin), rowb = (size_t)w * (size_t)m.nout * (size_t)(depth / 8);
    uint8_t *row = malloc(rowb);
    if (!row) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    cli_show_png_err pe;
    memset(&pe, 0, sizeof pe);
    pe.err = err;
    pe.cap = cap;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &pe, cli_show_png_error, cli_show_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(png ? &png : NULL, NULL);
        free(row);
        snprintf(err, cap, "out of memory");
        return -1;
    }
    if (setjmp(pe.jb)) {
        png_destroy_write_struct(&png, &info);
        free(row);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, m.color, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    const uint8_t *src = px;
    for (uint64_t y = 0; y < h; y++) {
        for (uint64_t x = 0; x < w; x++) {
            const uint8_t *p = src + (y * w + x) * elem;
            for (int c = 0; c < m.nout; c++) {
                unsigned s = m.src[c] < 0 ? 0 : cli_show_png_sample(p + (size_t)m.src[c] * csz, type);
                size_t o = ((size_t)x * (size_t)m.nout + (size_t)c) * (size_t)(depth / 8);
                if (depth == 8) {
                    row[o] = (uint8_t)s;
                } else {   /* PNG samples are big-endian */
                    row[o] = (uint8_t)(s >> 8);
                    row[o + 1] = (uint8_t)s;
                }
            }
        }
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(row);
    if (fflush(f) || ferror(f)) {
        snprintf(err, cap, "writing the PNG failed");
        return -1;
    }
    return 0;
}

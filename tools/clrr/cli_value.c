/* cli_value.c — the human form of decoded trace values, shared by dump and
 * info: what a parameter holds, told from its kind (tf_kind) and C type,
 * with OpenCL names from names.h. */
#include "tools/clrr/cli.h"
#include "tools/clrr/names.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#define CLI_MAX_DEPTH 32
#define CLI_BIN_SHOW 8   /* bytes of a bin shown in the human form */

void cli_print_str(FILE *f, const char *s, size_t len, size_t max)
{
    size_t show = (max && len > max) ? max : len;
    putc('"', f);
    for (size_t i = 0; i < show; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(f, "\\x%02x", c);
            else
                putc(c, f);   /* UTF-8 passes through */
            break;
        }
    }
    putc('"', f);
    if (show < len)
        fprintf(f, "...(%zu chars)", len);
}

static void cli_print_blobref(FILE *f, const tf_blobref *b)
{
    char h[CLI_FMT_CAP + 4];
    fprintf(f, "<%" PRIu64 " B blob %s…>", b->size, cli_fmt_hash(b, 8, h));
}

/* A bin: a NUL-terminated printable text (an info query's string result)
 * prints as a string; anything else as its size and first bytes. */
static void cli_print_bin(FILE *f, const char *p, uint32_t len)
{
    uint32_t n = len;
    while (n && p[n - 1] == 0)
        n--;
    int text = n > 0 && n + 1 == len;
    for (uint32_t i = 0; text && i < n; i++)
        if (!isprint((unsigned char)p[i]) && p[i] != '\n' && p[i] != '\t')
            text = 0;
    if (text) {
        cli_print_str(f, p, n, CLI_STR_MAX);
        return;
    }
    if (len == 1 || len == 2 || len == 4 || len == 8) {
        /* a scalar (an info query's answer, a kernel argument): its value
         * on the little-endian host that recorded it */
        uint64_t u = 0;
        for (uint32_t i = len; i-- > 0;)
            u = u << 8 | (unsigned char)p[i];
        if (u < 1000000)
            fprintf(f, "<%" PRIu32 " B: %" PRIu64 ">", len, u);
        else
            fprintf(f, "<%" PRIu32 " B: 0x%" PRIx64 ">", len, u);
        return;
    }
    fprintf(f, "<%" PRIu32 " B", len);
    if (len) {
        putc(' ', f);
        for (uint32_t i = 0; i < len && i < CLI_BIN_SHOW; i++)
            fprintf(f, "%02x", (unsigned char)p[i]);
        if (len > CLI_BIN_SHOW)
            fputs("…", f);
    }
    putc('>', f);
}

static void cli_print_value_d(FILE *f, const tf_value *v, int depth)
{
    if (!v) {
        fputs("NULL", f);
        return;
    }
    if (depth > CLI_MAX_DEPTH) {
        fputs("…", f);
        return;
    }
    switch (v->type) {
    case TF_NIL: fputs("NULL", f); break;
    case TF_BOOL: fputs(v->v.b ? "true" : "false", f); break;
    case TF_INT: fprintf(f, "%" PRId64, v->v.i); break;
    case TF_UINT: fprintf(f, "%" PRIu64, v->v.u); break;
    case TF_F64: fprintf(f, "%g", v->v.f); break;
    case TF_STR: cli_print_str(f, v->v.str.ptr, v->v.str.len, CLI_STR_MAX); break;
    case TF_BIN: cli_print_bin(f, v->v.str.ptr, v->v.str.len); break;
    case TF_BLOB: cli_print_blobref(f, &v->v.blob); break;
    case TF_ARRAY:
        putc('[', f);
        for (uint32_t i = 0; i < v->v.arr.n; i++) {
            if (i == CLI_ARRAY_MAX) {
                fprintf(f, ", …(%" PRIu32 " items)", v->v.arr.n);
                break;
            }
            if (i)
                fputs(", ", f);
            cli_print_value_d(f, &v->v.arr.items[i], depth + 1);
        }
        putc(']', f);
        break;
    case TF_MAP:
        putc('{', f);
        for (uint32_t i = 0; i < v->v.map.n; i++) {
            if (i == CLI_ARRAY_MAX) {
                fprintf(f, ", …(%" PRIu32 " entries)", v->v.map.n);
                break;
            }
            if (i)
                fputs(", ", f);
            const tf_value *k = &v->v.map.keys[i];
            if (k->type == TF_STR)
                fwrite(k->v.str.ptr, 1, k->v.str.len, f);
            else
                cli_print_value_d(f, k, depth + 1);
            putc('=', f);
            cli_print_value_d(f, &v->v.map.vals[i], depth + 1);
        }
        putc('}', f);
        break;
    default:
        fputs("?", f);
        break;
    }
}

void cli_print_value(FILE *f, const tf_value *v)
{
    cli_print_value_d(f, v, 0);
}

/* ------------------------------------------------------------ C types */

/* Copies the base type of @p ctype ("const cl_event *" -> "cl_event") into
 * dst: qualifiers, pointers and spaces removed. Returns the pointer depth. */
static int cli_base_type(const char *ctype, char *dst, size_t cap)
{
    int ptr = 0;
    size_t n = 0;
    const char *p = ctype ? ctype : "";
    while (*p) {
        if (*p == '*') {
            ptr++;
            p++;
            continue;
        }
        if (isspace((unsigned char)*p)) {
            p++;
            continue;
        }
        const char *w = p;
        while (*p && *p != '*' && !isspace((unsigned char)*p))
            p++;
        size_t wl = (size_t)(p - w);
        if ((wl == 5 && !memcmp(w, "const", 5)) || (wl == 8 && !memcmp(w, "volatile", 8)) ||
            (wl == 8 && !memcmp(w, "restrict", 8)))
            continue;
        if (n + wl + 1 < cap) {
            memcpy(dst + n, w, wl);
            n += wl;
        }
    }
    dst[n] = 0;
    return ptr;
}

int cli_type_is_handle(const char *ctype)
{
    static const char *const handles[] = {
        "cl_platform_id", "cl_device_id", "cl_context", "cl_command_queue",
        "cl_mem", "cl_program", "cl_kernel", "cl_event", "cl_sampler",
        "cl_semaphore_khr", "cl_command_buffer_khr", "cl_mutable_command_khr",
        "cl_accelerator_intel",
    };
    char base[64];
    cli_base_type(ctype, base, sizeof base);
    for (size_t i = 0; i < sizeof handles / sizeof handles[0]; i++)
        if (!strcmp(base, handles[i]))
            return 1;
    return 0;
}

static int cli_type_is(const char *ctype, const char *name)
{
    char base[64];
    cli_base_type(ctype, base, sizeof base);
    return !strcmp(base, name);
}

/* ------------------------------------------------------------ parameters */

static void cli_print_handle(FILE *f, const tf_value *v)
{
    uint64_t id;
    if (v->type == TF_NIL || (tf_value_u64(v, &id) && id == 0))
        fputs("NULL", f);
    else if (tf_value_u64(v, &id))
        fprintf(f, "#%" PRIu64, id);
    else
        cli_print_value(f, v);
}

/* A pointer identity: NULL for 0, else prefix + number (hex when @p hex). */
static void cli_print_ptr(FILE *f, const char *prefix, uint64_t u, int hex)
{
    if (!u)
        fputs("NULL", f);
    else if (hex)
        fprintf(f, "%s%" PRIx64, prefix, u);
    else
        fprintf(f, "%s%" PRIu64, prefix, u);
}

static void cli_print_error_code(FILE *f, const tf_value *v)
{
    int64_t code;
    const char *name;
    if (tf_value_i64(v, &code) && (name = cli_error_name(code)))
        fputs(name, f);
    else
        cli_print_value(f, v);
}

/* An integer of a VALUE parameter: bitfield names, enumerant name, cl_bool,
 * or the number. */
static void cli_print_scalar(FILE *f, const char *fn, const tf_param *p, const tf_value *v)
{
    uint64_t u;
    char names[512];
    if (v->type != TF_INT && v->type != TF_UINT && v->type != TF_BOOL) {
        cli_print_value(f, v);
        return;
    }
    if (!tf_value_u64(v, &u)) {   /* negative */
        if (!strcmp(p->name, "errcode_ret") || cli_type_is(p->type, "cl_int"))
            cli_print_error_code(f, v);
        else
            cli_print_value(f, v);
        return;
    }
    if (!strcmp(p->name, "errcode_ret")) {
        cli_print_error_code(f, v);
        return;
    }
    if (cli_bitfield_names(fn, p->name, u, names, sizeof names)) {
        fputs(names[0] ? names : "0", f);
        return;
    }
    const char *name = cli_enum_name(fn, p->name, u);
    if (name) {
        fputs(name, f);
        return;
    }
    if (cli_type_is(p->type, "cl_bool") && u <= 1) {
        fputs(u ? "CL_TRUE" : "CL_FALSE", f);
        return;
    }
    cli_print_value(f, v);
}

/* Property names the generated tables may lack (context and queue
 * properties are the ones nearly every program passes). */
#define CLI_CONTEXT_PLATFORM 0x1084
static const char *cli_prop_name(uint64_t key)
{
    switch (key) {
    case CLI_CONTEXT_PLATFORM: return "CL_CONTEXT_PLATFORM";
    case 0x1085: return "CL_CONTEXT_INTEROP_USER_SYNC";
    case 0x1093: return "CL_QUEUE_PROPERTIES";
    case 0x1094: return "CL_QUEUE_SIZE";
    default: return NULL;
    }
}

/* An element of an ARRAY parameter (or a PROPS list). */
static void cli_print_elems(FILE *f, const char *fn, const tf_param *p, const tf_value *v,
                            int props)
{
    int handles = cli_type_is_handle(p->type);
    putc('[', f);
    for (uint32_t i = 0; i < v->v.arr.n; i++) {
        const tf_value *e = &v->v.arr.items[i];
        if (i == CLI_ARRAY_MAX) {
            fprintf(f, ", …(%" PRIu32 " items)", v->v.arr.n);
            break;
        }
        if (i)
            fputs(", ", f);
        uint64_t u, key = 0;
        const char *name;
        if (props && i % 2 == 1)
            tf_value_u64(&v->v.arr.items[i - 1], &key);
        if (handles)
            cli_print_handle(f, e);
        else if (props && i % 2 == 0 && tf_value_u64(e, &u) && u &&
                 ((name = cli_enum_name(fn, p->name, u)) || (name = cli_prop_name(u))))
            fputs(name, f);   /* a property name */
        else if (props && i % 2 == 0 && tf_value_u64(e, &u) && u)
            fprintf(f, "0x%" PRIx64, u);   /* a property this build cannot name */
        else if (props && key == CLI_CONTEXT_PLATFORM)
            cli_print_handle(f, e);   /* the recorder stores the platform's id */
        else if (!props && (e->type == TF_INT || e->type == TF_UINT))
            cli_print_scalar(f, fn, p, e);
        else
            cli_print_value(f, e);
    }
    putc(']', f);
}

void cli_print_param(FILE *f, const tf_sig *sig, uint32_t i, const tf_value *v)
{
    if (!v || v->type == TF_NIL) {
        fputs("NULL", f);
        return;
    }
    if (!sig || i >= sig->nparams) {
        cli_print_value(f, v);
        return;
    }
    const tf_param *p = &sig->params[i];
    uint64_t u;
    /* A pure output's input is whether the application passed a pointer;
     * a data slot holding false is data that was not captured. */
    if (v->type == TF_BOOL && p->kind != TF_KIND_CALLBACK) {
        if (p->dir == TF_DIR_OUT)
            fputs(v->v.b ? "<out>" : "NULL", f);
        else if (p->kind == TF_KIND_BLOB && !v->v.b)
            fputs("<not captured>", f);
        else
            cli_print_value(f, v);
        return;
    }
    switch (p->kind) {
    case TF_KIND_VALUE:
        cli_print_scalar(f, sig->name, p, v);
        break;
    case TF_KIND_HANDLE:
        cli_print_handle(f, v);
        break;
    case TF_KIND_ARRAY:
    case TF_KIND_PROPS:
        if (v->type == TF_ARRAY)
            cli_print_elems(f, sig->name, p, v, p->kind == TF_KIND_PROPS);
        else
            cli_print_value(f, v);
        break;
    case TF_KIND_CALLBACK:
        if (v->type == TF_BOOL)
            fputs(v->v.b ? "<callback>" : "NULL", f);
        else
            cli_print_value(f, v);
        break;
    case TF_KIND_USERDATA:
        if (tf_value_u64(v, &u) && v->type != TF_BOOL)
            cli_print_ptr(f, "0x", u, 1);
        else
            cli_print_value(f, v);
        break;
    case TF_KIND_PTR:
        if (tf_value_u64(v, &u) && v->type != TF_BOOL)
            cli_print_ptr(f, "ptr#", u, 0);
        else
            cli_print_value(f, v);
        break;
    case TF_KIND_STRUCT:
        if (v->type == TF_ARRAY) {
            putc('{', f);
            for (uint32_t k = 0; k < v->v.arr.n && k <= CLI_ARRAY_MAX; k++) {
                if (k)
                    fputs(", ", f);
                cli_print_value(f, &v->v.arr.items[k]);
            }
            putc('}', f);
        } else {
            cli_print_value(f, v);
        }
        break;
    case TF_KIND_BLOB:
        /* An integer in a data slot: an object id where the recorder put one
         * (a kernel argument that is a memory object, sampler or queue),
         * otherwise an address recorded without contents. */
        if ((v->type == TF_UINT || v->type == TF_INT) && tf_value_u64(v, &u)) {
            if (!strcmp(sig->name, "clSetKernelArg") && !strcmp(p->name, "arg_value"))
                cli_print_ptr(f, "#", u, 0);
            else
                cli_print_ptr(f, "0x", u, 1);
        } else {
            cli_print_value(f, v);
        }
        break;
    default: /* STRING and kinds this build does not know */
        cli_print_value(f, v);
        break;
    }
}

void cli_print_ret(FILE *f, const tf_sig *sig, const tf_value *v)
{
    uint64_t u;
    const char *rt = sig ? sig->ret_type : NULL;
    if (!v || v->type == TF_NIL) {
        fputs(rt && cli_type_is(rt, "void") && !strchr(rt, '*') ? "void" : "NULL", f);
        return;
    }
    if (rt && cli_type_is(rt, "cl_int") && !strchr(rt, '*'))
        cli_print_error_code(f, v);
    else if (rt && cli_type_is_handle(rt))
        cli_print_handle(f, v);
    else if (rt && strchr(rt, '*') && tf_value_u64(v, &u) && v->type != TF_BOOL)
        cli_print_ptr(f, "ptr#", u, 0);
    else
        cli_print_value(f, v);
}

/* ------------------------------------------------------------ data bytes */

static uint64_t cli_data_bytes_d(const tf_value *v, uint64_t *blob_bytes, int depth)
{
    uint64_t n = 0;
    if (!v || depth > CLI_MAX_DEPTH)
        return 0;
    switch (v->type) {
    case TF_BIN:
        return v->v.str.len;
    case TF_BLOB:
        if (blob_bytes)
            *blob_bytes += v->v.blob.size;
        return v->v.blob.size;
    case TF_ARRAY:
        for (uint32_t i = 0; i < v->v.arr.n; i++)
            n += cli_data_bytes_d(&v->v.arr.items[i], blob_bytes, depth + 1);
        return n;
    case TF_MAP:
        for (uint32_t i = 0; i < v->v.map.n; i++)
            n += cli_data_bytes_d(&v->v.map.vals[i], blob_bytes, depth + 1);
        return n;
    default:
        return 0;
    }
}

uint64_t cli_value_data_bytes(const tf_value *v, uint64_t *blob_bytes)
{
    return cli_data_bytes_d(v, blob_bytes, 0);
}

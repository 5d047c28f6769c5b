/* hooks_program.c — program sources and binaries, kernel arguments. */
#include "recorder/rec_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* clCreateProgramWithSource: the strings, joined, become one blob (the
 * exact source the compiler sees). Sources are always captured: without
 * them nothing can be replayed or analyzed. */
int rec_pre_clCreateProgramWithSource(rec_call *c, cl_context *a_context, cl_uint *a_count,
                                      const char ***a_strings, const size_t **a_lengths,
                                      cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_errcode_ret;
    const char **s = *a_strings;
    const size_t *len = *a_lengths;
    int null_entry = 0;   /* CL_INVALID_VALUE: recorded as no strings, which the replay's runtime refuses too */
    for (cl_uint i = 0; s && i < *a_count; i++)
        null_entry |= !s[i];
    if (!s || !*a_count || null_entry) {
        c->in[2].state = REC_SLOT_NULL;
        return 0;
    }
    size_t total = 0;
    for (cl_uint i = 0; i < *a_count; i++)
        total += !s[i] ? 0 : (len && len[i]) ? len[i] : strlen(s[i]);
    char *joined = malloc(total ? total : 1);
    if (!joined) {
        c->in[2].state = REC_SLOT_SKIPPED;
        return 0;
    }
    size_t off = 0;
    for (cl_uint i = 0; i < *a_count; i++) {
        if (!s[i])
            continue;
        size_t n = (len && len[i]) ? len[i] : strlen(s[i]);
        memcpy(joined + off, s[i], n);
        off += n;
    }
    int cap = c->capture;
    c->capture = 1;
    rec_slot_fill(c, &c->in[2], joined, total);
    c->capture = cap;
    free(joined);
    return 0;
}

/* clCreateProgramWithBinary: one blob per device binary. */
int rec_pre_clCreateProgramWithBinary(rec_call *c, cl_context *a_context, cl_uint *a_num_devices,
                                      const cl_device_id **a_device_list, const size_t **a_lengths,
                                      const unsigned char ***a_binaries, cl_int **a_binary_status,
                                      cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_device_list;
    (void)a_binary_status;
    (void)a_errcode_ret;
    cl_uint n = *a_num_devices;
    const unsigned char **bin = *a_binaries;
    if (!bin || !*a_lengths || !n || n > 1024) {
        c->in[4].state = REC_SLOT_NULL;
        return 0;
    }
    tf_blobref *refs = calloc(n, sizeof *refs);
    if (!refs) {
        c->in[4].state = REC_SLOT_SKIPPED;
        return 0;
    }
    for (cl_uint i = 0; i < n; i++)
        if (bin[i])
            tf_writer_blob(rec_g.w, bin[i], (*a_lengths)[i], &refs[i]);
    c->in[4].state = REC_SLOT_BLOBS;
    c->heap |= 1u << 4;
    c->in[4].n = n;
    c->in[4].v.blobs = refs;
    return 0;
}

/* clCreateProgramWithBinary, after: the source of the program, where the
 * driver reports one for a binary (CL_PROGRAM_SOURCE non-empty), into
 * post.source (a blob): a replay on another device builds from it
 * (FORMAT.md 11.1). PoCL 3.1 and the stub driver answer "" (nothing kept);
 * without it, or a fetch of the same binaries from a program from source,
 * the trace replays only where the binary loads (`clrr record` and `clrr
 * info` say so). */
void rec_post_clCreateProgramWithBinary(rec_call *c, int ok, cl_program *ret, cl_context a_context,
                                        cl_uint a_num_devices, const cl_device_id *a_device_list,
                                        const size_t *a_lengths, const unsigned char **a_binaries,
                                        cl_int *a_binary_status, cl_int *a_errcode_ret)
{
    (void)a_context;
    (void)a_num_devices;
    (void)a_device_list;
    (void)a_lengths;
    (void)a_binaries;
    (void)a_binary_status;
    (void)a_errcode_ret;
    size_t n = 0;
    if (!ok || !*ret || c->direct || rec_g.plan || !rec_next.clGetProgramInfo
        || rec_next.clGetProgramInfo(*ret, CL_PROGRAM_SOURCE, 0, NULL, &n) != CL_SUCCESS || n <= 1
        || n > (64u << 20))
        return;
    int saved = errno;   /* the application sees the errno it would have */
    char *src = malloc(n);
    rec_extra *x = NULL;
    if (src && rec_next.clGetProgramInfo(*ret, CL_PROGRAM_SOURCE, n, src, NULL) == CL_SUCCESS && strnlen(src, n)
        && (x = rec_extra_add(c, 1, "source"))) {
        x->slot.state = REC_SLOT_BLOB;
        tf_writer_blob(rec_g.w, src, strnlen(src, n), &x->slot.v.blob);
    }
    free(src);
    errno = saved;
}

/* ------------------------------------------------ headers of a build
 * A source that includes headers beside it (`#include "./main.h"`, `-I.`)
 * builds only where those files are. At clBuildProgram (and
 * clCompileProgram, but for its input headers) the recorder finds
 * the headers the source names, recursively, resolved as the compiler
 * would (OpenCL sources have no file name: a quoted name relative to the
 * current directory, then to each -I directory of the options, in order;
 * an angled one in the -I directories; in a header, quoted names relative
 * to that header's directory first), and stores them in END's post map:
 * "headers" {name: blob}, names normalized lexically (no "." segments,
 * "dir/.." collapsed); "headers_missing" [name] for includes found
 * nowhere (system headers, names in disabled #if branches), and
 * "headers_skipped" (uint) when the bounds below stopped the search
 * (FORMAT.md 11.1). The replay builds only from these (replayer/rpl_progsrc.c,
 * with trace-format/tf_inc.c, which holds the naming rule tf_inc_join).
 * The scan is textual and generous: a directive in a comment is looked up
 * too, which costs a file read at most. */
#define REC_HDR_MAX 64                  /* headers per build */
#define REC_HDR_MISSING_MAX 64
#define REC_HDR_TOTAL (16u << 20)       /* bytes of headers per build */
#define REC_HDR_NAME_MAX TF_INC_NAME_MAX   /* names are joined by tf_inc_join (FORMAT.md 11.1) */
#define REC_HDR_DIRS_MAX 64

typedef struct rec_hdr_set {
    char *name[REC_HDR_MAX];
    char *data[REC_HDR_MAX];
    size_t len[REC_HDR_MAX];
    int n;
    char *missing[REC_HDR_MISSING_MAX];
    int nmissing;
    size_t total;
    uint64_t skipped;
    const char *dirs[REC_HDR_DIRS_MAX];  /* -I directories, in order */
    int ndirs;
    const char **embedded;               /* clCompileProgram's header_include_names */
    cl_uint nembedded;
} rec_hdr_set;

static int rec_hdr_has(const rec_hdr_set *h, const char *name)
{
    for (int i = 0; i < h->n; i++)
        if (!strcmp(h->name[i], name))
            return 1;
    return 0;
}

/* Reads the regular file @p path whole (at most @p max bytes): heap, or NULL. */
static char *rec_hdr_read(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *d = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= max) {
        size_t n = (size_t)st.st_size, got = 0;
        d = malloc(n ? n : 1);
        while (d && got < n) {
            ssize_t r = read(fd, d + got, n - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (d && got != n) {
            free(d);
            d = NULL;
        }
        *len = n;
    }
    close(fd);
    return d;
}

static void rec_hdr_scan(rec_hdr_set *h, const char *text, size_t len, const char *dir, int depth);

/* One include name @p name (@p angled: <...>) met in a file of directory @p dir. */
static void rec_hdr_resolve(rec_hdr_set *h, const char *name, int angled, const char *dir, int depth)
{
    char cand[REC_HDR_NAME_MAX];
    for (cl_uint k = 0; k < h->nembedded; k++)   /* an input header: the driver has it */
        if (h->embedded[k] && !strcmp(h->embedded[k], name))
            return;
    for (int k = angled ? 0 : -1; k < h->ndirs; k++) {
        if (!tf_inc_join(k < 0 ? dir : h->dirs[k], name, cand))
            continue;
        if (rec_hdr_has(h, cand))
            return;
        if (h->n == REC_HDR_MAX || h->total >= REC_HDR_TOTAL) {
            h->skipped++;
            return;
        }
        size_t n = 0;
        char *d = rec_hdr_read(cand, REC_HDR_TOTAL - h->total, &n);
        if (!d)
            continue;
        char *nm = strdup(cand);
        if (!nm) {
            free(d);
            h->skipped++;
            return;
        }
        int i = h->n++;
        h->name[i] = nm;
        h->data[i] = d;
        h->len[i] = n;
        h->total += n;
        char sub[REC_HDR_NAME_MAX];
        snprintf(sub, sizeof sub, "%s", cand);
        char *slash = strrchr(sub, '/');
        if (slash)
            *(slash == sub ? slash + 1 : slash) = 0;
        else
            sub[0] = 0;
        if (depth < 32)
            rec_hdr_scan(h, d, n, sub, depth + 1);
        else
            h->skipped++;
        return;
    }
    for (int i = 0; i < h->nmissing; i++)
        if (!strcmp(h->missing[i], name))
            return;
    if (h->nmissing < REC_HDR_MISSING_MAX && (h->missing[h->nmissing] = strdup(name)))
        h->nmissing++;
}

/* Include directives of @p text: a line of blanks, '#', blanks, include
 * (include_next, import), blanks, then "name" or <name>. */
static void rec_hdr_scan(rec_hdr_set *h, const char *text, size_t len, const char *dir, int depth)
{
    static const char *const words[] = {"include_next", "include", "import"};
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        const char *q = p;
        while (q < eol && (*q == ' ' || *q == '\t'))
            q++;
        if (q < eol && *q == '#') {
            q++;
            while (q < eol && (*q == ' ' || *q == '\t'))
                q++;
            for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
                size_t wl = strlen(words[w]);
                if ((size_t)(eol - q) > wl && !memcmp(q, words[w], wl)) {
                    const char *r = q + wl;
                    while (r < eol && (*r == ' ' || *r == '\t'))
                        r++;
                    char close = r < eol && *r == '"' ? '"' : r < eol && *r == '<' ? '>' : 0;
                    const char *e = close ? memchr(r + 1, close, (size_t)(eol - r - 1)) : NULL;
                    if (e && e > r + 1 && (size_t)(e - r - 1) < REC_HDR_NAME_MAX) {
                        char name[REC_HDR_NAME_MAX];
                        memcpy(name, r + 1, (size_t)(e - r - 1));
                        name[e - r - 1] = 0;
                        if (!memchr(name, 0, (size_t)(e - r - 1)))
                            rec_hdr_resolve(h, name, close == '>', dir, depth);
                    }
                    break;
                }
            }
        }
        p = eol + 1;
    }
}

/* The headers of @p program's source built with @p options, into the
 * call's post map (see above). */
static void rec_record_headers(rec_call *c, cl_program program, const char *options, const char **embedded,
                               cl_uint nembedded)
{
    size_t n = 0;
    if (!rec_next.clGetProgramInfo
        || rec_next.clGetProgramInfo(program, CL_PROGRAM_SOURCE, 0, NULL, &n) != CL_SUCCESS || n <= 1
        || n > (64u << 20))
        return;
    char *src = malloc(n);
    char *opts = strdup(options ? options : "");
    rec_hdr_set *h = calloc(1, sizeof *h);
    if (!src || !opts || !h
        || rec_next.clGetProgramInfo(program, CL_PROGRAM_SOURCE, n, src, NULL) != CL_SUCCESS)
        goto out;
    if (!memchr(src, '#', n))
        goto out;
    h->ndirs = tf_inc_dirs(opts, h->dirs, REC_HDR_DIRS_MAX);
    h->embedded = embedded;
    h->nembedded = embedded ? nembedded : 0;
    rec_hdr_scan(h, src, strnlen(src, n), "", 0);
    if (h->n) {
        /* one block: the map's keys and values, then the names */
        size_t names = 0;
        for (int i = 0; i < h->n; i++)
            names += strlen(h->name[i]);
        tf_value *v = malloc(sizeof *v * (1 + 2 * (size_t)h->n) + names);
        rec_extra *x = v ? rec_extra_add(c, 1, "headers") : NULL;
        if (!x) {
            free(v);
            goto out;
        }
        tf_value *keys = v + 1, *vals = keys + h->n;
        char *sp = (char *)(vals + h->n);
        v->type = TF_MAP;
        v->v.map.keys = keys;
        v->v.map.vals = vals;
        v->v.map.n = (uint32_t)h->n;
        for (int i = 0; i < h->n; i++) {
            size_t l = strlen(h->name[i]);
            memcpy(sp, h->name[i], l);
            keys[i].type = TF_STR;
            keys[i].v.str.ptr = sp;
            keys[i].v.str.len = (uint32_t)l;
            sp += l;
            vals[i].type = TF_BLOB;
            tf_writer_blob(rec_g.w, h->data[i], h->len[i], &vals[i].v.blob);
        }
        x->val = v;
    }
    if (h->nmissing) {
        size_t names = 0;
        for (int i = 0; i < h->nmissing; i++)
            names += strlen(h->missing[i]);
        tf_value *v = malloc(sizeof *v * (1 + (size_t)h->nmissing) + names);
        rec_extra *x = v ? rec_extra_add(c, 1, "headers_missing") : NULL;
        if (!x) {
            free(v);
            goto out;
        }
        tf_value *items = v + 1;
        char *sp = (char *)(items + h->nmissing);
        v->type = TF_ARRAY;
        v->v.arr.items = items;
        v->v.arr.n = (uint32_t)h->nmissing;
        for (int i = 0; i < h->nmissing; i++) {
            size_t l = strlen(h->missing[i]);
            memcpy(sp, h->missing[i], l);
            items[i].type = TF_STR;
            items[i].v.str.ptr = sp;
            items[i].v.str.len = (uint32_t)l;
            sp += l;
        }
        x->val = v;
    }
    if (h->skipped) {
        rec_extra *x = rec_extra_add(c, 1, "headers_skipped");
        if (x) {
            x->slot.state = REC_SLOT_UINT;
            x->slot.v.u = h->skipped;
        }
    }
out:
    if (h) {
        for (int i = 0; i < h->n; i++) {
            free(h->name[i]);
            free(h->data[i]);
        }
        for (int i = 0; i < h->nmissing; i++)
            free(h->missing[i]);
    }
    free(h);
    free(opts);
    free(src);
}

/* clBuildProgram: the headers its source includes (above); plan mode: the
 * plan's fused kernels made from this program are built now
 * (rec_plan_program). */
void rec_post_clBuildProgram(rec_call *c, int ok, cl_int *ret, cl_program a_program, cl_uint a_num_devices,
                             const cl_device_id *a_device_list, const char *a_options,
                             void(CL_CALLBACK *a_pfn_notify)(cl_program, void *), void *a_user_data)
{
    (void)ret;
    (void)a_num_devices;
    (void)a_device_list;
    (void)a_pfn_notify;
    (void)a_user_data;
    if (!c->direct && !rec_g.plan) {
        int saved = errno;   /* the application sees the errno it would have */
        rec_record_headers(c, a_program, a_options, NULL, 0);
        errno = saved;
    }
    if (ok && rec_g.plan)
        rec_plan_program(a_program);
}

/* clCompileProgram: the headers its source includes, but those the
 * application gives as input headers (header_include_names). */
void rec_post_clCompileProgram(rec_call *c, int ok, cl_int *ret, cl_program a_program, cl_uint a_num_devices,
                               const cl_device_id *a_device_list, const char *a_options, cl_uint a_num_input_headers,
                               const cl_program *a_input_headers, const char **a_header_include_names,
                               void(CL_CALLBACK *a_pfn_notify)(cl_program, void *), void *a_user_data)
{
    (void)ok;
    (void)ret;
    (void)a_num_devices;
    (void)a_device_list;
    (void)a_input_headers;
    (void)a_pfn_notify;
    (void)a_user_data;
    if (!c->direct && !rec_g.plan) {
        int saved = errno;
        rec_record_headers(c, a_program, a_options, a_header_include_names, a_num_input_headers);
        errno = saved;
    }
}

/* clSetKernelArgSVMPointer, clSetKernelExecInfo, plan mode: the layer does
 * not track these, so the kernel's launches are not kept. */
void rec_post_clSetKernelArgSVMPointer(rec_call *c, int ok, cl_int *ret, cl_kernel a_kernel, cl_uint a_arg_index,
                                       const void *a_arg_value)
{
    (void)c;
    (void)ret;
    (void)a_arg_index;
    (void)a_arg_value;
    if (ok && rec_g.plan)
        rec_plan_karg_opaque(a_kernel);
}

void rec_post_clSetKernelExecInfo(rec_call *c, int ok, cl_int *ret, cl_kernel a_kernel,
                                  cl_kernel_exec_info a_param_name, size_t a_param_value_size,
                                  const void *a_param_value)
{
    (void)c;
    (void)ret;
    (void)a_param_name;
    (void)a_param_value_size;
    (void)a_param_value;
    if (ok && rec_g.plan)
        rec_plan_karg_opaque(a_kernel);
}

/* clSetKernelArg: an argument that is a memory object, sampler or queue is
 * recorded as its id (uint); anything else as its bytes (bin); a NULL value
 * (local memory) as nil. Argument values are always captured. */
int rec_pre_clSetKernelArg(rec_call *c, cl_kernel *a_kernel, cl_uint *a_arg_index,
                           size_t *a_arg_size, const void **a_arg_value)
{
    const void *v = *a_arg_value;
    const void *obj = NULL;
    if (v && *a_arg_size == sizeof(void *))
        memcpy(&obj, v, sizeof obj);
    uint64_t id = rec_kernel_set_arg(*a_kernel, *a_arg_index, obj);
    if (rec_g.plan) {   /* no records: rec_post_clSetKernelArg tells the matcher */
        c->direct = 1;
        c->hook_u = id;
        return 0;
    }
    if (id) {
        c->in[3].state = REC_SLOT_UINT;
        c->in[3].v.u = id;
        return 0;
    }
    int cap = c->capture;
    c->capture = 1;
    rec_slot_fill(c, &c->in[3], v, *a_arg_size);
    c->capture = cap;
    return 0;
}

void rec_post_clSetKernelArg(rec_call *c, int ok, cl_int *ret, cl_kernel a_kernel, cl_uint a_arg_index,
                             size_t a_arg_size, const void *a_arg_value)
{
    (void)ret;
    if (c->direct && ok)
        rec_plan_karg(a_kernel, a_arg_index, a_arg_size, a_arg_value, c->hook_u);
}

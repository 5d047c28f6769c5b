/* stub_int.h — internals of the stub OpenCL driver (tests/stub-icd/): the
 * object structs behind every handle, the list of entry points that fill
 * the ICD dispatch table, the global lock, the call log and the helpers the
 * stub_*.c files share. Not a public header; see stub_icd.c for what the
 * stub is for. */
#ifndef CLRR_STUB_INT_H
#define CLRR_STUB_INT_H

#include <CL/cl_icd.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ entry points
 * Every dispatch slot the stub fills, in one list. stub_icd.c builds the
 * dispatch table from it and each function is declared below with the type
 * of its slot (cl_api_<name> from CL/cl_icd.h), so a definition whose
 * signature differs from the slot's does not compile. The D3D and DX9 slots
 * are Windows-only (void * here) and stay NULL. */
#define STUB_FUNCS(X) \
    /* stub_icd.c */ \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetExtensionFunctionAddress) \
    X(clGetExtensionFunctionAddressForPlatform) X(clUnloadCompiler) X(clUnloadPlatformCompiler) \
    /* stub_device.c */ \
    X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateSubDevices) X(clRetainDevice) \
    X(clReleaseDevice) X(clGetDeviceAndHostTimer) X(clGetHostTimer) \
    /* stub_context.c */ \
    X(clCreateContext) X(clCreateContextFromType) X(clRetainContext) X(clReleaseContext) \
    X(clGetContextInfo) X(clSetContextDestructorCallback) X(clCreateCommandQueue) \
    X(clCreateCommandQueueWithProperties) X(clRetainCommandQueue) X(clReleaseCommandQueue) \
    X(clGetCommandQueueInfo) X(clSetCommandQueueProperty) X(clSetDefaultDeviceCommandQueue) \
    X(clCreateSampler) X(clCreateSamplerWithProperties) X(clRetainSampler) X(clReleaseSampler) \
    X(clGetSamplerInfo) \
    /* stub_event.c */ \
    X(clWaitForEvents) X(clGetEventInfo) X(clRetainEvent) X(clReleaseEvent) \
    X(clGetEventProfilingInfo) X(clFlush) X(clFinish) X(clCreateUserEvent) \
    X(clSetUserEventStatus) X(clSetEventCallback) X(clEnqueueMarker) X(clEnqueueWaitForEvents) \
    X(clEnqueueBarrier) X(clEnqueueMarkerWithWaitList) X(clEnqueueBarrierWithWaitList) \
    /* stub_mem.c */ \
    X(clCreateBuffer) X(clCreateBufferWithProperties) X(clCreateSubBuffer) X(clRetainMemObject) \
    X(clReleaseMemObject) X(clGetMemObjectInfo) X(clSetMemObjectDestructorCallback) \
    X(clCreatePipe) X(clGetPipeInfo) \
    /* stub_xfer.c */ \
    X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer) X(clEnqueueCopyBuffer) \
    X(clEnqueueReadBufferRect) X(clEnqueueWriteBufferRect) X(clEnqueueCopyBufferRect) \
    X(clEnqueueFillBuffer) X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject) \
    X(clEnqueueMigrateMemObjects) \
    /* stub_image.c */ \
    X(clGetSupportedImageFormats) X(clCreateImage) X(clCreateImageWithProperties) \
    X(clCreateImage2D) X(clCreateImage3D) X(clGetImageInfo) \
    /* stub_imgxfer.c */ \
    X(clEnqueueReadImage) X(clEnqueueWriteImage) X(clEnqueueCopyImage) X(clEnqueueFillImage) \
    X(clEnqueueCopyImageToBuffer) X(clEnqueueCopyBufferToImage) X(clEnqueueMapImage) \
    /* stub_svm.c */ \
    X(clSVMAlloc) X(clSVMFree) X(clEnqueueSVMFree) X(clEnqueueSVMMemcpy) X(clEnqueueSVMMemFill) \
    X(clEnqueueSVMMap) X(clEnqueueSVMUnmap) X(clEnqueueSVMMigrateMem) \
    /* stub_program.c */ \
    X(clCreateProgramWithSource) X(clCreateProgramWithBinary) \
    X(clCreateProgramWithBuiltInKernels) X(clCreateProgramWithIL) X(clRetainProgram) \
    X(clReleaseProgram) X(clBuildProgram) X(clCompileProgram) X(clLinkProgram) \
    X(clGetProgramInfo) X(clGetProgramBuildInfo) X(clSetProgramReleaseCallback) \
    X(clSetProgramSpecializationConstant) \
    /* stub_kernel.c */ \
    X(clCreateKernel) X(clCreateKernelsInProgram) X(clRetainKernel) X(clReleaseKernel) \
    X(clCloneKernel) X(clSetKernelArg) X(clSetKernelArgSVMPointer) X(clSetKernelExecInfo) \
    X(clGetKernelInfo) X(clGetKernelArgInfo) X(clGetKernelWorkGroupInfo) \
    X(clGetKernelSubGroupInfo) X(clGetKernelSubGroupInfoKHR) \
    X(clEnqueueNDRangeKernel) X(clEnqueueTask) X(clEnqueueNativeKernel) \
    /* stub_unsup.c: sharing extensions the stub does not advertise */ \
    X(clCreateFromGLBuffer) X(clCreateFromGLTexture) X(clCreateFromGLTexture2D) \
    X(clCreateFromGLTexture3D) X(clCreateFromGLRenderbuffer) X(clGetGLObjectInfo) \
    X(clGetGLTextureInfo) X(clEnqueueAcquireGLObjects) X(clEnqueueReleaseGLObjects) \
    X(clGetGLContextInfoKHR) X(clCreateEventFromGLsyncKHR) X(clCreateFromEGLImageKHR) \
    X(clEnqueueAcquireEGLObjectsKHR) X(clEnqueueReleaseEGLObjectsKHR) \
    X(clCreateEventFromEGLSyncKHR) X(clCreateSubDevicesEXT) X(clRetainDeviceEXT) \
    X(clReleaseDeviceEXT)

/* stub_<name>: the implementation behind dispatch slot <name>. */
#define STUB_DECLARE(name) extern __typeof__(*(cl_api_##name)0) stub_##name;
STUB_FUNCS(STUB_DECLARE)
#undef STUB_DECLARE

/* ------------------------------------------------------------ the device */
#define STUB_MAX_WG 1024u             /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
#define STUB_MAX_ALLOC (1ull << 30)   /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
#define STUB_BASE_ALIGN 128u          /* CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bytes */
#define STUB_IMAGE2D_MAX 16384u
#define STUB_IMAGE3D_MAX 2048u
#define STUB_IMAGE_ARRAY_MAX 2048u
#define STUB_IMAGE_BUFFER_MAX 65536u

/* ------------------------------------------------------------ objects
 * Every handle points at a struct that starts with stub_head, whose first
 * member is the dispatch table pointer the ICD loader follows. kind tells
 * the structs apart (a handle of the wrong kind is rejected with the
 * CL_INVALID_<object> error); refs counts the application's references and
 * the stub's own (a sub-buffer holds its parent, an object its context, an
 * incomplete event itself and its queue), and the object is freed at zero. */
enum stub_kind {
    STUB_PLATFORM = 0x53500001, STUB_DEVICE, STUB_CONTEXT, STUB_QUEUE, STUB_MEM,
    STUB_SAMPLER, STUB_PROGRAM, STUB_KERNEL, STUB_EVENT
};

struct stub_head {
    struct _cl_icd_dispatch *dispatch;
    uint32_t kind;
    cl_uint refs;
};

/* A callback run after the lock is released (stub_leave). */
enum stub_cb_kind { STUB_CB_EVENT, STUB_CB_MEM, STUB_CB_CONTEXT, STUB_CB_PROGRAM, STUB_CB_SVM_FREE };
struct stub_cb {
    struct stub_cb *next;
    enum stub_cb_kind kind;
    void (*fn)(void);          /* the application's function, cast back by kind */
    void *obj;                 /* the handle passed back; an event, a queue (SVM free) or a
                                * program (build notification) is held until the call */
    cl_int type;               /* STUB_CB_EVENT: the status the callback was registered for */
    cl_int status;             /* STUB_CB_EVENT: the status passed */
    void *user;
    void **ptrs;               /* STUB_CB_SVM_FREE: a copy of the pointer list (freed after the call) */
    cl_uint nptrs;
};

struct _cl_platform_id { struct stub_head h; };
struct _cl_device_id { struct stub_head h; };

struct _cl_context {
    struct stub_head h;
    cl_context_properties *props;    /* as given, with its terminating 0; NULL when none */
    size_t nprops;                   /* entries in props, 0 included */
    struct stub_cb *destructors;     /* LIFO */
};

struct _cl_command_queue {
    struct stub_head h;
    cl_context ctx;
    cl_command_queue_properties props;
    cl_queue_properties *props_array;  /* as given to ...WithProperties; NULL otherwise */
    size_t nprops_array;
    /* The incomplete event every new command waits for (in-order: the last
     * command; out-of-order: the last barrier); not a reference, cleared
     * when it completes. */
    cl_event last;
    cl_event pending;    /* incomplete events of this queue (ev->qnext list); each holds itself */
};

struct stub_map { struct stub_map *next; void *ptr; cl_uint count; };

struct _cl_mem {
    struct stub_head h;
    cl_context ctx;
    cl_mem_object_type type;
    cl_mem_flags flags;
    size_t size;
    unsigned char *data;      /* the contents (host memory) */
    int owns_data;            /* data was allocated here */
    void *host_ptr;           /* CL_MEM_HOST_PTR: the USE_HOST_PTR pointer */
    cl_mem parent;            /* sub-buffer: parent; image from buffer: the buffer (both held) */
    size_t offset;            /* sub-buffer origin */
    int uses_svm;
    cl_mem_properties *props; /* CL_MEM_PROPERTIES as given, with its 0; NULL when none */
    size_t nprops;
    cl_image_format fmt;      /* images */
    cl_image_desc desc;
    size_t elem, row_pitch, slice_pitch;
    struct stub_map *maps;    /* live mappings */
    cl_uint map_count;
    struct stub_cb *destructors;
};

struct _cl_sampler {
    struct stub_head h;
    cl_context ctx;
    cl_bool normalized;
    cl_addressing_mode addressing;
    cl_filter_mode filter;
    cl_sampler_properties *props;
    size_t nprops;
};

/* A kernel as parsed from the source (stub_parse.c). */
struct stub_argdecl {
    char *name, *type_name;
    cl_kernel_arg_address_qualifier addr;
    cl_kernel_arg_access_qualifier access;
    cl_kernel_arg_type_qualifier tq;
    size_t scalar_size;       /* known size of a private scalar or vector argument, else 0 */
    int is_sampler, is_image;
};
struct stub_kdecl {
    char *name;
    cl_uint nargs;
    struct stub_argdecl *args;
};

struct _cl_program {
    struct stub_head h;
    cl_context ctx;
    char *source;                  /* NUL-terminated */
    size_t source_len;             /* without the NUL */
    char *options;                 /* of the last build/compile/link; "" before */
    cl_build_status status;
    cl_program_binary_type bintype;
    struct stub_kdecl *kernels;    /* parsed from source */
    cl_uint nkernels;
    char *kernel_names;            /* "a;b;c" */
    cl_uint live_kernels;          /* kernels made from it and not released */
    int from_binary;
    struct stub_cb *release_cbs;
};

struct stub_arg {
    int set;
    size_t size;
    unsigned char *value;          /* size bytes; NULL for __local and NULL values */
};

struct _cl_kernel {
    struct stub_head h;
    cl_program prog;               /* held */
    const struct stub_kdecl *decl; /* points into prog->kernels */
    struct stub_arg *args;
};

struct _cl_event {
    struct stub_head h;
    cl_context ctx;                /* held */
    cl_command_queue q;            /* held; NULL for user events */
    cl_command_type type;
    cl_int status;
    cl_uint waiting;               /* incomplete events this one waits for */
    int profiled;                  /* its queue had CL_QUEUE_PROFILING_ENABLE at enqueue */
    int in_pending;                /* on q->pending (which holds a reference) */
    cl_event *dependents;          /* events waiting for this one (each held) */
    cl_uint ndependents, capdependents;
    cl_ulong t_queued, t_submit, t_start, t_end;
    struct stub_cb *callbacks;     /* registered and not yet due */
    cl_event qnext, qprev;         /* q->pending list while incomplete */
};

extern struct _cl_platform_id stub_platform;
extern struct _cl_device_id stub_device;
extern struct _cl_icd_dispatch stub_dispatch;

/* ------------------------------------------------------------ lock and log
 * One process-wide mutex serializes every entry point. STUB_ENTER() takes
 * it and appends the entry point's name to the log; every path out of the
 * function calls stub_leave(), which runs the callbacks that became due and
 * releases the lock. Implementations are named stub_<OpenCL name>, which is
 * how STUB_ENTER() knows the name to log. */
#define STUB_ENTER() stub_enter(__func__ + sizeof "stub_" - 1)
void stub_enter(const char *fn);
void stub_enter_quiet(void);           /* lock, no log line: calls the loader makes */
void stub_leave(void);
void stub_wait(void);                  /* wait (lock held) until an event changes state */
void stub_broadcast(void);
void stub_log_loader(const char *what); /* a loader call, logged only with CLRR_STUB_LOG_LOADER=1 */
void stub_defer(struct stub_cb *cb);   /* run cb at stub_leave (takes ownership) */
cl_ulong stub_now(cl_ulong advance);   /* the fake nanosecond clock, advanced by advance */

/* ------------------------------------------------------------ helpers */
int stub_valid(const void *obj, uint32_t kind);
void *stub_obj_new(size_t size, uint32_t kind);  /* zeroed, refs = 1; NULL when out of memory */
void stub_set_err(cl_int *errcode_ret, cl_int err);
/* Copies size bytes of src to the (value, value_size, size_ret) output
 * triple of a clGet*Info call. */
cl_int stub_info(const void *src, size_t size, size_t value_size, void *value, size_t *size_ret);
#define STUB_INFO_VAL(type, v) do { type v_ = (v); \
    return stub_info(&v_, sizeof v_, value_size, value, size_ret); } while (0)
#define STUB_INFO_STR(s) do { const char *s_ = (s); \
    return stub_info(s_, strlen(s_) + 1, value_size, value, size_ret); } while (0)
char *stub_strdup(const char *s);
void *stub_memdup(const void *p, size_t n);
/* Copies a 0-terminated list of 64-bit property pairs (any cl_*_properties);
 * *n gets its entries, 0 included. Returns the copy; NULL with *n = 0 for
 * NULL in; NULL with *oom set when out of memory. */
void *stub_props_dup(const void *in, size_t *n, int *oom);

/* objects (their own files) */
void stub_context_retain(cl_context c);
void stub_context_release(cl_context c);
void stub_queue_release(cl_command_queue q);
void stub_mem_release(cl_mem m);
void stub_program_release(cl_program p);
int stub_program_executable(cl_program p);   /* built, and an executable */

/* events and commands (stub_event.c) */
void stub_event_retain(cl_event e);
void stub_event_release(cl_event e);
/* Checks a wait list (CL_INVALID_EVENT_WAIT_LIST, CL_INVALID_CONTEXT). */
cl_int stub_check_wait_list(cl_context ctx, cl_uint n, const cl_event *list);
/* Starts a command on q: a new event that completes at once unless it must
 * wait (for the wait list, q->last, and for a marker or barrier with an
 * empty list, every incomplete command of q). The command's work is done
 * by the caller at once either way. Returns NULL when out of memory. */
enum { STUB_CMD_PLAIN = 0, STUB_CMD_MARKER = 1, STUB_CMD_BARRIER = 2 };
cl_event stub_cmd_begin(cl_command_queue q, cl_command_type type, int how,
                        cl_uint nwait, const cl_event *wait);
/* Ends it: hands the event to *event_ret (when not NULL) or drops it; when
 * blocking, waits for it. Returns CL_SUCCESS, or
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST for a blocking command whose
 * wait list failed. */
cl_int stub_cmd_end(cl_event ev, cl_event *event_ret, int blocking);
/* A whole command whose work the caller has done: begin, then end. */
cl_int stub_cmd(cl_command_queue q, cl_command_type type, cl_uint nwait, const cl_event *wait, cl_event *event,
                int blocking);
/* Validates queue, wait list and the context of a memory object; checks
 * the usual preconditions of an enqueue call. */
cl_int stub_check_enqueue(cl_command_queue q, cl_uint nwait, const cl_event *wait);

/* memory (stub_mem.c, stub_image.c) */
cl_int stub_check_mem(cl_command_queue q, cl_mem m);   /* CL_INVALID_MEM_OBJECT / CONTEXT */
cl_mem stub_mem_new(cl_context ctx, cl_mem_object_type type, cl_mem_flags flags, size_t size,
                    void *host_ptr, const cl_mem_properties *props, cl_int *err);
size_t stub_image_elem_size(const cl_image_format *fmt);  /* 0: not a supported format */
int stub_map_add(cl_mem m, void *ptr);    /* -1: out of memory */
int stub_map_remove(cl_mem m, void *ptr); /* -1: ptr is not mapped */
/* Checks flags for a host access to m: CL_INVALID_OPERATION when its
 * CL_MEM_HOST_* flags forbid reading (read) or writing (write). */
cl_int stub_check_host_access(cl_mem m, int read, int write);
void *stub_svm_find(const void *ptr, size_t *size_ret);   /* base of the SVM allocation holding ptr */
/* Copies a box between two 3-D byte layouts; x in bytes. */
void stub_copy_box(unsigned char *dst, const size_t dst_origin[3], size_t dst_row, size_t dst_slice,
                   const unsigned char *src, const size_t src_origin[3], size_t src_row,
                   size_t src_slice, const size_t region[3]);
/* Whether a box fits in size bytes of a layout. */
int stub_box_fits(const size_t origin[3], const size_t region[3], size_t row, size_t slice,
                  size_t size);

/* programs (stub_parse.c) */
/* Parses the kernels of an OpenCL C source, roughly: every
 * `__kernel void NAME(params)` (also `kernel`, with attributes anywhere).
 * Returns 0, or -1 when out of memory. */
int stub_parse_kernels(const char *src, struct stub_kdecl **out, cl_uint *n);
void stub_free_kernels(struct stub_kdecl *k, cl_uint n);

#endif

/* layer_init.c — the recorder as an ICD loader layer whose loader passes a
 * dispatch table shorter than the OpenCL headers' (Ubuntu 24.04's ocl-icd
 * 2.3.2 does): loads LAYER with dlopen, calls its clInitLayer with the
 * first N entries of a table (exactly N pointers allocated: a read past
 * them is a heap overflow under ASan) whose entries are the ICD loader's
 * own exports, then calls clGetPlatformIDs through the layer's table.
 * Prints "entries N platforms P". For tests/e2e/record_layer.sh.
 * Usage: layer_init LAYER N */
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: layer_init LAYER N\n");
        return 2;
    }
    unsigned n = (unsigned)strtoul(argv[2], NULL, 10);
    void *layer = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!layer) {
        fprintf(stderr, "layer_init: %s\n", dlerror());
        return 2;
    }
    pfn_clInitLayer init;
    void *sym = dlsym(layer, "clInitLayer");
    memcpy(&init, &sym, sizeof init);
    /* the first entries of the table, in its order */
    static const char *const names[] = {"clGetPlatformIDs", "clGetPlatformInfo", "clGetDeviceIDs", "clGetDeviceInfo",
                                        "clCreateContext", "clCreateContextFromType", "clRetainContext",
                                        "clReleaseContext", "clGetContextInfo", "clCreateCommandQueue"};
    if (!init || n < 1 || n > sizeof names / sizeof names[0]) {
        fprintf(stderr, "layer_init: no clInitLayer, or N not 1..10\n");
        return 2;
    }
    void *icd = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
    void **table = malloc(n * sizeof *table);
    for (unsigned i = 0; icd && table && i < n; i++)
        if (!(table[i] = dlsym(icd, names[i]))) {
            fprintf(stderr, "layer_init: the ICD loader has no %s\n", names[i]);
            return 2;
        }
    if (!icd || !table) {
        fprintf(stderr, "layer_init: cannot load libOpenCL.so.1\n");
        return 2;
    }
    const struct _cl_icd_dispatch *ours = NULL;
    cl_uint out = 0;
    cl_int e = init(n, (const struct _cl_icd_dispatch *)(void *)table, &out, &ours);
    if (e != CL_SUCCESS || !ours) {
        fprintf(stderr, "layer_init: clInitLayer(%u entries) failed: %d\n", n, e);
        return 1;
    }
    cl_uint np = 0;
    e = ours->clGetPlatformIDs(0, NULL, &np);
    printf("entries %u platforms %u\n", out, e == CL_SUCCESS ? np : 0);
    free(table);
    return e == CL_SUCCESS && np > 0 ? 0 : 1;
}

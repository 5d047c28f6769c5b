/* The translation unit clrr-gen parses: every OpenCL header whose
 * functions the recorder wraps or whose enumerants `clrr dump` names. */
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_gl.h>
#include <CL/cl_icd.h>

/* names.h — OpenCL names for printing, implemented by generated code
 * (build/gen/cl_names.c, produced by tools/gen from the installed OpenCL
 * headers and recorder/api.overlay). */
#ifndef CLRR_CLI_NAMES_H
#define CLRR_CLI_NAMES_H

#include <stddef.h>
#include <stdint.h>

/*! cli_error_name() : "CL_INVALID_VALUE" for -30, "CL_SUCCESS" for 0;
 *  NULL for a code that has no name. Static strings. */
const char *cli_error_name(int64_t code);

/*! cli_enum_name() : name of @p value for parameter @p param of function
 *  @p fn when that parameter holds an enumerant (e.g. clGetDeviceInfo's
 *  param_name 0x102B -> "CL_DEVICE_NAME"); NULL when the parameter is not
 *  an enumeration or the value has no name. Static strings. */
const char *cli_enum_name(const char *fn, const char *param, uint64_t value);

/*! cli_bitfield_names() : writes "CL_MEM_READ_WRITE|CL_MEM_COPY_HOST_PTR"
 *  into @p dst (capacity @p cap) for a bitfield parameter; returns 0 when
 *  the parameter is not a bitfield (dst untouched), 1 otherwise. */
int cli_bitfield_names(const char *fn, const char *param, uint64_t value,
                       char *dst, size_t cap);

#endif /* CLRR_CLI_NAMES_H */

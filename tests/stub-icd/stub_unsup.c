/* stub_unsup.c — slots of extensions the stub does not advertise (GL and
 * EGL sharing, device fission EXT). They log like every entry point and
 * answer with the error a driver without the extension gives; the
 * parameters are unused. */
#include "tests/stub-icd/stub_int.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

/* An entry point returning cl_int. */
#define STUB_UNSUP(err) do { STUB_ENTER(); stub_leave(); return (err); } while (0)
/* An entry point returning an object and an error code. */
#define STUB_UNSUP_OBJ(errp, err) do { STUB_ENTER(); stub_set_err((errp), (err)); stub_leave(); \
    return NULL; } while (0)

cl_mem CL_API_CALL stub_clCreateFromGLBuffer(cl_context context, cl_mem_flags flags, cl_GLuint bufobj,
                                             int *errcode_ret)
{
    STUB_UNSUP_OBJ(errcode_ret, CL_INVALID_CONTEXT);
}

cl_mem CL_API_CALL stub_clCreateFromGLTexture(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                              cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret)
{
    STUB_UNSUP_OBJ(errcode_ret, CL_INVALID_CONTEXT);
}

cl_mem CL_API_CALL stub_clCreateFromGLTexture2D(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                                cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret)
{
    STUB_UNSUP_OBJ(errcode_ret, CL_INVALID_CONTEXT);
}

cl_mem CL_API_CALL stub_clCreateFromGLTexture3D(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                                cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret)
{
    STUB_UNSUP_OBJ(errcode_ret, CL_INVALID_CONTEXT);
}

cl_mem CL_API_CALL stub_clCreateFromGLRenderbuffer(cl_context context, cl_mem_flags flags, cl_GLuint renderbuffer,
                                                   cl_int *errcode_ret)
{
    STUB_UNSUP_OBJ(errcode_ret, CL_INVALID_CONTEXT);
}

cl_int CL_API_CALL stub_clGetGLObjectInfo(cl_mem memobj, cl_gl_object_type *gl_object_type,
                                          cl_GLuint *gl_object_name)
{
    STUB_UNSUP(CL_INVALID_GL_OBJECT);
}

cl_int CL_API_CALL stub_clGetGLTextureInfo(cl_mem memobj, cl_gl_texture_info param_name, size_t param_value_size,
                                           void *param_value, size_t *param_value_size_ret)
{
    STUB_UNSUP(CL_INVALID_GL_OBJECT);
}

cl_int CL_API_CALL stub_clEnqueueAcquireGLObjects(cl_command_queue command_queue, cl_uint num_objects,
                                                  const cl_mem *mem_objects, cl_uint num_events_in_wait_list,
                                                  const cl_event *event_wait_list, cl_event *event)
{
    STUB_UNSUP(CL_INVALID_CONTEXT);
}

cl_int CL_API_CALL stub_clEnqueueReleaseGLObjects(cl_command_queue command_queue, cl_uint num_objects,
                                                  const cl_mem *mem_objects, cl_uint num_events_in_wait_list,
                                                  const cl_event *event_wait_list, cl_event *event)
{
    STUB_UNSUP(CL_INVALID_CONTEXT);
}

cl_int CL_API_CALL stub_clGetGLContextInfoKHR(const cl_context_properties *properties, cl_gl_context_info param_name,
                                              size_t param_value_size, void *param_value,
                                              size_t *param_value_size_ret)
{
    STUB_UNSUP(CL_INVALID_OPERATION);
}

cl_event CL_API_CALL stub_clCreateEventFromGLsyncKHR(cl_context context, cl_GLsync sync, cl_int *errcode_ret)
{
    STUB_UNSUP_OBJ(errcode_ret, CL_INVALID_CONTEXT);
}

cl_mem CL_API_CALL stub_clCreateFromEGLImageKHR(cl_context context, CLeglDisplayKHR display, CLeglImageKHR image,
                                                cl_mem_flags flags, const cl_egl_image_properties_khr *properties,
                                                cl_int *errcode_ret)
{
    STUB_UNSUP_OBJ(errcode_ret, CL_INVALID_CONTEXT);
}

cl_int CL_API_CALL stub_clEnqueueAcquireEGLObjectsKHR(cl_command_queue command_queue, cl_uint num_objects,
                                                      const cl_mem *mem_objects, cl_uint num_events_in_wait_list,
                                                      const cl_event *event_wait_list, cl_event *event)
{
    STUB_UNSUP(CL_INVALID_CONTEXT);
}

cl_int CL_API_CALL stub_clEnqueueReleaseEGLObjectsKHR(cl_command_queue command_queue, cl_uint num_objects,
                                                      const cl_mem *mem_objects, cl_uint num_events_in_wait_list,
                                                      const cl_event *event_wait_list, cl_event *event)
{
    STUB_UNSUP(CL_INVALID_CONTEXT);
}

cl_event CL_API_CALL stub_clCreateEventFromEGLSyncKHR(cl_context context, CLeglSyncKHR sync,
                                                      CLeglDisplayKHR display, cl_int *errcode_ret)
{
    STUB_UNSUP_OBJ(errcode_ret, CL_INVALID_CONTEXT);
}

cl_int CL_API_CALL stub_clCreateSubDevicesEXT(cl_device_id in_device,
                                              const cl_device_partition_property_ext *partition_properties,
                                              cl_uint num_entries, cl_device_id *out_devices, cl_uint *num_devices)
{
    STUB_UNSUP(CL_INVALID_OPERATION);
}

cl_int CL_API_CALL stub_clRetainDeviceEXT(cl_device_id device)
{
    STUB_UNSUP(device == &stub_device ? CL_SUCCESS : CL_INVALID_DEVICE);
}

cl_int CL_API_CALL stub_clReleaseDeviceEXT(cl_device_id device)
{
    STUB_UNSUP(device == &stub_device ? CL_SUCCESS : CL_INVALID_DEVICE);
}

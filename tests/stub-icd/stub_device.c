/* stub_device.c — the stub's one device: discovery, its properties (a
 * plausible OpenCL 3.0 CPU with images, profiling, out-of-order queues and
 * coarse-grained SVM), sub-devices (none) and timers. */
#include "tests/stub-icd/stub_int.h"

#include <string.h>

#define STUB_DEV_EXTENSIONS \
    "cl_khr_byte_addressable_store cl_khr_global_int32_base_atomics cl_khr_local_int32_base_atomics"

static cl_int stub_device_info(cl_device_info p, size_t value_size, void *value, size_t *size_ret)
{
    switch (p) {
    case CL_DEVICE_TYPE:
        STUB_INFO_VAL(cl_device_type, CL_DEVICE_TYPE_CPU);
    case CL_DEVICE_VENDOR_ID:
        STUB_INFO_VAL(cl_uint, 0x10000);
    case CL_DEVICE_MAX_COMPUTE_UNITS:
        STUB_INFO_VAL(cl_uint, 4);
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
        STUB_INFO_VAL(cl_uint, 3);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE:
        STUB_INFO_VAL(size_t, STUB_MAX_WG);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES: {
        size_t s[3] = { STUB_MAX_WG, STUB_MAX_WG, STUB_MAX_WG };
        return stub_info(s, sizeof s, value_size, value, size_ret);
    }
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR: case CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR:
        STUB_INFO_VAL(cl_uint, 16);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT: case CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT:
        STUB_INFO_VAL(cl_uint, 8);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT: case CL_DEVICE_NATIVE_VECTOR_WIDTH_INT:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT: case CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT:
        STUB_INFO_VAL(cl_uint, 4);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG: case CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG:
        STUB_INFO_VAL(cl_uint, 2);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE: case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF: case CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF:
        STUB_INFO_VAL(cl_uint, 0);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY:
        STUB_INFO_VAL(cl_uint, 1000);
    case CL_DEVICE_ADDRESS_BITS:
        STUB_INFO_VAL(cl_uint, 64);
    case CL_DEVICE_MAX_READ_IMAGE_ARGS: case CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS:
        STUB_INFO_VAL(cl_uint, 128);
    case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
        STUB_INFO_VAL(cl_uint, 64);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
        STUB_INFO_VAL(cl_ulong, STUB_MAX_ALLOC);
    case CL_DEVICE_IMAGE2D_MAX_WIDTH: case CL_DEVICE_IMAGE2D_MAX_HEIGHT:
        STUB_INFO_VAL(size_t, STUB_IMAGE2D_MAX);
    case CL_DEVICE_IMAGE3D_MAX_WIDTH: case CL_DEVICE_IMAGE3D_MAX_HEIGHT:
    case CL_DEVICE_IMAGE3D_MAX_DEPTH:
        STUB_INFO_VAL(size_t, STUB_IMAGE3D_MAX);
    case CL_DEVICE_IMAGE_MAX_BUFFER_SIZE:
        STUB_INFO_VAL(size_t, STUB_IMAGE_BUFFER_MAX);
    case CL_DEVICE_IMAGE_MAX_ARRAY_SIZE:
        STUB_INFO_VAL(size_t, STUB_IMAGE_ARRAY_MAX);
    case CL_DEVICE_IMAGE_SUPPORT:
        STUB_INFO_VAL(cl_bool, CL_TRUE);
    case CL_DEVICE_IMAGE_PITCH_ALIGNMENT: case CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT:
        STUB_INFO_VAL(cl_uint, 1);
    case CL_DEVICE_MAX_PARAMETER_SIZE:
        STUB_INFO_VAL(size_t, 1024);
    case CL_DEVICE_MAX_SAMPLERS:
        STUB_INFO_VAL(cl_uint, 16);
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN:
        STUB_INFO_VAL(cl_uint, STUB_BASE_ALIGN * 8);
    case CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE:
        STUB_INFO_VAL(cl_uint, 128);
    case CL_DEVICE_SINGLE_FP_CONFIG:
        STUB_INFO_VAL(cl_device_fp_config, CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
                      CL_FP_FMA | CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT);
    case CL_DEVICE_DOUBLE_FP_CONFIG:
        STUB_INFO_VAL(cl_device_fp_config, 0);
    case CL_DEVICE_GLOBAL_MEM_CACHE_TYPE:
        STUB_INFO_VAL(cl_device_mem_cache_type, CL_READ_WRITE_CACHE);
    case CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE:
        STUB_INFO_VAL(cl_uint, 64);
    case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE:
        STUB_INFO_VAL(cl_ulong, 1u << 20);
    case CL_DEVICE_GLOBAL_MEM_SIZE:
        STUB_INFO_VAL(cl_ulong, 4ull << 30);
    case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE:
        STUB_INFO_VAL(cl_ulong, 64u << 10);
    case CL_DEVICE_MAX_CONSTANT_ARGS:
        STUB_INFO_VAL(cl_uint, 8);
    case CL_DEVICE_LOCAL_MEM_TYPE:
        STUB_INFO_VAL(cl_device_local_mem_type, CL_GLOBAL);
    case CL_DEVICE_LOCAL_MEM_SIZE:
        STUB_INFO_VAL(cl_ulong, 64u << 10);
    case CL_DEVICE_ERROR_CORRECTION_SUPPORT: case CL_DEVICE_PREFERRED_INTEROP_USER_SYNC:
    case CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
    case CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT:
    case CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT: case CL_DEVICE_PIPE_SUPPORT:
        STUB_INFO_VAL(cl_bool, CL_FALSE);
    case CL_DEVICE_ENDIAN_LITTLE: case CL_DEVICE_AVAILABLE: case CL_DEVICE_COMPILER_AVAILABLE:
    case CL_DEVICE_LINKER_AVAILABLE: case CL_DEVICE_HOST_UNIFIED_MEMORY:
    case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
        STUB_INFO_VAL(cl_bool, CL_TRUE);
    case CL_DEVICE_PROFILING_TIMER_RESOLUTION:
        STUB_INFO_VAL(size_t, 1);
    case CL_DEVICE_EXECUTION_CAPABILITIES:
        STUB_INFO_VAL(cl_device_exec_capabilities, CL_EXEC_KERNEL);
    case CL_DEVICE_QUEUE_ON_HOST_PROPERTIES:
        STUB_INFO_VAL(cl_command_queue_properties,
                      CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE);
    case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES:
        STUB_INFO_VAL(cl_command_queue_properties, 0);
    case CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE: case CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE:
    case CL_DEVICE_MAX_ON_DEVICE_QUEUES: case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
    case CL_DEVICE_MAX_PIPE_ARGS: case CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS:
    case CL_DEVICE_PIPE_MAX_PACKET_SIZE: case CL_DEVICE_MAX_NUM_SUB_GROUPS:
    case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
    case CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT:
    case CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT:
    case CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT:
        STUB_INFO_VAL(cl_uint, 0);
    case CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE: case CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE:
        STUB_INFO_VAL(size_t, 0);
    case CL_DEVICE_NAME:
        STUB_INFO_STR("clrr stub device");
    case CL_DEVICE_VENDOR:
        STUB_INFO_STR("clrr");
    case CL_DRIVER_VERSION:
        STUB_INFO_STR("1.0");
    case CL_DEVICE_PROFILE:
        STUB_INFO_STR("FULL_PROFILE");
    case CL_DEVICE_VERSION:
        STUB_INFO_STR("OpenCL 3.0 clrr-stub");
    case CL_DEVICE_OPENCL_C_VERSION:
        STUB_INFO_STR("OpenCL C 1.2 ");
    case CL_DEVICE_EXTENSIONS:
        STUB_INFO_STR(STUB_DEV_EXTENSIONS);
    case CL_DEVICE_BUILT_IN_KERNELS: case CL_DEVICE_IL_VERSION:
    case CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED:
        STUB_INFO_STR("");
    case CL_DEVICE_PLATFORM:
        STUB_INFO_VAL(cl_platform_id, &stub_platform);
    case CL_DEVICE_PARENT_DEVICE:
        STUB_INFO_VAL(cl_device_id, NULL);
    case CL_DEVICE_PARTITION_PROPERTIES: case CL_DEVICE_PARTITION_TYPE:
        STUB_INFO_VAL(cl_device_partition_property, 0);
    case CL_DEVICE_PARTITION_AFFINITY_DOMAIN:
        STUB_INFO_VAL(cl_device_affinity_domain, 0);
    case CL_DEVICE_REFERENCE_COUNT:
        STUB_INFO_VAL(cl_uint, 1);
    case CL_DEVICE_PRINTF_BUFFER_SIZE:
        STUB_INFO_VAL(size_t, 1u << 20);
    case CL_DEVICE_SVM_CAPABILITIES:
        STUB_INFO_VAL(cl_device_svm_capabilities, CL_DEVICE_SVM_COARSE_GRAIN_BUFFER);
    case CL_DEVICE_NUMERIC_VERSION:
        STUB_INFO_VAL(cl_version, CL_MAKE_VERSION(3, 0, 0));
    case CL_DEVICE_EXTENSIONS_WITH_VERSION: {
        static const cl_name_version v[] = {
            { CL_MAKE_VERSION(1, 0, 0), "cl_khr_byte_addressable_store" },
            { CL_MAKE_VERSION(1, 0, 0), "cl_khr_global_int32_base_atomics" },
            { CL_MAKE_VERSION(1, 0, 0), "cl_khr_local_int32_base_atomics" },
        };
        return stub_info(v, sizeof v, value_size, value, size_ret);
    }
    case CL_DEVICE_ILS_WITH_VERSION: case CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION:
    case CL_DEVICE_OPENCL_C_FEATURES:
        return stub_info(NULL, 0, value_size, value, size_ret);
    case CL_DEVICE_OPENCL_C_ALL_VERSIONS: {
        static const cl_name_version v[] = {
            { CL_MAKE_VERSION(1, 0, 0), "OpenCL C" },
            { CL_MAKE_VERSION(1, 1, 0), "OpenCL C" },
            { CL_MAKE_VERSION(1, 2, 0), "OpenCL C" },
        };
        return stub_info(v, sizeof v, value_size, value, size_ret);
    }
    case CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES: case CL_DEVICE_ATOMIC_FENCE_CAPABILITIES:
        STUB_INFO_VAL(cl_device_atomic_capabilities,
                      CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP);
    case CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
        STUB_INFO_VAL(size_t, 8);
    case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES:
        STUB_INFO_VAL(cl_device_device_enqueue_capabilities, 0);
    default:
        return CL_INVALID_VALUE;
    }
}

cl_int CL_API_CALL stub_clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
                                       cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    const cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU |
                                 CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM;
    if (platform && platform != &stub_platform) {
        err = CL_INVALID_PLATFORM;
    } else if (device_type != CL_DEVICE_TYPE_ALL && (device_type & ~known)) {
        err = CL_INVALID_DEVICE_TYPE;
    } else if ((num_entries == 0 && devices) || (!devices && !num_devices)) {
        err = CL_INVALID_VALUE;
    } else if (!(device_type & (CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU))) {
        if (num_devices)
            *num_devices = 0;
        err = CL_DEVICE_NOT_FOUND;
    } else {
        if (devices)
            devices[0] = &stub_device;
        if (num_devices)
            *num_devices = 1;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
                                        size_t value_size, void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = device == &stub_device ? stub_device_info(param_name, value_size, value, size_ret)
                                        : CL_INVALID_DEVICE;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clCreateSubDevices(cl_device_id in_device,
                                           const cl_device_partition_property *properties,
                                           cl_uint num_devices, cl_device_id *out_devices,
                                           cl_uint *num_devices_ret)
{
    (void)properties;
    (void)num_devices;
    (void)out_devices;
    (void)num_devices_ret;
    STUB_ENTER();
    /* CL_DEVICE_PARTITION_PROPERTIES is empty: no partition type is supported */
    cl_int err = in_device == &stub_device ? CL_INVALID_VALUE : CL_INVALID_DEVICE;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clRetainDevice(cl_device_id device)
{
    STUB_ENTER();
    cl_int err = device == &stub_device ? CL_SUCCESS : CL_INVALID_DEVICE;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clReleaseDevice(cl_device_id device)
{
    STUB_ENTER();
    cl_int err = device == &stub_device ? CL_SUCCESS : CL_INVALID_DEVICE;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetDeviceAndHostTimer(cl_device_id device, cl_ulong *device_timestamp,
                                                cl_ulong *host_timestamp)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    if (device != &stub_device)
        err = CL_INVALID_DEVICE;
    else if (!device_timestamp || !host_timestamp)
        err = CL_INVALID_VALUE;
    else
        *device_timestamp = *host_timestamp = stub_now(1);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetHostTimer(cl_device_id device, cl_ulong *host_timestamp)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    if (device != &stub_device)
        err = CL_INVALID_DEVICE;
    else if (!host_timestamp)
        err = CL_INVALID_VALUE;
    else
        *host_timestamp = stub_now(1);
    stub_leave();
    return err;
}

/* cmd_devices.c — `clrr devices`: the OpenCL devices present here, as replay
 * targets, numbered flat across platforms in loader order. That number is
 * what `clrr replay --device N` accepts. */
#include "tools/clrr/cli.h"

#include <jansson.h>

#include <CL/cl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/clrr/names.h"

static const char cli_devices_usage[] =
    "Usage: clrr devices [--json]\n"
    "List the OpenCL platforms and devices present on this machine, numbered\n"
    "flat across platforms in the loader's order; 'clrr replay --device N'\n"
    "takes that number.\n"
    "\n"
    "Options:\n"
    "  --json         one JSON object: {\"devices\":[{\"index\":0,...},...]}\n"
    "  -h, --help     show this help\n"
    "\n"
    "Exit status: 0 ok, 2 usage error, 3 no OpenCL platform or device found (one\n"
    "line on stderr).\n";

typedef struct cli_dev {
    char name[256], vendor[256], version[256], driver[256], platform[256], platform_version[256];
    cl_device_type type;
    cl_uint compute_units;
    cl_ulong global_mem;
    size_t max_wg;
} cli_dev;

static void cli_dev_str(cl_device_id d, cl_device_info what, char *dst, size_t cap)
{
    size_t n = 0;
    dst[0] = 0;
    if (clGetDeviceInfo(d, what, cap - 1, dst, &n) != CL_SUCCESS)
        dst[0] = 0;
    dst[cap - 1] = 0;
}

static void cli_plat_str(cl_platform_id p, cl_platform_info what, char *dst, size_t cap)
{
    dst[0] = 0;
    if (clGetPlatformInfo(p, what, cap - 1, dst, NULL) != CL_SUCCESS)
        dst[0] = 0;
    dst[cap - 1] = 0;
}

static void cli_dev_fill(cli_dev *out, cl_platform_id p, cl_device_id d)
{
    memset(out, 0, sizeof *out);
    cli_plat_str(p, CL_PLATFORM_NAME, out->platform, sizeof out->platform);
    cli_plat_str(p, CL_PLATFORM_VERSION, out->platform_version, sizeof out->platform_version);
    cli_dev_str(d, CL_DEVICE_NAME, out->name, sizeof out->name);
    cli_dev_str(d, CL_DEVICE_VENDOR, out->vendor, sizeof out->vendor);
    cli_dev_str(d, CL_DEVICE_VERSION, out->version, sizeof out->version);
    cli_dev_str(d, CL_DRIVER_VERSION, out->driver, sizeof out->driver);
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof out->type, &out->type, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof out->compute_units,
                    &out->compute_units, NULL);
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof out->global_mem, &out->global_mem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof out->max_wg, &out->max_wg, NULL);
}

/* One device of `--json` (docs/schemas/devices.json), appended to @p arr. */
static void cli_dev_json(json_t *arr, const cli_dev *d, unsigned index)
{
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(index));
    json_object_set_new(o, "type", json_string(cli_device_type_name(d->type)));
    json_object_set_new(o, "name", cli_json_ctext(d->name));
    json_object_set_new(o, "vendor", cli_json_ctext(d->vendor));
    json_object_set_new(o, "platform", cli_json_ctext(d->platform));
    json_object_set_new(o, "platform_version", cli_json_ctext(d->platform_version));
    json_object_set_new(o, "version", cli_json_ctext(d->version));
    json_object_set_new(o, "driver_version", cli_json_ctext(d->driver));
    json_object_set_new(o, "compute_units", json_integer(d->compute_units));
    json_object_set_new(o, "global_mem", cli_json_u64(d->global_mem));
    json_object_set_new(o, "max_wg_size", cli_json_u64(d->max_wg));
    json_array_append_new(arr, o);
}

static void cli_dev_print(const cli_dev *d, unsigned index, json_t *arr)
{
    char sz[CLI_FMT_CAP];
    if (arr) {
        cli_dev_json(arr, d, index);
        return;
    }
    printf("%-3u %-4s %s\n", index, cli_device_type_name(d->type), d->name);
    printf("         vendor %s, platform %s (%s)\n", d->vendor, d->platform, d->platform_version);
    printf("         %s, driver %s\n", d->version, d->driver);
    printf("         %u compute units, %s global memory, max work-group size %zu\n",
           (unsigned)d->compute_units, cli_fmt_size(d->global_mem, sz), d->max_wg);
}

static int cli_devices_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int json = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'h': fputs(cli_devices_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    if (optind < argc)
        return cli_usage_err("unexpected argument '%s'", argv[optind]);

    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err != CL_SUCCESS || np == 0) {
        const char *name = cli_error_name(err);
        if (err == CL_SUCCESS || err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */)
            cli_err("no OpenCL platform found (check /etc/OpenCL/vendors or OCL_ICD_VENDORS)");
        else
            cli_err("clGetPlatformIDs failed: %s (%d)", name ? name : "unknown error", (int)err);
        return CLI_EXIT_ERROR;
    }
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats || clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS) {
        free(plats);
        cli_err("clGetPlatformIDs failed");
        return CLI_EXIT_ERROR;
    }
    unsigned index = 0;
    json_t *arr = json ? json_array() : NULL;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || !nd)
            continue;
        cl_device_id *devs = calloc(nd, sizeof *devs);
        if (!devs || clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL) != CL_SUCCESS) {
            free(devs);
            continue;
        }
        for (cl_uint d = 0; d < nd; d++) {
            cli_dev dev;
            cli_dev_fill(&dev, plats[p], devs[d]);
            cli_dev_print(&dev, index++, arr);
        }
        free(devs);
    }
    free(plats);
    if (json) {
        json_t *root = json_object();
        json_object_set_new(root, "schema", json_string("clrr-devices/1"));
        json_object_set_new(root, "devices", arr);
        cli_json_put(stdout, root);
        putchar('\n');
    }
    if (!index) {
        cli_err("no OpenCL device found");
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_devices = {
    "devices", "list the OpenCL devices here (the numbers replay --device takes)",
    cli_devices_usage, cli_devices_run, NULL,
};

/* cli_here.c — answers about this machine's OpenCL devices, kept between
 * runs: asking costs a start of every OpenCL driver (PoCL here: 30-100 ms
 * of wall time; NVIDIA's more) before the application starts, and `clrr
 * run` asks before every run (does a plan's tuned device exist here? does
 * --device name one?).
 *
 * An answer is kept for CLI_HERE_S seconds in
 * $XDG_CACHE_HOME/clrr/run-here/HASH (beside the kernel cache; not when
 * CLRR_KERNEL_CACHE puts that elsewhere), HASH one of the question's key
 * and of what decides which devices an application sees: the ICD
 * loader's and the drivers' variables and the ICD files of
 * /etc/OpenCL/vendors with their times and sizes. The callers keep only
 * answers that are safe when stale (cmd_run.c, cmd_record.c say why). */
#include "tools/clrr/cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "costs/cdb.h"

#define CLI_HERE_S (24 * 3600)

static void cli_fnv(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *q = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= q[i];
        *h *= 1099511628211ull;
    }
    *h ^= 0xff;   /* a field's end */
    *h *= 1099511628211ull;
}

/* The file that keeps the answer to @p key. @return 0, or -1 (none kept). */
static int cli_here_path(const char *key, char *path, size_t cap)
{
    static const char *vars[] = {"OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH", "POCL_DEVICES",
                                 "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CLRR_DEVICE", "CLRR_APP_DEVICE", NULL};
    char dir[PATH_MAX];
    if (!cdb_kc_dir(dir, sizeof dir))
        return -1;
    char *slash = strrchr(dir, '/');   /* .../clrr/kernels -> .../clrr/run-here */
    if (!slash || getenv("CLRR_KERNEL_CACHE"))
        return -1;
    *slash = 0;
    uint64_t h = 1469598103934665603ull;
    cli_fnv(&h, key, strlen(key));
    for (unsigned i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        cli_fnv(&h, v ? v : "-", strlen(v ? v : "-"));
    }
    DIR *d = opendir("/etc/OpenCL/vendors");
    struct dirent *e;
    uint64_t sum = 0;
    while (d && (e = readdir(d)) != NULL) {   /* order-free: a sum of per-file hashes */
        struct stat st;
        char f[PATH_MAX];
        snprintf(f, sizeof f, "/etc/OpenCL/vendors/%s", e->d_name);
        if (e->d_name[0] == '.' || stat(f, &st))
            continue;
        uint64_t fh = 1469598103934665603ull;
        cli_fnv(&fh, e->d_name, strlen(e->d_name));
        cli_fnv(&fh, &st.st_mtim, sizeof st.st_mtim);
        cli_fnv(&fh, &st.st_size, sizeof st.st_size);
        sum += fh;
    }
    if (d)
        closedir(d);
    cli_fnv(&h, &sum, sizeof sum);
    int n = snprintf(path, cap, "%s/run-here/%016llx", dir, (unsigned long long)h);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int cli_here_get(const char *key, char *val, size_t cap)
{
    char path[PATH_MAX];
    struct stat st;
    if (!cap || cli_here_path(key, path, sizeof path) || stat(path, &st) || time(NULL) - st.st_mtime > CLI_HERE_S)
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(val, 1, cap - 1, f);
    int whole = n < cap - 1 || fgetc(f) == EOF;
    fclose(f);
    val[n] = 0;
    char *nl = strchr(val, '\n');
    if (!whole || !nl || nl[1])
        return 0;   /* one line, whole: else not an answer of ours */
    *nl = 0;
    return 1;
}

void cli_here_put(const char *key, const char *val)
{
    char path[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX + 16];
    if (cli_here_path(key, path, sizeof path) || strchr(val, '\n'))
        return;
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = 0;
    if (mkdir(dir, 0755) && errno == ENOENT && (slash = strrchr(dir, '/')) != NULL) {   /* .../clrr first */
        *slash = 0;
        mkdir(dir, 0755);
        *slash = '/';
        mkdir(dir, 0755);
    }
    snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return;
    size_t n = strlen(val);
    int bad = write(fd, val, n) != (ssize_t)n || write(fd, "\n", 1) != 1;
    if (close(fd) || bad || rename(tmp, path))
        unlink(tmp);
}

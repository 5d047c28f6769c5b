/* slow_mkostemp.c — an LD_PRELOAD shim for tests/e2e/cli_outputs.sh: a
 * mkostemp() whose template holds $SLOW_MKSTEMP_MARK returns only 300 ms
 * after it made the file, so that a signal sent as soon as the file
 * exists lands in the moment between making a temporary and registering
 * it for removal (the window a loaded CI run once hit). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int mkostemp(char *tmpl, int flags)
{
    static int (*real)(char *, int);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "mkostemp");
    int fd = real(tmpl, flags);
    const char *mark = getenv("SLOW_MKSTEMP_MARK");
    if (fd >= 0 && mark && *mark && strstr(tmpl, mark)) {
        struct timespec ts = { 0, 300000000 };
        nanosleep(&ts, NULL);
    }
    return fd;
}

/* fuzz_main.c — the corpus driver (zstd's regression_driver.c): a fuzz
 * target linked with this file is an ordinary program that feeds inputs
 * to LLVMFuzzerTestOneInput() once each, so `make test-unit` replays the
 * corpus and every crash ever found. The oracle is the target's own (no
 * crash, no sanitizer report, no leak in the SAN build, and whatever the
 * target checks itself with abort()).
 *
 *   fuzz_NAME                 every file of the target's fuzz_dirs[]
 *   fuzz_NAME PATH...         these files, and the files of these folders
 *
 * Files run in name order; one line at the end says how many and how long.
 * Exit status 0, or 2 when an input could not be read or the corpus is
 * empty (a crash ends the process before that). */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef FUZZ_ROOT
#define FUZZ_ROOT "."
#endif

static const char *fm_prog = "fuzz";
static int fm_verbose;

static double fm_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Runs one file through the target. @return 0, or -1 when unreadable. */
static int fm_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *d = NULL;
    long n;
    int rc = -1;

    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", fm_prog, path, strerror(errno));
        return -1;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (d = malloc(n ? (size_t)n : 1)) != NULL && fread(d, 1, (size_t)n, f) == (size_t)n) {
        double t0 = fm_now();
        if (fm_verbose)
            fprintf(stderr, "%s: %s\n", fm_prog, path);
        LLVMFuzzerTestOneInput(d, (size_t)n);
        if (fm_now() - t0 > 2.0)
            fprintf(stderr, "%s: %s: slow input (%.1f s)\n", fm_prog, path, fm_now() - t0);
        rc = 0;
    } else {
        fprintf(stderr, "%s: %s: cannot read it\n", fm_prog, path);
    }
    free(d);
    fclose(f);
    return rc;
}

static int fm_skip_dot(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* Runs every plain file of @p dir (README files excepted), in name order.
 * @return the number run, or -1 on a read error. */
static long fm_dir(const char *dir)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, fm_skip_dot, alphasort);
    long done = 0;
    int bad = 0;

    if (n < 0) {
        fprintf(stderr, "%s: %s: %s\n", fm_prog, dir, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, ents[i]->d_name);
        if (strncmp(ents[i]->d_name, "README", 6) != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (fm_file(path) != 0)
                bad = 1;
            else
                done++;
        }
        free(ents[i]);
    }
    free(ents);
    return bad ? -1 : done;
}

static long fm_path(const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: %s: %s\n", fm_prog, path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return fm_dir(path);
    return fm_file(path) == 0 ? 1 : -1;
}

int main(int argc, char **argv)
{
    double t0 = fm_now();
    long total = 0, k;
    int rc = 0;

    fm_prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    fm_verbose = getenv("FUZZ_VERBOSE") != NULL;
    LLVMFuzzerInitialize(&argc, &argv);
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            if ((k = fm_path(argv[i])) < 0)
                rc = 2;
            else
                total += k;
        }
    } else {
        for (int i = 0; fuzz_dirs[i]; i++) {
            char dir[4096];
            struct stat st;
            snprintf(dir, sizeof dir, "%s/%s", FUZZ_ROOT, fuzz_dirs[i]);
            if (i > 0 && stat(dir, &st) != 0)
                continue;                /* no crash found yet */
            k = fm_dir(dir);
            if (k < 0 || (i == 0 && k == 0)) {
                fprintf(stderr, "%s: %s: %s\n", fm_prog, dir, k < 0 ? "unreadable" : "no corpus");
                rc = 2;
            } else {
                printf("%s: %ld inputs from %s\n", fm_prog, k, fuzz_dirs[i]);
                total += k;
            }
        }
    }
    printf("%s: %ld inputs, no crash (%.1f s)\n", fm_prog, total, fm_now() - t0);
    return rc;
}

/* rpl_profile_int.h — what cost learning's two files share
 * (rpl_profile.c: launches; rpl_profile_dev.c: devices, transfers,
 * builds). Not a public header. */
#ifndef CLRR_RPL_PROFILE_INT_H
#define CLRR_RPL_PROFILE_INT_H

#include "replayer/rpl_int.h"
#include "costs/cdb.h"

#define RPL_PROF_MAX_DEVS 16        /* devices profiled */
#define RPL_PROF_MAX_SNAPSHOT 64    /* devices in the snapshot */
#define RPL_PROF_ID_CAP 512

/* A device measured on: a context and profiling queue of our own. */
typedef struct rpl_prof_dev {
    char spec[64];            /* as given (--devices), or its index */
    char identity[RPL_PROF_ID_CAP];
    cl_device_id dev;
    cl_platform_id plat;
    cl_context ctx;           /* NULL: it could not be made (not measured; noted) */
    cl_command_queue q;
} rpl_prof_dev;

/* A program built from its recorded source on a device (once). */
typedef struct rpl_prof_build {
    uint8_t hash[16];
    char *opts;
    unsigned dev;             /* index into devs */
    cl_program prog;          /* NULL: it failed to build (noted once, not retried) */
} rpl_prof_build;

/* A distinct launch key and how often it was launched. */
typedef struct rpl_prof_key {
    cdb_key k;                /* k.kernel owned */
    uint64_t seen;
} rpl_prof_key;

struct rpl_profile_state {
    rpl_profile_opts o;       /* with the defaults filled in */
    cdb *db;
    rpl_prof_dev devs[RPL_PROF_MAX_DEVS];
    unsigned ndevs;
    const char *specs[RPL_PROF_MAX_DEVS], *ids[RPL_PROF_MAX_DEVS];   /* for the summary */
    rpl_prof_build *builds;
    size_t nbuilds;
    rpl_prof_key *keys;
    size_t nkeys;
    uint64_t *noted;          /* kernels (recorded ids) said not measurable */
    size_t nnoted;
    rpl_profile_summary sum;
};

/* One note (on_note), counted. */
void rpl_prof_note(rpl_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The program of @p hash and @p opts built on device @p di (made the first
 * time, from @p src, checked by making @p kernel); NULL when it does not
 * build there (said once). Owned by the state. */
cl_program rpl_prof_program(rpl_session *s, unsigned di, const uint8_t hash[16], const char *src, const char *opts,
                            const char *kernel);

#endif

/* cli_model.h — internal to `clrr`: the launch shapes of a trace with
 * their model features (tools/clrr/cmd_model.c), shared by `clrr model`
 * and `clrr profile` (which records them beside its measurements). */
#ifndef CLRR_CLI_MODEL_H
#define CLRR_CLI_MODEL_H

#include <stdint.h>

#include "costs/cdb.h"

/*! cli_model_note_features() : runs the kernel analysis on trace @p path
 *  and adds to @p db (cdb_add_features; flushed by the caller) the
 *  features of every distinct launch shape whose kernel was analyzed.
 *  Prints nothing. @return the shapes added or already there, or -1 when
 *  the trace or its analysis cannot be had (the caller goes on without). */
long cli_model_note_features(const char *path, cdb *db);

struct model;
/*! cli_model_open_beside() : the device-selection model of cost database
 *  @p costs ($CLRR_MODEL, else model.json in its folder) for `clrr
 *  optimize`, or NULL when there is none (silently) or it cannot be read
 *  (one warning line: launches nobody measured then run as recorded).
 *  The caller frees it (model_free). */
struct model *cli_model_open_beside(const char *costs);

#endif

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

#endif

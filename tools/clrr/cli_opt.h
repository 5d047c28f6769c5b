/* cli_opt.h — what `clrr optimize` and `clrr plan` share. */
#ifndef CLRR_CLI_OPT_H
#define CLRR_CLI_OPT_H

#include "optimizer/opt.h"

/*! cli_opt_effect_print() : prints @p e on stdout as "N commands (K kernel
 *  launches), SIZE of transfers[, TIME recorded device time]", no newline.
 *  Defined in cmd_plan.c. */
void cli_opt_effect_print(const plan_effect *e);
/*! cli_opt_sched_print() : prints scheduled queue @p s on stdout as
 *  "queue Q over L lanes: U uploads, D downloads of N commands; TIME of
 *  device time predicted TIME (X.XXx)", no newline. Defined in cmd_plan.c. */
void cli_opt_sched_print(const plan_sched *s);
/*! cli_opt_device_name() : the device name of a replay summary's device
 *  ("NAME (TYPE)") into @p out, as a plan's trust record names devices
 *  ("*": the replay named none). Defined in cmd_plan.c. */
void cli_opt_device_name(const char *summary_device, char *out, size_t cap);

#endif /* CLRR_CLI_OPT_H */

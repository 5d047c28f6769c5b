/* cli_opt.h — what `clrr optimize` and `clrr plan` share. */
#ifndef CLRR_CLI_OPT_H
#define CLRR_CLI_OPT_H

#include "optimizer/opt.h"

/*! cli_opt_effect_print() : prints @p e on stdout as "N commands (K kernel
 *  launches), SIZE of transfers[, TIME recorded device time]", no newline.
 *  Defined in cmd_plan.c. */
void cli_opt_effect_print(const opt_effect *e);

#endif /* CLRR_CLI_OPT_H */

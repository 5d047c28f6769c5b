/* ana_status.c — the analyzer's status names. */
#include "analyzer/ana.h"

const char *ana_strerror(ana_status s)
{
    switch (s) {
    case ANA_OK: return "ok";
    case ANA_ERR_NOMEM: return "out of memory";
    case ANA_ERR_ARG: return "invalid argument";
    case ANA_ERR_COMPILE: return "the kernel source does not compile";
    case ANA_ERR_UNAVAILABLE: return "kernel analysis unavailable";
    case ANA_ERR_TRACE: return "the trace cannot be analyzed";
    case ANA_ERR_IO: return "output cannot be written";
    }
    return "unknown status";
}

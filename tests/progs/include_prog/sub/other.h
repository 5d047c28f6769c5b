/* sub/other.h — included as "sub/other.h"; it includes "deep.h" beside
 * itself (sub/deep.h) and "../inc.h" (already included). */
#ifndef OTHER_H
#define OTHER_H
#include "deep.h"
#include "../inc.h"
static inline scale_t other_add(size_t i) { return (scale_t)(i % 7) + DEEP; }
#endif

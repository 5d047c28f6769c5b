/* inc.h — included as "./inc.h" by include_prog's source, and again as
 * "../inc.h" from sub/other.h: #pragma once keeps it to one copy. */
#pragma once
#define SCALE 3
typedef int scale_t;

/* sub/angled.h — included as <angled.h>, found through -Isub. */
#define ANGLED (-2)

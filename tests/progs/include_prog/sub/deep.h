/* sub/deep.h — found beside sub/other.h, which includes it. */
#define DEEP 11

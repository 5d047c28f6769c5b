/* tf_hash_avx2.c — XXH3-128 compiled for AVX2 (this file only is built
 * with -mavx2, trace-format/module.mk); tf_hash() (tf_wblob.c) calls it
 * when the CPU has AVX2. The hash is the same as libxxhash's, which the
 * distribution builds for baseline x86-64 (SSE2): about half the time on
 * data already in cache (0.66 against 1.2-1.5 ms per 16 MiB on the H200
 * machine's Xeon), a blob's hash being on the application's thread. */
#include "trace-format/tf_int.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

/* The upper halves of the YMM registers are cleared on the way out
 * (vzeroupper): GCC emitted none here, and with them left dirty every
 * SSE instruction the application's thread ran afterwards paid for it:
 * ep's host reference (libm's sincosf and logf, SSE code) took 20 times
 * as long under the recorder, 4.5 s against 0.8 s for the whole run. */
void tf_hash_avx2(const void *data, size_t len, uint8_t out[16])
{
    XXH128_canonical_t c;

    XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
    _mm256_zeroupper();
    memcpy(out, c.digest, 16);
}
#endif

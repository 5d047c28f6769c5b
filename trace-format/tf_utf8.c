/* tf_utf8.c — the one UTF-8 check of the project's outputs: strings of a
 * trace may hold any bytes, JSON (jansson) takes valid UTF-8 only, so the
 * writers of clrr (tools/clrr/cli_util.c) and of the analyzer's exports
 * (graph, timeline) make the bytes valid here first: an invalid byte
 * becomes U+FFFD, valid sequences are kept. */
#include "trace-format/tf.h"

#include <stdint.h>
#include <string.h>

size_t tf_utf8_seq(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t len;
    uint32_t cp, min;
    if (!n)
        return 0;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0) { len = 2; cp = s[0] & 0x1f; min = 0x80; }
    else if ((s[0] & 0xf0) == 0xe0) { len = 3; cp = s[0] & 0x0f; min = 0x800; }
    else if ((s[0] & 0xf8) == 0xf0) { len = 4; cp = s[0] & 0x07; min = 0x10000; }
    else return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

size_t tf_utf8_valid(const char *s, size_t len)
{
    size_t i = 0, k;
    while (i < len && (k = tf_utf8_seq(s + i, len - i)) != 0)
        i += k;
    return i;
}

size_t tf_utf8_fix(char *dst, const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        size_t k = tf_utf8_seq(s + i, len - i);
        if (k) {
            memcpy(dst + n, s + i, k);
            n += k;
            i += k;
        } else {
            memcpy(dst + n, "\xef\xbf\xbd", 3);
            n += 3;
            i++;
        }
    }
    return n;
}

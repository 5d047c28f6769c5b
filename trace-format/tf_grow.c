/* tf_grow.c — the compression of a trace being written, from outside the
 * writing process: the chunk headers (FORMAT.md 3.1) say each chunk's
 * stored and raw payload length, so walking them gives the ratio without
 * decompressing anything. Each call reads only the headers of chunks
 * completed since the last one (one pread of a header per chunk), so
 * `clrr record` can show it on its progress line ten times a second. */
#include "trace-format/tf.h"
#include "trace-format/tf_int.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tf_grow_scan(tf_grow *g, const char *path)
{
    if (g->bad)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;   /* not there yet */
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return 0;
    }
    uint64_t size = (uint64_t)st.st_size;
    if (g->off && (g->ino != (uint64_t)st.st_ino || size < g->off))
        memset(g, 0, sizeof *g);   /* another file at the path (replaced, truncated): start again */
    g->ino = (uint64_t)st.st_ino;
    uint8_t b[TF_CHUNK_HDR_SIZE + TF_MAX_EXT];
    if (!g->off) {
        if (size < TF_FILE_HDR_SIZE) {
            close(fd);
            return 0;
        }
        if (pread(fd, b, TF_FILE_HDR_SIZE, 0) != TF_FILE_HDR_SIZE || memcmp(b, TF_FILE_MAGIC, TF_FILE_MAGIC_LEN) != 0 ||
            tf_file_hdr_check(b) != 0 || tf_get16(b + 14) < TF_FILE_HDR_SIZE) {
            close(fd);
            g->bad = 1;
            return -1;
        }
        g->off = tf_get16(b + 14);
    }
    /* every chunk whose header and payload are all in the file */
    while (g->off + TF_CHUNK_HDR_SIZE <= size) {
        tf_chunk_hdr h;
        if (pread(fd, b, TF_CHUNK_HDR_SIZE, (off_t)g->off) != TF_CHUNK_HDR_SIZE)
            break;
        if (memcmp(b, TF_TRAILER_MAGIC, 8) == 0)
            break;   /* the trailer: the file is complete */
        if (tf_chunk_hdr_fixed(b, &h) != 0 || h.ext_len > TF_MAX_EXT) {
            g->bad = 1;
            break;
        }
        if (g->off + h.hdr_len > size)
            break;
        if (h.ext_len && pread(fd, b + TF_CHUNK_HDR_SIZE, h.ext_len, (off_t)(g->off + TF_CHUNK_HDR_SIZE)) != h.ext_len)
            break;
        if (tf_chunk_hdr_rest(b, &h) != 0 || h.payload_len > UINT64_MAX - g->off - h.hdr_len) {
            g->bad = 1;
            break;
        }
        if (g->off + h.hdr_len + h.payload_len > size)
            break;   /* being written */
        if (h.type == TF_CHUNK_RECORD || h.type == TF_CHUNK_BLOB) {
            g->stored += h.payload_len;
            g->raw += h.raw_len;
        }
        g->chunks++;
        g->off += h.hdr_len + h.payload_len;
    }
    close(fd);
    return g->bad ? -1 : 0;
}

/* costs/cdb_file.c — the database's file: opening (reading it whole and
 * handing it to cdb_parse), appending (cdb_flush), closing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "costs/cdb_int.h"

/* Records go to the file in writes of about this many bytes, cut between lines. */
#define CDB_WRITE_CHUNK (1u << 20)

const char *cdb_strerror(cdb_status s)
{
    switch (s) {
    case CDB_OK: return "ok";
    case CDB_ERR_IO: return "cost database: input/output error";
    case CDB_ERR_FORMAT: return "cost database: malformed file";
    case CDB_ERR_NOMEM: return "cost database: out of memory";
    case CDB_ERR_ARG: return "cost database: invalid argument";
    }
    return "cost database: unknown status";
}

void cdb_errf(char *err, size_t cap, const char *fmt, ...)
{
    if (!err || !cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

/* Reads the whole regular file on @p fd into a NUL-terminated buffer. */
static cdb_status read_all(int fd, const char *path, char **out, size_t *len, char *err, size_t cap)
{
    struct stat st;
    if (fstat(fd, &st)) {
        cdb_errf(err, cap, "%s: %s", path, strerror(errno));
        return CDB_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        cdb_errf(err, cap, "%s: not a regular file", path);
        return CDB_ERR_IO;
    }
    if ((uint64_t)st.st_size >= SIZE_MAX / 2) {
        cdb_errf(err, cap, "%s: too large", path);
        return CDB_ERR_NOMEM;
    }
    size_t size = (size_t)st.st_size, n = 0;   /* what is there now; a concurrent append is read next time */
    char *buf = malloc(size + 1);
    if (!buf) {
        cdb_errf(err, cap, "%s: out of memory reading %zu bytes", path, size);
        return CDB_ERR_NOMEM;
    }
    while (n < size) {
        ssize_t r = read(fd, buf + n, size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            cdb_errf(err, cap, "%s: %s", path, strerror(errno));
            free(buf);
            return CDB_ERR_IO;
        }
        if (!r)
            break;   /* truncated meanwhile */
        n += (size_t)r;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return CDB_OK;
}

cdb_status cdb_open(const char *path, cdb **out, char *err, size_t err_cap)
{
    if (out)
        *out = NULL;
    if (!path || !*path || !out) {
        cdb_errf(err, err_cap, "no cost database path");
        return CDB_ERR_ARG;
    }
    cdb *db = calloc(1, sizeof *db);
    if (!db || !(db->path = strdup(path))) {
        free(db);
        cdb_errf(err, err_cap, "out of memory");
        return CDB_ERR_NOMEM;
    }
    cdb_status st = CDB_OK;
    char *text = NULL;
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);   /* a FIFO must not block: refused below */
    if (fd < 0) {
        if (errno != ENOENT) {
            cdb_errf(err, err_cap, "%s: %s", path, strerror(errno));
            st = CDB_ERR_IO;
        }
        goto out;   /* no file: an empty database */
    }
    st = read_all(fd, path, &text, &len, err, err_cap);
    close(fd);
    if (st == CDB_OK)
        st = cdb_parse(db, text, len, err, err_cap);
out:
    free(text);
    if (st != CDB_OK) {
        cdb_close(db);
        return st;
    }
    *out = db;
    return CDB_OK;
}

void cdb_close(cdb *db)
{
    if (!db)
        return;
    cdb_store_free(db);
    cdb_devs_replace(db, NULL, 0);
    free(db->pend.p);
    free(db->path);
    free(db);
}

const char *cdb_path(const cdb *db)
{
    return db ? db->path : NULL;
}

/* mkdir -p of the folders above @p path's last component. */
static cdb_status make_parents(const char *path, char *err, size_t cap)
{
    char *d = strdup(path);
    if (!d) {
        cdb_errf(err, cap, "out of memory");
        return CDB_ERR_NOMEM;
    }
    char *slash = strrchr(d, '/');
    cdb_status st = CDB_OK;
    if (slash && slash != d) {
        *slash = 0;
        for (char *p = d + 1;; p++) {
            if (*p != '/' && *p)
                continue;
            char c = *p;
            *p = 0;
            if (mkdir(d, 0755) && errno != EEXIST) {
                cdb_errf(err, cap, "%s: cannot make folder %s: %s", path, d, strerror(errno));
                st = CDB_ERR_IO;
                break;
            }
            if (!(*p = c))
                break;
        }
    }
    free(d);
    return st;
}

enum { NEED_CAN = 1, NEED_HEADER = 2 };

/* What this flush must write before its records: NEED_CAN when the file ends
 * with a line cut short (closed with CAN, readers skip it), NEED_HEADER when
 * it has no header yet (new, empty, or only cut lines). -1: not a cost
 * database (its first line, cancelled ones skipped, is not a header). */
static int file_state(int fd, off_t size)
{
    if (!size)
        return NEED_HEADER;
    char head[256], last;
    size_t hn = (size_t)size < sizeof head ? (size_t)size : sizeof head, hl = strlen(CDB_HEADER "\t");
    if (pread(fd, head, hn, 0) != (ssize_t)hn || pread(fd, &last, 1, size - 1) != 1)
        return -1;
    int can = last == '\n' ? 0 : NEED_CAN;
    for (size_t p = 0;;) {
        const char *nl = memchr(head + p, '\n', hn - p);
        if (!nl) {
            if (hn != (size_t)size)
                return -1;   /* a first line of 256 bytes: not ours */
            size_t rn = hn - p;   /* the file ends with this cut line; it may be a header cut short */
            return strncmp(head + p, CDB_HEADER "\t", rn < hl ? rn : hl) ? -1 : can | NEED_HEADER;
        }
        size_t e = (size_t)(nl - head);
        if (e > p && head[e - 1] == CDB_CAN) {
            p = e + 1;   /* a cancelled line */
            continue;
        }
        return e - p > hl && !strncmp(head + p, CDB_HEADER "\t", hl) ? can : -1;
    }
}

/* The end of the line at @p at and of the d lines after it (a snapshot is written whole). */
static size_t safe_end(const char *p, size_t len, size_t at)
{
    do {
        const char *nl = memchr(p + at, '\n', len - at);
        at = nl ? (size_t)(nl - p) + 1 : len;
    } while (at < len && p[at] == 'd');
    return at;
}

static cdb_status write_chunk(int fd, const char *p, size_t n, size_t *written)
{
    *written = 0;
    while (*written < n) {
        ssize_t r = write(fd, p + *written, n - *written);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            errno = EIO;
        if (r <= 0)
            return CDB_ERR_IO;
        *written += (size_t)r;
    }
    return CDB_OK;
}

cdb_status cdb_flush(cdb *db, char *err, size_t err_cap)
{
    if (!db)
        return CDB_ERR_ARG;
    if (!db->pend.len)
        return CDB_OK;
    cdb_status st = make_parents(db->path, err, err_cap);
    if (st != CDB_OK)
        return st;
    int fd = open(db->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb)) {
        cdb_errf(err, err_cap, "%s: %s", db->path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return CDB_ERR_IO;
    }
    int state = file_state(fd, sb.st_size);
    if (state < 0) {
        cdb_errf(err, err_cap, "%s: not a clrr cost database (no '%s' header), not appending", db->path,
                 CDB_HEADER);
        close(fd);
        return CDB_ERR_FORMAT;
    }
    if (db->cancel_next)
        state |= NEED_CAN;
    /* one buffer: what closes a cut line, the header of a new file, the records */
    cdb_buf b = {0};
    size_t pn = 0;
    int bad = ((state & NEED_CAN) && cdb_buf_add(&b, "\x18\n", 2)) ||
              ((state & NEED_HEADER) && cdb_buf_printf(&b, "%s\t%d\n", CDB_HEADER, CDB_FORMAT_VERSION));
    pn = b.len;
    if (bad || cdb_buf_add(&b, db->pend.p, db->pend.len)) {
        free(b.p);
        close(fd);
        cdb_errf(err, err_cap, "out of memory");
        return CDB_ERR_NOMEM;
    }
    size_t done = 0, w = 0;
    while (done < b.len && st == CDB_OK) {
        /* whole lines, about CDB_WRITE_CHUNK bytes; one write() each */
        size_t end = done < pn ? pn : done;
        do
            end = safe_end(b.p, b.len, end);
        while (end < b.len && end - done < CDB_WRITE_CHUNK);
        st = write_chunk(fd, b.p + done, end - done, &w);
        if (st != CDB_OK)
            cdb_errf(err, err_cap, "%s: %s", db->path, strerror(errno));
        done += st == CDB_OK ? end - done : w;
    }
    if (close(fd) && st == CDB_OK) {
        cdb_errf(err, err_cap, "%s: %s", db->path, strerror(errno));
        st = CDB_ERR_IO;
    }
    free(b.p);
    /* the records written leave the pending lines; after a failure, the line cut short and the rest
     * of its snapshot are lost, and the next flush first closes the file's cut line */
    size_t used = done > pn ? done - pn : 0;
    if (st == CDB_OK) {
        db->cancel_next = 0;
    } else if (done > 0) {
        db->cancel_next = 1;
        if (used && used < db->pend.len && db->pend.p[used - 1] != '\n')
            used = safe_end(db->pend.p, db->pend.len, used);
        else if (used && used < db->pend.len && db->pend.p[used] == 'd')
            used = safe_end(db->pend.p, db->pend.len, used);
    }
    memmove(db->pend.p, db->pend.p + used, db->pend.len - used + 1);
    db->pend.len -= used;
    return st;
}

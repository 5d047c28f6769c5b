/* tf_wzstd.c — how a worker compresses a job: one zstd frame per chunk,
 * with the worker's own reused context, in slices between which it serves
 * the application's copy tasks; blob pieces byte-shuffled first when a
 * sample says that pays (codec 2), and at a faster setting while the
 * workers fall behind. */
#include "trace-format/tf_int.h"

#include <stdlib.h>

#define ZSTD_STATIC_LINKING_ONLY   /* ZSTD_c_literalCompressionMode, ZSTD_ps_enable, ZSTD_c_stableInBuffer */
#include <zstd.h>
#include <zstd_errors.h>

#define TF_ZSLICE     ((size_t)128 << 10)  /* input compressed between two looks at the copy tasks */
#define TF_FAST_LEVEL (-100)               /* blob pieces under backlog, with Huffman literals */
#define TF_SHUF_MIN    ((size_t)32 << 10)  /* smallest blob piece considered for codec 2 */
#define TF_SHUF_SAMPLE ((size_t)8 << 10)   /* bytes of a piece compressed both ways to decide */
#define TF_SHUF_LEVEL  (-5)                /* the sample's level */

/* Sets @p wk's parameters for the next frame: the writer's level, or with
 * @p fast level TF_FAST_LEVEL with Huffman-coded literals (negative levels
 * leave literals raw). On the H200 machine's Xeon, 8 threads on the
 * data-heavy benchmark's data: level 1 1.57 GB/s at 0.268 of the raw size,
 * level -5 1.78 GB/s at 0.298, -20 1.89 at 0.411, -100 with Huffman
 * literals 2.49 at 0.412 (-100 alone: 3.87 at 0.750). A library that does
 * not know the literals switch gets the writer's level. */
static size_t tf_wzstd_params(tf_wworker *wk, int fast)
{
    ZSTD_CCtx *c = wk->cctx;
    size_t r = ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);

    if (!ZSTD_isError(r) && fast &&
        !ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, ZSTD_ps_enable)))
        return ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, TF_FAST_LEVEL);
    if (!ZSTD_isError(r))
        r = ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
    if (!ZSTD_isError(r))
        r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, wk->w->level);
    return r;
}

/* Compresses @p n bytes at @p src into @p dst (capacity at least
 * ZSTD_compressBound(n)) as one zstd frame that states its content size,
 * TF_ZSLICE bytes of input at a time: between two slices the worker runs
 * the copy tasks posted meanwhile, so that an application thread waiting
 * for its blob to be copied never waits for a whole compression. @p fast:
 * see tf_wzstd_params(). @return the compressed size, or a zstd error
 * code. */
static size_t tf_wzstd(tf_wworker *wk, uint8_t *dst, size_t cap, const uint8_t *src, size_t n, int fast)
{
    tf_writer *w = wk->w;
    ZSTD_outBuffer out = { dst, cap, 0 };
    ZSTD_inBuffer in = { src, 0, 0 };
    ZSTD_EndDirective end = ZSTD_e_continue;
    size_t r;

    if (n <= TF_ZSLICE)
        return ZSTD_compressCCtx(wk->cctx, dst, cap, src, n, w->level);
    r = tf_wzstd_params(wk, fast);
    /* the input stays where it is while in.size grows: zstd may skip
     * copying it into its own window buffer (ignored if not supported) */
    if (!ZSTD_isError(r))
        (void)ZSTD_CCtx_setParameter(wk->cctx, ZSTD_c_stableInBuffer, 1);
    if (!ZSTD_isError(r))
        r = ZSTD_CCtx_setPledgedSrcSize(wk->cctx, n);
    while (!ZSTD_isError(r) && end != ZSTD_e_end) {
        in.size = n - in.size > TF_ZSLICE ? in.size + TF_ZSLICE : n;
        end = in.size == n ? ZSTD_e_end : ZSTD_e_continue;
        do {
            r = ZSTD_compressStream2(wk->cctx, &out, &in, end);
            if (!ZSTD_isError(r) && r != 0 && out.pos == out.size)
                return (size_t)-ZSTD_error_dstSize_tooSmall;
        } while (!ZSTD_isError(r) && (end == ZSTD_e_end ? r != 0 : in.pos < in.size));
        if (atomic_load_explicit(&w->ncopies, memory_order_relaxed))
            tf_wcopy_serve(w);
    }
    return ZSTD_isError(r) ? r : out.pos;
}

/* Grows the worker's shuffle buffer to @p n bytes. @return 0, or -1
 * (no memory: the piece is compressed unshuffled). */
static int tf_wsbuf(tf_wworker *wk, size_t n)
{
    if (wk->scap < n) {
        free(wk->sbuf);
        wk->scap = 0;
        if ((wk->sbuf = malloc(n)) == NULL)
            return -1;
        wk->scap = n;
    }
    return 0;
}

/* Whether blob piece @p src (@p n >= TF_SHUF_MIN bytes) compresses
 * enough better byte-shuffled (codec 2): TF_SHUF_SAMPLE bytes from its
 * middle, compressed fast both ways into @p scratch (at least
 * ZSTD_compressBound(TF_SHUF_SAMPLE) + TF_SHUF_SAMPLE bytes), shuffled
 * 1/16 smaller at least. Arrays of 4-byte numbers (int, float, RGBA
 * pixels) shuffle to byte planes that compress better and several times
 * faster; text and code do not. On the data-heavy benchmark's integers
 * (1 MiB pieces at level 1, one thread of this VM): 424 MB/s at 0.268 of
 * the raw size unshuffled, 2472 MB/s at 0.253 shuffled; a float signal
 * 0.897 -> 0.552; 16-bit samples 0.764 -> 0.517; C sources 0.29 unshuffled
 * against 0.56 (kept unshuffled). The sample costs 6-40 us a piece. */
/* The sample's answer: compress shuffled (codec 2), plain (codec 1), or
 * not at all. Neither way 1/32 smaller: the piece is stored as it is
 * (codec 0) without compressing it whole, so that incompressible data
 * (random numbers, data compressed or encrypted already) costs a copy,
 * not a compression that is thrown away (issue 33, item 8: random floats
 * at 1.17x the plain loop's time); the trace is then never larger than
 * the raw bytes plus the chunk headers. */
enum { TF_SAMPLE_PLAIN = 0, TF_SAMPLE_SHUF, TF_SAMPLE_RAW };

static int tf_wsample(tf_wworker *wk, const uint8_t *src, size_t n, uint8_t *scratch)
{
    size_t off = (n / 2 - TF_SHUF_SAMPLE / 2) & ~(size_t)63;
    size_t bound = ZSTD_compressBound(TF_SHUF_SAMPLE);
    uint8_t *sh = scratch + bound;
    size_t plain, shuf;

    plain = ZSTD_compressCCtx(wk->cctx, scratch, bound, src + off, TF_SHUF_SAMPLE, TF_SHUF_LEVEL);
    tf_shuffle4(sh, src + off, TF_SHUF_SAMPLE);
    shuf = ZSTD_compressCCtx(wk->cctx, scratch, bound, sh, TF_SHUF_SAMPLE, TF_SHUF_LEVEL);
    if (ZSTD_isError(plain) || ZSTD_isError(shuf))
        return TF_SAMPLE_PLAIN;
    if (plain >= TF_SHUF_SAMPLE - TF_SHUF_SAMPLE / 32 && shuf >= TF_SHUF_SAMPLE - TF_SHUF_SAMPLE / 32)
        return TF_SAMPLE_RAW;
    return shuf + shuf / 16 < plain ? TF_SAMPLE_SHUF : TF_SAMPLE_PLAIN;
}

/* Builds @p h for @p j and compresses j into wk->zbuf when that makes it
 * smaller. A blob piece is compressed fast (tf_wzstd_params) when the
 * writer's level is the default or lower and more than a quarter of the
 * budget is waiting: the application is then about to wait for the
 * workers, and a bigger trace is the lesser cost. @return the payload to
 * write, with h->hdr_len bytes of room before it for the header
 * (wk->zbuf + TF_HDR_ROOM, or the job's own). */
uint8_t *tf_wcompress(tf_wworker *wk, tf_job *j, tf_chunk_hdr *h)
{
    tf_writer *w = wk->w;
    const uint8_t *src = TF_JOB_PAYLOAD(j);
    size_t bound, n;
    int fast, codec = TF_CODEC_ZSTD;

    memset(h, 0, sizeof(*h));
    h->type = j->type;
    h->raw_len = j->len;
    if (j->type == TF_CHUNK_BLOB) {
        h->ext_len = TF_BLOB_EXT_SIZE;
        memcpy(h->hash, j->hash, 16);
        h->blob_size = j->blob_size;
        h->piece_off = j->piece_off;
    }
    h->hdr_len = TF_CHUNK_HDR_SIZE + h->ext_len;
    h->codec = TF_CODEC_NONE;
    h->payload_len = j->len;
    if (j->raw || j->len < 64)
        return TF_JOB_PAYLOAD(j);
    bound = ZSTD_compressBound(j->len);
    if (wk->zcap < TF_HDR_ROOM + bound) {
        free(wk->zbuf);
        wk->zcap = 0;
        wk->zbuf = malloc(TF_HDR_ROOM + bound);
        if (wk->zbuf == NULL)
            return TF_JOB_PAYLOAD(j);   /* store it uncompressed */
        wk->zcap = TF_HDR_ROOM + bound;
    }
    int sample = j->type == TF_CHUNK_BLOB && j->len >= TF_SHUF_MIN ? tf_wsample(wk, src, j->len, wk->zbuf)
                                                                    : TF_SAMPLE_PLAIN;
    if (sample == TF_SAMPLE_RAW)
        return TF_JOB_PAYLOAD(j);   /* stored as it is (codec 0) */
    if (sample == TF_SAMPLE_SHUF && tf_wsbuf(wk, j->len) == 0) {
        tf_shuffle4(wk->sbuf, src, j->len);
        src = wk->sbuf;
        codec = TF_CODEC_ZSTD_SHUF4;
    }
    fast = j->type == TF_CHUNK_BLOB && w->adaptive && atomic_load(&w->f.queued) > w->f.budget / 4;
    n = tf_wzstd(wk, wk->zbuf + TF_HDR_ROOM, bound, src, j->len, fast);
    if (ZSTD_isError(n) || n >= j->len)
        return TF_JOB_PAYLOAD(j);
    h->codec = (uint8_t)codec;
    h->payload_len = n;
    return wk->zbuf + TF_HDR_ROOM;
}

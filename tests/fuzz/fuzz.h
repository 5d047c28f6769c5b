/* fuzz.h — what the fuzz targets of tests/fuzz/ share: the layouts of a
 * fuzz input (turned into a trace file by fuzz_write_trace()), and the
 * corpus driver (fuzz_main.c) that runs a target's corpus as a plain test.
 *
 * A target is one file defining LLVMFuzzerTestOneInput() (and, if it needs
 * one, LLVMFuzzerInitialize()) and fuzz_dirs[]. It is linked twice: with
 * fuzz_main.c as an ordinary program ($(B)/tests/fuzz_NAME, run by `make
 * test-unit`), and with libFuzzer ($(B)/fuzz/fuzz_NAME, run by `make fuzz`).
 */
#ifndef CLRR_FUZZ_H
#define CLRR_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Input layouts (the first byte decides):
 *
 *   'R' PAYLOAD   a valid file header (format 2.0) and one RECORD chunk
 *                 (codec none, correct checksums) holding PAYLOAD: mutations
 *                 reach the msgpack walker and the record decoder, not a
 *                 checksum.
 *   'S' SECTIONS  a valid file header, then one piece per section; a
 *                 section is a tag byte, a u32 little-endian length and
 *                 that many bytes (cut at the end of the input):
 *                   'R'  a RECORD chunk of the bytes, codec none;
 *                   'Z'  a RECORD chunk of the bytes, compressed here (zstd);
 *                   'B'  a BLOB chunk: the first 32 bytes are the BLOB
 *                        extension as stored (hash, blob_size, piece_off;
 *                        FORMAT.md 3.3), the rest is the piece, codec none;
 *                   'Y'  the same, the piece byte-shuffled and compressed
 *                        here (codec 2);
 *                   'I'  an INDEX chunk and the trailer: the bytes are the
 *                        payload, or, when there are none, an index of the
 *                        chunks written so far is generated;
 *                   'X'  the bytes as they are (garbage, torn chunks).
 *                 Another tag ends the list.
 *   anything else the trace file itself, byte for byte.
 *
 * fuzz_pack (fuzz_pack.c) turns a real trace into the 'S' layout, which
 * is how the replay target's seeds are made. */
#define FUZZ_SEC_HDR 5   /* tag + u32 length */

/*! fuzz_write_trace() : writes the trace that input @p d (@p n bytes)
 *  stands for into the file open as @p fd (truncated first).
 *  @return 0, or -1 when it could not be written (no memory, I/O). */
int fuzz_write_trace(int fd, const uint8_t *d, size_t n);

/*! fuzz_trace_path() : a path naming a private, empty scratch file for
 *  the trace (an anonymous memory file: nothing is left behind), and its
 *  descriptor in *fd. The same one for every call in a process. */
const char *fuzz_trace_path(int *fd);

/* Defined by each target: the folders its corpus driver runs when given
 * no arguments, relative to the source root; NULL-terminated. The first
 * is the corpus (it must hold files); the others (the crashes every
 * fuzzing run found, tests/fuzz/crashes/NAME/) may be missing. */
extern const char *const fuzz_dirs[];

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif /* CLRR_FUZZ_H */

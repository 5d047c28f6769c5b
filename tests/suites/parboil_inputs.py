#!/usr/bin/env python3
"""parboil_inputs.py DIR — writes small inputs for the Parboil benchmarks
(tests/suites/fetch.sh builds them; tests/suites/apps.list runs them).

Parboil's own datasets are a separate download that is not public in its
repository, so these are ours: each file is in the format the benchmark's
own reader expects (the reader is named beside each writer below), filled
from a fixed seed (the same bytes on every machine and every run), and
small enough that each program runs in a few seconds on PoCL's CPU device.
Into DIR/BENCH/. Exit status 0, or 1 with one line on stderr.
"""
import math
import os
import random
import struct
import sys


def rng(name):
    # one generator per benchmark, seeded by its name: adding one changes no other
    return random.Random('clrr-parboil-' + name)


def put(path, data):
    with open(path, 'wb') as f:
        f.write(data)


def floats(vals):
    return struct.pack('<%df' % len(vals), *vals)


def sgemm(d, r):
    """io.cc readColMajorMatrixFile: text "rows cols" then the column-major
    values. A is m x k, B^T n x k (B, the second input, is only opened)."""
    m, n, k = 128, 96, 64
    def mat(rows, cols):
        vals = ' '.join('%.6f' % (r.random() * 2 - 1) for _ in range(rows * cols))
        return ('%d %d\n%s\n' % (rows, cols, vals)).encode()
    put(os.path.join(d, 'matrix1.txt'), mat(m, k))
    bt = mat(n, k)
    put(os.path.join(d, 'matrix2.txt'), bt)
    put(os.path.join(d, 'matrix2t.txt'), bt)


def stencil(d, r):
    """main.c read_data: nx*ny*nz raw floats, x fastest (the sizes are
    arguments: 64 64 32)."""
    nx, ny, nz = 64, 64, 32
    put(os.path.join(d, 'input.bin'), floats([r.random() for _ in range(nx * ny * nz)]))


def spmv(d, r):
    """convert_dataset.c coo_to_jds: a Matrix Market coordinate file,
    values read, the lower triangle of a symmetric matrix (main.c says
    mirrored); file.c input_vec: dim raw floats."""
    dim = 2048
    ent = {}
    for i in range(dim):
        ent[(i, i)] = 4.0 + r.random()
        for _ in range(r.randint(1, 8)):
            j = r.randrange(0, i + 1)
            ent[(i, j)] = r.random() * 2 - 1
    lines = ['%%MatrixMarket matrix coordinate real symmetric',
             '%d %d %d' % (dim, dim, len(ent))]
    lines += ['%d %d %.6f' % (i + 1, j + 1, v) for (i, j), v in sorted(ent.items(), key=lambda e: (e[0][1], e[0][0]))]
    put(os.path.join(d, 'matrix.mtx'), ('\n'.join(lines) + '\n').encode())
    put(os.path.join(d, 'vector.bin'), floats([r.random() for _ in range(dim)]))


def mri_q(d, r):
    """file.cc inputData: int numK, int numX, then kx, ky, kz (numK floats
    each), x, y, z (numX each), phiR, phiI (numK each)."""
    numK, numX = 2048, 4096
    k = [r.random() - 0.5 for _ in range(3 * numK)]
    x = [r.random() * 64 - 32 for _ in range(3 * numX)]
    phi = [r.random() * 2 - 1 for _ in range(2 * numK)]
    put(os.path.join(d, 'kspace.bin'), struct.pack('<ii', numK, numX) + floats(k) + floats(x) + floats(phi))


def histo(d, r):
    """main.cpp: uint img_width, img_height, histo_width, histo_height,
    then img_width*img_height uint bin indices, mostly near the middle of
    the histogram (as Parboil describes its input): histo_prescan.cl takes
    the range as the mean +- 10 standard deviations of a sample, unsigned,
    so the deviation must stay under a tenth of the mean; its 64 x 512
    work-items each sample 1/8 of a 64th of the image, so the image has at
    least 64*8*512 pixels (fewer: a division by a zero count)."""
    iw, ih, hw, hh = 1024, 512, 256, 1024
    bins = hw * hh
    img = []
    for _ in range(iw * ih):
        v = int(r.gauss(bins / 2, bins / 40))
        img.append(min(max(v, 0), bins - 1))
    put(os.path.join(d, 'img.bin'), struct.pack('<4I', iw, ih, hw, hh) + struct.pack('<%dI' % len(img), *img))


def cutcp(d, r):
    """readatom.c read_atom_file: PQR "ATOM" records, x y z charge (and a
    radius) after serial, name, residue, residue number."""
    lines = []
    for i in range(600):
        x, y, z = (r.random() * 24 for _ in range(3))
        lines.append('ATOM  %5d  C   RES  %4d    %8.3f%8.3f%8.3f %7.4f %6.4f'
                     % (i + 1, i // 10 + 1, x, y, z, r.random() * 2 - 1, 1.7))
    put(os.path.join(d, 'watbox.pqr'), ('\n'.join(lines) + '\nEND\n').encode())


def tpacf(d, r):
    """model.cc readdatafile: npoints lines "ra dec" in degrees; the data
    set, then the random sets (-n 4 -p 1024)."""
    def points():
        out = []
        for _ in range(1024):
            ra = r.random() * 360
            dec = math.degrees(math.asin(r.random() * 2 - 1))
            out.append('%.6f %.6f' % (ra, dec))
        return ('\n'.join(out) + '\n').encode()
    put(os.path.join(d, 'data.txt'), points())
    for i in range(1, 5):
        put(os.path.join(d, 'random%d.txt' % i), points())


def bfs(d, r):
    """main.cpp: the node count, "start degree" per node, the source node,
    the edge count, then "id cost" per edge; a near-regular connected graph
    (a ring plus random edges, degree 2 to 6), every edge of cost 1. With
    other costs the program is nondeterministic by itself: kernel.cl
    pushes a node again whenever its atom_min lowers the node's cost, and
    which lowerings happen depends on the order the work-items run, so the
    frontier sizes the host reads back (and the launch sizes it derives)
    differ from run to run; a replay then runs the recorded launch sizes
    over a queue of other contents, reads past it and can crash in the
    driver. With unit costs each node is pushed once, at its BFS level."""
    n = 8192
    adj = [set() for _ in range(n)]
    for i in range(n):
        adj[i].add((i + 1) % n)
        adj[(i + 1) % n].add(i)
    for i in range(n):
        for _ in range(r.randint(1, 2)):
            j = r.randrange(n)
            if j != i:
                adj[i].add(j)
                adj[j].add(i)
    head, edges = [], []
    for i in range(n):
        head.append('%d %d' % (len(edges), len(adj[i])))
        edges += ['%d 1' % j for j in sorted(adj[i])]
    text = [str(n)] + head + ['', '0', '', str(len(edges))] + edges
    put(os.path.join(d, 'graph.txt'), ('\n'.join(text) + '\n').encode())


def lbm(d, r):
    """lbm.c LBM_loadObstacleFile: SIZE_Z planes of SIZE_Y lines of SIZE_X
    characters ('.' free, anything else an obstacle), a newline after each
    line and each plane (layout_config.h: 120 x 120 x 150); a few spheres."""
    sx, sy, sz = 120, 120, 150
    spheres = [(r.uniform(20, 100), r.uniform(20, 100), r.uniform(20, 130), r.uniform(5, 15)) for _ in range(6)]
    out = bytearray()
    for z in range(sz):
        for y in range(sy):
            row = bytearray(b'.' * sx)
            for (cx, cy, cz, rad) in spheres:
                dy2 = (y - cy) ** 2 + (z - cz) ** 2
                if dy2 < rad * rad:
                    h = math.sqrt(rad * rad - dy2)
                    for x in range(max(0, int(cx - h)), min(sx, int(cx + h) + 1)):
                        row[x] = ord('#')
            out += row + b'\n'
        out += b'\n'
    put(os.path.join(d, 'obstacles.of'), bytes(out))


def sad(d, r):
    """image.c load_image: uint16 width, height (little-endian, multiples
    of 16), then width*height int16 pixels; two frames, the second the
    first moved by a few pixels plus noise."""
    w, h = 64, 48
    base = [[int(128 + 100 * math.sin(x / 5.0) * math.cos(y / 7.0) + r.randint(-8, 8)) for x in range(w + 8)]
            for y in range(h + 8)]
    def frame(dx, dy, noise):
        px = [base[y + dy][x + dx] + r.randint(-noise, noise) for y in range(h) for x in range(w)]
        return struct.pack('<HH', w, h) + struct.pack('<%dh' % len(px), *px)
    put(os.path.join(d, 'reference.bin'), frame(0, 0, 0))
    put(os.path.join(d, 'frame.bin'), frame(3, 2, 4))


def fft(d, r):
    """file.cc inputData: N*B complex numbers as pairs of raw floats (N and
    B are arguments: 256 64)."""
    n, b = 256, 64
    put(os.path.join(d, 'array.bin'), floats([r.random() * 2 - 1 for _ in range(2 * n * b)]))


def mri_gridding(d, r):
    """main.cpp setParameters: the text parameter file; readSampleData:
    FILE.data, numsamples ReconstructionSample records (UDTypes.h: real,
    imag, kX, kY, kZ, sdc floats), k in [-kmax, kmax)."""
    n = 32768
    params = ('aquisition.numsamples=%d\naquisition.kmax=0.5 0.5 0.5\n'
              'aquisition.matrixSize=32 32 32\nreconstruction.matrixSize=32 32 32\n'
              'gridding.matrixSize=64 64 64\ngridding.oversampling=2.0\n'
              'kernel.width=4.0\nkernel.useLUT=0\n' % n)
    put(os.path.join(d, 'small.uks'), params.encode())
    vals = []
    for _ in range(n):
        vals += [r.random() * 2 - 1, r.random() * 2 - 1, r.random() - 0.5, r.random() - 0.5, r.random() - 0.5, 1.0]
    put(os.path.join(d, 'small.uks.data'), floats(vals))


def imghisto(d, r):
    """file.c readImage: DATA_W*DATA_H big-endian uint16 12-bit pixels
    (the sizes are arguments: 256 256); smooth, so that neighbours share a
    bin, as the benchmark's description says."""
    w, h = 256, 256
    px = [int(2048 + 1500 * math.sin(x / 17.0 + y / 23.0) + r.randint(-20, 20)) & 0xfff for y in range(h) for x in range(w)]
    put(os.path.join(d, 'image.bin'), struct.pack('>%dH' % len(px), *px))


INPUTS = {'sgemm': sgemm, 'stencil': stencil, 'spmv': spmv, 'mri-q': mri_q, 'histo': histo,
          'cutcp': cutcp, 'tpacf': tpacf, 'bfs': bfs, 'lbm': lbm, 'sad': sad, 'fft': fft,
          'mri-gridding': mri_gridding, 'imghisto': imghisto}


def main():
    if len(sys.argv) != 2:
        print('usage: parboil_inputs.py DIR', file=sys.stderr)
        return 1
    try:
        for name, write in INPUTS.items():
            d = os.path.join(sys.argv[1], name)
            os.makedirs(d, exist_ok=True)
            write(d, rng(name))
    except OSError as e:
        print('parboil_inputs.py: %s' % e, file=sys.stderr)
        return 1
    print('parboil_inputs.py: %d input sets in %s' % (len(INPUTS), sys.argv[1]))
    return 0


if __name__ == '__main__':
    sys.exit(main())

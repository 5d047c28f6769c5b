#!/usr/bin/env python3
"""parboil_inputs.py [--size small|large] DIR — writes inputs for the
Parboil benchmarks (tests/suites/fetch.sh builds them; tests/suites/apps.list
runs them).

Parboil's own datasets are a separate download that is not public in its
repository, so these are ours: each file is in the format the benchmark's
own reader expects (the reader is named beside each writer below), filled
from a fixed seed (the same bytes on every machine and every run).

Two sizes, the same file names in both (SIZES below holds each writer's
parameters):
  small (the default): each program runs in a few seconds on PoCL's CPU
    device; `make suites` and `make test` use these.
  large: for the GPU machine (bench/gpu_suites.sh with PARBOIL_SIZE=large),
    where the small inputs make microsecond kernels: of the size of
    Parboil's own data sets where the program allows (stencil's default
    512x512x64 for 100 steps, mri-q's large 64^3 pixels, spmv's large
    Dubcova3 146,689 rows, bfs's one million nodes, lbm's short run of 100
    steps), otherwise so that the OpenCL work takes some tens of
    milliseconds on an H200, within each program's limits (below); about
    380 MB in all, written in some tens of seconds.
The sizes some programs take as arguments (after `--` in apps.list) are
written to DIR/BENCH/args, one line: apps.list reads them from there, so
that they follow the files.
Into DIR/BENCH/. Exit status 0, or 1 with one line on stderr.
"""
import array
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


def packed(code, vals):
    """vals as little-endian binary of the array type code (f, h, H, I): an
    array, not struct.pack(*vals), so that millions of values need no
    argument tuple; the same bytes as struct.pack('<...')."""
    a = array.array(code, vals)
    assert a.itemsize == {'f': 4, 'h': 2, 'H': 2, 'I': 4}[code]
    if sys.byteorder == 'big':
        a.byteswap()
    return a.tobytes()


def uniform(r, count, scale=1.0, offset=0.0):
    # count floats r.random() * scale + offset, drawn in order (for the small
    # sets the floats of the lists before: x * 1.0 + -0.5 == x - 0.5 exactly)
    rand = r.random
    return packed('f', (rand() * scale + offset for _ in range(count)))


def sgemm(d, r, m, n, k):
    """io.cc readColMajorMatrixFile: text "rows cols" then the column-major
    values. A is m x k, B^T n x k (B, the second input, is only opened);
    main.cc launches 32 x 32 work-groups over m x n, so both are multiples
    of 32."""
    def mat(rows, cols):
        vals = ' '.join('%.6f' % (r.random() * 2 - 1) for _ in range(rows * cols))
        return ('%d %d\n%s\n' % (rows, cols, vals)).encode()
    put(os.path.join(d, 'matrix1.txt'), mat(m, k))
    bt = mat(n, k)
    put(os.path.join(d, 'matrix2.txt'), bt)
    put(os.path.join(d, 'matrix2t.txt'), bt)


def stencil(d, r, nx, ny, nz, steps):
    """main.c read_data: nx*ny*nz raw floats, x fastest; the sizes and the
    iteration count are arguments (nx - 2 need not be a multiple of its
    256-item work-groups: the kernel checks x)."""
    put(os.path.join(d, 'input.bin'), uniform(r, nx * ny * nz))
    return '%d %d %d %d' % (nx, ny, nz, steps)


def spmv(d, r, dim, most):
    """convert_dataset.c coo_to_jds: a Matrix Market coordinate file,
    values read, the lower triangle of a symmetric matrix (main.c says
    mirrored), row i: its diagonal and 1 to `most` entries in columns <= i;
    file.c input_vec: dim raw floats. main.c holds the JDS row pointers
    and the per-32-rows counts in buffers of 5000 ints: so the longest row
    stays under 5000 entries (mirrored, the first rows are the longest:
    42 small, 138 large) and dim under 5000 * 32."""
    cols = [[] for _ in range(dim)]  # per column its lines, rows in order
    for i in range(dim):
        row = {i: 4.0 + r.random()}
        for _ in range(r.randint(1, most)):
            j = r.randrange(0, i + 1)
            row[j] = r.random() * 2 - 1  # a repeated j keeps the last value
        for j, v in row.items():
            cols[j].append('%d %d %.6f' % (i + 1, j + 1, v))
    lines = ['%%MatrixMarket matrix coordinate real symmetric',
             '%d %d %d' % (dim, dim, sum(map(len, cols)))]
    for c in cols:
        lines += c
    put(os.path.join(d, 'matrix.mtx'), ('\n'.join(lines) + '\n').encode())
    put(os.path.join(d, 'vector.bin'), uniform(r, dim))


def mri_q(d, r, numK, numX):
    """file.cc inputData: int numK, int numX, then kx, ky, kz (numK floats
    each), x, y, z (numX each), phiR, phiI (numK each). kernels.cl reads x
    without a bound (numX a multiple of its 256-item work-groups);
    computeQ.c sends k in tiles of 1024."""
    k = uniform(r, 3 * numK, 1.0, -0.5)
    x = uniform(r, 3 * numX, 64.0, -32.0)
    phi = uniform(r, 2 * numK, 2.0, -1.0)
    put(os.path.join(d, 'kspace.bin'), struct.pack('<ii', numK, numX) + k + x + phi)


def histo(d, r, iw, ih, hw, hh, steps):
    """main.cpp: uint img_width, img_height, histo_width, histo_height,
    then img_width*img_height uint bin indices, mostly near the middle of
    the histogram (as Parboil describes its input): histo_prescan.cl takes
    the range as the mean +- 10 standard deviations of a sample, unsigned,
    so the deviation must stay under a tenth of the mean; its 64 x 512
    work-items each sample 1/8 of a 64th of the image, so the image has at
    least 64*8*512 pixels (fewer: a division by a zero count). Also from
    main.cpp and its kernels: one work-group of img_width/2 items per 16
    rows (so img_width <= 2048, a GPU's 1024-item limit, and img_height a
    multiple of 16: the kernel writes 16 rows unchecked), the per-bin
    buffers hold img_width*histo_height entries (so img_width >=
    histo_width), and a bin's block number, bin / (KB * 1024) with KB 48
    for a device's 48 KiB of local memory or 24 for less, is a uchar (so
    bins < 256 * 24 Ki). The iteration count is an argument."""
    bins, gauss = hw * hh, r.gauss
    img = [min(max(int(gauss(bins / 2, bins / 40)), 0), bins - 1) for _ in range(iw * ih)]
    put(os.path.join(d, 'img.bin'), struct.pack('<4I', iw, ih, hw, hh) + packed('I', img))
    return '%d' % steps


def cutcp(d, r, atoms, box):
    """readatom.c read_atom_file: PQR "ATOM" records, x y z charge (and a
    radius) after serial, name, residue, residue number. The density stays
    that of the small set (a 4 A bin holds 2.8 atoms on average): cutoff.c
    gives the GPU at most 8 atoms a bin and computes the rest on the CPU."""
    lines = []
    for i in range(atoms):
        x, y, z = (r.random() * box for _ in range(3))
        lines.append('ATOM  %5d  C   RES  %4d    %8.3f%8.3f%8.3f %7.4f %6.4f'
                     % (i + 1, i // 10 + 1, x, y, z, r.random() * 2 - 1, 1.7))
    put(os.path.join(d, 'watbox.pqr'), ('\n'.join(lines) + '\nEND\n').encode())


def tpacf(d, r, points, sets):
    """model.cc readdatafile: `points` lines "ra dec" in degrees; the data
    set, then the random sets (arguments -n sets -p points; apps.list
    names 4 random files). main.cc runs 2 * sets + 1 work-groups, each
    over points x points pairs."""
    def points_text():
        out = []
        for _ in range(points):
            ra = r.random() * 360
            dec = math.degrees(math.asin(r.random() * 2 - 1))
            out.append('%.6f %.6f' % (ra, dec))
        return ('\n'.join(out) + '\n').encode()
    put(os.path.join(d, 'data.txt'), points_text())
    for i in range(1, sets + 1):
        put(os.path.join(d, 'random%d.txt' % i), points_text())
    return '-n %d -p %d' % (sets, points)


def bfs(d, r, n):
    """main.cpp: the node count, "start degree" per node, the source node,
    the edge count, then "id cost" per edge; a near-regular connected graph
    (a ring plus random edges, 5 a node on average), every edge of cost 1. With
    other costs the program is nondeterministic by itself: kernel.cl
    pushes a node again whenever its atom_min lowers the node's cost, and
    which lowerings happen depends on the order the work-items run, so the
    frontier sizes the host reads back (and the launch sizes it derives)
    differ from run to run; a replay then runs the recorded launch sizes
    over a queue of other contents, reads past it and can crash in the
    driver. With unit costs each node is pushed once, at its BFS level.
    kernel.cl queues at most 1600 new nodes per 256-item work-group:
    5 edges a node keep far under that."""
    # lists, deduplicated at the end (a million sets take several times the memory)
    adj = [[(i + 1) % n, (i - 1) % n] for i in range(n)]  # the ring
    for i in range(n):
        for _ in range(r.randint(1, 2)):
            j = r.randrange(n)
            if j != i:
                adj[i].append(j)
                adj[j].append(i)
    head, start = [], 0
    for i in range(n):
        adj[i] = sorted(set(adj[i]))
        head.append('%d %d' % (start, len(adj[i])))
        start += len(adj[i])
    edges = '\n'.join([' 1\n'.join(map(str, a)) + ' 1' for a in adj if a])
    text = [str(n)] + head + ['', '0', '', str(start), edges]
    put(os.path.join(d, 'graph.txt'), ('\n'.join(text) + '\n').encode())


def lbm(d, r, steps):
    """lbm.c LBM_loadObstacleFile: SIZE_Z planes of SIZE_Y lines of SIZE_X
    characters ('.' free, anything else an obstacle), a newline after each
    line and each plane (layout_config.h: 120 x 120 x 150, fixed when it
    is compiled); a few spheres. The time steps are an argument."""
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
    return '%d' % steps


def sad(d, r, w, h):
    """image.c load_image: uint16 width, height (little-endian, multiples
    of 16), then width*height int16 pixels; two frames, the second the
    first moved by a few pixels plus noise. main.cpp keeps 41 * 1096
    uint16 SADs per 16 x 16 macroblock on the device and reads them all
    back (90 KB a macroblock)."""
    base = [[int(128 + 100 * math.sin(x / 5.0) * math.cos(y / 7.0) + r.randint(-8, 8)) for x in range(w + 8)]
            for y in range(h + 8)]
    def frame(dx, dy, noise):
        px = [base[y + dy][x + dx] + r.randint(-noise, noise) for y in range(h) for x in range(w)]
        return struct.pack('<HH', w, h) + packed('h', px)
    put(os.path.join(d, 'reference.bin'), frame(0, 0, 0))
    put(os.path.join(d, 'frame.bin'), frame(3, 2, 4))


def fft(d, r, n, b):
    """file.cc inputData: N*B complex numbers as pairs of raw floats (N and
    B are arguments). fft.cpp: radix 2, work-groups of N/2 items (so N a
    power of 2, at most 2048 on a GPU)."""
    put(os.path.join(d, 'array.bin'), uniform(r, 2 * n * b, 2.0, -1.0))
    return '%d %d' % (n, b)


def mri_gridding(d, r, n, matrix, binsize):
    """main.cpp setParameters: the text parameter file; readSampleData:
    FILE.data, numsamples ReconstructionSample records (UDTypes.h: real,
    imag, kX, kY, kZ, sdc floats), k in [-kmax, kmax); the acquisition and
    reconstruction matrix `matrix` cubed, gridded at twice that (its
    work-groups of 8 x 4 x 2 tile the grid). The argument is the GPU's
    samples per grid cell (more go to the CPU). main.cpp also grids all
    samples on the CPU (its "gold" check)."""
    grid = 2 * matrix
    params = ('aquisition.numsamples=%d\naquisition.kmax=0.5 0.5 0.5\n'
              'aquisition.matrixSize=%d %d %d\nreconstruction.matrixSize=%d %d %d\n'
              'gridding.matrixSize=%d %d %d\ngridding.oversampling=2.0\n'
              'kernel.width=4.0\nkernel.useLUT=0\n' % ((n,) + (matrix,) * 6 + (grid,) * 3))
    put(os.path.join(d, 'small.uks'), params.encode())
    rand = r.random
    def sample():
        # one record, its fields drawn in order
        return (rand() * 2 - 1, rand() * 2 - 1, rand() - 0.5, rand() - 0.5, rand() - 0.5, 1.0)
    put(os.path.join(d, 'small.uks.data'), packed('f', (v for _ in range(n) for v in sample())))
    return '%d' % binsize


def imghisto(d, r, w, h, bins, reps):
    """file.c readImage: DATA_W*DATA_H big-endian uint16 12-bit pixels
    (the sizes are arguments: device 0, w, h, bins, repetitions); smooth,
    so that neighbours share a bin, as the benchmark's description says."""
    sin, noise = math.sin, r.randint
    px = [int(2048 + 1500 * sin(x / 17.0 + y / 23.0) + noise(-20, 20)) & 0xfff for y in range(h) for x in range(w)]
    a = array.array('H', px)
    if sys.byteorder == 'little':
        a.byteswap()
    put(os.path.join(d, 'image.bin'), a.tobytes())
    return '0 %d %d %d %d' % (w, h, bins, reps)


WRITERS = {'sgemm': sgemm, 'stencil': stencil, 'spmv': spmv, 'mri-q': mri_q, 'histo': histo,
           'cutcp': cutcp, 'tpacf': tpacf, 'bfs': bfs, 'lbm': lbm, 'sad': sad, 'fft': fft,
           'mri-gridding': mri_gridding, 'imghisto': imghisto}

# each writer's parameters, per size (small: the sets `make test` has used all along)
SIZES = {
    'small': {
        'sgemm': dict(m=128, n=96, k=64),
        'stencil': dict(nx=64, ny=64, nz=32, steps=10),
        'spmv': dict(dim=2048, most=8),
        'mri-q': dict(numK=2048, numX=4096),
        'histo': dict(iw=1024, ih=512, hw=256, hh=1024, steps=4),
        'cutcp': dict(atoms=600, box=24),
        'tpacf': dict(points=1024, sets=4),
        'bfs': dict(n=8192),
        'lbm': dict(steps=2),
        'sad': dict(w=64, h=48),
        'fft': dict(n=256, b=64),
        'mri-gridding': dict(n=32768, matrix=32, binsize=32),
        'imghisto': dict(w=256, h=256, bins=256, reps=4),
    },
    'large': {
        'sgemm': dict(m=2048, n=2048, k=1024),
        'stencil': dict(nx=512, ny=512, nz=64, steps=100),
        'spmv': dict(dim=146689, most=24),
        'mri-q': dict(numK=16384, numX=262144),
        'histo': dict(iw=2048, ih=2048, hw=2048, hh=2048, steps=10),
        'cutcp': dict(atoms=38400, box=96),
        'tpacf': dict(points=8192, sets=4),
        'bfs': dict(n=1000000),
        'lbm': dict(steps=100),
        'sad': dict(w=1280, h=720),
        'fft': dict(n=512, b=16384),
        'mri-gridding': dict(n=2097152, matrix=128, binsize=32),
        'imghisto': dict(w=2048, h=2048, bins=256, reps=400),
    },
}


def parse(argv):
    # [--size small|large] DIR, or None
    size = 'small'
    if len(argv) == 3 and argv[0] == '--size' and argv[1] in SIZES:
        size, argv = argv[1], argv[2:]
    elif len(argv) == 2 and argv[0].startswith('--size=') and argv[0][7:] in SIZES:
        size, argv = argv[0][7:], argv[1:]
    return (size, argv[0]) if len(argv) == 1 and not argv[0].startswith('-') else None


def main():
    got = parse(sys.argv[1:])
    if got is None:
        print('usage: parboil_inputs.py [--size small|large] DIR', file=sys.stderr)
        return 1
    size, top = got
    try:
        for name, write in WRITERS.items():
            d = os.path.join(top, name)
            os.makedirs(d, exist_ok=True)
            args = write(d, rng(name), **SIZES[size][name])
            if args is not None:
                put(os.path.join(d, 'args'), (args + '\n').encode())
    except OSError as e:
        print('parboil_inputs.py: %s' % e, file=sys.stderr)
        return 1
    print('parboil_inputs.py: %d %s input sets in %s' % (len(WRITERS), size, top))
    return 0


if __name__ == '__main__':
    sys.exit(main())

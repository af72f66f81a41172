# Reads a heightfield for the bench scripts: (heights as float64 rows, cell x, cell z in metres).
import heapq
import json
import re
import subprocess

import numpy as np


def read_dem(path, terrane="build/terrane"):
    """NAME_WxH_CELLm.r32 (written by the bench scripts) directly; anything else through
    `terrane info` and `terrane convert` (a geographic DEM comes back reprojected)."""
    parts = path[:-4].rsplit("_", 2)
    if path.endswith(".r32") and len(parts) == 3 and re.fullmatch(r"[0-9]+x[0-9]+", parts[1]):
        W, H = (int(v) for v in parts[1].split("x"))
        cx = cz = float(parts[2].rstrip("m"))
        return np.fromfile(path, dtype="<f4").astype(np.float64).reshape(H, W), cx, cz
    info = json.loads(subprocess.run([terrane, "info", path, "--format", "json"], check=True,
                                     capture_output=True, text=True).stdout)
    W, H = info["grid"]
    cx, cz = (abs(v) for v in info["metres_per_pixel"])
    tmp = subprocess.run(["mktemp", "--suffix=.r32"], capture_output=True,
                         text=True).stdout.strip()
    try:
        conv = subprocess.run([terrane, "convert", path, tmp], check=True, capture_output=True,
                              text=True)
        conv = conv.stdout + conv.stderr
        z = np.fromfile(tmp, dtype="<f4").astype(np.float64)
    finally:
        subprocess.run(["rm", "-f", tmp])
    if z.size != W * H:
        # a geographic DEM is reprojected: "..., C m cells (...): W x H samples -> W2 x H2"
        got = re.search(r"([0-9.]+) m cells.*-> ([0-9]+) x ([0-9]+)", conv, re.S)
        cx = cz = float(got.group(1))
        W, H = int(got.group(2)), int(got.group(3))
    return z.reshape(H, W), cx, cz


def fill_flats(z):
    """Priority-flood fill with a small rise over flats (Barnes et al. 2014), so every D8 path
    reaches the border (averaging onto a coarser cell leaves pits in narrow channels)."""
    H, W = z.shape
    n = H * W
    zf = z.ravel().copy()
    done = np.zeros(n, bool)
    border = np.nonzero(np.pad(np.zeros((H - 2, W - 2), bool), 1, constant_values=True).ravel())[0]
    heap = [(zf[i], int(i)) for i in border]
    done[border] = True
    heapq.heapify(heap)
    offs = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx]
    while heap:
        h, i = heapq.heappop(heap)
        y, x = divmod(i, W)
        for dy, dx in offs:
            yy, xx = y + dy, x + dx
            if 0 <= yy < H and 0 <= xx < W:
                j = yy * W + xx
                if not done[j]:
                    done[j] = True
                    if zf[j] <= h:
                        zf[j] = h + 1e-4
                    heapq.heappush(heap, (zf[j], j))
    return zf.reshape(H, W)


def average_matrix(n, c_in, c_out):
    """Area weights taking n samples of c_in metres onto cells of c_out metres."""
    m = int(np.floor(n * c_in / c_out + 1e-9))
    a = np.zeros((m, n))
    for i in range(m):
        lo, hi = i * c_out, (i + 1) * c_out
        j0, j1 = int(lo // c_in), min(n - 1, int(np.ceil(hi / c_in)))
        for j in range(j0, j1 + 1):
            w = min(hi, (j + 1) * c_in) - max(lo, j * c_in)
            if w > 0:
                a[i, j] = w
        a[i] /= a[i].sum()
    return a

#!/usr/bin/env python3
# Hillslope texture and nested valley sizes of a heightfield beside a real DEM.
#
# usage: python3 bench/hillslope_texture.py FILE [AGG] [TERRANE]
#   FILE     any heightfield terrane reads; AGG (default 1) averages AGG x AGG blocks first (to
#            compare grids of different cells at one cell size); the middle 1024^2 samples at
#            most are measured; TERRANE the CLI (default build/terrane).
# Needs numpy (Debian: python3-numpy; run it with that Python, /usr/bin/python3).
#
# Prints, in cells of the grid measured (so a 3 m map and a 30 m DEM compare by texture, not by
# metres), for windows of 64 x 64 samples on ground steeper than 5 degrees:
#   rill peak   the median over windows of the strongest sample of the curvature's 2D power
#               spectrum (Hann window, 3 x 3 smoothed) at wavelengths of 3-24 cells, over the
#               median of its ring of wavelengths: a corduroy of parallel rills of one spacing
#               puts its power into one direction and wavelength (a sharp peak); land whose
#               gullies vary in spacing and direction spreads it.
#   spacing cv  the spread of the valley spacing along transects across the slope: on each
#               window's rows and columns (whichever runs closer to the contours, by the
#               window's mean gradient), the distances between successive curvature maxima
#               (valley axes, concave samples more curved than their neighbours); the
#               coefficient of variation (std / mean) of those distances over the map.
#               Evenly spaced rills give a narrow distribution.
#   nesting     the scale spectrum of the valleys: the energy of the scale-normalised Laplacian
#               of Gaussian (s^2 LoG, s = 2, 4, 8, 16 and 32 cells) against s; real land gains
#               energy steadily toward larger scales (valleys within valleys), land with
#               valleys of one size has a bump at that size and little below it. Printed:
#               the log2 energy ratios between successive scales (4/2, 8/4, 16/8, 32/16) and
#               their spread (max - min): a steady power law gives similar ratios.
import sys

import numpy as np

from dem_read import read_dem

path = sys.argv[1]
agg = int(sys.argv[2]) if len(sys.argv) > 2 else 1
terrane = sys.argv[3] if len(sys.argv) > 3 else "build/terrane"
z, cx, cz = read_dem(path, terrane)
H, W = z.shape
if agg > 1:
    H, W = H // agg, W // agg
    z = z[:H * agg, :W * agg].reshape(H, agg, W, agg).mean(axis=(1, 3))
    cx, cz = cx * agg, cz * agg
S = 1024
if H > S or W > S:
    j0, i0 = (H - min(H, S)) // 2, (W - min(W, S)) // 2
    z = z[j0:j0 + min(H, S), i0:i0 + min(W, S)]
    H, W = z.shape
z = np.where(np.isfinite(z), z, np.nanmin(z))

gz, gx = np.gradient(z, cz, cx)
slope = np.hypot(gx, gz)
curv = (np.roll(z, 1, 0) + np.roll(z, -1, 0) + np.roll(z, 1, 1) + np.roll(z, -1, 1) - 4 * z)
curv[0, :] = curv[-1, :] = curv[:, 0] = curv[:, -1] = 0

win = 64
han = np.hanning(win)[:, None] * np.hanning(win)[None, :]
kk = np.hypot(np.fft.fftfreq(win)[None, :], np.fft.fftfreq(win)[:, None])  # cycles per cell
edges = np.geomspace(1 / 24, 1 / 3, 7)
peaks, spacings = [], []
steep = np.tan(np.radians(5))
for j0 in range(0, H - win + 1, win):
    for i0 in range(0, W - win + 1, win):
        sl = (slice(j0, j0 + win), slice(i0, i0 + win))
        if np.mean(slope[sl] > steep) < 0.8:
            continue
        c = curv[sl]
        c = (c - c.mean()) * han
        P = np.abs(np.fft.fft2(c)) ** 2
        P = sum(np.roll(np.roll(P, a, 0), b, 1) for a in (-1, 0, 1) for b in (-1, 0, 1)) / 9
        best = 0.0
        for lo, hi in zip(edges[:-1], edges[1:]):
            ring = P[(kk >= lo) & (kk < hi)]
            if ring.size >= 12:
                best = max(best, ring.max() / np.median(ring))
        peaks.append(best)
        # transects along the contours: rows when the land falls north-south, else columns
        cw = curv[sl]
        lines = cw if abs(gz[sl].mean()) >= abs(gx[sl].mean()) else cw.T
        for line in lines:
            # valley axes: concave (positive Laplacian) local maxima of curvature
            m = (line[1:-1] > line[:-2]) & (line[1:-1] >= line[2:]) & (line[1:-1] > 0)
            # a valley must stand out: above the line's median positive curvature
            pos = line[line > 0]
            if pos.size < 4:
                continue
            m &= line[1:-1] > np.median(pos)
            idx = np.nonzero(m)[0]
            if idx.size >= 3:
                spacings.extend(np.diff(idx).tolist())
peak = float(np.median(peaks)) if peaks else float("nan")
sp = np.array(spacings, dtype=float)
cv = float(sp.std() / sp.mean()) if sp.size else float("nan")

# nesting: scale-normalised LoG energy by scale, by FFT (periodic; the Hann taper keeps the
# wrap-around from adding edges)
zz = (z - z.mean()) * (np.hanning(H)[:, None] * np.hanning(W)[None, :])
F = np.fft.fft2(zz)
k2 = (2 * np.pi) ** 2 * (np.fft.fftfreq(W)[None, :] ** 2 + np.fft.fftfreq(H)[:, None] ** 2)
energy = []
scales = [2, 4, 8, 16, 32]
for s in scales:
    # s^2 LoG in Fourier space: -s^2 k^2 exp(-s^2 k^2 / 2); energy by Parseval
    G = s * s * k2 * np.exp(-0.5 * s * s * k2)
    energy.append(float(np.sum(np.abs(F * G) ** 2)))
ratios = [np.log2(energy[i + 1] / energy[i]) for i in range(len(scales) - 1)]
print("%s, %.3g m cells, %d x %d, %d windows: rill peak %.1f, spacing cv %.2f (mean %.1f cells, "
      "%d valleys), nesting log2 ratios %s spread %.2f"
      % (path, cx, W, H, len(peaks), peak, cv, sp.mean() if sp.size else float("nan"), sp.size,
         " ".join("%.2f" % r for r in ratios), max(ratios) - min(ratios)))

#!/usr/bin/env python3
# Valley spacing along a flank: are its valleys evenly spaced, side by side like a comb?
#
# usage: python3 bench/flank_spacing.py FILE COL ROW WIDTH HEIGHT [TERRANE]
#   FILE     any heightfield terrane reads; the window is WIDTH x HEIGHT samples from column
#            COL and row ROW of the file (row 0 at the top, the far edge, as `terrane render`
#            draws it); the valleys should run across the rows (along x), as on a flank
#            facing east or west. TERRANE the CLI (default build/terrane).
# Needs numpy (Debian: python3-numpy; run it with that Python).
#
# Prints, over transects down the window's columns every 8 samples (lightly smoothed):
#   valleys  the valley floors crossed: minima with 3 m of rise on both sides
#   spacing  mean and median distance between neighbouring floors, and its coefficient of
#            variation (std / mean): a comb of evenly spaced valleys gives a low CV (the SRTM
#            of the San Gabriel Mountains gives 0.62-0.76 in windows of 280 x 260 samples)
#   peak     the strongest period (100 m - 1.2 km) of the curvature along the transects over
#            the median of that band: how much of it repeats at one spacing
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

path = sys.argv[1]
x0, z0, w, h = (int(v) for v in sys.argv[2:6])
terrane = sys.argv[6] if len(sys.argv) > 6 else "build/terrane"
info = json.loads(subprocess.run([terrane, "info", path, "--format", "json"], check=True,
                                 capture_output=True, text=True).stdout)
W, H = info["grid"]
cx = abs(info["metres_per_pixel"][0])
fd, tmp = tempfile.mkstemp(suffix=".r32")
os.close(fd)
subprocess.run([terrane, "convert", path, tmp, "-q"], check=True)
z = np.fromfile(tmp, dtype="<f4").astype(np.float64).reshape(H, W)[z0:z0 + h, x0:x0 + w]
os.remove(tmp)


def floors(p, rise):
    """Indices of the minima of p with at least rise of ground on both sides before lower."""
    out = []
    for i in range(1, len(p) - 1):
        if not (p[i] <= p[i - 1] and p[i] < p[i + 1]):
            continue
        ok = True
        for side in (p[:i][::-1], p[i + 1:]):
            top = 0.0
            for v in side:
                if v < p[i]:
                    break
                top = max(top, v - p[i])
            ok = ok and top >= rise
        if ok:
            out.append(i)
    return out


gaps = []
for i in range(0, z.shape[1], 8):
    p = np.convolve(z[:, i], [0.25, 0.5, 0.25], mode="same")[1:-1]
    gaps += list(np.diff(floors(p, 3.0)) * cx)
gaps = np.array(gaps)
c = (np.roll(z, 1, 0) + np.roll(z, -1, 0) - 2 * z)[1:-1, :]
c = (c - c.mean(axis=0)) * np.hanning(c.shape[0])[:, None]
P = (np.abs(np.fft.rfft(c, axis=0)) ** 2).mean(axis=1)
f = np.fft.rfftfreq(c.shape[0], d=cx)
band = (f >= 1 / 1200) & (f <= 1 / 100)
print("%s [%d,%d %dx%d], %.3g m cells: valleys %d, spacing mean %.0f m, median %.0f m, CV %.2f; "
      "peak %.1f at %.0f m" % (path, x0, z0, w, h, cx, len(gaps), gaps.mean(), np.median(gaps),
                               gaps.std() / gaps.mean(), P[band].max() / np.median(P[band]),
                               1 / f[band][P[band].argmax()]))

#!/usr/bin/env python3
# Valleys at one spacing, side by side like a comb: a bump on the curvature's spectrum.
#
# usage: python3 bench/comb_spectrum.py FILE [WIN] [TERRANE]
#   FILE     any heightfield terrane reads (converted to R32 by `terrane convert`)
#   WIN      window side in samples, at least 128 (default 128); windows overlap by half
#   TERRANE  the CLI (default build/terrane)
# Needs numpy (Debian: python3-numpy; run it with that Python).
#
# In each window: the Laplacian, each row and each column less its mean under a Hann window,
# its power at wavenumbers 3 .. WIN/4 cycles a window summed over the lines of both directions,
# averaged in 12 log-spaced bands; the strongest band over the least-squares line through log
# power on log wavenumber. A landscape whose valleys keep one spacing (a steady state of
# uniform uplift on uniform rock, where creep against incision sets it) has a bump there; real
# land's spacing varies and its spectrum follows the line. Prints the median, 90th percentile
# and largest over the windows. tests/test_example_realism.c computes the same median (its
# comb_peak) on the examples: the San Gabriel SRTM (30 m) gives a median of 1.27 at WIN 128.
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

path = sys.argv[1]
win = int(sys.argv[2]) if len(sys.argv) > 2 else 128
terrane = sys.argv[3] if len(sys.argv) > 3 else "build/terrane"
if win < 128:
    sys.exit("comb_spectrum.py: WIN %d is under 128: its wavenumbers 3..WIN/4 fill fewer than "
             "12 bands" % win)
fd, tmp = tempfile.mkstemp(suffix=".r32")
os.close(fd)
# The grid as written (a geographic DEM is reprojected onto metres first).
done = json.loads(subprocess.run([terrane, "convert", path, tmp, "--format", "json"], check=True,
                                 capture_output=True, text=True).stdout)
W, H = done["grid"]
z = np.fromfile(tmp, dtype="<f4").astype(np.float64)
os.remove(tmp)
z = z.reshape(-1, W)

BANDS = 12
k = np.arange(3, win // 4 + 1)
lk = np.log(k)
band = np.minimum((BANDS * (lk - lk[0]) / (lk[-1] - lk[0] + 1e-9)).astype(int), BANDS - 1)
hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(win) / (win - 1))
peaks = []
for z0 in range(0, z.shape[0] - win + 1, win // 2):
    for x0 in range(0, z.shape[1] - win + 1, win // 2):
        a = z[z0:z0 + win, x0:x0 + win]
        c = (np.roll(a, 1, 0) + np.roll(a, -1, 0) + np.roll(a, 1, 1) + np.roll(a, -1, 1)
             - 4 * a)[1:-1, 1:-1]
        c = np.pad(c, 1, mode="edge")  # the border takes its inner neighbour's curvature
        if not np.isfinite(c).all():
            continue
        p = np.zeros(len(k))
        for lines in (c, c.T):
            d = (lines - lines.mean(axis=1, keepdims=True)) * hann[None, :]
            p += (np.abs(np.fft.rfft(d, axis=1)) ** 2)[:, k].sum(axis=0)
        y = np.log([p[band == b].mean() for b in range(BANDS)])
        x = np.array([lk[band == b].mean() for b in range(BANDS)])
        slope, icept = np.polyfit(x, y, 1)
        peaks.append(np.exp((y - (icept + slope * x)).max()))
peaks = np.array(peaks)
print("%s: %d windows of %d^2: comb median %.3f, p90 %.3f, max %.3f"
      % (path, len(peaks), win, np.median(peaks), np.percentile(peaks, 90), peaks.max()))

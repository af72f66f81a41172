#!/usr/bin/env python3
# Drainage-pattern figures of a heightfield beside a real DEM: is it a ladder of parallel valleys?
#
# usage: python3 bench/drainage_pattern.py FILE [AGG] [TERRANE]
#   FILE     any heightfield terrane reads (GeoTIFF, .ter, PNG, ...); AGG (default 1) averages
#            AGG x AGG blocks first, so grids of different cells compare at one cell size (the
#            Mountain Range at 1025^2, 12.5 m, with AGG 2 against a 30 m DEM); the middle 512^2
#            samples at most are measured; TERRANE the CLI (default build/terrane).
# Needs numpy (Debian: python3-numpy; run it with that Python).
#
# Prints:
#   ladder   the strongest sample of the curvature's 2D power spectrum (3 x 3 smoothed, Hann
#            window) at wavelengths of 100 m to 1.2 km over the median of its ring of wavelengths
#            (12 geometric rings): evenly spaced parallel valleys put their power into one
#            direction and wavelength. tests/test_preset_realism.c computes the same figure in C.
#   coherence  the mean resultant length of the channels' flow directions (D8, samples draining
#            0.1 km^2 or more, the direction to the sample 8 steps downstream) in 2 km windows,
#            weighted by channel samples: 1 when every channel runs the same way.
import json
import subprocess
import sys

import numpy as np

path = sys.argv[1]
agg = int(sys.argv[2]) if len(sys.argv) > 2 else 1
terrane = sys.argv[3] if len(sys.argv) > 3 else "build/terrane"
info = json.loads(subprocess.run([terrane, "info", path, "--format", "json"], check=True,
                                 capture_output=True, text=True).stdout)
W, H = info["grid"]
cx, cz = (abs(v) for v in info["metres_per_pixel"])
tmp = subprocess.run(["mktemp", "--suffix=.r32"], capture_output=True, text=True).stdout.strip()
subprocess.run([terrane, "convert", path, tmp, "-q"], check=True)
z = np.fromfile(tmp, dtype="<f4").astype(np.float64).reshape(H, W)
subprocess.run(["rm", "-f", tmp])
if agg > 1:
    H, W = H // agg, W // agg
    z = z[:H * agg, :W * agg].reshape(H, agg, W, agg).mean(axis=(1, 3))
    cx, cz = cx * agg, cz * agg
if H > 512 or W > 512:
    j0, i0 = (H - min(H, 512)) // 2, (W - min(W, 512)) // 2
    z = z[j0:j0 + min(H, 512), i0:i0 + min(W, 512)]
    H, W = z.shape
valid = np.isfinite(z)
z = np.where(valid, z, np.nanmin(z) - 1)
n = H * W

# ladder: the curvature's spectrum
c = (np.roll(z, 1, 0) + np.roll(z, -1, 0) + np.roll(z, 1, 1) + np.roll(z, -1, 1) - 4 * z)[1:-1, 1:-1]
c = (c - c.mean()) * np.hanning(c.shape[0])[:, None] * np.hanning(c.shape[1])[None, :]
P = np.abs(np.fft.fft2(c)) ** 2
P = sum(np.roll(np.roll(P, a, 0), b, 1) for a in (-1, 0, 1) for b in (-1, 0, 1)) / 9
k = np.hypot(np.fft.fftfreq(c.shape[1], d=cx)[None, :], np.fft.fftfreq(c.shape[0], d=cz)[:, None])
ladder, ladder_at = 0.0, 0.0
edges = np.geomspace(1 / 1200, 1 / 100, 13)
for lo, hi in zip(edges[:-1], edges[1:]):
    ring = P[(k >= lo) & (k < hi)]
    if ring.size >= 20 and ring.max() / np.median(ring) > ladder:
        ladder, ladder_at = ring.max() / np.median(ring), 2 / (lo + hi)

# coherence: D8 receivers, drainage area, channel directions
DI, DJ = [1, 1, 0, -1, -1, -1, 0, 1], [0, 1, 1, 1, 0, -1, -1, -1]
best, rcv = np.zeros(n), np.arange(n)
zp = np.pad(z, 1, constant_values=np.inf)
ip = np.pad(np.arange(n).reshape(H, W), 1, constant_values=-1)
for di, dj in zip(DI, DJ):
    s = ((z - zp[1 + dj:1 + dj + H, 1 + di:1 + di + W]) / np.hypot(di * cx, dj * cz)).ravel()
    t = ip[1 + dj:1 + dj + H, 1 + di:1 + di + W].ravel()
    m = (s > best) & (t >= 0)
    best[m], rcv[m] = s[m], t[m]
area = valid.ravel() * cx * cz
for v in np.argsort(-z.ravel(), kind="stable"):
    if rcv[v] != v:
        area[rcv[v]] += area[v]
chan = (area >= 1e5) & valid.ravel()
r8 = np.arange(n)
for _ in range(8):
    r8 = rcv[r8]
ii, jj = np.arange(n) % W, np.arange(n) // W
dx, dz = (ii[r8] - ii) * cx, (jj[r8] - jj) * cz
norm = np.hypot(dx, dz)
cm = chan & (norm > 0)
ux = np.where(cm, dx / np.where(norm > 0, norm, 1), 0).reshape(H, W)
uz = np.where(cm, dz / np.where(norm > 0, norm, 1), 0).reshape(H, W)
cm = cm.reshape(H, W)
win = max(2, int(round(2000 / cx)))
R, Wt = [], []
for j0 in range(0, H - win + 1, win):
    for i0 in range(0, W - win + 1, win):
        sl = (slice(j0, j0 + win), slice(i0, i0 + win))
        count = cm[sl].sum()
        if count >= 20:
            R.append(np.hypot(ux[sl].sum(), uz[sl].sum()) / count)
            Wt.append(count)
coherence = np.average(R, weights=Wt) if R else float("nan")
print("%s, %.3g m cells, %d x %d: ladder %.1f (at %.0f m), coherence %.3f"
      % (path, cx, W, H, ladder, ladder_at, coherence))

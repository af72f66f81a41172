#!/usr/bin/env python3
# Drainage density and hillslope length of a heightfield beside a real DEM, at one cell size.
#
# usage: python3 bench/drainage_density.py FILE [CELL] [TERRANE]
#   FILE     any heightfield terrane reads (or NAME_WxH_CELLm.r32 as the bench scripts write);
#   CELL     the cell size in metres every figure is measured at (default 30, SRTM's): the grid
#            is area-averaged onto it first; the middle 427^2 cells at most (12.8 km at 30 m)
#            are measured, so a map and a larger DEM compare over the same ground;
#   TERRANE  the CLI (default build/terrane).
# Needs numpy (Debian: python3-numpy; run it with /usr/bin/python3).
#
# D8 steepest descent over a priority-flood-filled copy (as bench/valley_profile.py). Printed:
#   density    channel length per area (km / km^2) of the samples draining at least 0.02, 0.1
#              and 0.5 km^2: on planar faces water runs in parallel lines and gathers only at
#              the foot of the face, so channels start far down and the density is low; land
#              of branching valleys at every scale gathers its water within a few hundred
#              metres of every divide.
#   hillslope  the median and mean flow distance (m, along D8 steps) from every sample to the
#              first sample downstream draining 0.1 km^2 or more (the hillslope length: about
#              half the spacing of the valleys that gather it).
#   valleys/km the number of valley axes per km along rows and columns of the surface smoothed
#              at 60 m and at 150 m (Gaussian sigma; concave samples more curved than both
#              neighbours along the line): the spacing of the valleys of 100-500 m, rills left
#              out.
import sys

import numpy as np

from dem_read import average_matrix, fill_flats, read_dem

path = sys.argv[1]
cell = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
terrane = sys.argv[3] if len(sys.argv) > 3 else "build/terrane"
z, cx, cz = read_dem(path, terrane)
H, W = z.shape
if abs(cx - cell) > 1e-6 or abs(cz - cell) > 1e-6:
    z = average_matrix(H, cz, cell) @ z @ average_matrix(W, cx, cell).T
H, W = z.shape
S = int(round(12800 / cell))
if H > S or W > S:
    j0, i0 = (H - min(H, S)) // 2, (W - min(W, S)) // 2
    z = z[j0:j0 + min(H, S), i0:i0 + min(W, S)]
    H, W = z.shape
z = np.where(np.isfinite(z), z, np.nanmin(z))

# Priority-flood fill (dem_read.fill_flats), so every D8 path reaches the border.
n = H * W
zr = fill_flats(z)
p = np.pad(zr, 1, mode="edge")

# D8 receivers and the length of each step.
idx = np.arange(n).reshape(H, W)
pi = np.pad(idx, 1, mode="edge")
best = np.zeros((H, W))
rec = idx.copy()
step = np.zeros((H, W))
for dy in (-1, 0, 1):
    for dx in (-1, 0, 1):
        if dy == 0 and dx == 0:
            continue
        d = np.hypot(dx, dy) * cell
        drop = (zr - p[1 + dy:H + 1 + dy, 1 + dx:W + 1 + dx]) / d
        better = drop > best
        best = np.where(better, drop, best)
        rec = np.where(better, pi[1 + dy:H + 1 + dy, 1 + dx:W + 1 + dx], rec)
        step = np.where(better, d, step)
rec, step = rec.ravel(), step.ravel()
order = np.argsort(-zr.ravel(), kind="stable")
acc = np.ones(n)
ol = order.tolist()
for i in ol:
    r = rec[i]
    if r != i:
        acc[r] += acc[i]
area = acc * cell * cell / 1e6  # km^2
inner = np.zeros((H, W), bool)
inner[2:-2, 2:-2] = True
inner = inner.ravel()
km2 = inner.sum() * cell * cell / 1e6
dens = []
for a in (0.02, 0.1, 0.5):
    ch = (area >= a) & inner & (rec != np.arange(n))
    dens.append(step[ch].sum() / 1000 / km2)

# Flow distance to the first sample draining 0.1 km^2 or more, from the lowest up.
dist = np.zeros(n)
chan = area >= 0.1
for i in reversed(ol):
    r = rec[i]
    if chan[i] or r == i:
        dist[i] = 0.0
    else:
        dist[i] = dist[r] + step[i]
hs = dist[inner & ~chan]


def gauss(z, s):
    r = int(3 * s) + 1
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / s) ** 2)
    k /= k.sum()
    zp = np.pad(z, r, mode="reflect")
    zp = np.apply_along_axis(lambda v: np.convolve(v, k, "valid"), 0, zp)
    return np.apply_along_axis(lambda v: np.convolve(v, k, "valid"), 1, zp)


vk = []
for sm in (60.0, 150.0):
    g = gauss(z, sm / cell)
    cnt, length = 0, 0.0
    for a in (g, g.T):
        c = a[:, :-2] + a[:, 2:] - 2 * a[:, 1:-1]  # along the line; > 0 concave
        m = (c[:, 1:-1] > 0) & (c[:, 1:-1] >= c[:, :-2]) & (c[:, 1:-1] > c[:, 2:])
        cnt += m.sum()
        length += a.shape[0] * (a.shape[1] - 2) * cell / 1000
    vk.append(cnt / length)

print(f"{path}: {W} x {H} cells of {cell:g} m")
print("density (km/km^2) at 0.02 / 0.1 / 0.5 km^2: " + " / ".join(f"{d:.2f}" for d in dens))
print(f"hillslope length to 0.1 km^2 (m): median {np.median(hs):.0f}, mean {hs.mean():.0f}")
print(f"valleys per km, smoothed 60 / 150 m: {vk[0]:.2f} / {vk[1]:.2f}")

# Aspect coherence: the mean cosine of the change of the downslope direction between samples
# a lag apart (rows and columns, both on ground steeper than 5 degrees); a planar face keeps
# its aspect for its whole length, land of spurs and hollows turns it within a few cells.
gz, gx = np.gradient(z, cell)
s = np.hypot(gx, gz)
ok = s > np.tan(np.radians(5))
ux, uz = np.where(ok, gx / np.maximum(s, 1e-12), 0), np.where(ok, gz / np.maximum(s, 1e-12), 0)
coh = {}
for lag in (2, 4, 8, 16, 32):
    num = den = 0.0
    for ax in (0, 1):
        a = [np.take(v, np.arange(0, v.shape[ax] - lag), axis=ax) for v in (ux, uz, ok)]
        b = [np.take(v, np.arange(lag, v.shape[ax]), axis=ax) for v in (ux, uz, ok)]
        both = a[2] & b[2]
        num += (a[0] * b[0] + a[1] * b[1])[both].sum()
        den += both.sum()
    coh[lag] = num / den
print("aspect coherence at 2 / 4 / 8 / 16 / 32 cells: " +
      " / ".join(f"{coh[k]:.2f}" for k in sorted(coh)))

# Slope patchiness: how much of the slope's spread is at the scale of whole valley sides. The
# slope (degrees) averaged over 300 m blocks, its standard deviation over that of the samples:
# long steep walls and broad gentle uplands (a hillshade of large dark and bright planes) give
# a high share; land whose steepness changes from spur to hollow every few hundred metres, low.
sd = np.degrees(np.arctan(s))
b = 10
hb, wb = sd.shape[0] // b, sd.shape[1] // b
blk = sd[:hb * b, :wb * b].reshape(hb, b, wb, b).mean(axis=(1, 3))
print(f"slope patchiness (300 m blocks): {blk.std() / sd.std():.3f}")

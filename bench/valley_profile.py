#!/usr/bin/env python3
# Valley cross-sections of a heightfield beside a real DEM, at one cell size.
#
# usage: python3 bench/valley_profile.py FILE [CELL] [TERRANE] [--r32 OUT.r32]
#   FILE     any heightfield terrane reads (or NAME_WxH_CELLm.r32 as the bench scripts write);
#   CELL     the cell size in metres every figure is measured at (default 30, SRTM's): the grid
#            is area-averaged onto it first, so a 12.5 m map and a 30 m DEM compare as land,
#            not as grids; TERRANE the CLI (default build/terrane); --r32 writes the averaged
#            grid (NAME_WxH_CELLm.r32 naming is the caller's) for 'terrane render'.
# Needs numpy (Debian: python3-numpy; run it with /usr/bin/python3).
#
# Channels are D8 steepest-descent paths over a priority-flood-filled copy (every path reaches
# the border) draining at least 0.5 km^2; every slope and height is the unfilled grid's. Printed:
#   slope by distance   the median slope (Horn, degrees) of the channel samples and of the
#                       samples 1, 2, 3 and 5 cells from the nearest channel (chessboard
#                       distance): V-shaped valleys rise steeply right from the channel; a broad
#                       floor keeps the first cells flat.
#   floor low-slope     the share of the samples within 2 cells of a channel draining 2 km^2 or
#                       more that are gentler than 10 degrees (the valley floor's flats).
#   cross-section       at each channel sample draining 0.5-50 km^2, the rise of the ground at
#                       1..8 cells across the flow on both sides (the lower of the two sides,
#                       so a valley wall is measured, not a ridge behind it): V-index is the
#                       median of rise(2) / rise(8) (0.25 for a straight V; a flat floor gives
#                       less, a convex wall more); floor width the median number of cells
#                       across, both sides, before the wall first rises steeper than 15 degrees.
#   slope spread        the 10th, 50th and 90th slope percentiles of all samples and the
#                       share steeper than 30 degrees (threshold hillslopes).
import sys

import numpy as np

from dem_read import average_matrix, fill_flats, read_dem

args = [a for a in sys.argv[1:]]
r32_out = None
if "--r32" in args:
    i = args.index("--r32")
    r32_out = args[i + 1]
    del args[i:i + 2]
path = args[0]
cell = float(args[1]) if len(args) > 1 else 30.0
terrane = args[2] if len(args) > 2 else "build/terrane"

z, cx, cz = read_dem(path, terrane)
H, W = z.shape

if abs(cx - cell) > 1e-6 or abs(cz - cell) > 1e-6:
    z = average_matrix(H, cz, cell) @ z @ average_matrix(W, cx, cell).T
H, W = z.shape
if r32_out:
    z.astype("<f4").tofile(r32_out)

# Horn slope
p = np.pad(z, 1, mode="edge")
gx = ((p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])) / (8 * cell)
gz = ((p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])) / (8 * cell)
slope = np.degrees(np.arctan(np.hypot(gx, gz)))

# Priority-flood fill (dem_read.fill_flats), so every D8 path reaches the border.
n = H * W
zr = fill_flats(z)
p = np.pad(zr, 1, mode="edge")

# D8 receivers on the filled surface (steepest descent, diagonal drops over sqrt 2)
idx = np.arange(n).reshape(H, W)
best = np.zeros((H, W))
rec = idx.copy()
pi = np.pad(idx, 1, mode="edge")
for dy in (-1, 0, 1):
    for dx in (-1, 0, 1):
        if dy == 0 and dx == 0:
            continue
        nb = p[1 + dy:H + 1 + dy, 1 + dx:W + 1 + dx]
        drop = (zr - nb) / (np.hypot(dx, dy) * cell)
        better = drop > best
        best = np.where(better, drop, best)
        rec = np.where(better, pi[1 + dy:H + 1 + dy, 1 + dx:W + 1 + dx], rec)
rec = rec.ravel()
order = np.argsort(-zr.ravel(), kind="stable")
acc = np.ones(n)
for i in order.tolist():
    r = rec[i]
    if r != i:
        acc[r] += acc[i]
area = (acc * cell * cell / 1e6).reshape(H, W)  # km^2
edge = np.zeros((H, W), bool)
edge[:8, :] = edge[-8:, :] = edge[:, :8] = edge[:, -8:] = True

chan = (area >= 0.5) & ~edge
big = (area >= 2.0) & ~edge

# chessboard distance to the nearest channel, by dilation
dist = np.full((H, W), 99, np.int32)
dist[chan] = 0
cur = chan.copy()
for d in range(1, 6):
    q = np.pad(cur, 1)
    grown = np.zeros_like(cur)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            grown |= q[1 + dy:H + 1 + dy, 1 + dx:W + 1 + dx]
    dist[grown & (dist == 99)] = d
    cur = grown
inner = ~edge
by_d = [float(np.median(slope[(dist == d) & inner])) for d in (0, 1, 2, 3, 5)]

near_big = np.zeros((H, W), bool)
cur = big.copy()
for d in range(2):
    q = np.pad(cur, 1)
    grown = np.zeros_like(cur)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            grown |= q[1 + dy:H + 1 + dy, 1 + dx:W + 1 + dx]
    cur = grown
near_big = cur & inner
low_floor = float(np.mean(slope[near_big] < 10.0))

# cross-sections across the flow
ys, xs = np.nonzero(chan & (area <= 50.0))
r = rec[ys * W + xs]
fy, fx = r // W - ys, r % W - xs
ok = (fy != 0) | (fx != 0)
ys, xs, fy, fx = ys[ok], xs[ok], fy[ok], fx[ok]
norm = np.hypot(fx, fy)
py, px = fx / norm, -fy / norm  # perpendicular unit vector (cells)
K = 8


def sample(yy, xx):
    yy = np.clip(yy, 0, H - 1.001)
    xx = np.clip(xx, 0, W - 1.001)
    y0, x0 = np.floor(yy).astype(int), np.floor(xx).astype(int)
    ty, tx = yy - y0, xx - x0
    return (z[y0, x0] * (1 - ty) * (1 - tx) + z[y0 + 1, x0] * ty * (1 - tx) +
            z[y0, x0 + 1] * (1 - ty) * tx + z[y0 + 1, x0 + 1] * ty * tx)


z0 = z[ys, xs]
rise = np.zeros((2, K + 1, len(ys)))
for s, sign in enumerate((1, -1)):
    for k in range(1, K + 1):
        rise[s, k] = sample(ys + sign * k * py, xs + sign * k * px) - z0
# the side whose wall at 8 cells is lower
side = np.where(rise[0, K] <= rise[1, K], 0, 1)
prof = np.where(side[None, :] == 0, rise[0], rise[1])
good = prof[K] > 1.0
vindex = float(np.median(prof[2, good] / prof[K, good]))
shape = [float(np.median(prof[k, good] / prof[K, good])) for k in range(1, K + 1)]
# floor width: cells, both sides, before the wall first rises steeper than 15 degrees
steep = np.tan(np.radians(15.0)) * cell


def floor_cells(rs):
    step = np.diff(rs, axis=0)  # K x n
    first = np.argmax(step > steep, axis=0)
    none = ~(step > steep).any(axis=0)
    return np.where(none, K, first)


width = floor_cells(rise[0]) + floor_cells(rise[1])
floor_w = float(np.median(width))
floor_mean = float(np.mean(width))

s_all = slope[inner]
print("%s at %.3g m cells (%d x %d): channel samples %d" % (path, cell, W, H, int(chan.sum())))
print("  slope by distance from channel (0,1,2,3,5 cells): %s deg" %
      " / ".join("%.1f" % v for v in by_d))
print("  floor low-slope (<10 deg within 2 cells of >=2 km^2 channels): %.3f" % low_floor)
print("  cross-section: V-index %.3f, floor width median %.1f cells (mean %.2f); shape %s" %
      (vindex, floor_w, floor_mean, " ".join("%.2f" % v for v in shape)))
print("  slope p10/p50/p90 %.1f / %.1f / %.1f deg, >30 deg %.3f, relief %.0f m" %
      (np.percentile(s_all, 10), np.percentile(s_all, 50), np.percentile(s_all, 90),
       float(np.mean(s_all > 30)), z.max() - z.min()))

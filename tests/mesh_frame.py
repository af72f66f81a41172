#!/usr/bin/env python3
"""Mesh frame, read by an independent reader (this script, Python's standard library only):
glTF and OBJ put east at +x, up at +y and north at -z (glTF 2.0's frame, the terrain's north
being its far edge, the top of `terrane render` pictures), triangles counter-clockwise seen
from above, normals leaning the way the ground faces.

usage: mesh_frame.py TERRANE SCRATCH_DIR"""
import json
import math
import os
import struct
import subprocess
import sys

N = 65  # samples a side, 1 m apart
PEAK_I, PEAK_J = 48, 44  # east of centre, north of centre (j grows north)


def height(i, j):
    return 30.0 * math.exp(-((i - PEAK_I) ** 2 + (j - PEAK_J) ** 2) / 60.0) + 0.05 * i


def write_terrain(path):
    # A heightmap's first row is its north edge (the top of the picture): row r is j = N-1-r.
    with open(path, "wb") as f:
        for r in range(N):
            f.write(struct.pack("<%df" % N, *(height(i, N - 1 - r) for i in range(N))))


def read_glb(path):
    data = open(path, "rb").read()
    magic, version, length = struct.unpack_from("<III", data, 0)
    assert magic == 0x46546C67 and version == 2 and length == len(data), "not a glTF 2.0 binary"
    json_len, json_type = struct.unpack_from("<II", data, 12)
    assert json_type == 0x4E4F534A
    doc = json.loads(data[20:20 + json_len])
    bin_at = 20 + json_len
    bin_len, bin_type = struct.unpack_from("<II", data, bin_at)
    assert bin_type == 0x004E4942
    blob = data[bin_at + 8:bin_at + 8 + bin_len]

    def accessor(index):
        a = doc["accessors"][index]
        v = doc["bufferViews"][a["bufferView"]]
        start = v.get("byteOffset", 0) + a.get("byteOffset", 0)
        width = {"SCALAR": 1, "VEC3": 3}[a["type"]]
        fmt = {5126: "f", 5125: "I"}[a["componentType"]]
        flat = struct.unpack_from("<%d%s" % (a["count"] * width, fmt), blob, start)
        return [flat[k:k + width] for k in range(0, len(flat), width)] if width > 1 else list(flat)

    triangles = []  # ((p0, p1, p2), (n0, n1, n2))
    for mesh in doc["meshes"]:
        for prim in mesh["primitives"]:
            pos = accessor(prim["attributes"]["POSITION"])
            nor = accessor(prim["attributes"]["NORMAL"])
            idx = accessor(prim["indices"])
            for t in range(0, len(idx), 3):
                a, b, c = idx[t:t + 3]
                triangles.append(((pos[a], pos[b], pos[c]), (nor[a], nor[b], nor[c])))
    return triangles


def read_obj(path):
    v, vn, triangles = [], [], []
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "v":
            v.append(tuple(float(x) for x in f[1:4]))
        elif f[0] == "vn":
            vn.append(tuple(float(x) for x in f[1:4]))
        elif f[0] == "f":
            refs = [tuple(int(x) for x in r.split("//")) for r in f[1:4]]
            triangles.append((tuple(v[r[0] - 1] for r in refs), tuple(vn[r[1] - 1] for r in refs)))
    return triangles


def check(name, triangles):
    failures = []
    ground = [t for t in triangles if t[0][0][1] > -1e-3 and t[0][1][1] > -1e-3 and t[0][2][1] > -1e-3]
    # Skirts hang below the ground; the rest is the surface, every triangle of it seen from above.
    up = down = 0
    for (p0, p1, p2), _ in ground:
        u = [p1[k] - p0[k] for k in range(3)]
        w = [p2[k] - p0[k] for k in range(3)]
        ny = u[2] * w[0] - u[0] * w[2]
        if abs(ny) < 1e-9:
            continue
        up += ny > 0
        down += ny < 0
    if down or up < 2 * (N - 1) ** 2 * 0.9:
        failures.append("%s: %d surface triangles face up, %d down" % (name, up, down))
    # The peak: east of centre (+x) and north of centre, which is -z.
    top = max((p for t in triangles for p in t[0]), key=lambda p: p[1])
    if not (abs(top[0] - PEAK_I) <= 1 and abs(top[2] + PEAK_J) <= 1):
        failures.append("%s: the peak is at x %.2f z %.2f, expected x %d z %d (north is -z)"
                        % (name, top[0], top[2], PEAK_I, -PEAK_J))
    # Normals: on the peak's north flank the ground faces north (-z), on its east flank east.
    north = [n for t in triangles for p, n in zip(*t) if abs(p[0] - PEAK_I) < 0.5 and abs(p[2] + PEAK_J + 6) < 0.5]
    east = [n for t in triangles for p, n in zip(*t) if abs(p[0] - PEAK_I - 6) < 0.5 and abs(p[2] + PEAK_J) < 0.5]
    if not north or any(n[2] >= 0 or n[1] <= 0 for n in north):
        failures.append("%s: normals on the north flank do not face north (-z): %s" % (name, north[:2]))
    if not east or any(n[0] <= 0 or n[1] <= 0 for n in east):
        failures.append("%s: normals on the east flank do not face east (+x): %s" % (name, east[:2]))
    return failures


def main():
    terrane, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    src = os.path.join(scratch, "peak.r32")
    write_terrain(src)
    failures = []
    for ext, reader in ((".glb", read_glb), (".obj", read_obj)):
        out = os.path.join(scratch, "peak" + ext)
        subprocess.run([terrane, "mesh", src, "--size", "%dx%d" % (N, N), "-o", out, "--quiet",
                        "--chunk-cells", "16"], check=True)
        failures += check(ext, reader(out))
    for f in failures:
        print("FAIL", f)
    failed = len({f.split(":")[0] for f in failures})
    print("%d passed, %d failed" % (2 - failed, failed))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

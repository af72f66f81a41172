# Reads a heightfield for the bench scripts: (heights as float64 rows, cell x, cell z in metres).
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

#!/bin/sh
# A tiled run's GeoTIFF checked by GDAL, not by our reader: GDAL's own Cloud-Optimized GeoTIFF
# validator (full check: IFDs before data, smallest overview's tiles first, row-major blocks),
# overviews down to one tile, each the mean of 2 x 2 of the level above, and the same pixels
# and transform as the whole grid's GeoTIFF. Skipped (77) where Python's GDAL is not installed.
# usage: cog_gdal.sh TERRANE SOURCE_DIR WORKDIR
set -eu
cli=$1 src=$2 work=$3
py=
for p in /usr/bin/python3 python3; do
    if "$p" -c 'from osgeo import gdal; from osgeo_utils.samples import validate_cloud_optimized_geotiff' 2>/dev/null; then
        py=$p
        break
    fi
done
[ -n "$py" ] || { echo "python3 with GDAL (python3-gdal) not found: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
recipe="$src/examples/recipes/hills.json"
"$cli" generate "$recipe" --resolution 300x200 -q -o "$work/whole.r32"
fail=0
for tile in 16 48 512; do
    "$cli" generate "$recipe" --resolution 300x200 --tiles $tile -q -o "$work/t$tile.tif"
    "$py" - "$work/t$tile.tif" "$work/whole.r32" "$tile" "$recipe" <<'PY' || fail=1
import json, math, struct, sys
from osgeo import gdal
from osgeo_utils.samples import validate_cloud_optimized_geotiff as v
gdal.UseExceptions()
path, whole, tile, recipe = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# validate() returns (warnings, errors, details); neither is acceptable here.
warnings, errors, _ = v.validate(path, full_check=True)
bad = list(errors) + list(warnings)
ds = gdal.Open(path)
b = ds.GetRasterBand(1)
def px(band):
    return list(struct.unpack("%df" % (band.XSize * band.YSize), band.ReadRaster(buf_type=gdal.GDT_Float32)))
# The whole grid's raw floats (.r32 rows run from the north edge, as the GeoTIFF's).
w, h = b.XSize, b.YSize
if b.ReadRaster() != open(whole, "rb").read():
    bad.append("full resolution differs from the whole grid's heights")
# The frame: pixel size the sample spacing, the south-west sample's centre at (0, 0), no CRS.
sx, sz = json.load(open(recipe))["size"]
dx, dz = sx / (w - 1), sz / (h - 1)
want = (-0.5 * dx, dx, 0.0, sz + 0.5 * dz, 0.0, -dz)
if any(abs(a - c) > 1e-9 * max(sx, sz) for a, c in zip(ds.GetGeoTransform(), want)) or ds.GetProjection():
    bad.append("transform %s (want %s), CRS %r" % (ds.GetGeoTransform(), want, ds.GetProjection()))
if b.GetBlockSize() != [tile, tile]:
    bad.append("blocks %s" % b.GetBlockSize())
prev, pw, ph = px(b), b.XSize, b.YSize
for i in range(b.GetOverviewCount()):
    o = b.GetOverview(i)
    if (o.XSize, o.YSize) != ((pw + 1) // 2, (ph + 1) // 2) or o.GetBlockSize() != [tile, tile]:
        bad.append("overview %d is %dx%d, blocks %s" % (i, o.XSize, o.YSize, o.GetBlockSize()))
        break
    got = px(o)
    for y in range(o.YSize):
        for x in range(o.XSize):
            vals = [prev[yy * pw + xx] for yy in (2 * y, 2 * y + 1) for xx in (2 * x, 2 * x + 1)
                    if yy < ph and xx < pw and not math.isnan(prev[yy * pw + xx])]
            want = struct.unpack("f", struct.pack("f", sum(vals) / len(vals)))[0]
            if got[y * o.XSize + x] != want:
                bad.append("overview %d pixel %d,%d: %r, mean %r" % (i, x, y, got[y * o.XSize + x], want))
                break
        if bad: break
    prev, pw, ph = got, o.XSize, o.YSize
if pw > tile or ph > tile:
    bad.append("smallest overview %dx%d is more than one tile" % (pw, ph))
print(("FAIL " if bad else "ok ") + "tiles of %d: %d overviews" % (tile, b.GetOverviewCount()))
for m in bad: print("  " + m)
sys.exit(1 if bad else 0)
PY
done
exit $fail

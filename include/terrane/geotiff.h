/* GeoTIFF elevation models: in-memory reading with limits, georeferencing, NoData, float32 writing.
 */
#ifndef TERRANE_GEOTIFF_H
#define TERRANE_GEOTIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/resample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a file is read:
 *   1. The TIFF header and the first image directory (IFD) are checked with a bounded cursor
 *      before anything is allocated: byte order (II/MM), version 42 (classic) or 43 (BigTIFF),
 *      the IFD's entry count and every entry's value count against the limits, and that every
 *      entry's data lies inside the file. Errors name the byte offset of the field at fault.
 *   2. The GeoTIFF tags are parsed from those bytes with the cursor: ModelPixelScale (33550),
 *      ModelTiepoint (33922), ModelTransformation (34264), GeoKeyDirectory (34735) with
 *      GeoDoubleParams (34736) and GeoAsciiParams (34737), and GDAL_NODATA (42113, ASCII).
 *   3. Pixels are decoded by libtiff (any compression it was built with, strips or tiles,
 *      either byte order, BigTIFF, predictors) from the same memory through TIFFClientOpenExt;
 *      its errors and warnings go to per-call handlers (TIFFOpenOptions, libtiff 4.5), never to
 *      the global ones, so calls on different threads do not mix their messages. Width,
 *      height and sample count are checked against the limits before the raster is allocated,
 *      and libtiff's own single allocations are bounded by limits.max_alloc.
 * Only the first image is read (later directories are usually overviews). Samples: 8/16/32-bit
 * unsigned or signed integers and 32/64-bit floats. A multi-band file gives its band 1 (the
 * info says how many bands there were). */

typedef enum trn_geotiff_sample {
    TRN_GEOTIFF_SAMPLE_U8 = 0,
    TRN_GEOTIFF_SAMPLE_I8 = 1,
    TRN_GEOTIFF_SAMPLE_U16 = 2,
    TRN_GEOTIFF_SAMPLE_I16 = 3,
    TRN_GEOTIFF_SAMPLE_U32 = 4,
    TRN_GEOTIFF_SAMPLE_I32 = 5,
    TRN_GEOTIFF_SAMPLE_F32 = 6,
    TRN_GEOTIFF_SAMPLE_F64 = 7,
} trn_geotiff_sample;

/* "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64". */
const char *trn_geotiff_sample_name(trn_geotiff_sample sample);

/* Where the NoData value came from. Conventions are used only when the file has no GDAL_NODATA
 * tag and the value occurs in the data: -32768 in int16 files (SRTM's void value), -9999 in
 * signed or float files (ESRI/USGS grids). NaN samples of float files are always NoData. */
typedef enum trn_geotiff_nodata_source {
    TRN_GEOTIFF_NODATA_NONE = 0,
    TRN_GEOTIFF_NODATA_TAG = 1,         /* GDAL_NODATA tag */
    TRN_GEOTIFF_NODATA_MINUS_32768 = 2, /* the int16 convention */
    TRN_GEOTIFF_NODATA_MINUS_9999 = 3,  /* the -9999 convention */
    TRN_GEOTIFF_NODATA_NAN = 4,         /* no value, but NaN samples in a float file */
} trn_geotiff_nodata_source;

/* "none", "GDAL_NODATA tag", "-32768 convention", "-9999 convention", "NaN samples". */
const char *trn_geotiff_nodata_source_name(trn_geotiff_nodata_source source);

/* Bounds for reading untrusted files, all checked before allocating. */
typedef struct trn_geotiff_limits {
    uint32_t max_width, max_height; /* default 65536 each */
    /* width * height; default 2^30: what 8 GiB of working memory holds at 8 bytes a sample, the
     * 4-byte float raster (which becomes the field without a copy) plus up to 4 bytes of the
     * NoData fill's working arrays. trn_geotiff_decode_info checks it too (it allocates no
     * pixels): pass a larger limit there to describe a file that is too large to decode. */
    uint64_t max_samples;
    uint32_t max_ifd_entries; /* entries in the first IFD; default 1024 */
    uint64_t max_tag_values;  /* values in any one IFD entry; default 2^24 */
    uint32_t max_geokeys;     /* GeoKeyDirectory keys; default 1024 */
    uint64_t max_alloc;       /* libtiff's largest single allocation; default 1 GiB */
} trn_geotiff_limits;

void trn_geotiff_limits_default(trn_geotiff_limits *limits);

/* True when data starts like a TIFF ("II*\0", "MM\0*" or BigTIFF's "II+\0", "MM\0+"). */
bool trn_geotiff_sniff(const uint8_t *data, size_t size);

/* GeoKey values this library interprets (GeoTIFF 1.1, OGC 19-008r4). */
#define TRN_GEOTIFF_MODEL_PROJECTED 1
#define TRN_GEOTIFF_MODEL_GEOGRAPHIC 2
#define TRN_GEOTIFF_MODEL_GEOCENTRIC 3
#define TRN_GEOTIFF_RASTER_PIXEL_IS_AREA 1
#define TRN_GEOTIFF_RASTER_PIXEL_IS_POINT 2
#define TRN_GEOTIFF_USER_DEFINED 32767

/* Room for a GeoKey directory kept verbatim, so a written file keeps every key (datum, units,
 * citations) without this library knowing them. Larger directories are interpreted but not
 * kept (kept_keys false), and the writer then writes the keys it knows. */
#define TRN_GEOTIFF_KEEP_KEYS 128
#define TRN_GEOTIFF_KEEP_DOUBLES 64
#define TRN_GEOTIFF_KEEP_ASCII 1024

/* Georeferencing: plain data (no pointers), so it may be copied and freed with free(). */
typedef struct trn_geotiff_georef {
    /* The affine map from raster to model (CRS) coordinates, GDAL's order and convention:
     * x = t[0] + col * t[1] + row * t[2], y = t[3] + col * t[4] + row * t[5], where (col, row)
     * = (0, 0) is the outer corner of the first pixel, so its centre is (0.5, 0.5). For
     * PixelIsPoint files the half-pixel shift is applied (as GDAL does), so t means the same
     * for both raster types. has_transform is false when the file gives neither
     * scale + tiepoint nor a transformation matrix. */
    bool has_transform;
    double transform[6];
    /* The tags as stored (has_* false when absent). */
    bool has_pixel_scale, has_tiepoint, has_model_transformation;
    double pixel_scale[3];
    double tiepoint[6]; /* the first tiepoint: I, J, K, X, Y, Z */
    uint32_t tiepoint_count;
    double model_transformation[16];
    /* Interpreted keys (0 when absent). */
    bool has_geokeys;
    uint16_t model_type;      /* GTModelTypeGeoKey (1024) */
    uint16_t raster_type;     /* GTRasterTypeGeoKey (1025); 0 = absent (PixelIsArea assumed) */
    uint16_t projected_epsg;  /* ProjectedCSTypeGeoKey (3072) */
    uint16_t geographic_epsg; /* GeographicTypeGeoKey (2048) */
    uint16_t vertical_epsg;   /* VerticalCSTypeGeoKey (4096) */
    uint16_t linear_units;    /* ProjLinearUnitsGeoKey (3076); 0 = absent (metre assumed) */
    uint16_t angular_units;   /* GeogAngularUnitsGeoKey (2054); 0 = absent (degree assumed) */
    uint16_t vertical_units;  /* VerticalUnitsGeoKey (4099); 0 = absent (metre assumed) */
    char citation[256];       /* GTCitationGeoKey (1026), else PCSCitationGeoKey (3073) */
    /* Derived. */
    uint32_t epsg;               /* the CRS code: projected if given, else geographic; 0 none */
    bool geographic;             /* model type 2, or a geographic code without a projected one */
    double linear_unit_metres;   /* metres per projected unit (1 when unknown: see units_known) */
    double vertical_unit_metres; /* metres per height unit (1 when absent or unknown) */
    bool units_known;            /* linear (or angular) units are absent or understood */
    /* Ground size of a pixel in metres along a row (x) and a column (y); for geographic CRSs
     * at the centre latitude of the raster on the WGS84 ellipsoid (meridional and
     * prime-vertical radii of curvature). 0 when has_transform is false. */
    double metres_per_pixel_x, metres_per_pixel_y;
    double centre_latitude; /* degrees, geographic CRSs only */
    /* The CRS as libgeotiff normalises the keys (GTIFGetDefn over PROJ's EPSG database), so a
     * projected code's implied unit, datum and ellipsoid are known without their own keys.
     * crs_normalised false (and these 0) when there are no keys or libgeotiff could not. */
    bool crs_normalised;
    uint16_t crs_geographic_epsg; /* the geographic CRS (of a projected one: its base) */
    uint16_t datum_epsg;          /* e.g. 6326 for WGS 84 */
    double crs_unit_metres;       /* metres per projected unit the CRS implies */
    double semi_major, semi_minor; /* the ellipsoid in metres (WGS84 used when 0) */
    /* The directory as stored, for writing back (kept_keys false when absent or too large). */
    bool kept_keys;
    uint16_t keys[4 * (TRN_GEOTIFF_KEEP_KEYS + 1)];
    uint32_t key_shorts;
    double doubles[TRN_GEOTIFF_KEEP_DOUBLES];
    uint32_t double_count;
    char ascii[TRN_GEOTIFF_KEEP_ASCII];
    uint32_t ascii_size; /* bytes, including the final NUL */
} trn_geotiff_georef;

/* What a file says about itself, without its pixels. */
typedef struct trn_geotiff_info {
    uint32_t width, height;
    uint16_t bands; /* SamplesPerPixel; band 1 is read */
    uint16_t bits_per_sample;
    uint16_t sample_format; /* TIFF SampleFormat: 1 uint, 2 int, 3 float */
    trn_geotiff_sample sample;
    uint16_t compression; /* TIFF Compression code */
    char compression_name[32];
    uint16_t predictor; /* 1 none, 2 horizontal, 3 floating point */
    bool tiled;
    uint32_t tile_width, tile_height; /* when tiled */
    uint32_t rows_per_strip;          /* when stripped */
    bool planar_separate;
    bool big_endian, bigtiff;
    uint32_t ifd_entries;
    bool has_georef; /* any GeoTIFF tag */
    trn_geotiff_georef georef;
    bool has_nodata_tag;
    char nodata_text[64]; /* the GDAL_NODATA text as stored */
    double nodata_tag_value;
} trn_geotiff_info;

/* A decoded DEM: band 1 as float32 in the file's own units, row 0 = the first row stored
 * (north for north-up files), x fastest. NoData samples are NaN. */
typedef struct trn_geotiff {
    trn_geotiff_info info;
    float *values; /* width * height (malloc'd); NULL after trn_geotiff_to_field */
    trn_geotiff_nodata_source nodata_source;
    double nodata_value; /* the value that meant NoData (NaN when only NaN samples) */
    uint64_t nodata_count;
    double min, max; /* over valid samples (0, 0 when none) */
} trn_geotiff;

/* Check the header and first IFD and parse the georeferencing from memory (no pixels).
 * path is only used in messages (may be NULL); limits NULL = defaults. Errors:
 * TRN_ERR_FORMAT (not a TIFF, bad GeoKey directory), TRN_ERR_TRUNCATED (an IFD or tag data
 * past the end), TRN_ERR_LIMIT, TRN_ERR_UNSUPPORTED (sample type), each with the byte offset
 * of the field at fault. */
trn_status trn_geotiff_decode_info(const uint8_t *data, size_t size, const char *path,
                                   const trn_geotiff_limits *limits, trn_geotiff_info *info,
                                   trn_error *err);
/* Decode the first image's band 1 (see the top of this header). Also TRN_ERR_FORMAT for
 * corrupt pixel data, with libtiff's words and the offset of the strip or tile at fault, and
 * TRN_ERR_CANCELLED. On failure *out is zeroed. */
trn_status trn_geotiff_decode(const uint8_t *data, size_t size, const char *path,
                              const trn_geotiff_limits *limits, trn_geotiff *out,
                              trn_progress_fn progress, void *user, trn_error *err);
/* The same from a file (mapped, not copied). */
trn_status trn_geotiff_read_info(const char *path, const trn_geotiff_limits *limits,
                                 trn_geotiff_info *info, trn_error *err);
trn_status trn_geotiff_read(const char *path, const trn_geotiff_limits *limits, trn_geotiff *out,
                            trn_progress_fn progress, void *user, trn_error *err);
/* Free the values and zero *dem. NULL is a no-op. */
void trn_geotiff_dispose(trn_geotiff *dem);

/* Fill the NoData (NaN) samples smoothly from the valid ones (trn_field_fill_nan's harmonic
 * multigrid fill); *filled_out (may be NULL) gets the count. Errors as trn_field_fill_nan. */
trn_status trn_geotiff_fill_nodata(trn_geotiff *dem, uint64_t *filled_out, trn_progress_fn progress,
                                   void *user, trn_error *err);

/* Move the values into a field without copying them: rows are reversed in place (the field's
 * row 0 is south, z up) and dem->values becomes NULL. cells = width - 1 by height - 1 (the
 * samples are the pixel centres); the size is in metres from the georeferencing
 * (metres_per_pixel times cells) or 1 metre per pixel when there is none; heights are
 * multiplied by vertical_unit_metres. Needs at least 2 x 2 pixels. */
trn_status trn_geotiff_to_field(trn_geotiff *dem, trn_field *field, trn_error *err);

/* Georeferencing of a grid taken from a raster with georef src: output pixel (k, l)'s centre
 * sits at src pixel-centre coordinates (col0 + k * col_step, row0 + l * row_step), counted in
 * pixels from the centre of src's first pixel. Keys are kept; the transform, pixel scale,
 * tiepoint and metres per pixel are recomputed. */
void trn_geotiff_georef_remap(const trn_geotiff_georef *src, double col0, double row0,
                              double col_step, double row_step, uint32_t width, uint32_t height,
                              trn_geotiff_georef *dst);
/* Recompute the derived fields (epsg, geographic, units, metres per pixel, centre latitude)
 * of georef for a width x height raster from its transform and keys. */
void trn_geotiff_georef_derive(trn_geotiff_georef *georef, uint32_t width, uint32_t height);
/* Model coordinates of a pixel-corner position (col, row) through georef's transform. */
void trn_geotiff_pixel_to_model(const trn_geotiff_georef *georef, double col, double row, double *x,
                                double *y);
/* The inverse: pixel-corner position of model coordinates (x, y). False when there is no
 * transform or it is singular. */
bool trn_geotiff_model_to_pixel(const trn_geotiff_georef *georef, double x, double y, double *col,
                                double *row);

/* ---- Reprojection (PROJ) ------------------------------------------------------------------
 * A DEM in any CRS with an EPSG code (typically geographic: WGS84 degrees) resampled onto a
 * regular grid of square cells in a projected CRS, so its samples are metres on the ground:
 *   - the target is target_epsg, or 0: the UTM zone of the DEM's centre on WGS84 (plain
 *     6-degree zones, EPSG:326zz north of the equator, 327zz south);
 *   - the cell is cell_metres, or 0: the source's ground resolution at its centre in the
 *     target CRS (the square root of the area one source pixel covers there, so the sample
 *     count stays about the same), for a 1-arc-second DEM at 35.7 N about 27.8 m;
 *   - every target sample is transformed back to the source (proj_trans: exactly at every
 *     16th sample of a row and at the middles between them, linearly in between where the
 *     middle shows that to be within 0.001 source pixels of exact, else exactly) and
 *     interpolated there with the filter (bilinear, bicubic, or average: the area mean of the
 *     source samples under the target cell);
 *   - NoData outside the footprint: the source's outline is a curved quadrilateral in the
 *     target CRS; the grid keeps the largest axis-aligned rectangle of samples that all fall
 *     inside it (no invented ground, no NoData), and result->dropped counts the rest.
 * Deterministic: each sample is a fixed expression of its inputs, whatever the thread count
 * (OpenMP threads each use their own PROJ context). */
typedef struct trn_geotiff_reproject_options {
    uint32_t target_epsg;      /* 0 = the UTM zone of the centre */
    double cell_metres;        /* 0 = the source's ground resolution at the centre */
    trn_resample_filter filter;
    uint64_t max_samples;      /* 0 = 2^30: the largest grid made */
} trn_geotiff_reproject_options;

typedef struct trn_geotiff_reproject_result {
    uint32_t source_epsg, target_epsg;
    char source_name[96], target_name[96]; /* PROJ's names: "WGS 84 / UTM zone 54N" */
    bool utm_default;                      /* the target was chosen as the centre's UTM zone */
    double cell_metres;                    /* the cell, square */
    double unit_metres;                    /* metres per unit of the target CRS */
    uint32_t width, height;                /* samples kept */
    uint32_t full_width, full_height;      /* the grid over the footprint's bounding box */
    uint64_t dropped;                      /* samples of that grid outside the kept rectangle */
    double footprint_samples; /* the source's outline (its samples' centres) in target cells:
                                 width * height / footprint_samples is the share of it kept */
} trn_geotiff_reproject_result;

/* Reproject src (a field as trn_geotiff_to_field makes it: row 0 south, NoData already filled)
 * whose georef is src_georef into *dst (initialised by the call) and *dst_georef (the target
 * CRS: ProjectedCSTypeGeoKey, linear unit, citation, transform; writers keep it). result may
 * be NULL. Errors: TRN_ERR_INVALID_ARGUMENT (no transform; a cell that is not positive; a
 * target that is not a projected CRS), TRN_ERR_NOT_FOUND (an EPSG code PROJ does not know,
 * named), TRN_ERR_UNSUPPORTED (a source CRS without an EPSG code; a DEM partly outside the
 * target's domain), TRN_ERR_LIMIT (a grid over max_samples), TRN_ERR_NO_MEMORY,
 * TRN_ERR_CANCELLED. */
trn_status trn_geotiff_reproject(const trn_field *src, const trn_geotiff_georef *src_georef,
                                 const trn_geotiff_reproject_options *options, trn_field *dst,
                                 trn_geotiff_georef *dst_georef,
                                 trn_geotiff_reproject_result *result, trn_progress_fn progress,
                                 void *user, trn_error *err);

typedef enum trn_geotiff_compression {
    TRN_GEOTIFF_COMPRESS_NONE = 0,
    TRN_GEOTIFF_COMPRESS_DEFLATE = 1, /* with the floating-point predictor */
    TRN_GEOTIFF_COMPRESS_LZW = 2,     /* with the floating-point predictor */
} trn_geotiff_compression;

/* Write a field as a single-band float32 GeoTIFF, row 0 = the field's last row (north up),
 * atomically (libtiff writes through TIFFClientOpenExt into the temporary file that is then
 * renamed). With georef: its transform as ModelPixelScale + ModelTiepoint (or
 * ModelTransformation when rotated), its GeoKey directory verbatim when kept, else the keys it
 * knows; a georef with neither a transform nor GeoKeys writes no georeferencing tags at all.
 * georef NULL: the field's own frame, pixel scale = its sample spacing, the centre of the
 * south-west sample at (0, 0), and no GeoKeyDirectory (no CRS is claimed: GDAL reports the
 * transform and no spatial reference). When the field holds NaN
 * samples a GDAL_NODATA tag "nan" is written. BigTIFF is used past 4 GB. Errors:
 * TRN_ERR_INVALID_ARGUMENT, TRN_ERR_IO, TRN_ERR_NO_MEMORY. */
trn_status trn_geotiff_write(const char *path, const trn_field *field,
                             const trn_geotiff_georef *georef, trn_geotiff_compression compression,
                             trn_error *err);

/* A Cloud-Optimized GeoTIFF (BigTIFF) written as its samples arrive, for worlds larger than
 * memory: single-band float32, north up, square tiles of tile pixels (a multiple of 16), deflate
 * with the floating-point predictor, the georeferencing trn_geotiff_write gives georef NULL;
 * overviews each half the one before (rounded up, each pixel the mean of the non-NaN pixels of
 * its 2 x 2) down to one tile; GDAL's COG layout: structural metadata, every IFD, then the tiles
 * from the smallest overview's to the full resolution's, each level row-major from the north.
 * Pieces arrive in row order (z, then x, as trn_graph_evaluate_tiles delivers them; the pieces
 * of one row equally tall); the piece row and one row of tiles per level are held, finished
 * tiles are encoded onto an unlinked data file beside the output and copied after the IFDs on
 * close. Written to a temporary file renamed into place on close; abort (or a failed put or
 * close) leaves nothing behind. */
typedef struct trn_geotiff_tiled trn_geotiff_tiled;

trn_status trn_geotiff_tiled_open(const char *path, uint32_t cells_x, uint32_t cells_z,
                                  double size_x, double size_z, uint32_t tile,
                                  trn_geotiff_tiled **out, trn_error *err);
/* nx * nz samples row by row, the first at field sample (x0, z0). */
trn_status trn_geotiff_tiled_put(trn_geotiff_tiled *w, uint32_t x0, uint32_t z0, uint32_t nx,
                                 uint32_t nz, const float *values, trn_error *err);
/* Every sample put: write the rest, commit and free. Otherwise TRN_ERR_INVALID_ARGUMENT. */
trn_status trn_geotiff_tiled_close(trn_geotiff_tiled *w, trn_error *err);
void trn_geotiff_tiled_abort(trn_geotiff_tiled *w); /* NULL-safe */

#ifdef __cplusplus
}
#endif

#endif

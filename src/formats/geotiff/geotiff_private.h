/* GeoTIFF internals shared by the directory scanner, the pixel reader and the writer. */
#ifndef TRN_GEOTIFF_PRIVATE_H
#define TRN_GEOTIFF_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/geotiff.h"

/* TIFF tags read from the first IFD by the scanner. */
#define GT_TAG_IMAGE_WIDTH 256
#define GT_TAG_IMAGE_LENGTH 257
#define GT_TAG_BITS_PER_SAMPLE 258
#define GT_TAG_COMPRESSION 259
#define GT_TAG_SAMPLE_FORMAT 339
#define GT_TAG_MODEL_PIXEL_SCALE 33550
#define GT_TAG_MODEL_TIEPOINT 33922
#define GT_TAG_MODEL_TRANSFORMATION 34264
#define GT_TAG_GEO_KEY_DIRECTORY 34735
#define GT_TAG_GEO_DOUBLE_PARAMS 34736
#define GT_TAG_GEO_ASCII_PARAMS 34737
#define GT_TAG_GDAL_NODATA 42113

/* TIFF field types. */
#define GT_TYPE_ASCII 2
#define GT_TYPE_SHORT 3
#define GT_TYPE_DOUBLE 12

/* One IFD entry the reader cares about: where its value bytes are. */
typedef struct gt_entry {
    bool present;
    uint16_t type;
    uint64_t count;
    size_t entry_offset; /* the entry itself, for messages */
    size_t data_offset;  /* its values */
} gt_entry;

enum {
    GT_E_WIDTH,
    GT_E_LENGTH,
    GT_E_BITS,
    GT_E_COMPRESSION,
    GT_E_SAMPLE_FORMAT,
    GT_E_PIXEL_SCALE,
    GT_E_TIEPOINT,
    GT_E_TRANSFORMATION,
    GT_E_GEOKEYS,
    GT_E_GEODOUBLES,
    GT_E_GEOASCII,
    GT_E_NODATA,
    GT_E_COUNT
};

/* What the scan of the header and first IFD found. */
typedef struct gt_scan {
    const uint8_t *data;
    size_t size;
    const char *path;
    bool big_endian, bigtiff;
    uint64_t ifd_offset;
    uint32_t ifd_entries;
    gt_entry entries[GT_E_COUNT];
} gt_scan;

/* Check the header and first IFD (step 1 of geotiff.h) and parse the GeoTIFF tags and
 * GDAL_NODATA into info (step 2). info's pixel-layout fields are left for libtiff. */
trn_status gt_scan_file(const uint8_t *data, size_t size, const char *path,
                        const trn_geotiff_limits *limits, gt_scan *scan, trn_geotiff_info *info,
                        trn_error *err);

/* Interpret the scanned GeoKey directory with libgeotiff (geotiff_crs.c): fills georef's
 * crs_* fields and the ellipsoid, and a projected code only the normalisation names. Never
 * fails: a directory libgeotiff cannot interpret leaves crs_normalised false. */
void gt_crs_normalise(const gt_scan *s, trn_geotiff_georef *g);

/* A size or offset read from the file as message text: decimal when it could be right (at most
 * limit, or below 2^48), else hex, since an absurd one is usually a mangled or negative number
 * and its 20 decimal digits read as nonsense. buf holds 24 bytes. */
const char *trn_gt_num(uint64_t v, uint64_t limit, char buf[24]);

#endif

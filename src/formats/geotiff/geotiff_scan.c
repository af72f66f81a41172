/* GeoTIFF header and first-IFD scan with the bounded cursor, and the GeoTIFF tags' parsing. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/checked.h"
#include "core/cursor.h"
#include "geotiff_private.h"

void trn_geotiff_limits_default(trn_geotiff_limits *limits)
{
    limits->max_width = 65536u;
    limits->max_height = 65536u;
    limits->max_samples = (uint64_t)1 << 30;
    limits->max_ifd_entries = 1024u;
    limits->max_tag_values = (uint64_t)1 << 24;
    limits->max_geokeys = 1024u;
    limits->max_alloc = (uint64_t)1 << 30;
}

bool trn_geotiff_sniff(const uint8_t *data, size_t size)
{
    if (!data || size < 4) return false;
    if (data[0] == 'I' && data[1] == 'I') return (data[2] == 42 || data[2] == 43) && data[3] == 0;
    if (data[0] == 'M' && data[1] == 'M') return data[2] == 0 && (data[3] == 42 || data[3] == 43);
    return false;
}

const char *trn_geotiff_sample_name(trn_geotiff_sample sample)
{
    switch (sample) {
    case TRN_GEOTIFF_SAMPLE_U8:
        return "uint8";
    case TRN_GEOTIFF_SAMPLE_I8:
        return "int8";
    case TRN_GEOTIFF_SAMPLE_U16:
        return "uint16";
    case TRN_GEOTIFF_SAMPLE_I16:
        return "int16";
    case TRN_GEOTIFF_SAMPLE_U32:
        return "uint32";
    case TRN_GEOTIFF_SAMPLE_I32:
        return "int32";
    case TRN_GEOTIFF_SAMPLE_F32:
        return "float32";
    case TRN_GEOTIFF_SAMPLE_F64:
        return "float64";
    }
    return "unknown";
}

const char *trn_geotiff_nodata_source_name(trn_geotiff_nodata_source source)
{
    switch (source) {
    case TRN_GEOTIFF_NODATA_NONE:
        return "none";
    case TRN_GEOTIFF_NODATA_TAG:
        return "GDAL_NODATA tag";
    case TRN_GEOTIFF_NODATA_MINUS_32768:
        return "-32768 convention";
    case TRN_GEOTIFF_NODATA_MINUS_9999:
        return "-9999 convention";
    case TRN_GEOTIFF_NODATA_NAN:
        return "NaN samples";
    }
    return "unknown";
}

/* ---- byte-order aware cursor reads ---------------------------------------------------- */

static bool rd_u16(trn_cursor *c, bool be, uint16_t *v)
{
    return be ? trn_cursor_u16be(c, v) : trn_cursor_u16le(c, v);
}

static bool rd_u32(trn_cursor *c, bool be, uint32_t *v)
{
    return be ? trn_cursor_u32be(c, v) : trn_cursor_u32le(c, v);
}

static bool rd_u64(trn_cursor *c, bool be, uint64_t *v)
{
    uint32_t a = 0, b = 0;
    if (!trn_cursor_has(c, 8)) return false;
    rd_u32(c, be, &a);
    rd_u32(c, be, &b);
    *v = be ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a;
    return true;
}

static bool rd_f64(trn_cursor *c, bool be, double *v)
{
    uint64_t u = 0;
    if (!rd_u64(c, be, &u)) return false;
    memcpy(v, &u, sizeof *v);
    return true;
}

static size_t type_size(uint16_t type)
{
    switch (type) {
    case 1: /* BYTE */
    case 2: /* ASCII */
    case 6: /* SBYTE */
    case 7: /* UNDEFINED */
        return 1;
    case 3: /* SHORT */
    case 8: /* SSHORT */
        return 2;
    case 4:  /* LONG */
    case 9:  /* SLONG */
    case 11: /* FLOAT */
    case 13: /* IFD */
        return 4;
    case 5:  /* RATIONAL */
    case 10: /* SRATIONAL */
    case 12: /* DOUBLE */
    case 16: /* LONG8 */
    case 17: /* SLONG8 */
    case 18: /* IFD8 */
        return 8;
    default:
        return 0;
    }
}

static int entry_slot(uint16_t tag)
{
    switch (tag) {
    case GT_TAG_IMAGE_WIDTH:
        return GT_E_WIDTH;
    case GT_TAG_IMAGE_LENGTH:
        return GT_E_LENGTH;
    case GT_TAG_BITS_PER_SAMPLE:
        return GT_E_BITS;
    case GT_TAG_COMPRESSION:
        return GT_E_COMPRESSION;
    case GT_TAG_SAMPLE_FORMAT:
        return GT_E_SAMPLE_FORMAT;
    case GT_TAG_MODEL_PIXEL_SCALE:
        return GT_E_PIXEL_SCALE;
    case GT_TAG_MODEL_TIEPOINT:
        return GT_E_TIEPOINT;
    case GT_TAG_MODEL_TRANSFORMATION:
        return GT_E_TRANSFORMATION;
    case GT_TAG_GEO_KEY_DIRECTORY:
        return GT_E_GEOKEYS;
    case GT_TAG_GEO_DOUBLE_PARAMS:
        return GT_E_GEODOUBLES;
    case GT_TAG_GEO_ASCII_PARAMS:
        return GT_E_GEOASCII;
    case GT_TAG_GDAL_NODATA:
        return GT_E_NODATA;
    default:
        return -1;
    }
}

/* ---- header and IFD ------------------------------------------------------------------- */

static trn_status scan_header(gt_scan *s, trn_error *err)
{
    trn_cursor c;
    trn_cursor_init(&c, s->data, s->size);
    const uint8_t *bo = trn_cursor_take(&c, 2);
    if (!bo)
        return trn_error_set(err, TRN_ERR_TRUNCATED, s->path, 0,
                             "TIFF header: expected the byte order \"II\" or \"MM\", found %zu "
                             "byte(s)",
                             s->size);
    if (bo[0] == 'I' && bo[1] == 'I')
        s->big_endian = false;
    else if (bo[0] == 'M' && bo[1] == 'M')
        s->big_endian = true;
    else
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, 0,
                             "TIFF header: expected the byte order \"II\" or \"MM\", found "
                             "0x%02x 0x%02x",
                             bo[0], bo[1]);
    uint16_t version = 0;
    if (!rd_u16(&c, s->big_endian, &version))
        return trn_error_set(err, TRN_ERR_TRUNCATED, s->path, 2,
                             "TIFF header: the file ends before the version");
    if (version != 42 && version != 43)
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, 2,
                             "TIFF header: expected version 42 (TIFF) or 43 (BigTIFF), found %u",
                             version);
    s->bigtiff = version == 43;
    if (s->bigtiff) {
        uint16_t bytesize = 0, zero = 0;
        if (!rd_u16(&c, s->big_endian, &bytesize) || !rd_u16(&c, s->big_endian, &zero) ||
            !rd_u64(&c, s->big_endian, &s->ifd_offset))
            return trn_error_set(err, TRN_ERR_TRUNCATED, s->path, (int64_t)c.pos,
                                 "BigTIFF header: expected 16 bytes, the file has %zu", s->size);
        if (bytesize != 8 || zero != 0)
            return trn_error_set(err, TRN_ERR_FORMAT, s->path, 4,
                                 "BigTIFF header: expected offset size 8 and 0, found %u and %u",
                                 bytesize, zero);
    } else {
        uint32_t off = 0;
        if (!rd_u32(&c, s->big_endian, &off))
            return trn_error_set(err, TRN_ERR_TRUNCATED, s->path, 4,
                                 "TIFF header: expected 8 bytes, the file has %zu", s->size);
        s->ifd_offset = off;
    }
    size_t header = s->bigtiff ? 16 : 8;
    int64_t field = s->bigtiff ? 8 : 4;
    if (s->ifd_offset < header)
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, field,
                             "TIFF header: the first image directory offset %llu points into "
                             "the header (expected at least %zu)",
                             (unsigned long long)s->ifd_offset, header);
    char num[24];
    if (s->ifd_offset >= s->size)
        return trn_error_set(err, TRN_ERR_TRUNCATED, s->path, field,
                             "TIFF header: the first image directory is at offset %s, past "
                             "the end of the %zu-byte file",
                             trn_gt_num(s->ifd_offset, s->size, num), s->size);
    return TRN_OK;
}

static trn_status scan_ifd(gt_scan *s, const trn_geotiff_limits *lim, trn_error *err)
{
    trn_cursor c;
    trn_cursor_init(&c, s->data, s->size);
    c.pos = (size_t)s->ifd_offset;
    uint64_t n = 0;
    if (s->bigtiff) {
        if (!rd_u64(&c, s->big_endian, &n))
            return trn_error_set(err, TRN_ERR_TRUNCATED, s->path, (int64_t)c.pos,
                                 "image directory: the file ends inside its 8-byte entry count");
    } else {
        uint16_t n16 = 0;
        if (!rd_u16(&c, s->big_endian, &n16))
            return trn_error_set(err, TRN_ERR_TRUNCATED, s->path, (int64_t)c.pos,
                                 "image directory: the file ends inside its 2-byte entry count");
        n = n16;
    }
    if (n == 0)
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)s->ifd_offset,
                             "image directory: expected at least one entry, found 0");
    /* A count the whole file could not hold is garbage, not a size: it is shown as the bytes
     * it came from, never as a 20-digit figure. */
    if (n > s->size / (s->bigtiff ? 20u : 12u))
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)s->ifd_offset,
                             "image directory: entry count 0x%llx cannot be right: the %zu-byte "
                             "file holds far fewer entries",
                             (unsigned long long)n, s->size);
    if (n > lim->max_ifd_entries)
        return trn_error_set(err, TRN_ERR_LIMIT, s->path, (int64_t)s->ifd_offset,
                             "image directory: %llu entries, over the limit of %u",
                             (unsigned long long)n, lim->max_ifd_entries);
    s->ifd_entries = (uint32_t)n;
    size_t entry_size = s->bigtiff ? 20 : 12, inline_size = s->bigtiff ? 8 : 4;
    for (uint64_t k = 0; k < n; k++) {
        size_t at = c.pos;
        if (!trn_cursor_has(&c, entry_size))
            return trn_error_set(err, TRN_ERR_TRUNCATED, s->path, (int64_t)at,
                                 "image directory: entry %llu of %llu needs %zu bytes, the file "
                                 "ends after %zu",
                                 (unsigned long long)k, (unsigned long long)n, entry_size,
                                 trn_cursor_left(&c));
        uint16_t tag = 0, type = 0;
        uint64_t count = 0, value = 0;
        rd_u16(&c, s->big_endian, &tag);
        rd_u16(&c, s->big_endian, &type);
        if (s->bigtiff) {
            rd_u64(&c, s->big_endian, &count);
            rd_u64(&c, s->big_endian, &value);
        } else {
            uint32_t c32 = 0, v32 = 0;
            rd_u32(&c, s->big_endian, &c32);
            rd_u32(&c, s->big_endian, &v32);
            count = c32;
            value = v32;
        }
        if (count > s->size)
            return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)(at + 4),
                                 "image directory: tag %u's value count 0x%llx cannot be right: "
                                 "the file is %zu bytes",
                                 tag, (unsigned long long)count, s->size);
        if (count > lim->max_tag_values)
            return trn_error_set(err, TRN_ERR_LIMIT, s->path, (int64_t)(at + 4),
                                 "image directory: tag %u has %llu values, over the limit of "
                                 "%llu",
                                 tag, (unsigned long long)count,
                                 (unsigned long long)lim->max_tag_values);
        size_t ts = type_size(type);
        if (ts == 0) continue; /* unknown types are skipped, as libtiff does */
        uint64_t bytes;
        if (!trn_mul_u64(count, ts, &bytes))
            return trn_error_set(err, TRN_ERR_OVERFLOW, s->path, (int64_t)(at + 4),
                                 "image directory: tag %u's size overflows", tag);
        size_t data_off = at + 4 + (s->bigtiff ? 8 : 4);
        if (bytes > inline_size) {
            uint64_t end;
            char nb[24], nv[24];
            if (!trn_add_u64(value, bytes, &end) || end > s->size)
                return trn_error_set(err, TRN_ERR_TRUNCATED, s->path, (int64_t)data_off,
                                     "image directory: tag %u's %s bytes at offset %s run "
                                     "past the end of the %zu-byte file",
                                     tag, trn_gt_num(bytes, s->size, nb),
                                     trn_gt_num(value, s->size, nv), s->size);
            data_off = (size_t)value;
        }
        int slot = entry_slot(tag);
        if (slot >= 0 && !s->entries[slot].present) {
            gt_entry *e = &s->entries[slot];
            e->present = true;
            e->type = type;
            e->count = count;
            e->entry_offset = at;
            e->data_offset = data_off;
        }
    }
    return TRN_OK;
}

/* ---- GeoTIFF tags --------------------------------------------------------------------- */

static trn_status expect_type(const gt_scan *s, const gt_entry *e, uint16_t type, const char *name,
                              trn_error *err)
{
    if (e->type == type) return TRN_OK;
    return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)e->entry_offset + 2,
                         "%s: expected type %s (%u), found type %u", name,
                         type == GT_TYPE_DOUBLE  ? "DOUBLE"
                         : type == GT_TYPE_SHORT ? "SHORT"
                                                 : "ASCII",
                         type, e->type);
}

static trn_status read_doubles(const gt_scan *s, const gt_entry *e, const char *name, double *out,
                               size_t want, trn_error *err)
{
    trn_status st = expect_type(s, e, GT_TYPE_DOUBLE, name, err);
    if (st) return st;
    if (e->count < want)
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)e->entry_offset + 4,
                             "%s: expected at least %zu values, found %llu", name, want,
                             (unsigned long long)e->count);
    trn_cursor c;
    trn_cursor_init(&c, s->data, s->size);
    c.pos = e->data_offset;
    for (size_t k = 0; k < want; k++) {
        /* The scan checked the whole value array lies in the file. */
        rd_f64(&c, s->big_endian, &out[k]);
        if (!isfinite(out[k]))
            return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)(e->data_offset + 8 * k),
                                 "%s: value %zu is not a finite number", name, k);
    }
    return TRN_OK;
}

/* A NUL-terminated copy of an ASCII tag's text (trailing NULs dropped), truncated to out_size. */
static void read_ascii(const gt_scan *s, const gt_entry *e, size_t start, size_t count, char *out,
                       size_t out_size)
{
    size_t n = count < out_size - 1 ? count : out_size - 1;
    memcpy(out, s->data + e->data_offset + start, n);
    out[n] = '\0';
    while (n > 0 && (out[n - 1] == '\0' || out[n - 1] == '|' || out[n - 1] == ' ')) {
        out[n - 1] = '\0';
        n--;
    }
}

static trn_status parse_geokeys(const gt_scan *s, const trn_geotiff_limits *lim,
                                trn_geotiff_georef *g, trn_error *err)
{
    const gt_entry *ke = &s->entries[GT_E_GEOKEYS];
    const gt_entry *de = &s->entries[GT_E_GEODOUBLES];
    const gt_entry *ae = &s->entries[GT_E_GEOASCII];
    trn_status st = expect_type(s, ke, GT_TYPE_SHORT, "GeoKeyDirectory", err);
    if (st) return st;
    if (de->present && (st = expect_type(s, de, GT_TYPE_DOUBLE, "GeoDoubleParams", err))) return st;
    if (ae->present && (st = expect_type(s, ae, GT_TYPE_ASCII, "GeoAsciiParams", err))) return st;
    if (ke->count < 4)
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)ke->entry_offset + 4,
                             "GeoKeyDirectory: expected at least 4 values (its header), found "
                             "%llu",
                             (unsigned long long)ke->count);
    trn_cursor c;
    trn_cursor_init(&c, s->data, s->size);
    c.pos = ke->data_offset;
    uint16_t head[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++)
        rd_u16(&c, s->big_endian, &head[k]);
    if (head[0] != 1)
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)ke->data_offset,
                             "GeoKeyDirectory: expected KeyDirectoryVersion 1, found %u", head[0]);
    uint32_t nkeys = head[3];
    if (nkeys > lim->max_geokeys)
        return trn_error_set(err, TRN_ERR_LIMIT, s->path, (int64_t)ke->data_offset + 6,
                             "GeoKeyDirectory: %u keys, over the limit of %u", nkeys,
                             lim->max_geokeys);
    if (4ull * (nkeys + 1ull) > ke->count)
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)ke->data_offset + 6,
                             "GeoKeyDirectory: %u keys need %u values, the tag has %llu", nkeys,
                             4u * (nkeys + 1u), (unsigned long long)ke->count);
    g->has_geokeys = true;
    /* Keep the directory verbatim when it fits, so writers keep every key. */
    uint64_t ascii_count = ae->present ? ae->count : 0;
    uint64_t double_count = de->present ? de->count : 0;
    g->kept_keys = nkeys <= TRN_GEOTIFF_KEEP_KEYS && double_count <= TRN_GEOTIFF_KEEP_DOUBLES &&
                   ascii_count < TRN_GEOTIFF_KEEP_ASCII;
    if (g->kept_keys) {
        g->key_shorts = 4u * (nkeys + 1u);
        memcpy(g->keys, head, sizeof head);
        trn_cursor kc = c;
        for (uint32_t k = 4; k < g->key_shorts; k++)
            rd_u16(&kc, s->big_endian, &g->keys[k]);
        trn_cursor dc;
        trn_cursor_init(&dc, s->data, s->size);
        dc.pos = de->data_offset;
        g->double_count = (uint32_t)double_count;
        for (uint32_t k = 0; k < g->double_count; k++)
            rd_f64(&dc, s->big_endian, &g->doubles[k]);
        g->ascii_size = (uint32_t)ascii_count;
        if (ascii_count) memcpy(g->ascii, s->data + ae->data_offset, (size_t)ascii_count);
        g->ascii[ascii_count] = '\0';
        if (ascii_count && g->ascii[ascii_count - 1] != '\0') g->ascii_size++;
    }
    for (uint32_t k = 0; k < nkeys; k++) {
        size_t at = c.pos;
        uint16_t id = 0, loc = 0, count = 0, value = 0;
        rd_u16(&c, s->big_endian, &id);
        rd_u16(&c, s->big_endian, &loc);
        rd_u16(&c, s->big_endian, &count);
        rd_u16(&c, s->big_endian, &value);
        if (loc == 0) {
            switch (id) {
            case 1024:
                g->model_type = value;
                break;
            case 1025:
                g->raster_type = value;
                break;
            case 2048:
                g->geographic_epsg = value;
                break;
            case 2054:
                g->angular_units = value;
                break;
            case 3072:
                g->projected_epsg = value;
                break;
            case 3076:
                g->linear_units = value;
                break;
            case 4096:
                g->vertical_epsg = value;
                break;
            case 4099:
                g->vertical_units = value;
                break;
            default:
                break;
            }
        } else if (loc == GT_TAG_GEO_ASCII_PARAMS) {
            if (!ae->present || (uint64_t)value + count > ae->count)
                return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)at,
                                     "GeoKeyDirectory: key %u points at GeoAsciiParams "
                                     "characters %u..%u, the tag has %llu",
                                     id, value, value + count, (unsigned long long)ascii_count);
            if ((id == 1026 || (id == 3073 && !g->citation[0])) && count > 0)
                read_ascii(s, ae, value, count, g->citation, sizeof g->citation);
        } else if (loc == GT_TAG_GEO_DOUBLE_PARAMS) {
            if (!de->present || (uint64_t)value + count > de->count)
                return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)at,
                                     "GeoKeyDirectory: key %u points at GeoDoubleParams values "
                                     "%u..%u, the tag has %llu",
                                     id, value, value + count, (unsigned long long)double_count);
        } else if (loc == GT_TAG_GEO_KEY_DIRECTORY) {
            if ((uint64_t)value + count > ke->count)
                return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)at,
                                     "GeoKeyDirectory: key %u points at directory values "
                                     "%u..%u, the tag has %llu",
                                     id, value, value + count, (unsigned long long)ke->count);
        }
        /* Other locations name tags this reader does not use; the key is ignored. */
    }
    gt_crs_normalise(s, g);
    return TRN_OK;
}

static trn_status parse_nodata(const gt_scan *s, trn_geotiff_info *info, trn_error *err)
{
    const gt_entry *e = &s->entries[GT_E_NODATA];
    trn_status st = expect_type(s, e, GT_TYPE_ASCII, "GDAL_NODATA", err);
    if (st) return st;
    read_ascii(s, e, 0, (size_t)e->count, info->nodata_text, sizeof info->nodata_text);
    const char *t = info->nodata_text;
    while (*t == ' ')
        t++;
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    while (*end == ' ')
        end++;
    if (end == t || *end != '\0')
        return trn_error_set(err, TRN_ERR_FORMAT, s->path, (int64_t)e->data_offset,
                             "GDAL_NODATA: expected a number (or nan), found \"%s\"",
                             info->nodata_text);
    info->has_nodata_tag = true;
    info->nodata_tag_value = v;
    return TRN_OK;
}

trn_status gt_scan_file(const uint8_t *data, size_t size, const char *path,
                        const trn_geotiff_limits *limits, gt_scan *scan, trn_geotiff_info *info,
                        trn_error *err)
{
    trn_geotiff_limits lim;
    if (limits)
        lim = *limits;
    else
        trn_geotiff_limits_default(&lim);
    memset(scan, 0, sizeof *scan);
    memset(info, 0, sizeof *info);
    scan->data = data;
    scan->size = data ? size : 0;
    scan->path = path;
    trn_status st = scan_header(scan, err);
    if (!st) st = scan_ifd(scan, &lim, err);
    if (st) return st;
    info->big_endian = scan->big_endian;
    info->bigtiff = scan->bigtiff;
    info->ifd_entries = scan->ifd_entries;

    trn_geotiff_georef *g = &info->georef;
    const gt_entry *e = scan->entries;
    if (e[GT_E_PIXEL_SCALE].present) {
        st = read_doubles(scan, &e[GT_E_PIXEL_SCALE], "ModelPixelScale", g->pixel_scale, 3, err);
        if (st) return st;
        if (g->pixel_scale[0] == 0 || g->pixel_scale[1] == 0)
            return trn_error_set(err, TRN_ERR_FORMAT, path,
                                 (int64_t)e[GT_E_PIXEL_SCALE].data_offset,
                                 "ModelPixelScale: expected non-zero x and y scales, found %g and "
                                 "%g",
                                 g->pixel_scale[0], g->pixel_scale[1]);
        g->has_pixel_scale = true;
    }
    if (e[GT_E_TIEPOINT].present) {
        st = read_doubles(scan, &e[GT_E_TIEPOINT], "ModelTiepoint", g->tiepoint, 6, err);
        if (st) return st;
        g->has_tiepoint = true;
        g->tiepoint_count = (uint32_t)(e[GT_E_TIEPOINT].count / 6);
    }
    if (e[GT_E_TRANSFORMATION].present) {
        st = read_doubles(scan, &e[GT_E_TRANSFORMATION], "ModelTransformation",
                          g->model_transformation, 16, err);
        if (st) return st;
        g->has_model_transformation = true;
    }
    if (e[GT_E_GEOKEYS].present && (st = parse_geokeys(scan, &lim, g, err))) return st;
    if (e[GT_E_NODATA].present && (st = parse_nodata(scan, info, err))) return st;
    info->has_georef =
        g->has_pixel_scale || g->has_tiepoint || g->has_model_transformation || g->has_geokeys;

    /* The raster-to-model transform (GDAL's convention, see geotiff.h). */
    if (g->has_model_transformation) {
        const double *m = g->model_transformation;
        double t[6] = {m[3], m[0], m[1], m[7], m[4], m[5]};
        memcpy(g->transform, t, sizeof t);
        g->has_transform = m[0] * m[5] - m[1] * m[4] != 0;
    } else if (g->has_pixel_scale && g->has_tiepoint && g->tiepoint_count >= 1) {
        const double *tp = g->tiepoint, *sc = g->pixel_scale;
        g->transform[0] = tp[3] - tp[0] * sc[0];
        g->transform[1] = sc[0];
        g->transform[2] = 0;
        g->transform[3] = tp[4] + tp[1] * sc[1];
        g->transform[4] = 0;
        g->transform[5] = -sc[1];
        g->has_transform = true;
    }
    if (g->has_transform && g->raster_type == TRN_GEOTIFF_RASTER_PIXEL_IS_POINT) {
        double *t = g->transform;
        t[0] -= 0.5 * t[1] + 0.5 * t[2];
        t[3] -= 0.5 * t[4] + 0.5 * t[5];
    }
    return TRN_OK;
}

const char *trn_gt_num(uint64_t v, uint64_t limit, char buf[24])
{
    /* Past 2^48 (256 TiB) nothing in a file is real; below that a truncated file's numbers
     * read best as they are. */
    snprintf(buf, 24, v <= limit || v < (1ull << 48) ? "%llu" : "0x%llx", (unsigned long long)v);
    return buf;
}

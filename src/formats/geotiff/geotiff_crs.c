/* GeoKeys to a CRS with libgeotiff (GTIFGetDefn over PROJ's EPSG database): codes, units, datum. */
#include <stdlib.h>
#include <string.h>

#include <geo_normalize.h>
#include <geo_simpletags.h>
#include <geo_tiffp.h>
#include <geotiff.h>
#include <geovalues.h>

#include "geo_libs.h"
#include "geotiff_private.h"

/* The scanner has already checked the directory (its header, every key's location and range,
 * with file offsets in the errors); libgeotiff only interprets what passed. */

static uint16_t get_u16(const uint8_t *p, bool be)
{
    const unsigned hi = be ? p[0] : p[1], lo = be ? p[1] : p[0];
    return (uint16_t)(hi << 8 | lo);
}

static double get_f64(const uint8_t *p, bool be)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v |= (uint64_t)p[be ? k : 7 - k] << (8 * (7 - k));
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

/* libgeotiff reports a malformed directory through this; the scanner's own checks already gave
 * those errors their offsets, so anything left is ignored rather than printed. */
static void quiet(struct gtiff *gtif, int level, const char *msg, ...)
{
    (void)gtif;
    (void)level;
    (void)msg;
}

/* Keys point at most 65535 + 65535 values into a params tag: nothing past that is read. */
#define GT_PARAMS_REACH 131070u

void gt_crs_normalise(const gt_scan *s, trn_geotiff_georef *g)
{
    const gt_entry *ke = &s->entries[GT_E_GEOKEYS];
    const gt_entry *de = &s->entries[GT_E_GEODOUBLES];
    const gt_entry *ae = &s->entries[GT_E_GEOASCII];
    if (!ke->present || ke->count < 4) return;
    /* Without the libraries (a broken install) the keys stay as read, unnormalised, as when
     * libgeotiff cannot interpret them. */
    if (!trn_geo_libs_open(NULL)) return;
    const bool be = s->big_endian;
    const uint32_t nkeys = get_u16(s->data + ke->data_offset + 6, be);
    const size_t shorts = 4u * ((size_t)nkeys + 1u); /* checked against the tag by the scanner */
    const size_t doubles = de->present ? (de->count < GT_PARAMS_REACH ? (size_t)de->count
                                                                      : GT_PARAMS_REACH)
                                       : 0;
    const size_t chars = ae->present ? (ae->count < GT_PARAMS_REACH ? (size_t)ae->count
                                                                    : GT_PARAMS_REACH)
                                     : 0;
    uint16_t *k = malloc(shorts * sizeof *k);
    double *d = doubles ? malloc(doubles * sizeof *d) : NULL;
    char *a = chars ? malloc(chars + 1u) : NULL;
    ST_TIFF *st = NULL;
    GTIF *gtif = NULL;
    GTIFDefn *defn = NULL;
    PJ_CONTEXT *pj = NULL;
    if (!k || (doubles && !d) || (chars && !a)) goto done;
    for (size_t i = 0; i < shorts; i++)
        k[i] = get_u16(s->data + ke->data_offset + 2 * i, be);
    for (size_t i = 0; i < doubles; i++)
        d[i] = get_f64(s->data + de->data_offset + 8 * i, be);
    if (chars) {
        memcpy(a, s->data + ae->data_offset, chars);
        a[chars] = '\0';
    }
    if (!(st = ST_Create())) goto done;
    ST_SetKey(st, GT_TAG_GEO_KEY_DIRECTORY, (int)shorts, STT_SHORT, k);
    if (doubles) ST_SetKey(st, GT_TAG_GEO_DOUBLE_PARAMS, (int)doubles, STT_DOUBLE, d);
    if (chars) ST_SetKey(st, GT_TAG_GEO_ASCII_PARAMS, 0, STT_ASCII, a);
    TIFFMethod methods;
    GTIFSetSimpleTagsMethods(&methods);
    if (!(gtif = GTIFNewWithMethodsEx(st, &methods, quiet, NULL))) goto done;
    /* Our own PROJ context for the EPSG look-ups, silent (PROJ's default logs an unknown code
     * to stderr), so reads on several threads share nothing and print nothing. */
    if (!(pj = proj_context_create())) goto done;
    proj_log_level(pj, PJ_LOG_NONE);
    GTIFAttachPROJContext(gtif, pj);
    if (!(defn = GTIFAllocDefn()) || !GTIFGetDefn(gtif, defn)) goto done;
    g->crs_normalised = true;
    if (defn->PCS > 0 && defn->PCS != KvUserDefined && !g->projected_epsg &&
        g->model_type != TRN_GEOTIFF_MODEL_GEOGRAPHIC)
        g->projected_epsg = (uint16_t)defn->PCS;
    if (defn->GCS > 0 && defn->GCS != KvUserDefined) g->crs_geographic_epsg = (uint16_t)defn->GCS;
    if (defn->Datum > 0 && defn->Datum != KvUserDefined) g->datum_epsg = (uint16_t)defn->Datum;
    if (defn->UOMLengthInMeters > 0 && defn->Model == ModelTypeProjected)
        g->crs_unit_metres = defn->UOMLengthInMeters;
    if (defn->SemiMajor > 0 && defn->SemiMinor > 0 && defn->SemiMinor <= defn->SemiMajor) {
        g->semi_major = defn->SemiMajor;
        g->semi_minor = defn->SemiMinor;
    }
done:
    if (defn) GTIFFreeDefn(defn);
    if (gtif) GTIFFree(gtif);
    if (st) ST_Destroy(st);
    if (pj) proj_context_destroy(pj);
    free(k);
    free(d);
    free(a);
}

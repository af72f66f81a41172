/* Stationeers .save archives (ZIP): read terrain.dat in place, replace it keeping the rest. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zip.h>

#include "core/fileio.h"
#include "terrane/stationeers.h"

#define DEFAULT_MAX_ENTRY ((size_t)1 << 31)

static trn_status zip_fail(trn_error *err, trn_status code, const char *path, const char *what,
                           zip_error_t *ze)
{
    return trn_error_set(err, code, path, -1, "%s: %s", what,
                         ze ? zip_error_strerror(ze) : "unknown libzip error");
}

/* True when name's last component is terrain.dat (any case). */
static bool is_terrain_entry(const char *name)
{
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    return strcasecmp(base, TRN_STATIONEERS_SAVE_ENTRY) == 0;
}

/* The index of the one terrain.dat entry. */
static trn_status find_entry(zip_t *za, const char *path, zip_uint64_t *index, trn_error *err)
{
    zip_int64_t count = zip_get_num_entries(za, 0);
    zip_int64_t found = -1;
    for (zip_int64_t i = 0; i < count; i++) {
        const char *name = zip_get_name(za, (zip_uint64_t)i, ZIP_FL_ENC_GUESS);
        if (!name || !is_terrain_entry(name)) continue;
        if (found >= 0)
            return trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                                 "save archive: two entries named terrain.dat ('%s' and '%s'); "
                                 "expected one",
                                 zip_get_name(za, (zip_uint64_t)found, ZIP_FL_ENC_GUESS), name);
        found = i;
    }
    if (found < 0)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, path, -1,
                             "save archive: no terrain.dat among its %lld entries (a Stationeers "
                             ".save holds world.xml, world_meta.xml and terrain.dat)",
                             (long long)count);
    *index = (zip_uint64_t)found;
    return TRN_OK;
}

/* Open a ZIP over bytes held in memory; the source is kept so the caller can read it back. */
static trn_status open_memory_zip(const uint8_t *data, size_t size, const char *path, int flags,
                                  zip_source_t **src_out, zip_t **za_out, trn_error *err)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(data, size, 0, &ze);
    if (!src) {
        trn_status st = zip_fail(err, TRN_ERR_NO_MEMORY, path, "save archive", &ze);
        zip_error_fini(&ze);
        return st;
    }
    zip_t *za = zip_open_from_source(src, flags, &ze);
    if (!za) {
        trn_status st =
            trn_error_set(err, TRN_ERR_FORMAT, path, 0, "save archive: not a readable ZIP: %s",
                          zip_error_strerror(&ze));
        zip_error_fini(&ze);
        zip_source_free(src);
        return st;
    }
    zip_error_fini(&ze);
    *src_out = src;
    *za_out = za;
    return TRN_OK;
}

static trn_status read_entry(zip_t *za, zip_uint64_t index, const char *path, size_t max_size,
                             uint8_t **data, size_t *size, trn_error *err)
{
    zip_stat_t zs;
    zip_stat_init(&zs);
    if (zip_stat_index(za, index, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_SIZE))
        return zip_fail(err, TRN_ERR_FORMAT, path, "save archive: terrain.dat", zip_get_error(za));
    if (zs.size > max_size)
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                             "save archive: terrain.dat holds %llu bytes, over the limit %zu",
                             (unsigned long long)zs.size, max_size);
    size_t n = (size_t)zs.size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                             "save archive: no memory for terrain.dat's %zu bytes", n);
    zip_file_t *zf = zip_fopen_index(za, index, 0);
    if (!zf) {
        free(buf);
        return zip_fail(err, TRN_ERR_FORMAT, path, "save archive: cannot open terrain.dat",
                        zip_get_error(za));
    }
    size_t got = 0;
    while (got < n) {
        zip_int64_t r = zip_fread(zf, buf + got, n - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    /* A short read or a CRC mismatch shows up as an error on the file. */
    zip_error_t *fe = zip_file_get_error(zf);
    bool bad = got != n || zip_error_code_zip(fe) != ZIP_ER_OK;
    trn_status st = TRN_OK;
    if (bad)
        st = trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                           "save archive: terrain.dat: read %zu of %zu bytes: %s", got, n,
                           zip_error_code_zip(fe) != ZIP_ER_OK ? zip_error_strerror(fe)
                                                               : "entry ends early");
    zip_fclose(zf);
    if (st) {
        free(buf);
        return st;
    }
    *data = buf;
    *size = n;
    return TRN_OK;
}

trn_status trn_stationeers_save_extract(const char *save_path, size_t max_size, uint8_t **data,
                                        size_t *size, trn_error *err)
{
    *data = NULL;
    *size = 0;
    if (max_size == 0) max_size = DEFAULT_MAX_ENTRY;
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, save_path, 0, err);
    if (st) return st;
    zip_source_t *src = NULL;
    zip_t *za = NULL;
    st = open_memory_zip(mf.data, mf.size, save_path, ZIP_RDONLY | ZIP_CHECKCONS, &src, &za, err);
    if (st == TRN_OK) {
        zip_uint64_t index;
        st = find_entry(za, save_path, &index, err);
        if (st == TRN_OK) st = read_entry(za, index, save_path, max_size, data, size, err);
        zip_discard(za);
    }
    trn_mapped_file_close(&mf);
    return st;
}

trn_status trn_stationeers_save_read(const char *save_path, const trn_stationeers_limits *limits,
                                     trn_stationeers_terrain *terrain, trn_error *err)
{
    memset(terrain, 0, sizeof *terrain);
    uint8_t *data;
    size_t size;
    trn_status st = trn_stationeers_save_extract(save_path, 0, &data, &size, err);
    if (st) return st;
    /* Name the entry inside the archive in messages about its bytes. */
    char where[1024];
    snprintf(where, sizeof where, "%s:terrain.dat", save_path);
    st = trn_stationeers_parse(data, size, where, limits, terrain, err);
    free(data);
    return st;
}

trn_status trn_stationeers_save_replace(const char *save_path, const char *out_path,
                                        const uint8_t *data, size_t size, trn_error *err)
{
    if (!save_path || !out_path || (!data && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "save_replace: needs a save, an output and the new bytes");
    uint8_t *in = NULL;
    size_t in_size = 0;
    trn_status st = trn_file_read_all(save_path, 0, &in, &in_size, err);
    if (st) return st;
    zip_source_t *src = NULL;
    zip_t *za = NULL;
    uint8_t *result = NULL;
    st = open_memory_zip(in, in_size, save_path, ZIP_CHECKCONS, &src, &za, err);
    if (st) goto done;
    /* The archive is rewritten into the same memory source; keep it past zip_close. */
    zip_source_keep(src);
    zip_uint64_t index;
    st = find_entry(za, save_path, &index, err);
    if (st) goto discard;
    zip_stat_t zs;
    zip_stat_init(&zs);
    if (zip_stat_index(za, index, 0, &zs) != 0) {
        st = zip_fail(err, TRN_ERR_FORMAT, save_path, "save archive: terrain.dat",
                      zip_get_error(za));
        goto discard;
    }
    zip_int32_t method =
        (zs.valid & ZIP_STAT_COMP_METHOD) ? (zip_int32_t)zs.comp_method : ZIP_CM_DEFLATE;
    if (method != ZIP_CM_STORE && !zip_compression_method_supported(method, 1))
        method = ZIP_CM_DEFLATE;
    zip_source_t *entry = zip_source_buffer(za, data, size, 0);
    if (!entry) {
        st = zip_fail(err, TRN_ERR_NO_MEMORY, save_path, "save archive", zip_get_error(za));
        goto discard;
    }
    if (zip_file_replace(za, index, entry, ZIP_FL_ENC_GUESS) != 0) {
        zip_source_free(entry);
        st = zip_fail(err, TRN_ERR_FORMAT, save_path, "save archive: replacing terrain.dat",
                      zip_get_error(za));
        goto discard;
    }
    if (zip_set_file_compression(za, index, method, 0) != 0 ||
        ((zs.valid & ZIP_STAT_MTIME) && zip_file_set_mtime(za, index, zs.mtime, 0) != 0)) {
        st = zip_fail(err, TRN_ERR_FORMAT, save_path, "save archive: terrain.dat settings",
                      zip_get_error(za));
        goto discard;
    }
    if (zip_close(za) != 0) {
        st = zip_fail(err, TRN_ERR_IO, save_path, "save archive: rebuilding the ZIP",
                      zip_get_error(za));
        goto discard;
    }
    za = NULL;
    /* Read the rebuilt archive back out of the memory source. */
    zip_stat_t ss;
    zip_stat_init(&ss);
    if (zip_source_stat(src, &ss) != 0 || !(ss.valid & ZIP_STAT_SIZE) ||
        zip_source_open(src) != 0) {
        st = zip_fail(err, TRN_ERR_IO, save_path, "save archive: reading the rebuilt ZIP",
                      zip_source_error(src));
        goto done;
    }
    size_t out_size = (size_t)ss.size;
    result = malloc(out_size ? out_size : 1);
    zip_int64_t r = result ? zip_source_read(src, result, ss.size) : -1;
    zip_source_close(src);
    if (r < 0 || (zip_uint64_t)r != ss.size) {
        st = trn_error_set(err, result ? TRN_ERR_IO : TRN_ERR_NO_MEMORY, save_path, -1,
                           "save archive: reading the rebuilt ZIP (%zu bytes) failed", out_size);
        goto done;
    }
    st = trn_file_write_atomic(out_path, result, out_size, err);
    goto done;
discard:
    if (za) zip_discard(za);
done:
    if (src) zip_source_free(src);
    free(result);
    free(in);
    return st;
}

/* Stationeers .save archives (ZIP): read terrain.dat in place, replace it keeping the rest. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zip.h>
#include <zlib.h>

#include "core/cursor.h"
#include "core/fileio.h"
#include "terrane/stationeers.h"

#define DEFAULT_MAX_ENTRY ((size_t)1 << 31)
/* Unix st_mode bits as ZIP external attributes carry them (high 16 bits), spelled out so the
 * check does not depend on the host's <sys/stat.h>. */
#define UNIX_MODE_TYPE 0170000u
#define UNIX_MODE_LINK 0120000u

static trn_status zip_fail(trn_error *err, trn_status code, const char *path, const char *what,
                           zip_error_t *ze)
{
    return trn_error_set(err, code, path, -1, "%s: %s", what,
                         ze ? zip_error_strerror(ze) : "unknown libzip error");
}

/* An entry name fit for a message: printable ASCII kept, other bytes as \xNN, cut at 200. */
static void printable_name(const uint8_t *name, size_t len, char *buf, size_t size)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 5 < size; i++) {
        if (i == 200) {
            snprintf(buf + k, size - k, "...");
            return;
        }
        if (name[i] >= 0x20 && name[i] < 0x7f)
            buf[k++] = (char)name[i];
        else
            k += (size_t)snprintf(buf + k, size - k, "\\x%02x", name[i]);
    }
    buf[k] = 0;
}

typedef struct cd_name {
    const uint8_t *name;
    size_t len;
} cd_name;

static int cd_name_cmp(const void *a, const void *b)
{
    const cd_name *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    if (c) return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Where the central directory starts and how many entries it lists (ZIP64 too); false when
 * the end records cannot be found or point outside the bytes. */
static bool find_central_directory(const uint8_t *zip, size_t size, size_t *cd_at,
                                   uint64_t *entries)
{
    if (size < 22) return false;
    size_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
    for (size_t at = size - 22 + 1; at-- > lowest;) {
        if (memcmp(zip + at, "PK\x05\x06", 4) != 0) continue;
        trn_cursor c;
        trn_cursor_init(&c, zip + at + 10, 12);
        uint16_t count16;
        uint32_t cd_size, cd_offset;
        trn_cursor_u16le(&c, &count16);
        trn_cursor_u32le(&c, &cd_size);
        trn_cursor_u32le(&c, &cd_offset);
        uint64_t count = count16, offset = cd_offset;
        if ((count16 == 0xffff || cd_offset == 0xffffffffu) && at >= 20 &&
            memcmp(zip + at - 20, "PK\x06\x07", 4) == 0) {
            /* ZIP64: the locator gives the ZIP64 end record, which holds the real values. */
            const uint8_t *loc = zip + at - 20 + 8;
            uint64_t end64 = 0;
            for (int k = 7; k >= 0; k--)
                end64 = end64 << 8 | loc[k];
            if (end64 > size || size - end64 < 56 || memcmp(zip + end64, "PK\x06\x06", 4) != 0)
                return false;
            count = offset = 0;
            for (int k = 7; k >= 0; k--) {
                count = count << 8 | zip[end64 + 32 + (size_t)k];
                offset = offset << 8 | zip[end64 + 48 + (size_t)k];
            }
        }
        if (offset > size) return false;
        *cd_at = (size_t)offset;
        *entries = count;
        return true;
    }
    return false;
}

/* The name of an entry the central directory lists twice (libzip refuses such archives with
 * "File already exists", naming neither entry). False when none is found. */
static bool find_duplicate_name(const uint8_t *zip, size_t size, char *buf, size_t buf_size)
{
    size_t cd_at;
    uint64_t entries;
    if (!find_central_directory(zip, size, &cd_at, &entries)) return false;
    /* Each entry takes at least 46 bytes: never allocate more than the bytes could hold. */
    if (entries > (size - cd_at) / 46) entries = (size - cd_at) / 46;
    if (entries < 2) return false;
    cd_name *names = malloc((size_t)entries * sizeof *names);
    if (!names) return false;
    trn_cursor c;
    trn_cursor_init(&c, zip + cd_at, size - cd_at);
    size_t count = 0;
    while (count < entries) {
        const uint8_t *h = trn_cursor_take(&c, 46);
        if (!h || memcmp(h, "PK\x01\x02", 4) != 0) break;
        size_t name_len = (size_t)(h[28] | h[29] << 8);
        size_t rest = name_len + (size_t)(h[30] | h[31] << 8) + (size_t)(h[32] | h[33] << 8);
        const uint8_t *name = trn_cursor_take(&c, rest);
        if (!name) break;
        names[count].name = name;
        names[count].len = name_len;
        count++;
    }
    qsort(names, count, sizeof *names, cd_name_cmp);
    bool found = false;
    for (size_t i = 1; i < count && !found; i++)
        if (cd_name_cmp(&names[i - 1], &names[i]) == 0) {
            printable_name(names[i].name, names[i].len, buf, buf_size);
            found = true;
        }
    free(names);
    return found;
}

/* True when the entry is a symbolic link: a Unix mode of type S_IFLNK in its attributes. */
static bool entry_is_symlink(zip_t *za, zip_uint64_t index, uint32_t *mode)
{
    zip_uint8_t opsys;
    zip_uint32_t attributes;
    if (zip_file_get_external_attributes(za, index, 0, &opsys, &attributes) != 0 ||
        opsys != ZIP_OPSYS_UNIX)
        return false;
    *mode = attributes >> 16;
    return (*mode & UNIX_MODE_TYPE) == UNIX_MODE_LINK;
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
    char dup[1024];
    if (!za && zip_error_code_zip(&ze) == ZIP_ER_EXISTS &&
        find_duplicate_name(data, size, dup, sizeof dup)) {
        zip_error_fini(&ze);
        zip_source_free(src);
        return trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                             "save archive: duplicate entry '%s' in archive (two entries of that "
                             "name: which one is meant cannot be told)",
                             dup);
    }
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

/* Bytes in one zlib crc32 call (its length is an unsigned int). */
#define CRC_CHUNK ((size_t)1 << 30)

static uint32_t crc32_of(const uint8_t *data, size_t size)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t at = 0; at < size; at += CRC_CHUNK) {
        size_t n = size - at < CRC_CHUNK ? size - at : CRC_CHUNK;
        crc = crc32(crc, data + at, (uInt)n);
    }
    return (uint32_t)crc;
}

static trn_status read_entry(zip_t *za, zip_uint64_t index, const char *path, size_t max_size,
                             uint8_t **data, size_t *size, trn_error *err)
{
    const char *name = zip_get_name(za, index, ZIP_FL_ENC_GUESS);
    if (!name) name = TRN_STATIONEERS_SAVE_ENTRY;
    uint32_t mode;
    if (entry_is_symlink(za, index, &mode))
        return trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                             "save archive: entry '%s' is a symbolic link (Unix mode 0%o in its "
                             "external attributes), not data: refusing to read it",
                             name, (unsigned)mode);
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
    /* libzip checks the CRC only when a read runs into the end of the entry, which a read of
     * exactly its size never does: check it here. */
    uint32_t found;
    if (st == TRN_OK && (zs.valid & ZIP_STAT_CRC) && (found = crc32_of(buf, n)) != zs.crc)
        st = trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                           "save archive: entry '%s': CRC-32 mismatch: the central directory "
                           "expects 0x%08x, the %zu extracted bytes give 0x%08x (the archive is "
                           "damaged)",
                           name, (unsigned)zs.crc, n, (unsigned)found);
    if (st) {
        free(buf);
        return st;
    }
    *data = buf;
    *size = n;
    return TRN_OK;
}

trn_status trn_stationeers_save_extract_memory(const uint8_t *save, size_t save_size,
                                               const char *save_path, size_t max_size,
                                               uint8_t **data, size_t *size, trn_error *err)
{
    *data = NULL;
    *size = 0;
    if (max_size == 0) max_size = DEFAULT_MAX_ENTRY;
    if (!save && save_size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, save_path, -1,
                             "save_extract: no archive bytes");
    static const uint8_t empty[1] = {0};
    zip_source_t *src = NULL;
    zip_t *za = NULL;
    trn_status st = open_memory_zip(save ? save : empty, save_size, save_path,
                                    ZIP_RDONLY | ZIP_CHECKCONS, &src, &za, err);
    if (st) return st;
    zip_uint64_t index;
    st = find_entry(za, save_path, &index, err);
    if (st == TRN_OK) st = read_entry(za, index, save_path, max_size, data, size, err);
    zip_discard(za);
    return st;
}

trn_status trn_stationeers_save_extract(const char *save_path, size_t max_size, uint8_t **data,
                                        size_t *size, trn_error *err)
{
    *data = NULL;
    *size = 0;
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, save_path, 0, err);
    if (st) return st;
    st =
        trn_stationeers_save_extract_memory(mf.data, mf.size, save_path, max_size, data, size, err);
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
    /* libzip would copy a link entry's attributes as they are: never write one back. */
    for (zip_uint64_t i = 0; i < (zip_uint64_t)zip_get_num_entries(za, 0); i++) {
        uint32_t mode;
        if (!entry_is_symlink(za, i, &mode)) continue;
        const char *name = zip_get_name(za, i, ZIP_FL_ENC_GUESS);
        st = trn_error_set(err, TRN_ERR_FORMAT, save_path, -1,
                           "save archive: entry '%s' is a symbolic link (Unix mode 0%o); "
                           "refusing to write an archive with a link in it (remove the entry "
                           "first, e.g. zip -d ARCHIVE '%s')",
                           name ? name : "?", (unsigned)mode, name ? name : "?");
        goto discard;
    }
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

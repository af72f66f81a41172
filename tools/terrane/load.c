/* Loading any supported terrain or image file into a field (+ labels), format from content. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "detect.h"
#include "fmt_stationeers.h"
#include "fmt_geotiff.h"
#include "fmt_unity.h"
#include "core/fileio.h"
#include "terrane/beamng.h"
#include "terrane/image.h"
#include "terrane/terragen.h"

const char *cli_format_name(cli_format format)
{
    switch (format) {
    case CLI_FORMAT_UNKNOWN:
        return "unknown";
    case CLI_FORMAT_BEAMNG_TER:
        return "beamng-ter";
    case CLI_FORMAT_TERRAGEN:
        return "terragen";
    case CLI_FORMAT_PNG:
        return "png";
    case CLI_FORMAT_RAW:
        return "raw";
    case CLI_FORMAT_TERRAIN_JSON:
        return "beamng-terrain-json";
    case CLI_FORMAT_STATIONEERS_DAT:
        return "stationeers-dat";
    case CLI_FORMAT_STATIONEERS_SAVE:
        return "stationeers-save";
    case CLI_FORMAT_UNITY:
        return "unity";
    case CLI_FORMAT_GEOTIFF:
        return "geotiff";
    }
    return "unknown";
}

static bool has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcasecmp(path + n - m, suffix) == 0;
}

int cli_raw_type_from_path(const char *path)
{
    if (has_suffix(path, ".r32")) return TRN_RAW_F32_LE + 1;
    if (has_suffix(path, ".r16") || has_suffix(path, ".raw")) return TRN_RAW_U16_LE + 1;
    if (has_suffix(path, ".r8")) return TRN_RAW_U8 + 1;
    return 0;
}

int cli_parse_raw_type(cli_ctx *ctx, const char *text)
{
    static const struct {
        const char *name;
        trn_raw_type type;
    } names[] = {{"r16", TRN_RAW_U16_LE},
                 {"r16le", TRN_RAW_U16_LE},
                 {"r16be", TRN_RAW_U16_BE},
                 {"u8", TRN_RAW_U8},
                 {"r32", TRN_RAW_F32_LE}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(text, names[i].name) == 0) return (int)names[i].type + 1;
    cli_usage_error(ctx, "--raw-type takes r16le, r16be, u8 or r32, not '%s'", text);
    return -1;
}

cli_format cli_detect_format(const char *path, const uint8_t *head, size_t head_size)
{
    if (trn_png_sniff(head, head_size)) return CLI_FORMAT_PNG;
    if (trn_terragen_sniff(head, head_size)) return CLI_FORMAT_TERRAGEN;
    /* JSON documents open with '{' after optional whitespace; a .ter never starts with it
     * (its first byte is a version 1..9). */
    size_t k = 0;
    while (k < head_size &&
           (head[k] == ' ' || head[k] == '\n' || head[k] == '\r' || head[k] == '\t'))
        k++;
    if (k < head_size && head[k] == '{') return CLI_FORMAT_TERRAIN_JSON;
    /* Unity's header (version, endianness flag, version string) is a strong signature; a
     * terrain.dat is only recognised by small leading values, which a Unity file also has. */
    if (trn_unity_sniff(head, head_size)) return CLI_FORMAT_UNITY;
    if (trn_geotiff_sniff(head, head_size)) return CLI_FORMAT_GEOTIFF;
    cli_format stationeers = cli_stationeers_detect(path, head, head_size);
    if (stationeers != CLI_FORMAT_UNKNOWN) return stationeers;
    if (cli_raw_type_from_path(path)) return CLI_FORMAT_RAW;
    if (trn_ter_sniff(head, head_size)) return CLI_FORMAT_BEAMNG_TER;
    return CLI_FORMAT_UNKNOWN;
}

int cli_sniff_file(cli_ctx *ctx, const char *path, cli_format *format)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        trn_error e;
        trn_mapped_file mf;
        /* Reuse the library's wording for missing and unreadable files. */
        if (trn_mapped_file_open(&mf, path, 64, &e) != TRN_OK) return cli_fail(ctx, &e);
        trn_mapped_file_close(&mf);
        return cli_failf(ctx, "%s: cannot open", path);
    }
    if (S_ISDIR(st.st_mode)) return cli_failf(ctx, "%s: is a folder, expected a file", path);
    FILE *fp = fopen(path, "rb");
    if (!fp) return cli_failf(ctx, "%s: cannot open: %s", path, strerror(errno));
    uint8_t head[64];
    size_t n = fread(head, 1, sizeof head, fp);
    fclose(fp);
    if (n == 0) return cli_failf(ctx, "%s: offset 0: the file is empty (0 bytes)", path);
    *format = cli_detect_format(path, head, n);
    return CLI_EXIT_OK;
}

int cli_fail_unknown_format(cli_ctx *ctx, const char *path)
{
    uint8_t head[16];
    size_t n = 0;
    FILE *fp = fopen(path, "rb");
    if (fp) {
        n = fread(head, 1, sizeof head, fp);
        fclose(fp);
    }
    char shown[16 * 4 + 1] = "";
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(shown + k, sizeof shown - k, "%s%02x", i ? " " : "", head[i]);
    return cli_failf(ctx,
                     "%s: offset 0: unrecognised format: expected a BeamNG/Torque .ter (version "
                     "1-9), Terragen .ter, PNG, GeoTIFF, Unity TerrainData (.asset), "
                     "Stationeers terrain.dat or .save, BeamNG .terrain.json, or a headerless "
                     ".r16/.raw/.r32 (or --raw-type); found bytes %s",
                     path, shown);
}

int cli_load_option(cli_ctx *ctx, const char *opt, const char *value, cli_load_options *load)
{
    bool ok;
    if (strcmp(opt, "--max-height") == 0)
        ok = cli_parse_positive(ctx, opt, value, &load->max_height);
    else if (strcmp(opt, "--square-size") == 0)
        ok = cli_parse_positive(ctx, opt, value, &load->square_size);
    else if (strcmp(opt, "--size") == 0)
        ok = cli_parse_size(ctx, opt, value, &load->raw_width, &load->raw_height);
    else if (strcmp(opt, "--raw-type") == 0)
        ok = (load->raw_type = cli_parse_raw_type(ctx, value)) > 0;
    else
        return 0;
    return ok ? 1 : -1;
}

void cli_terrain_dispose(cli_terrain *t)
{
    if (!t) return;
    trn_field_dispose(&t->field);
    trn_labels_dispose(&t->labels);
    free(t->georef);
    memset(t, 0, sizeof *t);
}

static int load_ter(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *out)
{
    trn_ter ter;
    trn_error e;
    if (trn_ter_read(path, NULL, &ter, cli_progress, ctx, &e) != TRN_OK) return cli_fail(ctx, &e);
    for (uint32_t w = 0; w < ter.warning_count; w++)
        cli_note(ctx, "warning: %s: %s", path, ter.warnings[w].message);
    double max_height = opt && opt->max_height > 0 ? opt->max_height : CLI_DEFAULT_MAX_HEIGHT;
    double square = opt && opt->square_size > 0 ? opt->square_size : 1.0;
    trn_status st = trn_ter_to_field(&ter, max_height, square, &out->field, &out->labels, &e);
    trn_ter_dispose(&ter);
    if (st) return cli_fail(ctx, &e);
    out->has_labels = true;
    return CLI_EXIT_OK;
}

static int load_terragen(cli_ctx *ctx, const char *path, cli_terrain *out)
{
    trn_terragen tg;
    trn_error e;
    if (trn_terragen_read(path, NULL, &tg, &e) != TRN_OK) return cli_fail(ctx, &e);
    trn_status st = trn_terragen_to_field(&tg, &out->field, &e);
    trn_terragen_dispose(&tg);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

/* Metres per 16-bit unit for images: the full 0..65536 range spans max_height (BeamNG's rule). */
static double image_quantum(const cli_load_options *opt)
{
    double max_height = opt && opt->max_height > 0 ? opt->max_height : CLI_DEFAULT_MAX_HEIGHT;
    return max_height / 65536.0;
}

static int load_image(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                      cli_format format, cli_terrain *out)
{
    trn_image img;
    trn_error e;
    trn_status st;
    if (format == CLI_FORMAT_PNG) {
        st = trn_png_read(path, NULL, &img, &e);
    } else {
        int type = opt && opt->raw_type ? opt->raw_type : cli_raw_type_from_path(path);
        if (type <= 0) type = TRN_RAW_U16_LE + 1;
        st = trn_raw_read(path, (trn_raw_type)(type - 1), opt ? opt->raw_width : 0,
                          opt ? opt->raw_height : 0, &img, &e);
    }
    if (st) return cli_fail(ctx, &e);
    double square = opt && opt->square_size > 0 ? opt->square_size : 1.0;
    st = trn_image_to_field(&img, 0, image_quantum(opt), 0.0, square, &out->field, &e);
    trn_image_dispose(&img);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

int cli_load_terrain(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *out)
{
    memset(out, 0, sizeof *out);
    cli_format format = CLI_FORMAT_UNKNOWN;
    int rc = cli_sniff_file(ctx, path, &format);
    if (rc) return rc;
    /* A raw type or size from the user says the file is headerless. */
    if (opt && (opt->raw_type || opt->raw_width) && format != CLI_FORMAT_PNG &&
        format != CLI_FORMAT_TERRAGEN && format != CLI_FORMAT_GEOTIFF)
        format = CLI_FORMAT_RAW;
    snprintf(out->format, sizeof out->format, "%s", cli_format_name(format));
    switch (format) {
    case CLI_FORMAT_BEAMNG_TER:
        rc = load_ter(ctx, path, opt, out);
        break;
    case CLI_FORMAT_TERRAGEN:
        rc = load_terragen(ctx, path, out);
        break;
    case CLI_FORMAT_STATIONEERS_DAT:
    case CLI_FORMAT_STATIONEERS_SAVE:
        rc = cli_stationeers_load(ctx, path, opt, format, out);
        break;
    case CLI_FORMAT_UNITY:
        rc = cli_unity_load(ctx, path, out);
        break;
    case CLI_FORMAT_GEOTIFF:
        rc = cli_geotiff_load(ctx, path, out);
        break;
    case CLI_FORMAT_PNG:
    case CLI_FORMAT_RAW:
        rc = load_image(ctx, path, opt, format, out);
        break;
    case CLI_FORMAT_TERRAIN_JSON:
        return cli_failf(ctx,
                         "%s: is a JSON document, not a heightmap; for a BeamNG .terrain.json "
                         "pass the .ter it names (its \"datafile\")",
                         path);
    case CLI_FORMAT_UNKNOWN:
    default:
        return cli_fail_unknown_format(ctx, path);
    }
    cli_progress_end(ctx);
    if (rc) cli_terrain_dispose(out);
    return rc;
}

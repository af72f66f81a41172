/* Loading any supported terrain or image file into a field (+ labels), format from content. */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "input_names.h"
#include "fmt_payload.h"
#include "detect.h"
#include "fmt_stationeers.h"
#include "fmt_geotiff.h"
#include "fmt_unity.h"
#include "core/fileio.h"
#include "terrane/beamng.h"
#include "terrane/image.h"
#include "terrane/resample.h"
#include "terrane/stationeers.h"
#include "terrane/terragen.h"
#include "terrane/unity.h"

static bool has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcasecmp(path + n - m, suffix) == 0;
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

/* ---- detection ----------------------------------------------------------------------------- */

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* A terrain.dat's octree and vein table walked by the reader's rules without allocating (the
 * format has no magic, so its whole layout is the evidence). True when they end exactly at the
 * end of data; *end is where the walk stopped fitting (size when the data is only cut short). */
static bool dat_probe(const uint8_t *d, size_t n, uint64_t *end)
{
    if (n < 4) {
        *end = n;
        return false;
    }
    uint32_t max_depth = load_le32(d);
    if (max_depth > TRN_STATIONEERS_DEPTH_ABSURD) {
        *end = 0;
        return false;
    }
    /* Children still to read at each level of the walk; level = the depth of those nodes. */
    uint8_t left[TRN_STATIONEERS_DEPTH_ABSURD + 2];
    int top = 0;
    left[0] = 1;
    size_t pos = 4;
    while (top >= 0) {
        if (left[top] == 0) {
            top--;
            continue;
        }
        left[top]--;
        if (pos >= n) {
            *end = n;
            return false;
        }
        uint8_t flags = d[pos];
        if (flags & ~(TRN_STATIONEERS_LEAF | TRN_STATIONEERS_MODIFIED)) {
            *end = pos;
            return false;
        }
        if (flags & TRN_STATIONEERS_LEAF) {
            if (n - pos < 3) {
                *end = n;
                return false;
            }
            if (d[pos + 2] & ~0x0fu) {
                *end = pos + 2;
                return false;
            }
            pos += 3;
        } else {
            if ((uint32_t)top >= max_depth) { /* a branch where one voxel must be a leaf */
                *end = pos;
                return false;
            }
            pos++;
            left[++top] = 8;
        }
    }
    if (n - pos < 4) {
        *end = n;
        return false;
    }
    uint32_t veins = load_le32(d + pos);
    if (veins > INT32_MAX) {
        *end = pos;
        return false;
    }
    pos += 4;
    for (uint32_t v = 0; v < veins; v++) {
        /* Positions (12 bytes), IdHash (4), minable count (1), then 5 bytes per minable. */
        if (n - pos < 17 || (n - pos - 17) / 5 < d[pos + 16]) {
            *end = n;
            return false;
        }
        pos += 17 + (size_t)d[pos + 16] * 5;
    }
    *end = pos;
    return pos == n;
}

/* The start of a Unity SerializedFile header cut too short for trn_unity_sniff: named .asset,
 * or a version field in range with the endianness and reserved bytes that follow it. */
static bool unity_header_prefix(const char *path, const uint8_t *d, size_t n)
{
    if (has_suffix(path, ".asset")) return true;
    if (n < 12) return false;
    uint32_t version =
        ((uint32_t)d[8] << 24) | ((uint32_t)d[9] << 16) | ((uint32_t)d[10] << 8) | d[11];
    if (version < 9 || version > 50) return false;
    if (n > 16 && d[16] > 1) return false;
    for (size_t k = 17; k < 20 && k < n; k++)
        if (d[k]) return false;
    return true;
}

/* A format without a magic number, and how far the file fits its layout. */
typedef struct weak_candidate {
    cli_format format;
    bool fits;    /* the whole file is consistent */
    uint64_t end; /* where it stopped fitting (size when only cut short) */
    bool named;   /* the extension names this format */
} weak_candidate;

/* True when a beats b as the format to report a damaged file as. */
static bool better_candidate(const weak_candidate *a, const weak_candidate *b, size_t size)
{
    if (a->named != b->named) return a->named;
    bool a_cut = a->end == size, b_cut = b->end == size;
    if (a_cut != b_cut) return a_cut;
    return a->end > b->end;
}

cli_format cli_detect_format(const char *path, const uint8_t *data, size_t size)
{
    if (trn_png_sniff(data, size)) return CLI_FORMAT_PNG;
    if (size >= 8 && memcmp(data, "TRNBIN\0\0", 8) == 0) return CLI_FORMAT_PAYLOAD;
    if (trn_terragen_sniff(data, size)) return CLI_FORMAT_TERRAGEN;
    /* JSON documents open with '{' after optional whitespace; a .ter never starts with it
     * (its first byte is a version 1..9). A file named as headerless samples (.r32, .r16, .raw)
     * may: a float of 16.2 m opens with the byte '{' (7B B9 81 41). */
    size_t k = 0;
    while (k < size && (data[k] == ' ' || data[k] == '\n' || data[k] == '\r' || data[k] == '\t'))
        k++;
    if (k < size && data[k] == '{' && !cli_raw_type_from_path(path))
        return CLI_FORMAT_TERRAIN_JSON;
    if (trn_unity_sniff(data, size)) return CLI_FORMAT_UNITY;
    if (trn_geotiff_sniff(data, size)) return CLI_FORMAT_GEOTIFF;
    cli_format stationeers = cli_stationeers_detect(path, data, size);
    if (stationeers == CLI_FORMAT_STATIONEERS_SAVE) return stationeers;
    if (cli_raw_type_from_path(path)) return CLI_FORMAT_RAW;

    /* Formats without a magic: each whose start fits is walked over the whole file. */
    weak_candidate cands[3];
    size_t count = 0;
    bool ter_header = trn_ter_sniff(data, size) ||
                      (size >= 5 && data[0] >= 7 && data[0] <= 9 && load_le32(data + 1) == 0);
    if (ter_header) {
        weak_candidate c = {CLI_FORMAT_BEAMNG_TER, false, 0, has_suffix(path, ".ter")};
        c.fits = trn_ter_probe(data, size, &c.end);
        cands[count++] = c;
    }
    if (stationeers == CLI_FORMAT_STATIONEERS_DAT) {
        weak_candidate c = {CLI_FORMAT_STATIONEERS_DAT, false, 0, has_suffix(path, ".dat")};
        c.fits = dat_probe(data, size, &c.end);
        cands[count++] = c;
    }
    if (unity_header_prefix(path, data, size)) {
        weak_candidate c = {CLI_FORMAT_UNITY, false, size, has_suffix(path, ".asset")};
        cands[count++] = c;
    }
    const weak_candidate *best = NULL;
    for (size_t i = 0; i < count; i++)
        if (cands[i].fits && (!best || (cands[i].named && !best->named))) best = &cands[i];
    if (best) return best->format;
    /* None is whole: report it as the one named, cut short or fitting furthest; a layout
     * refuted within its first 5 bytes (a header) counts only when the extension names it. */
    for (size_t i = 0; i < count; i++) {
        const weak_candidate *c = &cands[i];
        if (!c->named && c->end != size && c->end <= 5) continue;
        if (!best || better_candidate(c, best, size)) best = c;
    }
    return best ? best->format : CLI_FORMAT_UNKNOWN;
}

/* ---- inputs that are not regular files ------------------------------------------------------ */

static uint64_t input_byte_limit(const cli_load_options *opt)
{
    if (!opt || !opt->max_samples) return CLI_DEFAULT_MAX_INPUT_BYTES;
    uint64_t slack = (uint64_t)16 << 20;
    return opt->max_samples > (UINT64_MAX - slack) / 8 ? UINT64_MAX : opt->max_samples * 8 + slack;
}

/* True when the user said what the input is, so no sniff may stop reading it early. */
static bool format_forced(const cli_load_options *opt)
{
    return opt && (opt->input_format || opt->raw_type || opt->raw_width || opt->raw_height);
}

static int anonymous_file(void)
{
#ifdef MFD_CLOEXEC
    int fd = memfd_create("terrane-input", MFD_CLOEXEC);
    if (fd >= 0) return fd;
#endif
    FILE *fp = tmpfile();
    return fp ? fileno(fp) : -1; /* kept open for the whole run, like the memfd */
}

static bool write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Read a non-regular file once, bounded, into an anonymous file; stop early when its first
 * bytes fit no format and the user forced none. Returns a CLI exit code. */
static int capture_input(cli_ctx *ctx, const char *path, mode_t mode, const cli_load_options *opt)
{
    if (cli_input_names_full())
        return cli_failf(ctx, "%s: too many inputs that are not regular files (at most %d)", path,
                         CLI_MAX_CAPTURED_INPUTS);
    const char *kind = trn_file_kind((unsigned)mode);
    /* Pipes only: a device (/dev/zero, a terminal) or a socket is no file to convert. */
    if (!S_ISFIFO(mode))
        return cli_failf(ctx,
                         "%s: is %s; terrane reads regular files and pipes (save it to a file "
                         "first)",
                         path, kind);
    /* Non-blocking, so a named pipe nobody writes to is refused at once instead of waited on. */
    int in = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (in < 0) return cli_failf(ctx, "%s: cannot open: %s", path, strerror(errno));
    int out = anonymous_file();
    if (out < 0) {
        int e = errno;
        close(in);
        return cli_failf(ctx, "%s: cannot make an in-memory copy of it: %s", path, strerror(e));
    }
    uint64_t limit = input_byte_limit(opt), total = 0;
    enum { CHUNK = 1 << 20, HEAD = 1 << 16 };
    uint8_t *buf = malloc(CHUNK);
    if (!buf) {
        close(in);
        close(out);
        return cli_failf(ctx, "%s: out of memory", path);
    }
    bool head_checked = format_forced(opt);
    int rc = CLI_EXIT_OK;
    size_t filled = 0; /* bytes in buf not yet written */
    bool waited = false;
    for (;;) {
        ssize_t r = read(in, buf + filled, CHUNK - filled);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* A writer is there but has sent nothing yet: wait for it. */
            struct pollfd pfd = {.fd = in, .events = POLLIN};
            (void)poll(&pfd, 1, -1);
            continue;
        }
        if (r == 0 && total == 0 && !waited) {
            /* No writer yet: give one that is starting (`cmd > fifo &`) two seconds. */
            waited = true;
            struct pollfd pfd = {.fd = in, .events = POLLIN};
            if (poll(&pfd, 1, 2000) > 0) continue;
        }
        if (r == 0 && total == 0) {
            rc = cli_failf(ctx,
                           "%s: is %s and no program wrote anything to it within 2 seconds; "
                           "start the writer first, or save the data to a file",
                           path, kind);
            break;
        }
        if (r < 0) {
            rc = cli_failf(ctx, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
        filled += (size_t)r;
        total += (uint64_t)r;
        if (total > limit) {
            rc = cli_failf(ctx,
                           "%s: is %s and holds more than %llu bytes, the limit for inputs that "
                           "are not regular files (--max-samples N allows 8 N bytes + 16 MiB); "
                           "save it to a file first",
                           path, kind, (unsigned long long)limit);
            break;
        }
        /* The first 64 KiB (or all of a shorter input) decide whether reading on is worth it:
         * /dev/zero or random bytes are refused at once, not after gigabytes. */
        if (!head_checked && (filled >= HEAD || r == 0) && total == filled) {
            head_checked = true;
            if (filled && cli_detect_format(path, buf, filled) == CLI_FORMAT_UNKNOWN) {
                char shown[16 * 3 + 1] = "";
                size_t k = 0;
                for (size_t i = 0; i < filled && i < 16; i++)
                    k += (size_t)snprintf(shown + k, sizeof shown - k, "%s%02x", i ? " " : "",
                                          buf[i]);
                rc = cli_failf(ctx,
                               "%s: offset 0: unrecognised format: found bytes %s; it is %s, "
                               "read into memory up to a limit of %llu bytes, and its first "
                               "%zu match no format, so no more was read (--input-format NAME "
                               "says what it is)",
                               path, shown, kind, (unsigned long long)limit, filled);
                break;
            }
        }
        if (r == 0 || filled == CHUNK) {
            if (!write_all(out, buf, filled)) {
                rc = cli_failf(ctx, "%s: cannot keep a copy of it in memory: %s", path,
                               strerror(errno));
                break;
            }
            filled = 0;
        }
        if (r == 0) break;
    }
    free(buf);
    close(in);
    if (rc) {
        close(out);
        return rc;
    }
    if (!cli_input_names_add(path, out)) {
        close(out);
        return cli_failf(ctx, "%s: out of memory", path);
    }
    return CLI_EXIT_OK;
}

/* Make path readable as a regular file (capturing it when it is not one). */
static int prepare_input(cli_ctx *ctx, const char *path, const cli_load_options *opt)
{
    if (cli_input_path(path) != path) return CLI_EXIT_OK;
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
    if (S_ISREG(st.st_mode)) return CLI_EXIT_OK;
    return capture_input(ctx, path, st.st_mode, opt);
}

static bool strong_format(cli_format f)
{
    return f == CLI_FORMAT_PNG || f == CLI_FORMAT_TERRAGEN || f == CLI_FORMAT_GEOTIFF ||
           f == CLI_FORMAT_UNITY || f == CLI_FORMAT_STATIONEERS_SAVE ||
           f == CLI_FORMAT_TERRAIN_JSON || f == CLI_FORMAT_PAYLOAD;
}

int cli_sniff_input(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_format *format)
{
    /* A built-in preset's id reads as its recipe, a JSON document (trn_recipe_read_source). */
    if (strncmp(path, "builtin://", 10) == 0 && !(opt && opt->input_format)) {
        *format = CLI_FORMAT_TERRAIN_JSON;
        return CLI_EXIT_OK;
    }
    int rc = prepare_input(ctx, path, opt);
    if (rc) return rc;
    trn_mapped_file mf;
    trn_error e;
    if (trn_mapped_file_open(&mf, cli_input_path(path), 0, &e) != TRN_OK) return cli_fail(ctx, &e);
    if (mf.size == 0) {
        trn_mapped_file_close(&mf);
        return cli_failf(ctx, "%s: offset 0: the file is empty (0 bytes)", path);
    }
    cli_format f = opt && opt->input_format ? (cli_format)opt->input_format
                                            : cli_detect_format(path, mf.data, mf.size);
    trn_mapped_file_close(&mf);
    if (!(opt && opt->input_format) && opt) {
        /* --raw-type names a headerless type; --size is only a headerless input's own size. */
        if (opt->raw_type && !strong_format(f))
            f = CLI_FORMAT_RAW;
        else if ((opt->raw_width || opt->raw_height) && f == CLI_FORMAT_UNKNOWN)
            f = CLI_FORMAT_RAW;
    }
    *format = f;
    return CLI_EXIT_OK;
}

int cli_sniff_file(cli_ctx *ctx, const char *path, cli_format *format)
{
    return cli_sniff_input(ctx, path, NULL, format);
}

int cli_fail_unknown_format(cli_ctx *ctx, const char *path)
{
    uint8_t head[24];
    size_t n = 0;
    FILE *fp = fopen(cli_input_path(path), "rb");
    if (fp) {
        n = fread(head, 1, sizeof head, fp);
        fclose(fp);
    }
    /* What a clone holds until `git lfs pull` in a repository that keeps large files in LFS. */
    static const char lfs[] = "version https://git-lfs";
    if (n >= sizeof lfs - 1 && memcmp(head, lfs, sizeof lfs - 1) == 0)
        return cli_failf(ctx,
                         "%s: offset 0: this is a Git LFS pointer (a short text starting with "
                         "\"%s\"), not the file itself: the repository it came from keeps it in "
                         "Git LFS; run git lfs pull in that clone (with Git LFS installed)",
                         path, lfs);
    char shown[16 * 4 + 1] = "";
    size_t k = 0;
    if (n > 16) n = 16;
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(shown + k, sizeof shown - k, "%s%02x", i ? " " : "", head[i]);
    return cli_failf(ctx,
                     "%s: offset 0: unrecognised format: expected a BeamNG/Torque .ter (version "
                     "1-9), Terragen .ter, PNG, GeoTIFF, Unity TerrainData (.asset), "
                     "Stationeers terrain.dat or .save, BeamNG .terrain.json, or a headerless "
                     ".r16/.raw/.r32 (or --raw-type, --input-format); found bytes %s",
                     path, shown);
}

/* ---- options -------------------------------------------------------------------------------- */

static const char *const input_format_help =
    "beamng-ter (ter), terragen, png, raw (r16, r32), geotiff (tif), unity, stationeers-dat "
    "(dat), stationeers-save (save), beamng-terrain-json";

/* A cli_format for an --input-format name; *raw_type gets trn_raw_type + 1 for r16/r32. */
static cli_format input_format_from_name(const char *name, int *raw_type)
{
    static const struct {
        const char *name;
        cli_format format;
        int raw_type;
    } aliases[] = {{"ter", CLI_FORMAT_BEAMNG_TER, 0},
                   {"png", CLI_FORMAT_PNG, 0},
                   {"raw", CLI_FORMAT_RAW, 0},
                   {"r16", CLI_FORMAT_RAW, TRN_RAW_U16_LE + 1},
                   {"r32", CLI_FORMAT_RAW, TRN_RAW_F32_LE + 1},
                   {"tif", CLI_FORMAT_GEOTIFF, 0},
                   {"tiff", CLI_FORMAT_GEOTIFF, 0},
                   {"dat", CLI_FORMAT_STATIONEERS_DAT, 0},
                   {"save", CLI_FORMAT_STATIONEERS_SAVE, 0},
                   {"unity", CLI_FORMAT_UNITY, 0},
                   {"terragen", CLI_FORMAT_TERRAGEN, 0},
                   {"payload", CLI_FORMAT_PAYLOAD, 0}};
    *raw_type = 0;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(name, aliases[i].name) == 0) {
            *raw_type = aliases[i].raw_type;
            return aliases[i].format;
        }
    for (int f = CLI_FORMAT_BEAMNG_TER; f <= CLI_FORMAT_PAYLOAD; f++)
        if (strcasecmp(name, cli_format_name((cli_format)f)) == 0) return (cli_format)f;
    return CLI_FORMAT_UNKNOWN;
}

static bool parse_samples(cli_ctx *ctx, const char *opt, const char *text, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) break;
        v = v * 10 + d;
    }
    if (p == text || *p || v == 0) {
        cli_usage_error(ctx, "%s expects a whole number of samples, at least 1, got '%s'", opt,
                        text);
        return false;
    }
    *out = v;
    return true;
}

int cli_load_option(cli_ctx *ctx, const char *opt, const char *value, cli_load_options *load)
{
    bool ok = true;
    if (strcmp(opt, "--max-height") == 0) {
        ok = cli_parse_positive(ctx, opt, value, &load->max_height);
    } else if (strcmp(opt, "--square-size") == 0) {
        ok = cli_parse_positive(ctx, opt, value, &load->square_size);
    } else if (strcmp(opt, "--size") == 0) {
        ok = cli_parse_size(ctx, opt, value, &load->raw_width, &load->raw_height);
    } else if (strcmp(opt, "--raw-type") == 0) {
        ok = (load->raw_type = cli_parse_raw_type(ctx, value)) > 0;
    } else if (strcmp(opt, "--max-samples") == 0) {
        ok = parse_samples(ctx, opt, value, &load->max_samples);
    } else if (strcmp(opt, "--channel") == 0) {
        static const char *const names[] = {"R", "G", "B", "A", "luma"};
        load->channel = CLI_CHANNEL_FIRST;
        for (int k = 0; k < 5; k++)
            if (strcasecmp(value, names[k]) == 0) load->channel = CLI_CHANNEL_R + k;
        if (load->channel == CLI_CHANNEL_FIRST) {
            cli_usage_error(ctx, "--channel takes R, G, B, A or luma, not '%s'", value);
            ok = false;
        }
    } else if (strcmp(opt, "--input-format") == 0) {
        int raw_type = 0;
        cli_format f = input_format_from_name(value, &raw_type);
        if (f == CLI_FORMAT_UNKNOWN) {
            cli_usage_error(ctx, "--input-format takes %s; not '%s'", input_format_help, value);
            ok = false;
        } else {
            load->input_format = (int)f;
            if (raw_type && !load->raw_type) load->raw_type = raw_type;
        }
    } else {
        return 0;
    }
    return ok ? 1 : -1;
}

/* ---- loading -------------------------------------------------------------------------------- */

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
    trn_ter_limits lim;
    trn_ter_limits_default(&lim);
    if (opt && opt->max_samples) lim.max_samples = opt->max_samples;
    if (trn_ter_read(cli_input_path(path), &lim, &ter, cli_progress, ctx, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    for (uint32_t w = 0; w < ter.warning_count; w++)
        cli_note(ctx, "warning: %s: %s", path, ter.warnings[w].message);
    double max_height = opt && opt->max_height > 0 ? opt->max_height : CLI_DEFAULT_MAX_HEIGHT;
    double square = opt && opt->square_size > 0 ? opt->square_size : 1.0;
    trn_status st = trn_ter_to_field(&ter, max_height, square, &out->field, &out->labels, &e);
    /* What a heightfield with one material per sample does not carry. */
    if (ter.extra_count)
        cli_drops_add(&out->drops, "%u extra map%s after the layer map", ter.extra_count,
                      ter.extra_count == 1 ? "" : "s");
    uint32_t alphas = 0;
    for (int k = 0; k < 8; k++)
        alphas += ter.legacy_alpha[k] != NULL;
    if (alphas)
        cli_drops_add(&out->drops, "%u legacy alpha map%s (the strongest material is kept)", alphas,
                      alphas == 1 ? "" : "s");
    if ((ter.texture_script && ter.texture_script[0]) ||
        (ter.heightfield_script && ter.heightfield_script[0]))
        cli_drops_add(&out->drops, "the legacy texture and heightfield scripts");
    if ((ter.edge_paths[0] && ter.edge_paths[0][0]) || (ter.edge_paths[1] && ter.edge_paths[1][0]))
        cli_drops_add(&out->drops, "the legacy edge terrain paths");
    trn_ter_dispose(&ter);
    if (st) return cli_fail(ctx, &e);
    out->has_labels = true;
    return CLI_EXIT_OK;
}

static int load_terragen(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                         cli_terrain *out)
{
    trn_terragen tg;
    trn_error e;
    trn_terragen_limits lim;
    trn_terragen_limits_default(&lim);
    if (opt && opt->max_samples) lim.max_samples = opt->max_samples;
    if (trn_terragen_read(cli_input_path(path), &lim, &tg, &e) != TRN_OK) return cli_fail(ctx, &e);
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

void cli_image_limits(const cli_load_options *opt, trn_image_limits *lim)
{
    trn_image_limits_default(lim);
    if (opt && opt->max_samples) lim->max_samples = opt->max_samples;
}

int cli_read_image(cli_ctx *ctx, const char *path, cli_format format, const cli_load_options *opt,
                   trn_image *img)
{
    trn_image_limits lim;
    cli_image_limits(opt, &lim);
    trn_error e;
    trn_status st;
    if (format == CLI_FORMAT_PNG) {
        st = trn_png_read(cli_input_path(path), &lim, img, &e);
    } else {
        int type = opt && opt->raw_type ? opt->raw_type : cli_raw_type_from_path(path);
        if (type <= 0) type = TRN_RAW_U16_LE + 1;
        st = trn_raw_read_limited(cli_input_path(path), (trn_raw_type)(type - 1),
                                  opt ? opt->raw_width : 0, opt ? opt->raw_height : 0, &lim, img,
                                  &e);
    }
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

static const char *channel_kind(uint8_t channels)
{
    static const char *const kinds[] = {"", "grey", "grey+alpha", "RGB", "RGBA"};
    return channels <= 4 ? kinds[channels] : "?";
}

int cli_image_select_channel(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                             bool quiet, trn_image *img)
{
    int want = opt ? opt->channel : CLI_CHANNEL_FIRST;
    uint8_t n = img->channels;
    bool colour = n >= 3, alpha = n == 2 || n == 4;
    int index = 0; /* the channel kept; -1 = luma */
    if (want == CLI_CHANNEL_A) {
        if (!alpha)
            return cli_failf(ctx, "%s: --channel A: the image has no alpha channel (it is %s)",
                             path, channel_kind(n));
        index = n - 1;
    } else if (want == CLI_CHANNEL_G || want == CLI_CHANNEL_B) {
        /* A grey image is its own R, G and B. */
        index = colour ? want - CLI_CHANNEL_R : 0;
    } else if (want == CLI_CHANNEL_LUMA && colour) {
        index = -1;
    } else if (want == CLI_CHANNEL_FIRST && n > 1 && !quiet) {
        if (colour)
            cli_note(ctx,
                     "note: %s is an %s image: heights come from its R channel; G, B%s are not "
                     "used (--channel R|G|B|A|luma chooses)",
                     path, channel_kind(n), alpha ? " and A" : "");
        else
            cli_note(ctx,
                     "note: %s is a grey+alpha image: heights come from its grey channel; the "
                     "alpha channel is not used (--channel A reads it)",
                     path);
    }
    if (n == 1 && index == 0) return CLI_EXIT_OK;
    trn_image one;
    trn_error e;
    /* Luma of 8-bit samples is kept in 16 bits (v * 257 first) so no precision is lost. */
    uint8_t depth = index < 0 && img->bit_depth == 8 ? 16 : img->bit_depth;
    if (trn_image_init(&one, img->width, img->height, 1, depth, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    size_t count = (size_t)img->width * img->height;
    for (size_t i = 0; i < count; i++) {
        size_t at = i * n;
        if (index >= 0) {
            at += (size_t)index;
            if (depth == 8)
                ((uint8_t *)one.data)[i] = ((const uint8_t *)img->data)[at];
            else if (depth == 16)
                ((uint16_t *)one.data)[i] = ((const uint16_t *)img->data)[at];
            else
                ((float *)one.data)[i] = ((const float *)img->data)[at];
            continue;
        }
        double rgb[3];
        for (int c = 0; c < 3; c++)
            rgb[c] = img->bit_depth == 8 ? ((const uint8_t *)img->data)[at + (size_t)c] * 257.0
                                         : ((const uint16_t *)img->data)[at + (size_t)c];
        double y = CLI_LUMA_R * rgb[0] + CLI_LUMA_G * rgb[1] + CLI_LUMA_B * rgb[2];
        ((uint16_t *)one.data)[i] = (uint16_t)(y >= 65535.0 ? 65535 : y + 0.5);
    }
    one.srgb = img->srgb;
    trn_image_dispose(img);
    *img = one;
    return CLI_EXIT_OK;
}

/* NaN and infinite samples of a float input: filled like GeoTIFF NoData (the same harmonic fill),
 * counted in a note; a field with no finite sample at all is refused. */
static int fill_non_finite(cli_ctx *ctx, const char *path, trn_field *field)
{
    size_t n = trn_field_sample_count(field), bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(field->heights[i])) {
            field->heights[i] = NAN;
            bad++;
        }
    if (bad == 0) return CLI_EXIT_OK;
    if (bad == n)
        return cli_failf(ctx,
                         "%s: all %zu samples are NaN or infinite: there is no height to read "
                         "(nothing to fill them from)",
                         path, n);
    uint64_t filled = 0;
    trn_error e;
    if (trn_field_fill_nan(field, &filled, cli_progress, ctx, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    cli_progress_end(ctx);
    cli_note(ctx,
             "%s: filled %llu NaN or infinite samples (of %zu) smoothly from their neighbours, "
             "as GeoTIFF NoData is",
             path, (unsigned long long)filled, n);
    return CLI_EXIT_OK;
}

static int load_image(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                      cli_format format, cli_terrain *out)
{
    trn_image img;
    int rc = cli_read_image(ctx, path, format, opt, &img);
    if (rc) return rc;
    if (img.bit_depth == 8) cli_warn_8bit(ctx, path, opt ? opt->max_height : 0);
    rc = cli_image_select_channel(ctx, path, opt, false, &img);
    if (rc) {
        trn_image_dispose(&img);
        return rc;
    }
    trn_error e;
    double square = opt && opt->square_size > 0 ? opt->square_size : 1.0;
    trn_status st = trn_image_to_field(&img, 0, image_quantum(opt), 0.0, square, &out->field, &e);
    bool is_float = img.bit_depth == 32;
    trn_image_dispose(&img);
    if (st) return cli_fail(ctx, &e);
    return is_float ? fill_non_finite(ctx, path, &out->field) : CLI_EXIT_OK;
}

int cli_load_terrain(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *out)
{
    memset(out, 0, sizeof *out);
    cli_format format = CLI_FORMAT_UNKNOWN;
    int rc = cli_sniff_input(ctx, path, opt, &format);
    if (rc) return rc;
    snprintf(out->format, sizeof out->format, "%s", cli_format_name(format));
    if (opt && opt->channel && format != CLI_FORMAT_PNG && format != CLI_FORMAT_RAW)
        cli_note(ctx,
                 "note: --channel is for image inputs; %s is %s, which has one height a "
                 "sample",
                 path, cli_format_name(format));
    switch (format) {
    case CLI_FORMAT_BEAMNG_TER:
        rc = load_ter(ctx, path, opt, out);
        break;
    case CLI_FORMAT_TERRAGEN:
        rc = load_terragen(ctx, path, opt, out);
        break;
    case CLI_FORMAT_STATIONEERS_DAT:
    case CLI_FORMAT_STATIONEERS_SAVE:
        rc = cli_stationeers_load(ctx, path, opt, format, out);
        break;
    case CLI_FORMAT_UNITY:
        rc = cli_unity_load(ctx, path, opt, out);
        break;
    case CLI_FORMAT_GEOTIFF:
        rc = cli_geotiff_load(ctx, path, opt, out);
        break;
    case CLI_FORMAT_PAYLOAD:
        rc = cli_payload_load(ctx, path, opt, out);
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

/* Format detection and input capture shared by the CLI verbs. */
#ifndef TRN_CLI_DETECT_H
#define TRN_CLI_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* BeamNG's usual maxHeight when neither the user nor the file says. */
#define CLI_DEFAULT_MAX_HEIGHT 2048.0

/* Inputs that are not regular files (pipes, FIFOs, character devices) are read once, into
 * memory, up to this many bytes unless --max-samples N is given (then 8 N bytes + 16 MiB): the
 * readers' own file size limit (trn_ter_limits.max_file_bytes, trn_image_limits.max_bytes). */
#define CLI_DEFAULT_MAX_INPUT_BYTES ((uint64_t)8 << 30)

typedef enum cli_format {
    CLI_FORMAT_UNKNOWN = 0,
    CLI_FORMAT_BEAMNG_TER,
    CLI_FORMAT_TERRAGEN,
    CLI_FORMAT_PNG,
    CLI_FORMAT_RAW,              /* headerless: only the extension and length tell */
    CLI_FORMAT_TERRAIN_JSON,     /* a JSON document (.terrain.json) */
    CLI_FORMAT_STATIONEERS_DAT,  /* a Stationeers terrain.dat octree */
    CLI_FORMAT_STATIONEERS_SAVE, /* a ZIP: a Stationeers .save */
    CLI_FORMAT_UNITY,            /* a Unity binary SerializedFile (.asset) */
    CLI_FORMAT_GEOTIFF,          /* a TIFF / GeoTIFF (DEM) */
    CLI_FORMAT_PAYLOAD,          /* a cooked terrane payload (*.terrain.bin) */
} cli_format;

const char *cli_format_name(cli_format format);
/* The format of a whole file (data, size; path for its extension). Magic numbers decide first
 * (PNG, Terragen, JSON, Unity, TIFF, ZIP); headerless rasters go by extension (.r16, .raw,
 * .r32, .r8); then every format without a magic whose start fits (BeamNG/Torque .ter, a
 * terrain.dat octree, a cut-short Unity header) is walked over the whole file and the one whose
 * whole layout is consistent wins (a legacy .ter has an exact size; an octree and its vein
 * table end exactly at the end). When none is, the one the extension names, else the one that
 * is only cut short, else the one that fit furthest is returned, so its reader can say where
 * the file goes wrong. CLI_FORMAT_UNKNOWN when nothing fits at all. */
cli_format cli_detect_format(const char *path, const uint8_t *data, size_t size);
/* Read path (captured first when it is not a regular file) and detect; prints errors, returns
 * a CLI exit code. Same as cli_sniff_input with default options. */
int cli_sniff_file(cli_ctx *ctx, const char *path, cli_format *format);
/* The same with the user's loading options: their byte limit for captured inputs, and what
 * they force: --input-format decides outright; --raw-type makes any input without a magic
 * number headerless; --size does so only for an input that is headerless already (a raw
 * extension, or no format found): for every other input it is the output size. */
int cli_sniff_input(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                    cli_format *format);
/* Print "unrecognised format" with the first bytes found; returns CLI_EXIT_FAIL. */
int cli_fail_unknown_format(cli_ctx *ctx, const char *path);
/* trn_raw_type + 1 for a raw extension, else 0. */
int cli_raw_type_from_path(const char *path);
/* trn_raw_type + 1 from "r16le|r16be|u8|r32"; -1 (message printed) on junk. */
int cli_parse_raw_type(cli_ctx *ctx, const char *text);

/* The path readers open for path: "/proc/self/fd/N", an in-memory copy, when path was a pipe,
 * FIFO or device captured by cli_sniff_file/cli_sniff_input; else path itself. Messages
 * should keep naming path (cli_fail does, through cli_input_user_path in cli.h). */
const char *cli_input_path(const char *path);

/* The image limits for the user's options (--max-samples). */
struct trn_image_limits;
struct trn_image;
void cli_image_limits(const cli_load_options *opt, struct trn_image_limits *lim);
/* Read a PNG or a headerless raster (type from --raw-type, --input-format r16/r32 or the
 * extension; size from --size or the length) with the user's limits. Prints errors. */
int cli_read_image(cli_ctx *ctx, const char *path, cli_format format, const cli_load_options *opt,
                   struct trn_image *img);
/* Reduce img to the one channel heights come from: --channel R, G, B (a grey image is its own
 * R, G and B), A (an error without alpha) or luma (CLI_LUMA_* weights, in 16 bits); by default
 * the first, with a note (unless quiet) saying which channels a colour or grey+alpha image
 * leaves unused. Prints errors; img is replaced by the 1-channel image. */
int cli_image_select_channel(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                             bool quiet, struct trn_image *img);

/* For `info` on a file too large to decode: "W x H = S samples, more than the limit of L
 * (--max-samples N reads them)". */
void cli_not_read_text(char *buf, size_t size, uint64_t width, uint64_t height, uint64_t limit);

/* --channel values (cli_load_options.channel). */
enum {
    CLI_CHANNEL_FIRST = 0,
    CLI_CHANNEL_R,
    CLI_CHANNEL_G,
    CLI_CHANNEL_B,
    CLI_CHANNEL_A,
    CLI_CHANNEL_LUMA
};
/* Rec. 709 luma weights, applied to the stored R, G, B values (no gamma is undone). */
#define CLI_LUMA_R 0.2126
#define CLI_LUMA_G 0.7152
#define CLI_LUMA_B 0.0722

#endif

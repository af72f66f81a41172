/* Format detection shared by the CLI verbs. */
#ifndef TRN_CLI_DETECT_H
#define TRN_CLI_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* BeamNG's usual maxHeight when neither the user nor the file says. */
#define CLI_DEFAULT_MAX_HEIGHT 2048.0

typedef enum cli_format {
    CLI_FORMAT_UNKNOWN = 0,
    CLI_FORMAT_BEAMNG_TER,
    CLI_FORMAT_TERRAGEN,
    CLI_FORMAT_PNG,
    CLI_FORMAT_RAW,          /* headerless: only the extension and length tell */
    CLI_FORMAT_TERRAIN_JSON, /* a JSON document (.terrain.json) */
    CLI_FORMAT_STATIONEERS_DAT,  /* a Stationeers terrain.dat octree */
    CLI_FORMAT_STATIONEERS_SAVE, /* a ZIP: a Stationeers .save */
    CLI_FORMAT_UNITY,        /* a Unity binary SerializedFile (.asset) */
    CLI_FORMAT_GEOTIFF,      /* a TIFF / GeoTIFF (DEM) */
} cli_format;

const char *cli_format_name(cli_format format);
/* Content first; headerless rasters by extension (.r16, .raw, .r32, .r8). */
cli_format cli_detect_format(const char *path, const uint8_t *head, size_t head_size);
/* Read the first bytes of path and detect; prints errors, returns a CLI exit code. */
int cli_sniff_file(cli_ctx *ctx, const char *path, cli_format *format);
/* Print "unrecognised format" with the first bytes found; returns CLI_EXIT_FAIL. */
int cli_fail_unknown_format(cli_ctx *ctx, const char *path);
/* trn_raw_type + 1 for a raw extension, else 0. */
int cli_raw_type_from_path(const char *path);
/* trn_raw_type + 1 from "r16le|r16be|u8|r32"; -1 (message printed) on junk. */
int cli_parse_raw_type(cli_ctx *ctx, const char *text);

#endif

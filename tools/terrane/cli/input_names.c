/* Names around inputs, beneath loading and the format hooks: the paths captured pipes are read
 * from, format names, RAW sample types from extensions, the sample-limit message. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "detect.h"
#include "input_names.h"
#include "terrane/image.h"

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
    case CLI_FORMAT_PAYLOAD:
        return "terrane-payload";
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

void cli_not_read_text(char *buf, size_t size, uint64_t width, uint64_t height, uint64_t limit)
{
    snprintf(buf, size,
             "%llu x %llu = %llu samples, more than the limit of %llu (--max-samples N reads "
             "them)",
             (unsigned long long)width, (unsigned long long)height,
             (unsigned long long)(width * height), (unsigned long long)limit);
}

/* ---- inputs that are not regular files ---- */

/* A pipe, FIFO or device read once into an anonymous in-memory file. */
typedef struct captured_input {
    char *user_path;
    char reader_path[32]; /* "/proc/self/fd/N" */
} captured_input;

static captured_input captured[CLI_MAX_CAPTURED_INPUTS];
static size_t captured_count;

const char *cli_input_path(const char *path)
{
    for (size_t i = 0; i < captured_count; i++)
        if (strcmp(captured[i].user_path, path) == 0) return captured[i].reader_path;
    return path;
}

const char *cli_input_user_path(const char *file)
{
    for (size_t i = 0; file && i < captured_count; i++)
        if (strcmp(captured[i].reader_path, file) == 0) return captured[i].user_path;
    return file;
}

bool cli_input_names_full(void)
{
    return captured_count == CLI_MAX_CAPTURED_INPUTS;
}

bool cli_input_names_add(const char *user_path, int fd)
{
    if (captured_count == CLI_MAX_CAPTURED_INPUTS) return false;
    captured_input *c = &captured[captured_count];
    c->user_path = strdup(user_path);
    if (!c->user_path) return false;
    snprintf(c->reader_path, sizeof c->reader_path, "/proc/self/fd/%d", fd);
    captured_count++;
    return true;
}

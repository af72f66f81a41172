/* Where a value sits in a JSON text: line, column and byte offset of a path (internal). */
#ifndef TRN_CORE_JSON_POS_H
#define TRN_CORE_JSON_POS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

/* jansson reports positions only for syntax errors; schema errors found on the parsed tree need
 * the position of the offending value, so this small tokenizer walks the same text again and
 * finds a value by its path. It never allocates, never reads past size and accepts any bytes
 * (a text jansson rejected simply yields a shorter match). */

/* One step of a path: an object key (NUL-terminated UTF-8, compared with the document's keys
 * after their escapes are decoded) or, when key is NULL, an array index. */
typedef struct trn_json_step {
    const char *key;
    size_t index;
} trn_json_step;

#define TRN_JSON_PATH_MAX 24

/* A path from the document root. */
typedef struct trn_json_path {
    trn_json_step steps[TRN_JSON_PATH_MAX];
    size_t depth;
} trn_json_path;

/* A position: 0-based byte offset into the text, 1-based line and column. Lines count '\n';
 * columns count Unicode characters (bytes that start a UTF-8 sequence), as jansson does for
 * its syntax errors, and a leading UTF-8 byte order mark is not a column. */
typedef struct trn_json_pos {
    size_t offset;
    int line, column;
} trn_json_pos;

typedef enum trn_json_target {
    TRN_JSON_VALUE = 0, /* the first byte of the value the path names */
    TRN_JSON_KEY = 1,   /* the opening quote of the last step's key (the value for an index) */
} trn_json_target;

/* Append a step (false when the path is full, which leaves it unchanged). */
bool trn_json_path_push_key(trn_json_path *path, const char *key);
bool trn_json_path_push_index(trn_json_path *path, size_t index);
void trn_json_path_pop(trn_json_path *path);

/* "landforms.mountains.octaves", "rules[2].slope[0]"; keys that are not plain identifiers
 * (letters, digits, '_' and '-') are quoted: landforms["snow cap"]. The empty path is "". */
void trn_json_path_format(const trn_json_path *path, char *buf, size_t buf_size);

/* Position of a byte offset (clamped to size). */
trn_json_pos trn_json_pos_of_offset(const char *text, size_t size, size_t offset);

/* Find the value (or key) that steps[0..depth) name. Returns true when the whole path was
 * found; otherwise false with *out at the deepest value that was found (the root value, or
 * offset 0 when the text holds none), which is where a "missing key" belongs. */
bool trn_json_locate(const char *text, size_t size, const trn_json_step *steps, size_t depth,
                     trn_json_target target, trn_json_pos *out);

/* Set err to "PATH: msg" at the position path names in text (byte offset, line and column;
 * text NULL: no position) and return code: the parsers' one way to report where a document
 * went wrong. */
trn_status trn_json_error_at(trn_error *err, trn_status code, const char *file, const char *text,
                             size_t size, const trn_json_path *path, trn_json_target target,
                             const char *msg);

/* A hook for tests: every place that parses JSON text on the way from a recipe to a terrain
 * (graph text, kept JSON blobs, parameter defaults) calls trn_json_parse_counted, and
 * trn_json_parse_count tells how many times that happened in this process. */
void trn_json_parse_counted(void);
uint64_t trn_json_parse_count(void);

#endif

/* Status names and error reports. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "terrane/core.h"

const char *trn_status_name(trn_status status)
{
    switch (status) {
    case TRN_OK: return "TRN_OK";
    case TRN_ERR_INVALID_ARGUMENT: return "TRN_ERR_INVALID_ARGUMENT";
    case TRN_ERR_NO_MEMORY: return "TRN_ERR_NO_MEMORY";
    case TRN_ERR_IO: return "TRN_ERR_IO";
    case TRN_ERR_NOT_FOUND: return "TRN_ERR_NOT_FOUND";
    case TRN_ERR_TRUNCATED: return "TRN_ERR_TRUNCATED";
    case TRN_ERR_FORMAT: return "TRN_ERR_FORMAT";
    case TRN_ERR_VERSION: return "TRN_ERR_VERSION";
    case TRN_ERR_LIMIT: return "TRN_ERR_LIMIT";
    case TRN_ERR_OVERFLOW: return "TRN_ERR_OVERFLOW";
    case TRN_ERR_UNSUPPORTED: return "TRN_ERR_UNSUPPORTED";
    case TRN_ERR_CANCELLED: return "TRN_ERR_CANCELLED";
    case TRN_ERR_TRAILING_DATA: return "TRN_ERR_TRAILING_DATA";
    case TRN_ERR_JSON: return "TRN_ERR_JSON";
    case TRN_ERR_VALIDATION: return "TRN_ERR_VALIDATION";
    case TRN_ERR_MISMATCH: return "TRN_ERR_MISMATCH";
    case TRN_ERR_CONFLICT: return "TRN_ERR_CONFLICT";
    }
    return "TRN_ERR_UNKNOWN";
}

void trn_error_clear(trn_error *err)
{
    if (!err) return;
    memset(err, 0, sizeof *err);
    err->offset = -1;
}

trn_status trn_error_set(trn_error *err, trn_status code, const char *file, int64_t offset,
                         const char *fmt, ...)
{
    if (!err) return code;
    trn_error_clear(err);
    err->code = code;
    err->offset = offset;
    if (file) snprintf(err->file, sizeof err->file, "%s", file);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

void trn_error_set_position(trn_error *err, int line, int column)
{
    if (!err) return;
    err->line = line;
    err->column = column;
}

const char *trn_error_format(const trn_error *err, char *buf, size_t buf_size)
{
    if (!buf || buf_size == 0) return buf;
    buf[0] = '\0';
    if (!err) return buf;
    char where[700] = "";
    if (err->file[0] && err->line > 0)
        snprintf(where, sizeof where, "%s:%d:%d: ", err->file, err->line, err->column);
    else if (err->file[0] && err->offset >= 0)
        snprintf(where, sizeof where, "%s: offset %lld: ", err->file, (long long)err->offset);
    else if (err->file[0])
        snprintf(where, sizeof where, "%s: ", err->file);
    else if (err->line > 0)
        snprintf(where, sizeof where, "line %d, column %d: ", err->line, err->column);
    else if (err->offset >= 0)
        snprintf(where, sizeof where, "offset %lld: ", (long long)err->offset);
    /* A message that names the node ("node 'x' (type): ...", a budget's "graph.nodes[1]...:
     * node 'x' (type)", "the largest is node 'x' (type, ...)") is not prefixed with it again. */
    char named[80];
    snprintf(named, sizeof named, "node '%s' (", err->node_id);
    if (err->node_id[0] && !strstr(err->message, named) &&
        strncmp(err->message, named, strlen(named) - 2) != 0)
        snprintf(buf, buf_size, "%snode '%s': %s", where, err->node_id, err->message);
    else
        snprintf(buf, buf_size, "%s%s", where, err->message);
    return buf;
}

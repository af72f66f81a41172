/* Game paths ("/levels/NAME/...") resolved to files on disk, case-blind as the engine is. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/fileio.h"
#include "level_internal.h"

/* ------------------------------------------------------------------------------------------
 * Game path resolution.
 * ---------------------------------------------------------------------------------------- */

/* Walk rel (components split by '/') from base, matching each component exactly or, failing
 * that, ignoring case. out gets the path found, or the exact path tried. */
trn_status trn_lvl_walk_ci(const char *base, const char *rel, char *out, size_t out_size,
                           bool *mismatch, trn_error *err)
{
    char cur[PATH_MAX];
    if (!trn_lvl_copy(cur, sizeof cur, base))
        return trn_error_set(err, TRN_ERR_LIMIT, base, -1, "path too long");
    const char *p = rel;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p) break;
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char comp[NAME_MAX + 1];
        if (n > NAME_MAX) return trn_error_set(err, TRN_ERR_LIMIT, rel, -1, "path too long");
        memcpy(comp, p, n);
        comp[n] = '\0';
        p += n;
        if (strcmp(comp, ".") == 0) continue;
        char next[PATH_MAX];
        if (!trn_lvl_join(next, sizeof next, cur, comp))
            return trn_error_set(err, TRN_ERR_LIMIT, base, -1, "path too long");
        struct stat st;
        if (stat(next, &st) != 0) {
            DIR *d = opendir(cur);
            bool found = false;
            if (d) {
                struct dirent *e;
                while (!found && (e = readdir(d)) != NULL)
                    if (trn_lvl_ieq(e->d_name, comp)) {
                        found = trn_lvl_join(next, sizeof next, cur, e->d_name);
                        *mismatch = true;
                    }
                closedir(d);
            }
            if (!found) {
                /* Report the exact path that was looked for. */
                char tried[PATH_MAX];
                if (!trn_lvl_join(tried, sizeof tried, cur, comp)) tried[0] = '\0';
                if (*p) {
                    size_t tl = strlen(tried);
                    snprintf(tried + tl, sizeof tried - tl, "%s", p);
                }
                trn_lvl_copy(out, out_size, tried);
                return trn_error_set(err, TRN_ERR_NOT_FOUND, tried, -1, "not found");
            }
        }
        memcpy(cur, next, strlen(next) + 1);
    }
    if (!trn_lvl_copy(out, out_size, cur))
        return trn_error_set(err, TRN_ERR_LIMIT, base, -1, "path too long");
    return TRN_OK;
}

/* The folder that contains levels/ (when level_dir sits in one). */
static bool game_root(const char *level_dir, char *out, size_t out_size)
{
    char real[PATH_MAX];
    if (!realpath(level_dir, real)) return false;
    char *slash = strrchr(real, '/');
    if (!slash || slash == real) return false;
    *slash = '\0';
    char *parent = strrchr(real, '/');
    const char *parent_name = parent ? parent + 1 : real;
    if (!trn_lvl_ieq(parent_name, "levels")) return false;
    if (parent == real) return trn_lvl_copy(out, out_size, "/");
    if (parent) *parent = '\0';
    return trn_lvl_copy(out, out_size, real);
}

trn_status trn_beamng_resolve_path(const char *level_dir, const char *game_path, char *out,
                                   size_t out_size, bool *case_mismatch, trn_error *err)
{
    bool mismatch = false;
    if (case_mismatch) *case_mismatch = false;
    if (out_size) out[0] = '\0';
    const char *rel = game_path;
    while (*rel == '/')
        rel++;
    char level_name[256];
    if (!trn_lvl_level_name(level_dir, level_name, sizeof level_name))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, level_dir, -1,
                             "cannot tell the level's name from its folder");
    char root[PATH_MAX];
    bool has_root = game_root(level_dir, root, sizeof root);
    trn_status st;
    if (has_root) {
        st = trn_lvl_walk_ci(root, rel, out, out_size, &mismatch, err);
    } else {
        /* Without a levels/ folder around, only paths into this very level can be resolved. */
        size_t ln = strlen("levels/");
        bool in_levels = strncasecmp(rel, "levels/", ln) == 0;
        const char *name = in_levels ? rel + ln : rel;
        const char *slash = strchr(name, '/');
        size_t nn = slash ? (size_t)(slash - name) : 0;
        if (!in_levels || !slash || nn != strlen(level_name) ||
            strncasecmp(name, level_name, nn) != 0)
            return trn_error_set(err, TRN_ERR_UNSUPPORTED, game_path, -1,
                                 "\"%s\" lies outside level \"%s\" and the level folder is not "
                                 "inside a levels/ folder, so it cannot be checked",
                                 game_path, level_name);
        if (strncmp(rel, "levels/", ln) != 0 || strncmp(name, level_name, nn) != 0) mismatch = true;
        st = trn_lvl_walk_ci(level_dir, slash + 1, out, out_size, &mismatch, err);
    }
    /* '..' or a symbolic link must not lead a path from a level's files out of the game
     * folder (or of the level, when there is no levels/ around it). */
    if ((st == TRN_OK || st == TRN_ERR_NOT_FOUND) && out_size && out[0] &&
        !trn_path_inside(has_root ? root : level_dir, out)) {
        st = trn_error_set(err, TRN_ERR_FORMAT, game_path, -1,
                           "\"%s\" leads outside %s (through '..' or a symbolic link): refused",
                           game_path, has_root ? root : level_dir);
    }
    if (case_mismatch) *case_mismatch = mismatch && st == TRN_OK;
    return st;
}

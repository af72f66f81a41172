/* The studio's project folders: which recipe a folder opens (a Terrain asset or scene). */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "studio_doc.h"
#include "studio_internal.h"
#include "terrane/graph.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "terrane/unity.h"
#include "terrane/water.h"

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A scene at the folder's top whose one Terrain3D component holds a recipe (malloc'd path), when
 * exactly one scene does; else NULL. */
static char *project_scene(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char *found = NULL;
    size_t count = 0;
    for (struct dirent *de; (de = readdir(d));) {
        const size_t n = strlen(de->d_name);
        if (n <= 11 || strcmp(de->d_name + n - 11, ".scene.json") != 0) continue;
        const size_t len = strlen(dir) + n + 2;
        char *path = malloc(len);
        if (!path) continue;
        snprintf(path, len, "%s/%s", dir, de->d_name);
        size_t size = 0, r0, r1;
        struct timespec mtime;
        char *text = studio_read_disk(path, &size, &mtime);
        if (text && studio_doc_recipe_span(text, size, &r0, &r1) && r0 > 0 && count++ == 0)
            found = path;
        else
            free(path);
        free(text);
    }
    closedir(d);
    if (count == 1) return found;
    free(found);
    return NULL;
}

/* The Terrain asset source the one scene at the folder's top places first (malloc'd path), when
 * its entities place Terrain assets by reference ("asset": "asset://ID"); the others it places
 * are named in a note. NULL (nothing printed) when there is no such scene; NULL with *failed
 * set (printed) when the first reference does not resolve. */
static char *project_scene_asset(cli_ctx *ctx, const char *dir, bool *failed)
{
    *failed = false;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char *scene = NULL;
    size_t scenes = 0;
    for (struct dirent *de; (de = readdir(d));) {
        const size_t n = strlen(de->d_name);
        if (n <= 11 || strcmp(de->d_name + n - 11, ".scene.json") != 0) continue;
        if (scenes++ == 0) {
            const size_t len = strlen(dir) + n + 2;
            if ((scene = malloc(len))) snprintf(scene, len, "%s/%s", dir, de->d_name);
        }
    }
    closedir(d);
    if (scenes != 1 || !scene) {
        free(scene);
        return NULL;
    }
    json_error_t je;
    json_t *doc = json_load_file(scene, 0, &je);
    const char *ids[64];
    const char *first_entity = NULL;
    size_t count = 0;
    size_t k;
    json_t *entity;
    json_array_foreach(json_object_get(doc, "entities"), k, entity)
    {
        const json_t *terrain = json_object_get(json_object_get(entity, "components"), "Terrain3D");
        const char *id = json_string_value(json_object_get(terrain, "asset"));
        if (!id || !*id) continue;
        bool seen = false;
        for (size_t q = 0; q < count; q++)
            seen |= strcmp(ids[q], id) == 0;
        if (seen || count == sizeof ids / sizeof ids[0]) continue;
        if (count == 0) first_entity = json_string_value(json_object_get(entity, "id"));
        ids[count++] = id;
    }
    char *found = NULL;
    if (count) {
        char source[4096];
        trn_error e;
        if (trn_terrain_asset_resolve(scene, ids[0], source, sizeof source, &e)) {
            cli_fail(ctx, &e);
            *failed = true;
        } else if ((found = strdup(source)) && count > 1) {
            char others[1024] = "";
            size_t used = 0;
            for (size_t q = 1; q < count && used + 4 < sizeof others; q++)
                used += (size_t)snprintf(others + used, sizeof others - used, "%s%s",
                                         q > 1 ? ", " : "", ids[q]);
            cli_note(ctx,
                     "%s places %zu Terrain assets: editing %s (entity '%s', the first), %s; "
                     "to edit another, name its *.terrain.json file",
                     scene, count, ids[0], first_entity ? first_entity : "?", found);
            cli_note(ctx, "the others: %s", others);
        }
    }
    json_decref(doc);
    free(scene);
    return found;
}

/* The one Terrain asset source in the folder's subfolders (one level down, as a project's
 * terrain/ folder holds it; malloc'd path); NULL when there is none or several (*several
 * counts them, the first two named in names). */
static char *project_nested_source(const char *dir, size_t *several, char *names, size_t size)
{
    *several = 0;
    names[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char *found = NULL;
    size_t count = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.') continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(sub, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        DIR *inner = opendir(sub);
        if (!inner) continue;
        for (struct dirent *fe; (fe = readdir(inner));) {
            const size_t n = strlen(fe->d_name);
            if (n <= 13 || strcmp(fe->d_name + n - 13, ".terrain.json") != 0) continue;
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", sub, fe->d_name);
            if (count < 2) { /* "A, B", cut at size */
                size_t used = strlen(names);
                for (const char *c = count ? ", " : ""; *c && used + 1 < size; c++)
                    names[used++] = *c;
                for (const char *c = path; *c && used + 1 < size; c++)
                    names[used++] = *c;
                names[used] = '\0';
            }
            if (count++ == 0) found = strdup(path);
        }
        closedir(inner);
    }
    closedir(d);
    if (count == 1) return found;
    free(found);
    *several = count;
    return NULL;
}

/* A project folder's one Terrain asset source at its top (malloc'd path), or without any: its
 * one scene with a Terrain3D recipe (*scene set), the Terrain asset that scene places first, or
 * the one Terrain asset source a level down; NULL (printed) when none of these is there. */
char *studio_project_recipe(cli_ctx *ctx, const char *dir, bool *scene)
{
    *scene = false;
    DIR *d = opendir(dir);
    if (!d) {
        cli_failf(ctx, "%s: cannot open the folder: %s", dir, strerror(errno));
        return NULL;
    }
    char *found[2] = {NULL, NULL};
    size_t count = 0;
    for (struct dirent *de; (de = readdir(d));) {
        const size_t n = strlen(de->d_name);
        if (n <= 13 || strcmp(de->d_name + n - 13, ".terrain.json") != 0) continue;
        if (count < 2) {
            size_t len = strlen(dir) + n + 2;
            found[count] = malloc(len);
            if (found[count]) snprintf(found[count], len, "%s/%s", dir, de->d_name);
        }
        count++;
    }
    closedir(d);
    if (count == 1 && found[0]) return found[0];
    if (count == 0) {
        char *path = project_scene(dir);
        if (path) {
            *scene = true;
            return path;
        }
        bool failed = false;
        if ((path = project_scene_asset(ctx, dir, &failed)) || failed) return path;
        char names[1024];
        size_t several = 0;
        if ((path = project_nested_source(dir, &several, names, sizeof names))) return path;
        if (several) {
            cli_failf(ctx, "%s: %zu Terrain asset sources a folder down (%s, ...): name the one "
                           "to edit",
                      dir, several, names);
            return NULL;
        }
    }
    if (count > 1) qsort(found, 2, sizeof found[0], cmp_names);
    if (count == 0)
        cli_failf(ctx,
                  "%s: no Terrain asset source (*.terrain.json) at the top of the folder or a "
                  "folder down, and no scene (*.scene.json) there with a Terrain3D recipe or "
                  "asset",
                  dir);
    else
        cli_failf(ctx, "%s: %zu Terrain asset sources (%s, %s, ...): name the one to edit", dir,
                  count, found[0] ? found[0] : "?", found[1] ? found[1] : "?");
    free(found[0]);
    free(found[1]);
    return NULL;
}

/* The studio's export: the saved recipe file through the CLI's own verbs. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "core/fileio.h"
#include "recipe/recipe_internal.h"
#include "studio_internal.h"
#include "terrane/layers.h"
#include "terrane/recipe.h"
#include "terrane/unity.h"

extern char **environ;

/* ---- Export: the CLI's own verbs on the recipe file ---- */

/* Run terrane (this binary) with args; its stderr (trimmed) into err. True when it succeeded. */
static bool run_cli(char *const *args, char *err, size_t err_size)
{
    err[0] = '\0';
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf(err, err_size, "cannot find the terrane program to run");
        return false;
    }
    self[n] = '\0';
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        snprintf(err, err_size, "cannot run terrane: %s", strerror(errno));
        return false;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, self, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    size_t len = 0;
    char buf[512];
    for (ssize_t got; (got = read(pipefd[0], buf, sizeof buf)) > 0;) {
        const size_t take = len + (size_t)got < err_size - 1 ? (size_t)got : err_size - 1 - len;
        memcpy(err + len, buf, take);
        len += take;
    }
    close(pipefd[0]);
    err[len] = '\0';
    while (len > 0 && (err[len - 1] == '\n' || err[len - 1] == ' '))
        err[--len] = '\0';
    if (rc != 0) {
        snprintf(err, err_size, "cannot run terrane: %s", strerror(rc));
        return false;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* POST /api/export {"format": F, "path": P}: the recipe file (saved: unsaved edits are refused,
 * the page saves first) written as F at P, a path inside the project folder, by the same verbs
 * and atomic writes as the command line: png, r16, r32, ter (generate -o), geotiff (generate,
 * then convert), gltf (mesh), beamng (generate --export beamng:P), unity (generate --export
 * unity:P on a Unity-shaped grid; else generate a .ter, then unity export --fit resample into
 * the folder P), cook (cook -o the folder P). */
enum MHD_Result studio_api_export(studio *s, struct MHD_Connection *conn, const char *body,
                                  size_t size)
{
    json_error_t je;
    json_t *req = body ? json_loadb(body, size, 0, &je) : NULL;
    const char *format = NULL, *rel = json_string_value(json_object_get(req, "path"));
    static const char *const formats[] = {"png",  "r16",    "r32",   "ter", "geotiff",
                                          "gltf", "beamng", "unity", "cook"};
    /* The format as one of the static names (the request goes before it is used). */
    const char *asked = json_string_value(json_object_get(req, "format"));
    for (size_t k = 0; asked && k < sizeof formats / sizeof formats[0]; k++)
        if (!strcmp(asked, formats[k])) format = formats[k];
    const bool known = format != NULL;
    if (!known || !rel || !*rel || rel[0] == '/' || strstr(rel, "..") || strlen(rel) > 1024) {
        json_decref(req);
        return studio_reply_error(conn, 400,
                                  "export: expected {\"format\": png, r16, r32, ter, geotiff, "
                                  "gltf, beamng, unity or cook, \"path\": a relative path inside "
                                  "the project folder}");
    }
    if (s->scene && strcmp(format, "cook") != 0) {
        json_decref(req);
        return studio_reply_error(conn, 400,
                                  "export: a scene's terrain exports by cook (the project); "
                                  "heightmaps, meshes and levels export from a recipe file");
    }
    if (studio_disk_check(s)) studio_publish_state(s);
    if (studio_dirty(s) || s->disk_changed) {
        json_decref(req);
        return studio_reply_json(
            conn, 409,
            json_pack("{s:s,s:b}", "error",
                      s->disk_changed ? "export: the recipe file changed on disk; load it "
                                        "(Generate) or save over it first"
                                      : "export: the recipe has unsaved edits; export writes "
                                        "the recipe file, so save first",
                      "unsaved", 1));
    }
    char out[4200], tmpdir[600] = "", tmp[700] = "", err[2048];
    snprintf(out, sizeof out, "%s/%s", s->project_root, rel);
    json_t *reply_path = cli_json_string(rel);
    json_decref(req);
    /* The folder it goes in, inside the project (made when missing). */
    char parent[4200];
    snprintf(parent, sizeof parent, "%s", out);
    char *slash = strrchr(parent, '/');
    if (slash) *slash = '\0';
    trn_error e;
    if (!trn_path_inside(s->project_root, out) || (slash && trn_mkdir_p(parent, &e)) ||
        !trn_path_inside(s->project_root, parent)) {
        json_decref(reply_path);
        return studio_reply_error(conn, 403, "export: the path leads outside the project folder");
    }
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/terrane-export-XXXXXX", base && *base ? base : "/tmp");
    bool ok;
    char *recipe = s->save_path;
    /* The grid for a GeoTIFF's raw heights, read now: the verbs run without the session's lock
     * (they read the saved file, not the session), so other pages are served meanwhile. */
    const trn_recipe *grid = trn_session_recipe(s->session);
    char dims[64], square[64];
    snprintf(dims, sizeof dims, "%ux%u", grid->cells_x + 1u, grid->cells_z + 1u);
    trn_rcp_format_double(grid->size_x / (double)grid->cells_x, square);
    /* A Unity-shaped grid (square, 2^n + 1 samples) goes through generate --export unity:, as on
     * the command line, with the recipe's surface materials, grass and water; any other is
     * resampled from the generated .ter by unity export --fit resample. */
    const bool unity_shape =
        grid->cells_x == grid->cells_z && trn_unity_resolution_valid(grid->cells_x + 1u);
    pthread_mutex_unlock(&s->lock);
    if (!strcmp(format, "unity") && unity_shape) {
        char dest[4300];
        snprintf(dest, sizeof dest, "unity:%s", out);
        char *gen[] = {"terrane", "generate", recipe, "--export", dest, "-q", NULL};
        ok = run_cli(gen, err, sizeof err);
    } else if (!strcmp(format, "geotiff") || !strcmp(format, "unity")) {
        if (!mkdtemp(tmpdir)) {
            pthread_mutex_lock(&s->lock);
            json_decref(reply_path);
            return studio_reply_error(conn, 500, "export: cannot make a temporary folder");
        }
        snprintf(tmp, sizeof tmp, "%s/heights.%s", tmpdir,
                 !strcmp(format, "geotiff") ? "r32" : "ter");
        char *gen[] = {"terrane", "generate", recipe, "-o", tmp, "-q", NULL};
        ok = run_cli(gen, err, sizeof err);
        if (ok && !strcmp(format, "geotiff")) {
            char *conv[] = {"terrane", "convert",       tmp,    out,  "--size", dims, "--raw-type",
                            "r32",     "--square-size", square, "-q", NULL};
            ok = run_cli(conv, err, sizeof err);
        } else if (ok) {
            char *unity[] = {"terrane", "unity",    "export", tmp, out,
                             "--fit",   "resample", "-q",     NULL};
            ok = run_cli(unity, err, sizeof err);
        }
        unlink(tmp);
        rmdir(tmpdir);
    } else if (!strcmp(format, "gltf")) {
        char *mesh[] = {"terrane", "mesh", recipe, "-o", out, "-q", NULL};
        ok = run_cli(mesh, err, sizeof err);
    } else if (!strcmp(format, "cook")) {
        char *cook[] = {"terrane", "cook", s->scene ? s->project_root : recipe, "-o", out,
                        "-q",      NULL};
        ok = run_cli(cook, err, sizeof err);
    } else if (!strcmp(format, "beamng")) {
        char level[4300];
        snprintf(level, sizeof level, "beamng:%s", out);
        char *gen[] = {"terrane", "generate", recipe, "--export", level, "-q", NULL};
        ok = run_cli(gen, err, sizeof err);
    } else {
        char *gen[] = {"terrane", "generate", recipe, "-o", out, "-q", NULL};
        ok = run_cli(gen, err, sizeof err);
    }
    pthread_mutex_lock(&s->lock);
    if (!ok) {
        json_decref(reply_path);
        return studio_reply_error(conn, 400, err[0] ? err : "export failed");
    }
    cli_note(s->ctx, "exported %s", out);
    return studio_reply_json(conn, 200,
                             json_pack("{s:o,s:s}", "exported", reply_path, "format", format));
}

/* terrane studio in a real browser: headless Chromium (software WebGL2) draws the terrain. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spng.h>

#include "test.h"

static const char *const recipe_text =
    "{\"size\": [512, 512], \"resolution\": [256, 256], \"seed\": 3, \"default_landform\": "
    "\"hills\", \"landforms\": {\"hills\": {\"height_variation\": 120}}, \"default_biome\": \"g\", "
    "\"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}}}\n";

/* 1025 x 1025 samples, 32 x 32 chunks: levels and culling vary across the view. */
static const char *const large_text =
    "{\"size\": [2048, 2048], \"resolution\": [1024, 1024], \"seed\": 5, \"default_landform\": "
    "\"hills\", \"landforms\": {\"hills\": {\"height_variation\": 200}}, \"default_biome\": "
    "\"g\", \"biomes\": {\"g\": {\"color\": [0.3, 0.55, 0.25, 1]}}}\n";

/* A recipe with a graph, one node a line, "graph" between other members: the graph editor's
 * edits must leave everything outside it byte for byte. */
static const char *const graph_text =
    "{\n"
    "  \"size\": [512, 512],\n"
    "  \"resolution\": [128, 128],\n"
    "  \"seed\": 3,\n"
    "  \"default_landform\": \"hills\",\n"
    "  \"landforms\": {\"hills\": {\"height_variation\": 120}},\n"
    "  \"graph\": {\n"
    "    \"format_version\": 1,\n"
    "    \"output\": \"out\",\n"
    "    \"nodes\": [\n"
    "      {\"id\": \"ridges\", \"type\": \"noise_terrain\", \"position\": [0, 0], \"params\": "
    "{\"profile\": \"ridged\", \"height_variation\": 90, \"feature_size\": 200}},\n"
    "      {\"id\": \"biomes\", \"type\": \"biome_rules\", \"position\": [300, 0], \"inputs\": "
    "{\"field\": {\"node\": \"ridges\"}}},\n"
    "      {\"id\": \"out\", \"type\": \"terrain_output\", \"position\": [600, 0], \"inputs\": "
    "{\"field\": {\"node\": \"biomes\"}}}\n"
    "    ]\n"
    "  },\n"
    "  \"default_biome\": \"g\",\n"
    "  \"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}}\n"
    "}\n";

static const char *chromium(void)
{
    static const char *const names[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
    for (size_t k = 0; k < 2; k++)
        if (access(names[k], X_OK) == 0) return names[k];
    return NULL;
}

/* Start terrane studio on a free port (with option, when not NULL); the pipe its URL will come
 * through into *from (read it with read_url once it has generated: several servers generate at
 * once). */
static pid_t spawn_server_with(const char *recipe, const char *option, int *from)
{
    int out[2];
    *from = -1;
    if (pipe(out) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        if (option)
            execl(TRN_CLI_PATH, "terrane", "studio", recipe, option, "--port", "0", "-q",
                  (char *)NULL);
        else
            execl(TRN_CLI_PATH, "terrane", "studio", recipe, "--port", "0", "-q", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    *from = out[0];
    return pid;
}

static pid_t spawn_server(const char *recipe, int *from)
{
    return spawn_server_with(recipe, NULL, from);
}

static void read_url(int from, char *url, size_t url_size)
{
    size_t len = 0;
    char c;
    while (from >= 0 && len + 1 < url_size && read(from, &c, 1) == 1 && c != '\n')
        url[len++] = c;
    url[len] = '\0';
    if (from >= 0) close(from);
}

/* Start terrane studio on a free port; its URL into url. */
static pid_t start_server(const char *recipe, char *url, size_t url_size)
{
    int from = -1;
    const pid_t pid = spawn_server(recipe, &from);
    read_url(from, url, url_size);
    return pid;
}

/* Many water bodies: a flat plateau (10 m) of 515 x 515 samples with a one-sample pit (5 m) at
 * every odd (i, j), 65,905 closed basins, and a 24-sample square at 9.5 m near a corner (too
 * shallow for Basin Water's 1 m). Basin Water proposes max_bodies lakes in the pits, then a red
 * Water Body fills the square (576 samples), last: with 299 basins the index is 2 bytes and the red lake is body 299 (past 255), with
 * 65,535 it is 4 bytes and the red lake is body 65,535 (past 65,534). */
static bool write_water_bodies(const char *dir, const char *recipe, unsigned max_bodies)
{
    enum { n = 515, corner = 24 };
    char path[700];
    snprintf(path, sizeof path, "%s/pits.r32", dir);
    if (access(path, F_OK) != 0) { /* written once for both recipes */
        uint8_t *bytes = malloc((size_t)n * n * 4);
        if (!bytes) return false;
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++) {
                /* Rows go north (the last z) first in .r32: the square's z is 2..25. */
                const size_t z = n - 1 - j;
                const bool square = i >= 2 && i < 2 + corner && z >= 2 && z < 2 + corner;
                const float h = square ? 9.5f
                                : (i % 2 == 1 && j % 2 == 1 && i < n - 1 && j < n - 1) ? 5.0f
                                                                                      : 10.0f;
                uint32_t u;
                memcpy(&u, &h, 4);
                for (int b = 0; b < 4; b++) /* little-endian, as .r32 is */
                    bytes[(j * n + i) * 4 + (size_t)b] = (uint8_t)(u >> (8 * b));
            }
        const bool ok = trn_test_write_file(path, bytes, (size_t)n * n * 4);
        free(bytes);
        if (!ok) return false;
    }
    char text[2400];
    snprintf(text, sizeof text,
             "{\"size\": [514, 514], \"resolution\": [514, 514], \"seed\": 1, "
             "\"default_landform\": \"flat\", \"landforms\": {\"flat\": {\"height_variation\": 1}}, "
             "\"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0.3, 0.55, 0.25, 1]}}, "
             "\"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": ["
             "{\"id\": \"pits\", \"type\": \"heightfield_input\", \"params\": {\"path\": "
             "\"pits.r32\", \"format\": \"r32\"}}, "
             "{\"id\": \"dr\", \"type\": \"drainage\", \"params\": {\"sea\": \"off\"}, "
             "\"inputs\": {\"field\": {\"node\": \"pits\"}}}, "
             "{\"id\": \"basins\", \"type\": \"basin_water\", \"params\": {\"maximum_bodies\": "
             "%u, \"minimum_depth\": 1, \"minimum_area\": 0}, \"inputs\": {\"drainage\": "
             "{\"node\": \"dr\", \"pin\": \"drainage\"}}}, "
             "{\"id\": \"red\", \"type\": \"water_body\", \"params\": {\"level\": 9.8, "
             "\"center\": [14, 14], \"radius\": 30, \"shallow_color\": [0.9, 0.1, 0.1, 0.8], "
             "\"deep_color\": [0.6, 0.05, 0.05, 0.95]}, \"inputs\": {\"field\": {\"node\": "
             "\"basins\", \"pin\": \"field\"}, \"water\": {\"node\": \"basins\", \"pin\": "
             "\"water\"}}}, "
             "{\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": "
             "{\"node\": \"red\", \"pin\": \"field\"}, \"water\": {\"node\": \"red\", "
             "\"pin\": \"water\"}}}]}}\n",
             max_bodies);
    return trn_test_write_file(recipe, text, strlen(text));
}

/* An RGBA PNG of w x h: a checker of two colours in cells of 4 pixels (one colour: a == b). */
static bool write_png(const char *path, uint32_t w, uint32_t h, const uint8_t a[4], const uint8_t b[4])
{
    uint8_t *rgba = malloc((size_t)w * h * 4);
    if (!rgba) return false;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            memcpy(rgba + ((size_t)y * w + x) * 4, ((x / 4 + y / 4) % 2) ? b : a, 4);
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    struct spng_ihdr ihdr = {.width = w, .height = h, .bit_depth = 8, .color_type = SPNG_COLOR_TYPE_TRUECOLOR_ALPHA};
    size_t size = 0;
    int error = 0;
    void *png = NULL;
    bool ok = ctx && !spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1) && !spng_set_ihdr(ctx, &ihdr) &&
              !spng_encode_image(ctx, rgba, (size_t)w * h * 4, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE) &&
              (png = spng_get_png_buffer(ctx, &size, &error)) && !error;
    ok = ok && trn_test_write_file(path, png, size);
    free(png);
    spng_ctx_free(ctx);
    free(rgba);
    return ok;
}

/* A copy of the mapped-materials example with image maps: the rock's in a Material document
 * (below), the soil's albedo and height by the older file names, and the grass's albedo a
 * symbolic link to an image outside the project (which the studio must not read). */
static bool write_mapped_project(const char *dir, char *recipe, size_t recipe_size)
{
    char cmd[2000], path[900];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/mapped' && cp -r '%s/examples/terrain_graph_3d' '%s/mapped'",
             dir, TRN_SOURCE_DIR, dir);
    if (system(cmd) != 0) return false;
    static const uint8_t magenta[4] = {255, 0, 255, 255}, dark[4] = {200, 0, 200, 255},
                         white[4] = {255, 255, 255, 255}, black[4] = {0, 0, 0, 255},
                         lime[4] = {0, 255, 0, 255};
    /* The rock's maps in its Material document: albedo a magenta checker, height a grey checker,
     * a normal tilted far towards -x (the sun's side), a smooth roughness (0.2) and a green
     * glow. */
    static const uint8_t tilted[4] = {60, 128, 200, 255}, smooth[4] = {51, 51, 51, 255},
                         glow[4] = {0, 110, 0, 255};
    snprintf(path, sizeof path, "%s/mapped/materials/rock.asset.json", dir);
    static const char manifest[] = "{\"type\": \"Material\", \"source\": \"rock.material.json\"}\n";
    if (!trn_test_write_file(path, manifest, strlen(manifest))) return false;
    snprintf(path, sizeof path, "%s/mapped/materials/rock.material.json", dir);
    static const char rock[] =
        "{\"format_version\": 1, \"name\": \"Rock\", \"maps\": {\"albedo\": \"rock/albedo.png\", "
        "\"height\": \"rock/height.png\", \"normal\": \"rock/normal.png\", \"roughness\": "
        "\"rock/roughness.png\", \"emissive\": \"rock/emissive.png\"}}\n";
    if (!trn_test_write_file(path, rock, strlen(rock))) return false;
    snprintf(path, sizeof path, "%s/mapped/materials/rock", dir);
    if (mkdir(path, 0755) != 0) return false;
    snprintf(path, sizeof path, "%s/mapped/materials/rock/albedo.png", dir);
    if (!write_png(path, 64, 64, magenta, dark)) return false;
    snprintf(path, sizeof path, "%s/mapped/materials/rock/height.png", dir);
    if (!write_png(path, 16, 16, white, black)) return false;
    snprintf(path, sizeof path, "%s/mapped/materials/rock/normal.png", dir);
    if (!write_png(path, 8, 8, tilted, tilted)) return false;
    snprintf(path, sizeof path, "%s/mapped/materials/rock/roughness.png", dir);
    if (!write_png(path, 8, 8, smooth, smooth)) return false;
    snprintf(path, sizeof path, "%s/mapped/materials/rock/emissive.png", dir);
    if (!write_png(path, 8, 8, glow, glow)) return false;
    /* The soil's by the older file names: albedo magenta, height a grey checker. */
    snprintf(path, sizeof path, "%s/mapped/materials/soil.albedo.png", dir);
    if (!write_png(path, 32, 32, magenta, magenta)) return false;
    snprintf(path, sizeof path, "%s/mapped/materials/soil.height.png", dir);
    if (!write_png(path, 16, 16, white, black)) return false;
    char outside[900];
    snprintf(outside, sizeof outside, "%s/outside.albedo.png", dir);
    if (!write_png(outside, 8, 8, lime, lime)) return false;
    snprintf(path, sizeof path, "%s/mapped/materials/grass.albedo.png", dir);
    if (symlink(outside, path) != 0) return false;
    snprintf(recipe, recipe_size, "%s/mapped/terrain/landscape.terrain.json", dir);
    return true;
}

/* Share of the canvas's pixels that are not its clear colour (28, 32, 36). */
static double terrain_share(const char *png, size_t *width_out)
{
    size_t size = 0;
    uint8_t *data = trn_test_read_file(png, &size);
    if (!data) return -1.0;
    spng_ctx *ctx = spng_ctx_new(0);
    struct spng_ihdr ihdr;
    size_t out_size = 0;
    uint8_t *rgba = NULL;
    double share = -1.0;
    if (!spng_set_png_buffer(ctx, data, size) && !spng_get_ihdr(ctx, &ihdr) &&
        !spng_decoded_image_size(ctx, SPNG_FMT_RGBA8, &out_size) && (rgba = malloc(out_size)) &&
        !spng_decode_image(ctx, rgba, out_size, SPNG_FMT_RGBA8, 0)) {
        size_t terrain = 0, total = 0;
        /* The canvas: below the 36-pixel bar, left of the 260-pixel side panel. */
        for (uint32_t y = 40; y < ihdr.height; y++)
            for (uint32_t x = 0; x + 260 < ihdr.width; x++) {
                const uint8_t *p = rgba + ((size_t)y * ihdr.width + x) * 4;
                total++;
                terrain += abs(p[0] - 28) + abs(p[1] - 32) + abs(p[2] - 36) > 12;
            }
        share = total ? (double)terrain / (double)total : 0.0;
        *width_out = ihdr.width;
    }
    free(rgba);
    spng_ctx_free(ctx);
    free(data);
    return share;
}

int main(void)
{
    const char *browser = chromium();
    if (!browser) return trn_test_skip("chromium is not installed");
    char dir[512], recipe[600], url[256], png[600], dom[600], cmd[6000];
    char waters[600], water_url[256], session[600], saved[600], large[600], large_url[256];
    if (!trn_test_tmpdir(dir, sizeof dir)) return 1;
    snprintf(recipe, sizeof recipe, "%s/land.json", dir);
    snprintf(png, sizeof png, "%s/page.png", dir);
    snprintf(dom, sizeof dom, "%s/dom.html", dir);
    snprintf(waters, sizeof waters, "%s/lakeside.json", dir);
    snprintf(session, sizeof session, "%s/session.f32", dir);
    snprintf(saved, sizeof saved, "%s/saved.r32", dir);
    CHECK(trn_test_write_file(recipe, recipe_text, strlen(recipe_text)));
    snprintf(large, sizeof large, "%s/large.json", dir);
    CHECK(trn_test_write_file(large, large_text, strlen(large_text)));
    /* A copy of an example with water bodies and a palette (the page may save over it). */
    size_t lakeside_size = 0;
    uint8_t *lakeside =
        trn_test_read_file(TRN_SOURCE_DIR "/examples/recipes/lakeside.json", &lakeside_size);
    CHECK(lakeside && trn_test_write_file(waters, lakeside, lakeside_size));
    free(lakeside);
    /* The many-bodies servers first: the 65,536-body one generates for a while, meanwhile the
     * others start and the page's other checks run. */
    char water2[600], water4[600], water2_url[256] = "", water4_url[256] = "";
    snprintf(water2, sizeof water2, "%s/bodies300.json", dir);
    snprintf(water4, sizeof water4, "%s/bodies65536.json", dir);
    CHECK(write_water_bodies(dir, water2, 299) && write_water_bodies(dir, water4, 65535));
    int water2_from = -1, water4_from = -1;
    /* 65,535 lakes exceed the default work budget (it counts each lake as a pass over the
     * grid): a trusted recipe. */
    const pid_t water4_pid = spawn_server_with(water4, "--no-work-limit", &water4_from);
    const pid_t water2_pid = spawn_server(water2, &water2_from);
    pid_t pid = start_server(recipe, url, sizeof url);
    CHECK(pid > 0 && strncmp(url, "http://127.0.0.1:", 17) == 0);
    pid_t water_pid = start_server(waters, water_url, sizeof water_url);
    CHECK(water_pid > 0 && strncmp(water_url, "http://127.0.0.1:", 17) == 0);
    pid_t large_pid = start_server(large, large_url, sizeof large_url);
    CHECK(large_pid > 0 && strncmp(large_url, "http://127.0.0.1:", 17) == 0);
    /* The work-safety flows: a recipe with an earlier run's recovery file beside it. */
    char safe[600], safe_recovery[700], safe_url[256];
    snprintf(safe, sizeof safe, "%s/safe.json", dir);
    snprintf(safe_recovery, sizeof safe_recovery, "%s.recovery", safe);
    CHECK(trn_test_write_file(safe, recipe_text, strlen(recipe_text)));
    static const char *const recovered =
        "{\"size\": [512, 512], \"resolution\": [256, 256], \"seed\": 3, \"default_landform\": "
        "\"hills\", \"landforms\": {\"hills\": {\"height_variation\": 120}}, \"default_biome\": "
        "\"g\", \"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}}, \"edits\": [{\"type\": "
        "\"lower\", \"radius\": 30, \"strength\": 5, \"points\": [[100, 100]]}]}\n";
    CHECK(trn_test_write_file(safe_recovery, recovered, strlen(recovered)));
    pid_t safe_pid = start_server(safe, safe_url, sizeof safe_url);
    CHECK(safe_pid > 0 && strncmp(safe_url, "http://127.0.0.1:", 17) == 0);
    /* The generator's editors: a recipe with a graph in a project folder of its own. */
    char graph_dir[600], graph[700], graph_url[256];
    snprintf(graph_dir, sizeof graph_dir, "%s/graphproject", dir);
    CHECK(mkdir(graph_dir, 0700) == 0);
    snprintf(graph, sizeof graph, "%s/graph.json", graph_dir);
    CHECK(trn_test_write_file(graph, graph_text, strlen(graph_text)));
    /* A project preset beside it (its Presets tab shows its picture). */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/presets' && cp '%s/examples/project/presets/'* '%s/presets/'",
             graph_dir, TRN_SOURCE_DIR, graph_dir);
    CHECK_EQ_INT(system(cmd), 0);
    pid_t graph_pid = start_server(graph, graph_url, sizeof graph_url);
    CHECK(graph_pid > 0 && strncmp(graph_url, "http://127.0.0.1:", 17) == 0);
    /* Mapped materials with image maps. */
    char mapped[900], mapped_url[256] = "";
    CHECK(write_mapped_project(dir, mapped, sizeof mapped));
    pid_t mapped_pid = start_server(mapped, mapped_url, sizeof mapped_url);
    CHECK(mapped_pid > 0 && strncmp(mapped_url, "http://127.0.0.1:", 17) == 0);
    const char *flags = "--headless=new --no-sandbox --use-angle=swiftshader "
                        "--enable-unsafe-swiftshader --window-size=1280,720 "
                        "--virtual-time-budget=15000 --user-data-dir";
    /* The page reports in its title once the first frame is drawn. Without live updates: an
     * open event stream would keep the virtual time budget from running out; and exact heights
     * first: the virtual time does not wait for the worker that fetches the quantised ones. */
    char capture_url[300];
    snprintf(capture_url, sizeof capture_url, "%s&events=0&quantised=0", url);
    snprintf(cmd, sizeof cmd, "timeout 120 '%s' %s='%s/profile' --dump-dom '%s' >'%s' 2>/dev/null",
             browser, flags, dir, capture_url, dom);
    CHECK_EQ_INT(system(cmd), 0);
    uint8_t *text = trn_test_read_file(dom, &(size_t){0});
    CHECK_CONTAINS((const char *)text, "<title>terrane studio: ready</title>");
    free(text);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && timeout 120 '%s' %s='%s/profile' --screenshot='%s' '%s' >/dev/null 2>&1",
             dir, browser, flags, dir, png, capture_url);
    CHECK_EQ_INT(system(cmd), 0);
    size_t width = 0;
    const double share = terrain_share(png, &width);
    fprintf(stderr, "screenshot %zu wide: %.1f%% of the canvas is terrain\n", width, share * 100.0);
    CHECK_EQ_INT(width, 1280);
    CHECK(share > 0.15);
    /* A brush drag and an undo through the DevTools protocol (node, its own WebSocket client). */
    read_url(water2_from, water2_url, sizeof water2_url);
    read_url(water4_from, water4_url, sizeof water4_url);
    CHECK(strncmp(water2_url, "http://127.0.0.1:", 17) == 0 &&
          strncmp(water4_url, "http://127.0.0.1:", 17) == 0);
    if (system("command -v node >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd,
                 "timeout 1500 node '%s/tests/test_studio_browser.mjs' "
                 "'%s' '%s' '%s/profile-cdp' '%s' '%s' '%s' '%s' '%s' '%s' '%s' '%s' '%s' '%s'",
                 TRN_SOURCE_DIR, browser, url, dir, water_url, session, large_url, safe_url, safe,
                 graph_url, graph, water2_url, water4_url, mapped_url);
        const int rc = system(cmd);
        /* The script ends itself on every wait that runs out; timeout(1) is the last resort. */
        if (WIFEXITED(rc) && WEXITSTATUS(rc) == 124)
            fprintf(stderr, "FAIL the browser script ran past 1500 s and was stopped\n");
        CHECK(WIFEXITED(rc) && (WEXITSTATUS(rc) == 0 || WEXITSTATUS(rc) == 77));
        if (WIFEXITED(rc) && WEXITSTATUS(rc) == 0) {
            /* The page saved its session: generate gives the heights it showed, bit for bit. */
            char *out = NULL, *err = NULL;
            CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' -q", &out, &err, recipe, saved),
                         0);
            free(out);
            free(err);
            size_t got_size = 0, want_size = 0;
            uint8_t *got = trn_test_read_file(saved, &got_size);
            uint8_t *want = trn_test_read_file(session, &want_size);
            /* .r32 holds the north row (the last z) first; the API's rows go with z. */
            const size_t row = 257 * sizeof(float);
            bool equal = got && want && got_size == want_size && want_size == 257 * row;
            for (size_t j = 0; equal && j < 257; j++)
                equal = memcmp(got + j * row, want + (256 - j) * row, row) == 0;
            CHECK(equal);
            free(got);
            free(want);
        }
    } else {
        fprintf(stderr, "node is not installed: the DevTools stroke is not driven\n");
    }
    const pid_t servers[8] = {pid,        water_pid,  large_pid,  safe_pid,
                              graph_pid,  water2_pid, water4_pid, mapped_pid};
    for (size_t k = 0; k < 8; k++) {
        if (servers[k] <= 0) continue;
        kill(servers[k], SIGINT);
        int status = 0;
        waitpid(servers[k], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    return trn_test_finish();
}

/* Command-line data safety: outputs never replace inputs, multi-file writes survive a crash at
 * every step, Ctrl-C leaves no temporaries, level paths cannot escape the level. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "terrane/beamng.h"
#include "terrane/image.h"
#include "test.h"
#include "unity_writer.h"

static char tmp[512];

static const char *tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

/* A 129 x 129 16-bit PNG heightmap whose values depend on seed. */
static void write_heightmap(const char *path, uint32_t seed)
{
    trn_image img;
    CHECK_OK(trn_image_init(&img, 129, 129, 1, 16, NULL));
    uint16_t *px = img.data;
    for (uint32_t j = 0; j < 129; j++)
        for (uint32_t i = 0; i < 129; i++)
            px[j * 129 + i] = (uint16_t)(1000 + seed * 3000 + i * 37 + j * 11 * (seed + 1));
    CHECK_OK(trn_png_write(path, &img, NULL, NULL, NULL, NULL));
    trn_image_dispose(&img);
}

static bool same_file_bytes(const char *path, const uint8_t *data, size_t size)
{
    size_t n = 0;
    uint8_t *d = trn_test_read_file(path, &n);
    bool same = d && n == size && memcmp(d, data, n) == 0;
    free(d);
    return same;
}

/* Number of names under dir (recursively) that are temporaries or write journals. */
static int count_leftovers(const char *dir)
{
    DIR *dh = opendir(dir);
    if (!dh) return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char sub[2048];
        snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            n += count_leftovers(sub);
        else if (strstr(de->d_name, ".tmp-") || strstr(de->d_name, ".terrane-journal-"))
            n++;
    }
    closedir(dh);
    return n;
}

static int run_quiet(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static int run_quiet(const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_cli(args, &out, &err);
    if (rc != 0 && rc != 86 && getenv("TRN_TEST_VERBOSE")) fprintf(stderr, "%s\n", err);
    free(out);
    free(err);
    return rc;
}

/* The overwrites a careless command line used to cause: each is refused as a usage error before
 * anything is written, naming both paths, and the input keeps its bytes. */
static void test_outputs_never_replace_inputs(void)
{
    char *out, *err;
    char dir[600], recipe[700];
    snprintf(dir, sizeof dir, "%s/named", tmp);
    mkdir(dir, 0777);
    size_t rsize = 0;
    uint8_t *rtext = trn_test_read_file(TRN_SOURCE_DIR "/examples/recipes/island.json", &rsize);
    CHECK(rtext != NULL);

    /* generate island.json --export unity:. : NAME.json would be the recipe itself. */
    snprintf(recipe, sizeof recipe, "%s/island.json", dir);
    CHECK(trn_test_write_file(recipe, rtext, rsize));
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 32x32 --export 'unity:%s'", &out,
                                   &err, recipe, dir),
                 2);
    CHECK_CONTAINS(err, "is the input");
    CHECK_CONTAINS(err, "island.json");
    CHECK(same_file_bytes(recipe, rtext, rsize));
    CHECK(!trn_test_exists(tmp_path((char[700]){0}, 700, "named/island.raw")));
    CHECK_EQ_INT(count_leftovers(dir), 0);
    free(out), free(err);

    /* generate L/theTerrain.terrain.json --export beamng:L : a Terrain asset named like the
     * level's metadata. */
    char level[700], asset[800];
    snprintf(level, sizeof level, "%s/levels/lv", dir);
    mkdir(tmp_path((char[700]){0}, 700, "named/levels"), 0777);
    mkdir(level, 0777);
    snprintf(asset, sizeof asset, "%s/theTerrain.terrain.json", level);
    CHECK(trn_test_write_file(asset, rtext, rsize));
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 128x128 --export 'beamng:%s'", &out,
                                   &err, asset, level),
                 2);
    CHECK_CONTAINS(err, "is the input");
    CHECK(same_file_bytes(asset, rtext, rsize));
    CHECK(!trn_test_exists(tmp_path((char[700]){0}, 700, "named/levels/lv/theTerrain.ter")));
    CHECK_EQ_INT(count_leftovers(dir), 0);
    free(out), free(err);
    unlink(asset);

    /* convert L/theTerrain.ter beamng:L : the level's own .ter re-quantised over itself. */
    char hm[700], ter[800];
    write_heightmap(tmp_path(hm, sizeof hm, "named/hm.png"), 1);
    CHECK_EQ_INT(run_quiet("convert '%s' 'beamng:%s'", hm, level), 0);
    snprintf(ter, sizeof ter, "%s/theTerrain.ter", level);
    size_t tsize = 0;
    uint8_t *tbytes = trn_test_read_file(ter, &tsize);
    CHECK(tbytes != NULL);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' 'beamng:%s'", &out, &err, ter, level), 2);
    CHECK_CONTAINS(err, "is the input");
    CHECK(same_file_bytes(ter, tbytes, tsize));
    CHECK_EQ_INT(count_leftovers(dir), 0);
    free(out), free(err);
    free(tbytes);

    /* unity export terrain.raw . : the RAW it writes is its input. */
    char raw[700];
    tmp_path(raw, sizeof raw, "named/terrain.raw");
    uint8_t rawdata[33 * 33 * 2];
    for (size_t k = 0; k < sizeof rawdata; k++)
        rawdata[k] = (uint8_t)(k * 7);
    CHECK(trn_test_write_file(raw, rawdata, sizeof rawdata));
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s'", &out, &err, raw, dir), 2);
    CHECK_CONTAINS(err, "is the input");
    CHECK(same_file_bytes(raw, rawdata, sizeof rawdata));
    free(out), free(err);

    /* unity extract u.asset --trees u.asset */
    char ua[700];
    tmp_path(ua, sizeof ua, "named/u.asset");
    int16_t heights[33 * 33];
    for (int k = 0; k < 33 * 33; k++)
        heights[k] = (int16_t)(k * 3);
    uwr_terrain_spec s = {33, {2.0f, 100.0f, 2.0f}, heights, NULL, 1, 1, 2, false};
    size_t asize = 0;
    uint8_t *abytes = uwr_terrain_file(22, false, &s, &asize, NULL);
    CHECK(trn_test_write_file(ua, abytes, asize));
    CHECK_EQ_INT(trn_test_run_clif("unity extract '%s' --trees '%s'", &out, &err, ua, ua), 2);
    CHECK_CONTAINS(err, "is the input");
    CHECK(same_file_bytes(ua, abytes, asize));
    free(out), free(err);
    /* A hard link to the input is the input too. */
    char linked[700];
    tmp_path(linked, sizeof linked, "named/linked.json");
    CHECK(link(ua, linked) == 0);
    CHECK_EQ_INT(trn_test_run_clif("unity extract '%s' --trees '%s'", &out, &err, ua, linked), 2);
    CHECK_CONTAINS(err, "hard link");
    CHECK(same_file_bytes(ua, abytes, asize));
    free(out), free(err);
    free(abytes);
    free(rtext);
}

/* Set or clear the crash step the CLI's final commit dies at. */
static void crash_at(int step)
{
    if (step < 0) {
        unsetenv("TERRANE_TEST_CRASH_STEP");
    } else {
        char v[16];
        snprintf(v, sizeof v, "%d", step);
        setenv("TERRANE_TEST_CRASH_STEP", v, 1);
    }
}

/* validate's JSON: error count and whether check is among the findings. */
static int validate_level(const char *level, const char *check, bool *has_check, char **fix)
{
    char *out = NULL, *err = NULL;
    trn_test_run_clif("beamng validate '%s' --format json --skip-textures", &out, &err, level);
    json_error_t je;
    json_t *doc = out ? json_loads(out, 0, &je) : NULL;
    int errors = -1;
    *has_check = false;
    if (doc) {
        errors = (int)json_integer_value(json_object_get(doc, "error_count"));
        json_t *f = json_object_get(doc, "findings");
        for (size_t i = 0; i < json_array_size(f); i++) {
            json_t *x = json_array_get(f, i);
            if (strcmp(json_string_value(json_object_get(x, "check")), check) == 0) {
                *has_check = true;
                if (fix) *fix = strdup(json_string_value(json_object_get(x, "fix")));
            }
        }
        json_decref(doc);
    }
    free(out);
    free(err);
    return errors;
}

/* A BeamNG level rewritten by convert, killed at each step of its final commit: validate sees
 * a consistent level or names the half state and the command that repairs it; recovery (or
 * the next run) leaves exactly the new level. */
static void test_level_crash_every_step(void)
{
    char old_hm[700], new_hm[700], ref[700], ref_ter[800];
    write_heightmap(tmp_path(old_hm, sizeof old_hm, "old.png"), 1);
    write_heightmap(tmp_path(new_hm, sizeof new_hm, "new.png"), 2);
    /* The new level as an uninterrupted run writes it. */
    snprintf(ref, sizeof ref, "%s/ref/levels/lv", tmp);
    CHECK_EQ_INT(run_quiet("convert '%s' 'beamng:%s'", new_hm, ref), 0);
    snprintf(ref_ter, sizeof ref_ter, "%s/theTerrain.ter", ref);
    size_t new_size = 0;
    uint8_t *new_ter = trn_test_read_file(ref_ter, &new_size);
    CHECK(new_ter != NULL);
    int mixed_seen = 0, finished_by_recover = 0;
    bool ran_past_end = false;
    for (int step = 0; step < 40 && !ran_past_end; step++) {
        char level[700], ter[800];
        snprintf(level, sizeof level, "%s/crash%d/levels/lv", tmp, step);
        CHECK_EQ_INT(run_quiet("convert '%s' 'beamng:%s'", old_hm, level), 0);
        snprintf(ter, sizeof ter, "%s/theTerrain.ter", level);
        size_t old_size = 0;
        uint8_t *old_ter = trn_test_read_file(ter, &old_size);
        crash_at(step);
        int rc = run_quiet("convert '%s' 'beamng:%s'", new_hm, level);
        crash_at(-1);
        if (rc != 86) {
            /* The commit has fewer steps: this run went through. */
            CHECK_EQ_INT(rc, 0);
            ran_past_end = true;
            free(old_ter);
            continue;
        }
        bool interrupted = false;
        char *fix = NULL;
        int errors = validate_level(level, "write-interrupted", &interrupted, &fix);
        bool is_old = same_file_bytes(ter, old_ter, old_size);
        bool is_new = same_file_bytes(ter, new_ter, new_size);
        CHECK(is_old || is_new);
        if (interrupted) {
            /* Named, with the command that repairs it. */
            CHECK(errors >= 1);
            CHECK(fix && strstr(fix, "terrane recover"));
            mixed_seen++;
        } else {
            /* Old or new, and consistent: validate passes (the dead run's leftovers at most
             * warned about). */
            CHECK_EQ_INT(errors, 0);
            CHECK(step == 0 ? is_old : is_new);
        }
        free(fix);
        if (step % 2) {
            CHECK_EQ_INT(run_quiet("recover '%s'", level), 0);
            if (interrupted) finished_by_recover++;
        } else {
            /* The next write into the level finishes (or discards) the dead one first. */
            CHECK_EQ_INT(run_quiet("convert '%s' 'beamng:%s'", new_hm, level), 0);
        }
        bool dummy;
        CHECK_EQ_INT(validate_level(level, "write-interrupted", &dummy, NULL), 0);
        CHECK(!dummy);
        /* Either way the level ends as the new one (step 0 by the rerun), nothing left behind. */
        CHECK(same_file_bytes(ter, new_ter, new_size));
        CHECK_EQ_INT(count_leftovers(level), 0);
        free(old_ter);
    }
    CHECK(ran_past_end);    /* every step of the commit was tried */
    CHECK(mixed_seen >= 3); /* real half states were made and caught */
    CHECK(finished_by_recover >= 1);
    free(new_ter);
}

/* A Unity export killed part-way is finished by the next export into the folder. */
static void test_unity_crash(void)
{
    char hm[700], dir[700];
    write_heightmap(tmp_path(hm, sizeof hm, "u.png"), 3);
    snprintf(dir, sizeof dir, "%s/unity_crash", tmp);
    crash_at(3);
    CHECK_EQ_INT(run_quiet("unity export '%s' '%s' --fit pad --tiles 2x2", hm, dir), 86);
    crash_at(-1);
    CHECK(count_leftovers(dir) > 0);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("recover '%s' --dry-run --format json", &out, &err, dir), 0);
    CHECK_CONTAINS(out, "\"finished\": 1");
    CHECK_CONTAINS(out, "\"dry_run\": true");
    free(out), free(err);
    CHECK(count_leftovers(dir) > 0); /* a dry run changes nothing */
    CHECK_EQ_INT(trn_test_run_clif("recover '%s'", &out, &err, dir), 0);
    CHECK_CONTAINS(err, "finished 1 interrupted write(s)");
    free(out), free(err);
    CHECK_EQ_INT(count_leftovers(dir), 0);
    char p[800];
    snprintf(p, sizeof p, "%s/terrain_1_1.raw", dir);
    CHECK(trn_test_exists(p));
    CHECK_EQ_INT(trn_test_run_clif("recover '%s'", &out, &err, dir), 0);
    CHECK_CONTAINS(err, "nothing to recover");
    free(out), free(err);
}

/* A forged journal (somebody else's file naming absolute paths) is never replayed: an ordinary
 * write into its folder leaves the file it names alone, and recover refuses it with exit 1. */
static void test_forged_journal_refused(void)
{
    char hm[700], dir[700], victim[700], p[800], out_png[800];
    write_heightmap(tmp_path(hm, sizeof hm, "forge.png"), 3);
    tmp_path(victim, sizeof victim, "precious.txt");
    snprintf(dir, sizeof dir, "%s/forge_shared", tmp);
    mkdir(dir, 0777);
    FILE *f = fopen(victim, "w");
    CHECK(f && fputs("precious\n", f) >= 0 && fclose(f) == 0);
    snprintf(p, sizeof p, "%s/p.tmp-ZZZZZZ", dir);
    f = fopen(p, "w");
    CHECK(f && fputs("evil\n", f) >= 0 && fclose(f) == 0);
    snprintf(p, sizeof p, "%s/.terrane-journal-ZZZZZZ", dir);
    f = fopen(p, "w");
    CHECK(f && fprintf(f,
                       "terrane write set 1\ncommit\njournal %s/.terrane-journal-ZZZZZZ\n"
                       "rename %s/p.tmp-ZZZZZZ %s\nend 1\n",
                       dir, dir, victim) > 0 &&
          fclose(f) == 0);
    snprintf(out_png, sizeof out_png, "%s/out.png", dir);
    CHECK_EQ_INT(run_quiet("convert '%s' '%s'", hm, out_png), 0);
    char *out = NULL, *err = NULL;
    size_t vn = 0;
    uint8_t *v = trn_test_read_file(victim, &vn);
    CHECK(v && vn == 9 && memcmp(v, "precious\n", 9) == 0);
    free(v);
    CHECK_EQ_INT(trn_test_run_clif("recover '%s'", &out, &err, dir), 1);
    CHECK_CONTAINS(err, "refused 1 write journal(s)");
    CHECK_CONTAINS(err, ".terrane-journal-ZZZZZZ");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("recover '%s' --format json", &out, &err, dir), 1);
    CHECK_CONTAINS(out, "\"refused\": 1");
    free(out), free(err);
    v = trn_test_read_file(victim, &vn);
    CHECK(v && vn == 9 && memcmp(v, "precious\n", 9) == 0);
    free(v);
    CHECK(trn_test_exists(p)); /* left for the user to look at */
}

/* Ctrl-C while outputs are being made: the process dies of SIGINT and leaves no temporary. */
static void test_sigint_cleans_up(void)
{
    char dir[700], recipe[700];
    snprintf(dir, sizeof dir, "%s/sigint", tmp);
    mkdir(dir, 0777);
    snprintf(recipe, sizeof recipe, "%s/examples/recipes/mountains.json", TRN_SOURCE_DIR);
    char o1[800], o2[800];
    snprintf(o1, sizeof o1, "%s/h.png", dir);
    snprintf(o2, sizeof o2, "%s/p.png", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execl(TRN_CLI_PATH, TRN_CLI_PATH, "generate", recipe, "--resolution", "2048x2048", "-o", o1,
              "--preview", o2, (char *)NULL);
        _exit(127);
    }
    CHECK(pid > 0);
    /* Outputs are staged before generating: wait until their temporaries exist. */
    bool seen = false;
    for (int k = 0; k < 3000 && !seen; k++) {
        seen = count_leftovers(dir) >= 2;
        if (!seen) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    CHECK(seen);
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
    CHECK_EQ_INT(count_leftovers(dir), 0);
    CHECK(!trn_test_exists(o1));
    CHECK(!trn_test_exists(o2));
}

/* A dead run's temporary beside an output is removed by the next write to it. */
static void test_stale_temporary_removed(void)
{
    char hm[700], png[700], stale[800];
    write_heightmap(tmp_path(hm, sizeof hm, "s.png"), 1);
    tmp_path(png, sizeof png, "shade.png");
    snprintf(stale, sizeof stale, "%s.tmp-Zz09ab", png);
    CHECK(trn_test_write_file(stale, "dead run", 8));
    CHECK_EQ_INT(run_quiet("render '%s' -o '%s'", hm, png), 0);
    CHECK(!trn_test_exists(stale));
    CHECK(trn_test_exists(png));
}

/* Paths taken from a level's files stay inside the game folder: '..' and symbolic links that
 * lead out are reported and never written through. */
static void test_level_paths_confined(void)
{
    char root[700], level[800], hm[700], outside[700];
    snprintf(root, sizeof root, "%s/game", tmp);
    snprintf(level, sizeof level, "%s/levels/lv", root);
    write_heightmap(tmp_path(hm, sizeof hm, "c.png"), 1);
    CHECK_EQ_INT(run_quiet("convert '%s' 'beamng:%s'", hm, level), 0);
    snprintf(outside, sizeof outside, "%s/outside", tmp);
    mkdir(outside, 0777);
    char ter_in[900], ter_out[800];
    snprintf(ter_in, sizeof ter_in, "%s/theTerrain.ter", level);
    snprintf(ter_out, sizeof ter_out, "%s/t.ter", outside);
    size_t n = 0;
    uint8_t *bytes = trn_test_read_file(ter_in, &n);
    CHECK(bytes && trn_test_write_file(ter_out, bytes, n));
    free(bytes);
    char link_path[900];
    snprintf(link_path, sizeof link_path, "%s/link", level);
    CHECK(symlink(outside, link_path) == 0);
    const char *paths[2] = {"/levels/lv/../../../outside/t.ter", "/levels/lv/link/t.ter"};
    for (int k = 0; k < 2; k++) {
        char items[900], line[1200];
        snprintf(items, sizeof items, "%s/main/items.level.json", level);
        snprintf(line, sizeof line,
                 "{\"class\":\"TerrainBlock\",\"name\":\"theTerrain\",\"terrainFile\":\"%s\","
                 "\"squareSize\":1,\"maxHeight\":1000,\"position\":[0,0,0]}\n",
                 paths[k]);
        CHECK(trn_test_write_file(items, line, strlen(line)));
        char *out = NULL, *err = NULL;
        int rc = trn_test_run_clif("beamng validate '%s' --fix-terrain-json", &out, &err, level);
        CHECK_EQ_INT(rc, 1);
        CHECK_CONTAINS(out, "[path-outside-level]");
        CHECK_CONTAINS(out, "leads outside");
        free(out), free(err);
        char escaped[800];
        snprintf(escaped, sizeof escaped, "%s/t.terrain.json", outside);
        CHECK(!trn_test_exists(escaped));
    }
}

/* Project presets: a folder link or a manifest source that leads out of the project is not
 * read, and a FIFO as a preset document is refused at once instead of blocking. */
static void test_presets_confined(void)
{
    char proj[700], outside[700], p[900], q[900];
    snprintf(proj, sizeof proj, "%s/proj", tmp);
    snprintf(outside, sizeof outside, "%s/elsewhere", tmp);
    mkdir(proj, 0777);
    mkdir(outside, 0777);
    size_t n = 0;
    uint8_t *preset =
        trn_test_read_file(TRN_SOURCE_DIR "/examples/project/presets/wetlands.preset.json", &n);
    CHECK(preset != NULL);
    snprintf(p, sizeof p, "%s/w.preset.json", outside);
    CHECK(trn_test_write_file(p, preset, n));
    const char *manifest = "{\"format_version\": 1, \"type\": \"terrain_preset\", "
                           "\"importer\": \"data\", \"source\": \"w.preset.json\"}";
    snprintf(p, sizeof p, "%s/w.asset.json", outside);
    CHECK(trn_test_write_file(p, manifest, strlen(manifest)));
    /* A link to a folder outside: its manifests are not part of the project. */
    snprintf(q, sizeof q, "%s/linked", proj);
    CHECK(symlink(outside, q) == 0);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("presets '%s' --format json", &out, &err, proj), 0);
    CHECK(out && !strstr(out, "asset://linked/w"));
    CHECK(out && strstr(out, "builtin://"));
    free(out), free(err);
    /* A link inside the project is followed. */
    char inner[800];
    snprintf(inner, sizeof inner, "%s/real", proj);
    mkdir(inner, 0777);
    snprintf(p, sizeof p, "%s/w.preset.json", inner);
    CHECK(trn_test_write_file(p, preset, n));
    snprintf(p, sizeof p, "%s/w.asset.json", inner);
    CHECK(trn_test_write_file(p, manifest, strlen(manifest)));
    snprintf(q, sizeof q, "%s/alias", proj);
    CHECK(symlink(inner, q) == 0);
    CHECK_EQ_INT(trn_test_run_clif("presets '%s' --format json", &out, &err, proj), 0);
    CHECK(out && strstr(out, "asset://alias/w") && strstr(out, "asset://real/w"));
    free(out), free(err);
    unlink(q);
    /* A manifest whose source climbs out with '..'. */
    const char *escape = "{\"format_version\": 1, \"type\": \"terrain_preset\", "
                         "\"importer\": \"data\", \"source\": \"../../elsewhere/w.preset.json\"}";
    snprintf(p, sizeof p, "%s/x.asset.json", inner);
    CHECK(trn_test_write_file(p, escape, strlen(escape)));
    CHECK_EQ_INT(trn_test_run_clif("presets '%s'", &out, &err, proj), 1);
    CHECK_CONTAINS(err, "leads outside the project folder");
    free(out), free(err);
    unlink(p);
    /* A FIFO as the preset document: refused, never waited on. */
    snprintf(p, sizeof p, "%s/f.preset.json", inner);
    CHECK(mkfifo(p, 0600) == 0);
    const char *fifo_manifest = "{\"format_version\": 1, \"type\": \"terrain_preset\", "
                                "\"importer\": \"data\", \"source\": \"f.preset.json\"}";
    snprintf(q, sizeof q, "%s/f.asset.json", inner);
    CHECK(trn_test_write_file(q, fifo_manifest, strlen(fifo_manifest)));
    CHECK_EQ_INT(trn_test_run_clif("presets '%s'", &out, &err, proj), 1);
    CHECK_CONTAINS(err, "is a pipe (FIFO), expected a regular file");
    free(out), free(err);
    unlink(p);
    unlink(q);
    free(preset);
}

/* A FIFO in a graph cache folder is not a cached result: generation goes on without blocking. */
static void test_cache_fifo(void)
{
    char cache[700], recipe[700], out_png[700];
    snprintf(cache, sizeof cache, "%s/cache", tmp);
    snprintf(recipe, sizeof recipe, "%s/examples/recipes/hills.json", TRN_SOURCE_DIR);
    snprintf(out_png, sizeof out_png, "%s/hills.png", tmp);
    CHECK_EQ_INT(
        run_quiet("generate '%s' --resolution 64x64 --cache '%s' -o '%s'", recipe, cache, out_png),
        0);
    /* Replace every cached file by a FIFO of the same name. */
    DIR *dh = opendir(cache);
    int replaced = 0;
    struct dirent *de;
    while (dh && (de = readdir(dh)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char f[1200];
        snprintf(f, sizeof f, "%s/%s", cache, de->d_name);
        struct stat st;
        if (stat(f, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        unlink(f);
        replaced += mkfifo(f, 0600) == 0;
    }
    if (dh) closedir(dh);
    CHECK(replaced > 0);
    CHECK_EQ_INT(
        run_quiet("generate '%s' --resolution 64x64 --cache '%s' -o '%s'", recipe, cache, out_png),
        0);
}

/* beamng:DIR/levels/ names the levels folder, not a level called "levels". */
static void test_levels_folder_refused(void)
{
    char hm[700], levels[700];
    write_heightmap(tmp_path(hm, sizeof hm, "lf.png"), 1);
    snprintf(levels, sizeof levels, "%s/lf/levels/", tmp);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' 'beamng:%s'", &out, &err, hm, levels), 1);
    CHECK_CONTAINS(err, "is the levels folder itself");
    free(out), free(err);
    char ter[800];
    snprintf(ter, sizeof ter, "%stheTerrain.ter", levels);
    CHECK(!trn_test_exists(ter));
    /* A level really named "levels" inside a levels folder is fine. */
    snprintf(levels, sizeof levels, "%s/lf/levels/levels/", tmp);
    CHECK_EQ_INT(run_quiet("convert '%s' 'beamng:%s'", hm, levels), 0);
    snprintf(ter, sizeof ter, "%stheTerrain.ter", levels);
    CHECK(trn_test_exists(ter));
}

/* Names from a file are shown escaped on a terminal and kept (escaped) in JSON. */
static void test_untrusted_text(void)
{
    char path[700];
    tmp_path(path, sizeof path, "names.ter");
    trn_ter ter;
    memset(&ter, 0, sizeof ter);
    ter.version = 9;
    ter.size = 8;
    uint16_t heights[64];
    uint8_t layers[64];
    for (int k = 0; k < 64; k++) {
        heights[k] = (uint16_t)(k * 100);
        layers[k] = (uint8_t)(k % 3);
    }
    ter.heights = heights;
    ter.layers = layers;
    static char a[] = "evil\x1b[31mred", b[] = "bad\xffname", c[] = "line\nforged: ok";
    char *names[3] = {a, b, c};
    uint32_t lens[3] = {(uint32_t)strlen(a), (uint32_t)strlen(b), (uint32_t)strlen(c)};
    ter.materials = names;
    ter.material_lengths = lens;
    ter.material_count = 3;
    CHECK_OK(trn_ter_write(path, &ter, 9, NULL, NULL, NULL));
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, path), 0);
    CHECK(out && !strchr(out, 0x1b));
    CHECK_CONTAINS(out, "evil\\x1b[31mred");
    CHECK_CONTAINS(out, "bad\\xffname");
    CHECK_CONTAINS(out, "line\\nforged: ok");
    CHECK(out && !strstr(out, "\nforged: ok"));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --format json", &out, &err, path), 0);
    json_error_t je;
    json_t *doc = out ? json_loads(out, 0, &je) : NULL;
    CHECK(doc != NULL);
    /* Three names, none vanished; the one that is not UTF-8 keeps its bytes as text. */
    CHECK(out && strstr(out, "bad\\\\xffname"));
    CHECK(out && strstr(out, "evil\\u001B[31mred"));
    json_decref(doc);
    free(out), free(err);
}

/* A lossy conversion says what it drops, once; a lossless one says nothing. */
static void test_conversion_drops(void)
{
    char ter[700], png[700], ter2[700];
    tmp_path(ter, sizeof ter, "drops.ter");
    trn_ter t;
    memset(&t, 0, sizeof t);
    t.version = 9;
    t.size = 8;
    uint16_t heights[64];
    uint8_t layers[64];
    for (int k = 0; k < 64; k++) {
        heights[k] = (uint16_t)(k * 100);
        layers[k] = (uint8_t)(k % 2);
    }
    layers[9] = 255; /* a hole */
    t.heights = heights;
    t.layers = layers;
    static char a[] = "grass", b[] = "rock";
    char *names[2] = {a, b};
    uint32_t lens[2] = {5, 4};
    t.materials = names;
    t.material_lengths = lens;
    t.material_count = 2;
    CHECK_OK(trn_ter_write(ter, &t, 9, NULL, NULL, NULL));
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s'", &out, &err, ter,
                                   tmp_path(png, sizeof png, "drops.png")),
                 0);
    CHECK_CONTAINS(err, "note: a PNG heightmap holds less than");
    CHECK_CONTAINS(err, "(beamng-ter): dropped material layers (2 materials); holes (1 sample)");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --format json", &out, &err, ter, png), 0);
    json_error_t je;
    json_t *doc = out ? json_loads(out, 0, &je) : NULL;
    json_t *dropped = json_object_get(doc, "dropped");
    CHECK_EQ_INT(json_array_size(dropped), 2);
    CHECK(json_is_string(json_array_get(dropped, 1)) &&
          !strcmp(json_string_value(json_array_get(dropped, 1)), "holes (1 sample)"));
    json_decref(doc);
    free(out), free(err);
    /* .ter keeps layers and holes: nothing dropped, no note. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --format json", &out, &err, png,
                                   tmp_path(ter2, sizeof ter2, "back.ter")),
                 0);
    CHECK_CONTAINS(out, "\"dropped\": []");
    CHECK(err && !strstr(err, "holds less"));
    free(out), free(err);
}

int main(void)
{
    trn_test_tmpdir(tmp, sizeof tmp);
    RUN(test_outputs_never_replace_inputs);
    RUN(test_level_crash_every_step);
    RUN(test_unity_crash);
    RUN(test_forged_journal_refused);
    RUN(test_sigint_cleans_up);
    RUN(test_stale_temporary_removed);
    RUN(test_level_paths_confined);
    RUN(test_presets_confined);
    RUN(test_cache_fifo);
    RUN(test_levels_folder_refused);
    RUN(test_untrusted_text);
    RUN(test_conversion_drops);
    return trn_test_finish();
}

/* Every verb's --format json keys against the one vocabulary docs/cli.md documents. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "test.h"
#include "unity_writer.h"

/* The table of docs/cli.md's "JSON output keys" section: each key with the verbs it is
 * documented for ("every verb" for all). */
#define MAX_KEYS 600
static struct {
    char key[64];
    char verbs[1024]; /* ",verb,verb," */
} table[MAX_KEYS];
static size_t table_count;

static void load_table(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/cli.md", TRN_SOURCE_DIR);
    char *text = (char *)trn_test_read_file(path, NULL);
    CHECK(text != NULL);
    if (!text) return;
    char *sec = strstr(text, "\n## JSON output keys\n");
    CHECK(sec != NULL);
    if (!sec) {
        free(text);
        return;
    }
    char *end = strstr(sec + 5, "\n## ");
    if (end) *end = '\0';
    for (char *line = sec; line && *line; line = strchr(line + 1, '\n')) {
        const char *l = line[0] == '\n' ? line + 1 : line;
        if (strncmp(l, "| `", 3) != 0) continue;
        const char *k = l + 3, *ke = strchr(k, '`');
        const char *last = NULL; /* the row's last cell: its verbs */
        const char *eol = strchr(l, '\n');
        if (!eol) eol = l + strlen(l);
        for (const char *p = l; p < eol - 1; p++)
            if (p[0] == '|' && p[1] == ' ') last = p + 2;
        CHECK(ke && last && table_count < MAX_KEYS);
        if (!ke || !last || table_count >= MAX_KEYS) continue;
        snprintf(table[table_count].key, sizeof table[0].key, "%.*s", (int)(ke - k), k);
        /* "`a`, `b c` |" -> ",a,b c," */
        char *v = table[table_count].verbs;
        size_t n = 0;
        v[n++] = ',';
        for (const char *p = last; p < eol && *p != '|' && n + 2 < sizeof table[0].verbs; p++) {
            if (*p == '`') continue;
            if (*p == ',') {
                v[n++] = ',';
                while (p[1] == ' ')
                    p++;
                continue;
            }
            v[n++] = *p;
        }
        while (n > 1 && v[n - 1] == ' ')
            n--;
        v[n++] = ',';
        v[n] = '\0';
        table_count++;
    }
    free(text);
}

static const char *documented_verbs(const char *key)
{
    for (size_t i = 0; i < table_count; i++)
        if (strcmp(table[i].key, key) == 0) return table[i].verbs;
    return NULL;
}

static bool documented_for(const char *key, const char *verb)
{
    const char *v = documented_verbs(key);
    if (!v) return false;
    char needle[80];
    snprintf(needle, sizeof needle, ",%s,", verb);
    return strstr(v, needle) != NULL || strstr(v, ",every verb,") != NULL;
}

/* The verbs that write files: their result always lists them under "outputs". */
static bool writes(const char *verb)
{
    static const char *const w[] = {"generate",
                                    "convert",
                                    "render",
                                    "mesh",
                                    "cook",
                                    "scatter",
                                    "compact",
                                    "apply-preset",
                                    "beamng import",
                                    "beamng create",
                                    "beamng export",
                                    "beamng migrate",
                                    "beamng validate",
                                    "stationeers extract",
                                    "stationeers replace",
                                    "stationeers from-heightfield",
                                    "unity extract",
                                    "unity export",
                                    NULL};
    for (size_t i = 0; w[i]; i++)
        if (strcmp(verb, w[i]) == 0) return true;
    return false;
}

/* Every real number in text is in its shortest form that reads back as the same double. */
static void check_shortest_numbers(const char *label, const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '"') { /* skip strings */
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1]) p++;
            if (!*p) break;
            continue;
        }
        if (!(isdigit((unsigned char)*p) || (*p == '-' && isdigit((unsigned char)p[1])))) continue;
        const char *s = p;
        bool real = false;
        while (*p && strchr("0123456789.eE+-", *p)) {
            if (*p == '.' || *p == 'e' || *p == 'E') real = true;
            p++;
        }
        if (real) {
            /* Significant digits of the token: the mantissa without its point, leading and
             * trailing zeros ("400.0" has 1; reals keep their ".0"). */
            char tok[64], digits[64], shorter[400];
            snprintf(tok, sizeof tok, "%.*s", (int)(p - s), s);
            size_t n = 0;
            for (const char *q = tok; *q && *q != 'e' && *q != 'E'; q++)
                if (isdigit((unsigned char)*q) && (n > 0 || *q != '0')) digits[n++] = *q;
            while (n > 0 && digits[n - 1] == '0')
                n--;
            const double v = strtod(tok, NULL);
            int shortest = 1;
            for (; shortest < 17; shortest++) {
                snprintf(shorter, sizeof shorter, "%.*g", shortest, v);
                if (strtod(shorter, NULL) == v) break;
            }
            if ((int)n > shortest) {
                fprintf(stderr, "%s: %s is not the shortest form (%.*g reads back the same)\n",
                        label, tok, shortest, v);
                CHECK(!"a number printed longer than it needs");
            }
        }
        p--;
    }
}

static int runs_checked;

/* The names `terrane formats` lists, and the terrane documents that are not file formats: the
 * values input_format and output_format may take. */
static json_t *format_names;

static bool known_format(const char *name)
{
    static const char *const documents[] = {"terrain_asset",  "terrain_palette",
                                            "terrain_material_set", "asset_manifest",
                                            "terrain_preset", "scene", "glb", NULL};
    for (size_t i = 0; documents[i]; i++)
        if (strcmp(name, documents[i]) == 0) return true;
    size_t i;
    json_t *f;
    json_array_foreach(format_names, i, f)
    {
        const char *n = json_string_value(json_object_get(f, "name"));
        if (n && strcmp(n, name) == 0) return true;
    }
    return false;
}

/* Run "terrane ARGS --format json -q" in the test folder and check its result's keys. */
static void run_verb(const char *verb, int expect_rc, const char *fmt, ...)
{
    char args[4096], cmd[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s --format json -q", args);
    char *out = NULL, *err = NULL;
    const int rc = trn_test_run_cli(cmd, &out, &err);
    if (rc != expect_rc)
        fprintf(stderr, "terrane %s: exit %d, expected %d: %s\n", cmd, rc, expect_rc,
                err ? err : "");
    CHECK_EQ_INT(rc, expect_rc);
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    if (!j) fprintf(stderr, "terrane %s: stdout is not one JSON value: %s\n", cmd, out ? out : "");
    CHECK(j != NULL);
    if (out) check_shortest_numbers(cmd, out);
    if (json_is_object(j)) {
        runs_checked++;
        const char *key;
        json_t *value;
        json_object_foreach(j, key, value)
        {
            if (!documented_for(key, verb))
                fprintf(stderr, "terrane %s: key '%s' is not in docs/cli.md's table for '%s'\n",
                        cmd, key, verb);
            CHECK(documented_for(key, verb));
        }
        static const char *const format_keys[] = {"input_format", "output_format"};
        for (int f = 0; f < 2; f++) {
            const char *v = json_string_value(json_object_get(j, format_keys[f]));
            if (v && !known_format(v))
                fprintf(stderr, "terrane %s: %s '%s' is no format 'terrane formats' names\n", cmd,
                        format_keys[f], v);
            CHECK(!v || known_format(v));
        }
        json_t *error = json_object_get(j, "error");
        if (error) {
            CHECK_EQ_INT(json_object_size(j), 1);
            CHECK(expect_rc != 0);
            CHECK_EQ_INT(json_integer_value(json_object_get(error, "exit_code")), rc);
            const char *named = json_string_value(json_object_get(error, "verb"));
            if (!named || strcmp(named, verb) != 0)
                fprintf(stderr, "terrane %s: the error names verb '%s'\n", cmd, named ? named : "");
            CHECK(named && strcmp(named, verb) == 0);
            const char *m = json_string_value(json_object_get(error, "message"));
            CHECK(m && m[0]);
            static const char *const fields[] = {"verb",   "exit_code", "message", "code", "file",
                                                 "offset", "line",      "column",  "node", NULL};
            json_object_foreach(error, key, value)
            {
                bool known = false;
                for (size_t i = 0; fields[i]; i++)
                    known |= strcmp(key, fields[i]) == 0;
                if (!known) fprintf(stderr, "terrane %s: error field '%s'\n", cmd, key);
                CHECK(known);
            }
        } else if (writes(verb)) {
            json_t *outputs = json_object_get(j, "outputs");
            if (!json_is_array(outputs)) fprintf(stderr, "terrane %s: no \"outputs\" array\n", cmd);
            CHECK(json_is_array(outputs));
            /* The one file asked for is among them. */
            const char *asked = json_string_value(json_object_get(j, "output"));
            struct stat st;
            if (asked && stat(asked, &st) == 0 && S_ISREG(st.st_mode)) {
                bool listed = false;
                size_t k;
                json_array_foreach(outputs, k, value) listed |=
                    json_is_string(value) && strcmp(json_string_value(value), asked) == 0;
                if (!listed) fprintf(stderr, "terrane %s: outputs lacks %s\n", cmd, asked);
                CHECK(listed);
            }
            size_t i;
            json_array_foreach(outputs, i, value)
            {
                CHECK(json_is_string(value));
                if (json_is_string(value) && access(json_string_value(value), F_OK) != 0)
                    fprintf(stderr, "terrane %s: output %s is not there\n", cmd,
                            json_string_value(value));
                CHECK(json_is_string(value) && access(json_string_value(value), F_OK) == 0);
            }
        } else {
            CHECK(json_object_get(j, "outputs") == NULL);
        }
    }
    json_decref(j);
    free(out);
    free(err);
}

/* 64 x 64 cells over 64 m: ground at 10 m, a square bowl at 0 m holding a lake at 5 m, shrubs. */
static const char recipe[] =
    "{\"size\": [64, 64], \"resolution\": [64, 64], \"seed\": 3, \"sea_level\": -100,\n"
    " \"default_landform\": \"flat\", \"landforms\": {\"flat\": {\"height_variation\": 0}},\n"
    " \"default_biome\": \"meadow\", \"biomes\": {\"meadow\": {\"color\": [0.4, 0.6, 0.3, 1]}},\n"
    " \"palette\": {\"format_version\": 3, \"name\": \"Shrubs\", \"placements\": {\"shrub\": "
    "{\"prefab\": \"prefab://shrub\", \"density\": 0.25, \"candidate_spacing\": 2, \"spacing\": "
    "4}}},\n"
    " \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
    "  {\"id\": \"rim\", \"type\": \"flat_terrain\", \"params\": {\"height\": 10}},\n"
    "  {\"id\": \"floor\", \"type\": \"flat_terrain\", \"params\": {\"height\": 0}},\n"
    "  {\"id\": \"sq\", \"type\": \"polygon_mask\", \"params\": {\"points\": [[16, 16], [48, 16], "
    "[48, 48], [16, 48]], \"falloff\": 0}, \"inputs\": {\"field\": {\"node\": \"rim\"}}},\n"
    "  {\"id\": \"bowl\", \"type\": \"height_blend\", \"params\": {\"amount\": 1}, \"inputs\": "
    "{\"a\": {\"node\": \"rim\"}, \"b\": {\"node\": \"floor\"}, \"mask\": {\"node\": \"sq\"}}},\n"
    "  {\"id\": \"lake\", \"type\": \"water_body\", \"params\": {\"level\": 5, \"center\": [32, "
    "32], \"radius\": 100}, \"inputs\": {\"field\": {\"node\": \"bowl\"}}},\n"
    "  {\"id\": \"bio\", \"type\": \"biome_rules\", \"inputs\": {\"field\": {\"node\": \"lake\", "
    "\"pin\": \"field\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}},\n"
    "  {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"bio\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}}]}}\n";

static void put(const char *path, const char *text)
{
    CHECK(trn_test_write_file(path, text, strlen(text)));
}

/* A Unity TerrainData with heights, a hole, splats and trees (tests/unity_writer.h). */
static void make_asset(const char *path)
{
    int16_t *h = malloc(sizeof *h * 65 * 65);
    for (int j = 0; j < 65; j++)
        for (int i = 0; i < 65; i++)
            h[j * 65 + i] = (int16_t)(i * 200 + j * 100);
    uint8_t holes[64 * 64];
    memset(holes, 1, sizeof holes);
    holes[10 * 64 + 20] = 0;
    uwr_terrain_spec s = {65, {2.0f, 400.0f, 2.0f}, h, holes, 3, 1, 3, false};
    size_t size;
    uint8_t *file = uwr_terrain_file(22, false, &s, &size, NULL);
    CHECK(trn_test_write_file(path, file, size));
    free(file);
    free(h);
}

/* A Stationeers .save holding DAT as terrain.dat. */
static void make_save(const char *path, const char *dat)
{
    size_t n = 0;
    uint8_t *bytes = trn_test_read_file(dat, &n);
    int zerr = 0;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    CHECK(za != NULL && bytes != NULL);
    if (!za || !bytes) {
        free(bytes);
        return;
    }
    static const char world[] = "<WorldData/>", meta[] = "<WorldMetaData/>";
    zip_file_add(za, "world.xml", zip_source_buffer(za, world, sizeof world - 1, 0), 0);
    zip_file_add(za, "world_meta.xml", zip_source_buffer(za, meta, sizeof meta - 1, 0), 0);
    zip_file_add(za, "terrain.dat", zip_source_buffer(za, bytes, n, 0), 0);
    CHECK(zip_close(za) == 0);
    free(bytes);
}

static void test_table(void)
{
    load_table();
    CHECK(table_count > 100);
    /* The words the vocabulary replaced stay out of it. */
    static const char *const gone[] = {
        "file",   "files",         "recipe",       "dir",    "folder",         "level_dir",
        "format", "document_kind", "terrain_size", "errors", "height_mapping", NULL};
    for (size_t i = 0; gone[i]; i++) {
        if (documented_verbs(gone[i])) fprintf(stderr, "'%s' is in the table\n", gone[i]);
        CHECK(documented_verbs(gone[i]) == NULL);
    }
    CHECK(documented_for("input", "info") && documented_for("input", "generate"));
    CHECK(documented_for("error", "convert"));
    CHECK(!documented_for("outputs", "info"));
}

static void test_every_verb(void)
{
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_cli("formats --format json", &out, &err), 0);
    format_names = json_loads(out ? out : "", 0, NULL);
    CHECK(json_array_size(format_names) > 10);
    free(out);
    free(err);
    put("r.json", recipe);
    put("c.json", recipe);
    run_verb("generate", 0, "generate r.json -o h.png --biomes b.png --preview p.png");
    run_verb("generate", 0, "generate r.json -o g.r32 --cache cache");
    run_verb("generate", 0, "generate r.json --export beamng:lv/levels/g -o h2.png");
    run_verb("generate", 0, "generate r.json --export unity:u1 -o h3.png");
    run_verb("generate", 0, "generate r.json --tiles 32 --export gltf:g1 -o t.tif");
    run_verb("inspect", 0, "inspect r.json");
    run_verb("explain", 0, "explain r.json --at 10,10");
    run_verb("water", 0, "water r.json --at 32,32");
    run_verb("scatter", 0, "scatter r.json -o inst.json --csv i.csv --picture d.png");
    run_verb("scatter", 0, "scatter r.json");
    run_verb("cook", 0, "cook r.json -o cooked");
    run_verb("mesh", 0, "mesh r.json -o m.glb");
    run_verb("mesh", 0, "mesh h.png -o m.obj --max-error 0.5");
    run_verb("stats", 0, "stats h.png");
    run_verb("compact", 0, "compact c.json");
    run_verb("compact", 0, "compact c.json --write");
    run_verb("graph check", 0, "graph check r.json");
    run_verb("presets", 0, "presets");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp -r '%s/examples/project' proj", TRN_SOURCE_DIR);
    CHECK(system(cmd) == 0);
    run_verb("presets", 0, "presets proj");
    run_verb("apply-preset", 0,
             "apply-preset proj --preset builtin://terrain/rolling-hills --keep-edits");
    run_verb("apply-preset", 0,
             "apply-preset proj --preset builtin://terrain/rolling-hills --keep-edits --write");
    run_verb("seeds", 0, "seeds 3");
    run_verb("convert", 0, "convert h.png t.ter");
    run_verb("convert", 0, "convert h.png t.dat");
    run_verb("convert", 0, "convert h.png t.tif");
    run_verb("convert", 0, "convert h.png tg.ter --of terragen");
    run_verb("convert", 0, "convert h.png h128.png --size 128x128");
    make_asset("synth.asset");
    static const char *const infos[] = {
        "h.png",       "t.ter", "t.dat", "t.tif", "tg.ter", "g.r32", "cooked/r.terrain.bin",
        "synth.asset", NULL};
    for (size_t i = 0; infos[i]; i++)
        run_verb("info", 0, "info %s", infos[i]);
    run_verb("render", 0, "render h.png -o s.png");
    run_verb("render", 0, "render r.json -o s2.png --mode height");
    run_verb("render", 0, "render t.ter -o s3.png --mode layers");
    run_verb("render", 0, "render h.png -o a.png --mode aspect");
    run_verb("formats", 0, "formats png");
    run_verb("beamng create", 0, "beamng create bc --root lv2 --scaffold");
    run_verb("info", 0, "info lv2/levels/bc/theTerrain.terrain.json");
    run_verb("beamng import", 0, "beamng import h128.png -o imp.ter");
    run_verb("beamng import", 0, "beamng import h128.png --level lv2/levels/bc");
    run_verb("beamng export", 0, "beamng export t.ter -o bexp");
    run_verb("beamng validate", 0, "beamng validate lv2/levels/bc --fix-terrain-json");
    put("lv2/levels/bc/art/terrains/materials.json",
        "{\"Old\": {\"name\": \"Old\", \"class\": \"TerrainMaterial\", \"internalName\": "
        "\"Old\", \"diffuseMap\": \"a.png\"}}");
    run_verb("beamng migrate", 0, "beamng migrate lv2/levels/bc");
    run_verb("stationeers from-heightfield", 0, "stationeers from-heightfield h.png t2.dat");
    make_save("x.save", "t2.dat");
    run_verb("stationeers extract", 0, "stationeers extract x.save o.dat");
    run_verb("stationeers replace", 0, "stationeers replace x.save t2.dat -o y.save");
    run_verb("info", 0, "info x.save");
    put("meadow.palette.json",
        "{\"format_version\": 3, \"name\": \"Meadow\", \"placements\": {\"stones\": "
        "{\"model\": \"asset://models/stone\", \"density\": 0.1, \"collision\": \"none\"}}}");
    put("s.materials.json", "{\"format_version\": 1, \"name\": \"S\", \"roles\": "
                            "{\"ground\": \"asset://materials/soil\"}}");
    run_verb("info", 0, "info meadow.palette.json");
    /* Every document terrane reads, described by info. */
    run_verb("info", 0, "info r.json");
    put("w.preset.json", "{\"format_version\": 1, \"name\": \"W\", \"label\": \"Wet\", "
                         "\"description\": \"d\", \"biomes\": {\"m\": {}}, \"rules\": []}");
    run_verb("info", 0, "info w.preset.json");
    put("w.asset.json", "{\"format_version\": 1, \"type\": \"terrain_preset\", \"importer\": "
                        "\"data\", \"source\": \"w.preset.json\", \"tags\": [\"wet\"]}");
    run_verb("info", 0, "info w.asset.json");
    /* The Terrain asset the scene places (info resolves it in the project). */
    CHECK(system("mkdir -p terrain && cp r.json terrain/x.terrain.json") == 0);
    put("terrain/x.asset.json", "{\"format_version\": 1, \"importer\": \"terrain_heightfield\", "
                                "\"source\": \"x.terrain.json\", \"type\": \"Terrain\"}");
    put("s.scene.json", "{\"name\": \"s\", \"entities\": [{\"id\": \"t\", \"components\": "
                        "{\"Terrain3D\": {\"asset\": \"asset://terrain/x\"}}}]}");
    run_verb("info", 0, "info s.scene.json");
    run_verb("inspect", 0, "inspect s.materials.json");
    run_verb("unity info", 0, "unity info synth.asset");
    run_verb("unity extract", 0,
             "unity extract synth.asset --splats sp --holes ho.png --trees tr.json");
    run_verb("unity export", 0, "unity export h.png uexp");
    run_verb("recover", 0, "recover . --dry-run");
    CHECK(runs_checked >= 50);
    json_decref(format_names);
    format_names = NULL;
}

/* A failure answers with the error object alone, for every verb. */
static void test_errors(void)
{
    static const struct {
        const char *verb, *args;
        int rc;
    } runs[] = {
        {"generate", "generate nothere.json -o x.png", 1},
        {"inspect", "inspect nothere.json", 1},
        {"explain", "explain nothere.json --at 1,1", 1},
        {"water", "water nothere.json", 1},
        {"scatter", "scatter nothere.json", 1},
        {"cook", "cook nothere.json -o k", 1},
        {"mesh", "mesh nothere.png -o x.glb", 1},
        {"stats", "stats nothere.png", 1},
        {"compact", "compact nothere.json", 1},
        {"graph check", "graph check nothere.json", 1},
        {"info", "info nothere.png", 1},
        {"convert", "convert nothere.png x.ter", 1},
        {"render", "render nothere.png -o x.png", 1},
        {"formats", "formats nosuchformat", 2},
        {"beamng import", "beamng import nothere.png -o x.ter", 1},
        {"beamng export", "beamng export nothere.ter -o e", 1},
        {"beamng validate", "beamng validate nothere", 1},
        {"stationeers extract", "stationeers extract nothere.save x.dat", 1},
        {"unity info", "unity info nothere.asset", 1},
        {"unity export", "unity export nothere.png ue", 1},
        {"seeds", "seeds notanumber", 2},
        {"apply-preset", "apply-preset noproject --preset builtin://terrain/rolling-hills", 1},
        {"recover", "recover noplace", 1},
        {"convert", "--format json convert --no-such-option", 2},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        const int before = runs_checked;
        run_verb(runs[i].verb, runs[i].rc, "%s", runs[i].args);
        CHECK_EQ_INT(runs_checked, before + 1);
    }
}

int main(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    CHECK(chdir(dir) == 0);
    RUN(test_table);
    RUN(test_every_verb);
    RUN(test_errors);
    return trn_test_finish();
}

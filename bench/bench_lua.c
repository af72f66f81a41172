/* Benchmark: water samples per second through the Lua binding against the C call, on a cooked
 * 1025^2 terrain with a lake (one core). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "bench_util.h"
#include "terrane/cook.h"
#include "terrane/runtime.h"
#include "terrane/water.h"
#include "terrane_lua.h"

#define RUNS 5
#define POINTS 1000000

static void loadavg(char *buf, size_t size)
{
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, (int)size, f)) buf[0] = '\0';
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* The thread's CPU time: on a machine shared with other work, wall time counts the waits. */
static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void report(const char *what, double *cpu, double *wall)
{
    qsort(cpu, RUNS, sizeof *cpu, cmp_double);
    qsort(wall, RUNS, sizeof *wall, cmp_double);
    printf("%-46s CPU time: median %6.3f M/s, best %6.3f M/s; wall: median %6.3f M/s\n", what,
           POINTS / cpu[RUNS / 2] * 1e-6, POINTS / cpu[0] * 1e-6, POINTS / wall[RUNS / 2] * 1e-6);
}

/* The Lua loops: positions from three arrays, one reused table or a fresh one per call. */
static const char lua_loops[] =
    "local Water = require('terrane.water')\n"
    "local sample = Water.sample\n"
    "local xs, ys, zs, n = ...\n"
    "local loops = {}\n"
    "function loops.reused() local p, wet = {0, 0, 0}, 0\n"
    "  for i = 1, n do p[1] = xs[i]; p[2] = ys[i]; p[3] = zs[i]\n"
    "    if sample(p) then wet = wet + 1 end end return wet end\n"
    "function loops.fresh() local wet = 0\n"
    "  for i = 1, n do if sample({xs[i], ys[i], zs[i]}) then wet = wet + 1 end end return wet end\n"
    "function loops.tracker() local t, p, events = Water.tracker(), {0, 0, 0}, 0\n"
    "  for i = 1, n do p[1] = xs[i]; p[2] = ys[i]; p[3] = zs[i]\n"
    "    events = events + #t:update(p) end return events end\n"
    "return loops\n";

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    const uint32_t cells = 1024;
    char load0[128], load1[128], path[1024];
    loadavg(load0, sizeof load0);
    snprintf(path, sizeof path, "%s/bench_lua.terrain.bin", dir);
    trn_error e;

    /* Rolling hills 0..~80 m with one lake of radius 300 in the middle, cooked once. */
    trn_generated gen;
    memset(&gen, 0, sizeof gen);
    if (trn_field_init(&gen.field, cells, cells, cells, cells, &e)) return 1;
    const size_t nx = (size_t)cells + 1u;
    for (size_t j = 0; j <= cells; j++)
        for (size_t i = 0; i < nx; i++) {
            const double x = (double)i - 512.0, z = (double)j - 512.0;
            const double bowl = sqrt(x * x + z * z) * 0.08;
            gen.field.heights[j * nx + i] =
                (float)(bowl + 20.0 * value_noise((double)i / 90.0, (double)j / 90.0, 5u));
        }
    trn_water_body lake;
    trn_water_body_init(&lake, TRN_WATER_LAKE, "lake");
    lake.center_x = lake.center_z = 512.0;
    lake.radius = 300.0;
    lake.level = 30.0;
    lake.carve = false;
    lake.look.flow_speed = 0.5;
    if (trn_water_resolve(&gen.field, &lake, 1, NULL, &gen.water, &e)) {
        fprintf(stderr, "water: %s\n", e.message);
        return 1;
    }
    gen.has_water = true;
    gen.sea_level = -100.0;
    gen.cache_key = 1;
    if (trn_labels_init(&gen.biomes, cells, cells, &e) ||
        trn_labels_add_name(&gen.biomes, "meadow", 6, &e))
        return 1;
    const char *recipe_text =
        "{\"size\": [1024, 1024], \"resolution\": [1024, 1024], \"seed\": 1, "
        "\"default_landform\": \"hills\", \"landforms\": {\"hills\": {}}, \"default_biome\": "
        "\"meadow\", \"biomes\": {\"meadow\": {\"color\": [0.3, 0.5, 0.2, 1]}}}";
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    if (trn_recipe_parse(recipe_text, strlen(recipe_text), "bench.json", &recipe, NULL, &e)) {
        fprintf(stderr, "recipe: %s\n", e.message);
        return 1;
    }
    trn_cook_input ci = {&gen, &recipe, "bench_lua", NULL, NULL, NULL, NULL, NULL, 0};
    if (trn_cook_write(&ci, path, &e)) {
        fprintf(stderr, "cook: %s\n", e.message);
        return 1;
    }

    /* Points over the lake's square (about 70% of its columns wet), heights around the ground
     * from 2 m under to 6 m over it. */
    double *xs = malloc(POINTS * sizeof *xs), *ys = malloc(POINTS * sizeof *ys),
           *zs = malloc(POINTS * sizeof *zs);
    if (!xs || !ys || !zs) return 1;
    for (size_t k = 0; k < POINTS; k++) {
        xs[k] = 212.0 + 600.0 * uniform();
        zs[k] = 212.0 + 600.0 * uniform();
        ys[k] = trn_field_height_at(&gen.field, xs[k], zs[k]) - 2.0 + 8.0 * uniform();
    }

    trn_payload *payload = NULL;
    trn_world *world = NULL;
    if (trn_payload_open(path, NULL, &payload, &e) || trn_world_new(&world, &e) ||
        trn_world_place(world, "bench", payload, NULL, &e)) {
        fprintf(stderr, "open: %s\n", e.message);
        return 1;
    }
    double t[RUNS], c[RUNS];
    size_t wet = 0, underwater = 0;
    for (int r = 0; r < RUNS; r++) {
        wet = underwater = 0;
        const double t0 = now_s(), c0 = thread_cpu_s();
        for (size_t k = 0; k < POINTS; k++) {
            trn_world_water_sample s;
            const double p[3] = {xs[k], ys[k], zs[k]};
            if (trn_world_water_sample_at(world, p, NULL, &s)) {
                wet++;
                underwater += s.underwater;
            }
        }
        t[r] = now_s() - t0;
        c[r] = thread_cpu_s() - c0;
    }
    printf("1025^2 lake terrain, %d points, %.1f%% wet columns, %.1f%% underwater\n", POINTS,
           100.0 * (double)wet / POINTS, 100.0 * (double)underwater / POINTS);
    report("C trn_world_water_sample_at", c, t);

    /* The same points through Lua (the GC collects between runs, as a game's frame would). */
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    trn_lua_preload(L);
    if (trn_lua_load_payload(L, path, "bench") != LUA_OK) {
        fprintf(stderr, "lua: %s\n", lua_tostring(L, -1));
        return 1;
    }
    if (luaL_loadstring(L, lua_loops) != LUA_OK) return 1;
    double *coords[3] = {xs, ys, zs};
    for (int axis = 0; axis < 3; axis++) {
        lua_createtable(L, POINTS, 0);
        for (size_t k = 0; k < POINTS; k++) {
            lua_pushnumber(L, coords[axis][k]);
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
    }
    lua_pushinteger(L, POINTS);
    if (lua_pcall(L, 4, 1, 0) != LUA_OK) {
        fprintf(stderr, "lua: %s\n", lua_tostring(L, -1));
        return 1;
    }
    static const char *const names[] = {"reused", "fresh", "tracker"};
    static const char *const labels[] = {
        "Lua Water.sample(p), one table reused",
        "Lua Water.sample({x, y, z}), a table per call",
        "Lua tracker:update(p)",
    };
    for (int v = 0; v < 3; v++) {
        lua_Integer got = 0;
        for (int r = 0; r < RUNS; r++) {
            lua_gc(L, LUA_GCCOLLECT);
            lua_getfield(L, -1, names[v]);
            const double t0 = now_s(), c0 = thread_cpu_s();
            if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
                fprintf(stderr, "lua: %s\n", lua_tostring(L, -1));
                return 1;
            }
            t[r] = now_s() - t0;
            c[r] = thread_cpu_s() - c0;
            got = lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
        if (v == 0 && (size_t)got != wet) fprintf(stderr, "Lua saw %lld wet, C %zu\n", got, wet);
        report(labels[v], c, t);
    }
    lua_close(L);
    loadavg(load1, sizeof load1);
    printf("load average before: %s; after: %s\n", load0, load1);

    trn_world_free(world);
    trn_payload_free(payload);
    trn_recipe_dispose(&recipe);
    trn_generated_dispose(&gen);
    trn_water_body_dispose(&lake);
    free(xs);
    free(ys);
    free(zs);
    remove(path);
    return 0;
}

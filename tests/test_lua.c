/* Lua binding tests: Vec3 rules, water samples, trackers, placements, payloads, terrane lua. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "terrane/cook.h"
#include "terrane/generate.h"
#include "terrane_lua.h"
#include "test.h"

static char tmp[512];
static char twin_path[700];
static char *out_text, *err_text;

static void reset_output(void)
{
    free(out_text);
    free(err_text);
    out_text = err_text = NULL;
}

#define cli(fmt, ...) (reset_output(), trn_test_run_clif(fmt, &out_text, &err_text, __VA_ARGS__))

/* 64 x 64 cells over 64 m: ground at 10 m with two square bowls at 0 m, west (x 8..28) holding
 * lake "west" at 5 m with a 0.5 m/s current along +x, east (x 36..56) holding still lake "east"
 * at 6 m; z 16..48 for both. A few stones for instances(). */
static const char twin_recipe[] =
    "{\"size\": [64, 64], \"resolution\": [64, 64], \"seed\": 3, \"sea_level\": -100,\n"
    " \"default_landform\": \"flat\", \"landforms\": {\"flat\": {\"height_variation\": 0}},\n"
    " \"default_biome\": \"meadow\", \"biomes\": {\"meadow\": {\"color\": [0.4, 0.6, 0.3, 1], "
    "\"material\": \"asset://materials/meadow\", \"texture_scale\": 4}},\n"
    " \"palette\": {\"format_version\": 3, \"name\": \"Stones\", \"placements\": {\"stone\": "
    "{\"model\": \"asset://models/stone\", \"collision\": \"none\", \"category\": \"rock\", "
    "\"density\": 0.02}}},\n"
    " \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
    "  {\"id\": \"rim\", \"type\": \"flat_terrain\", \"params\": {\"height\": 10}},\n"
    "  {\"id\": \"floor\", \"type\": \"flat_terrain\", \"params\": {\"height\": 0}},\n"
    "  {\"id\": \"sqa\", \"type\": \"polygon_mask\", \"params\": {\"points\": [[8, 16], [28, 16], "
    "[28, 48], [8, 48]], \"falloff\": 0}, \"inputs\": {\"field\": {\"node\": \"rim\"}}},\n"
    "  {\"id\": \"sqb\", \"type\": \"polygon_mask\", \"params\": {\"points\": [[36, 16], [56, 16], "
    "[56, 48], [36, 48]], \"falloff\": 0}, \"inputs\": {\"field\": {\"node\": \"rim\"}}},\n"
    "  {\"id\": \"bowla\", \"type\": \"height_blend\", \"params\": {\"amount\": 1}, \"inputs\": "
    "{\"a\": {\"node\": \"rim\"}, \"b\": {\"node\": \"floor\"}, \"mask\": {\"node\": \"sqa\"}}},\n"
    "  {\"id\": \"bowls\", \"type\": \"height_blend\", \"params\": {\"amount\": 1}, \"inputs\": "
    "{\"a\": {\"node\": \"bowla\"}, \"b\": {\"node\": \"floor\"}, \"mask\": {\"node\": "
    "\"sqb\"}}},\n"
    "  {\"id\": \"west\", \"type\": \"water_body\", \"params\": {\"level\": 5, \"center\": [18, "
    "32], \"radius\": 100, \"flow_speed\": 0.5}, \"inputs\": {\"field\": {\"node\": "
    "\"bowls\"}}},\n"
    "  {\"id\": \"east\", \"type\": \"water_body\", \"params\": {\"level\": 6, \"center\": [46, "
    "32], \"radius\": 100}, \"inputs\": {\"field\": {\"node\": \"west\", \"pin\": \"field\"}, "
    "\"water\": {\"node\": \"west\", \"pin\": \"water\"}}},\n"
    "  {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"east\", \"pin\": \"field\"}, \"water\": {\"node\": \"east\", \"pin\": \"water\"}}}]}}\n";

/* Cook the twin recipe into path through the library (generate with the palette and roles). */
static bool cook_twin(const char *path)
{
    trn_recipe recipe;
    trn_palette palette;
    trn_generated gen;
    memset(&palette, 0, sizeof palette);
    memset(&gen, 0, sizeof gen);
    trn_error e;
    if (trn_recipe_parse(twin_recipe, strlen(twin_recipe), "twin.json", &recipe, NULL, &e)) {
        fprintf(stderr, "recipe: %s\n", e.message);
        return false;
    }
    bool ok = trn_palette_parse(recipe.palette_json, strlen(recipe.palette_json), "twin.json",
                                &palette, &e) == TRN_OK;
    trn_generate_options go;
    memset(&go, 0, sizeof go);
    go.threads = 1;
    go.quality = TRN_EROSION_FINAL;
    go.palette = &palette;
    go.roles = true;
    ok = ok && trn_recipe_generate(&recipe, &go, &gen, NULL, NULL, &e) == TRN_OK;
    trn_cook_input ci = {&gen, &recipe, "twin", &palette, &gen.instances, gen.roles, NULL, NULL, 0};
    ok = ok && trn_cook_write(&ci, path, &e) == TRN_OK;
    if (!ok) fprintf(stderr, "cook: %s\n", e.message);
    trn_generated_dispose(&gen);
    trn_palette_dispose(&palette);
    trn_recipe_dispose(&recipe);
    return ok;
}

/* Helpers every state gets: V (a Vec3 as text, -0 and rounding noise folded), S (a sample),
 * E (events), ERR (the message of a failing call without its position). */
static const char prelude[] =
    "T = require('terrane'); W = require('terrane.water')\n"
    "local function r(x) x = math.floor(x * 1e6 + 0.5) / 1e6; return x + 0.0 end\n"
    "function V(v) if v == nil then return 'nil' end\n"
    "  return string.format('%g,%g,%g', r(v[1]), r(v[2]), r(v[3])) end\n"
    "function S(s) if s == nil then return 'nil' end\n"
    "  return string.format('%s/%s/%s d=%g u=%s s=%s n=%s up=%s f=%s', s.terrain_id, s.body_id,\n"
    "    s.kind, r(s.depth), tostring(s.underwater), V(s.surface), V(s.normal), V(s.column_up),\n"
    "    V(s.flow_velocity)) end\n"
    "function E(events) local t = {}\n"
    "  for _, e in ipairs(events) do t[#t + 1] = e.phase .. ':' .. e.sample.body_id end\n"
    "  return '[' .. table.concat(t, ' ') .. ']' end\n"
    "function ERR(f, ...) local ok, m = pcall(f, ...)\n"
    "  if ok then return 'no error' end return (tostring(m):gsub('^[^:]*:%d+: ', '')) end\n";

/* A fresh state with the libraries, the preloaded modules, the prelude and the twin payload
 * placed in the default world as "twin" (unless payload is false). */
static lua_State *new_state(bool payload)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    trn_lua_preload(L);
    lua_pushstring(L, twin_path);
    lua_setglobal(L, "TWIN");
    if (payload && trn_lua_load_payload(L, twin_path, "twin") != LUA_OK) {
        fprintf(stderr, "load: %s\n", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    if (luaL_dostring(L, prelude) != LUA_OK) {
        fprintf(stderr, "prelude: %s\n", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    return L;
}

/* Run code (a chunk returning a string) and compare its result with expected exactly. */
static void expect(lua_State *L, const char *code, const char *expected, int line)
{
    trn_test_checks++;
    const char *got;
    if (luaL_dostring(L, code) != LUA_OK)
        got = lua_tostring(L, -1);
    else
        got = lua_tostring(L, -1);
    if (!got || strcmp(got, expected) != 0) {
        trn_test_failures++;
        fprintf(stderr, "%s:%d: lua\n  %s\ngave\n  %s\nexpected\n  %s\n", __FILE__, line, code,
                got ? got : "(not a string)", expected);
    }
    lua_settop(L, 0);
}

#define EXPECT(L, code, expected) expect(L, code, expected, __LINE__)

#define VEC3_ERR                                                                                   \
    "bad argument #1 to 'sample' (Vec3 expected: a table of exactly three finite "                 \
    "numbers, got "

static void test_vec3_rules(void)
{
    lua_State *L = new_state(true);
    /* Accepted: integers and floats, exactly three. */
    EXPECT(L, "return S(W.sample({18, 2, 32})) == S(W.sample({18.0, 2.0, 3.2e1})) and 'same'",
           "same");
    EXPECT(L, "return ERR(W.sample, {1, 2})", VEC3_ERR "a table of 2 elements)");
    EXPECT(L, "return ERR(W.sample, {1})", VEC3_ERR "a table of 1 element)");
    EXPECT(L, "return ERR(W.sample, {1, 2, 3, 4})", VEC3_ERR "a table of 4 elements)");
    EXPECT(L, "return ERR(W.sample, {})", VEC3_ERR "an empty table)");
    EXPECT(L, "return ERR(W.sample, {x = 1, y = 2, z = 3})", VEC3_ERR "a table with key 'x')");
    EXPECT(L, "return ERR(W.sample, {1, 2, 3, n = 3})", VEC3_ERR "a table with key 'n')");
    EXPECT(L, "return ERR(W.sample, {1, nil, 3})", VEC3_ERR "a table with a hole at element 2)");
    EXPECT(L, "return ERR(W.sample, {[2] = 1, [3] = 2, [4] = 3})",
           VEC3_ERR "a table with a hole at element 1)");
    EXPECT(L, "return ERR(W.sample, {[0] = 1, 2, 3})", VEC3_ERR "a table with key 0)");
    EXPECT(L, "return ERR(W.sample, {1, 2, 3, [1.5] = 0})", VEC3_ERR "a table with key 1.5)");
    EXPECT(L, "return ERR(W.sample, {1, 2, 3, [true] = 0})",
           VEC3_ERR "a table with a boolean key)");
    EXPECT(L, "return ERR(W.sample, {1, 0/0, 3})", VEC3_ERR "a table whose element 2 is nan)");
    EXPECT(L, "return ERR(W.sample, {math.huge, 2, 3})",
           VEC3_ERR "a table whose element 1 is inf)");
    EXPECT(L, "return ERR(W.sample, {1, 2, -math.huge})",
           VEC3_ERR "a table whose element 3 is -inf)");
    EXPECT(L, "return ERR(W.sample, {1, '2', 3})", VEC3_ERR "a table whose element 2 is a string)");
    EXPECT(L, "return ERR(W.sample, {1, 2, true})",
           VEC3_ERR "a table whose element 3 is a boolean)");
    EXPECT(L, "return ERR(W.sample, {1, 2, {}})", VEC3_ERR "a table whose element 3 is a table)");
    EXPECT(L, "return ERR(W.sample, '1,2,3')", VEC3_ERR "string)");
    EXPECT(L, "return ERR(W.sample, 5)", VEC3_ERR "number)");
    EXPECT(L, "return ERR(W.sample, nil)", VEC3_ERR "nil)");
    EXPECT(L, "return ERR(W.sample)", VEC3_ERR "no value)");
    /* A metatable cannot make a table a vector: access is raw. */
    EXPECT(L, "return ERR(W.sample, setmetatable({}, {__index = function(_, k) return k end}))",
           VEC3_ERR "an empty table)");
    EXPECT(L, "return ERR(W.sample, {1, 2, 3}, 5)",
           "bad argument #2 to 'sample' (terrain id (string or nil) expected, got number)");
    EXPECT(L, "return ERR(W.sample, {1, 2, 3}, 'a\\0b')",
           "bad argument #2 to 'sample' (terrain id (string or nil) expected, got a string with a "
           "zero byte)");
    EXPECT(L, "return ERR(W.tracker, 5)",
           "bad argument #1 to 'tracker' (terrain id (string or nil) expected, got number)");
    /* The same rule on every position argument, counted from the method's first argument. */
    EXPECT(L, "local t = W.tracker(); return ERR(t.update, t, {1, 2})",
           "bad argument #1 to 'update' (Vec3 expected: a table of exactly three finite numbers, "
           "got a table of 2 elements)");
    EXPECT(L, "local w = T.default_world(); return ERR(w.ground, w, {x = 1})",
           "bad argument #1 to 'ground' (Vec3 expected: a table of exactly three finite numbers, "
           "got a table with key 'x')");
    EXPECT(L, "local w = T.default_world(); return ERR(w.sample, w, {1, 2, 3, 4})",
           VEC3_ERR "a table of 4 elements)");
    /* The caller's table is left as it was. */
    EXPECT(L, "local v = {18, 2, 32}; W.sample(v); return V(v) .. ' ' .. #v", "18,2,32 3");
    lua_close(L);
}

static void test_samples(void)
{
    lua_State *L = new_state(true);
    EXPECT(L, "return S(W.sample({2, 12, 2}))", "nil");   /* dry rim */
    EXPECT(L, "return S(W.sample({32, 5, 32}))", "nil");  /* the ridge between lakes */
    EXPECT(L, "return S(W.sample({100, 2, 32}))", "nil"); /* off the terrain */
    EXPECT(L, "return S(W.sample({18, 2, 32}))",
           "twin/west/lake d=5 u=true s=18,5,32 n=0,1,0 up=0,1,0 f=0.5,0,0");
    EXPECT(L, "return S(W.sample({46, 0.5, 20}))",
           "twin/east/lake d=6 u=true s=46,6,20 n=0,1,0 up=0,1,0 f=0,0,0");
    /* A wet column answers above the surface and below the bed, not underwater. */
    EXPECT(L, "return tostring(W.sample({18, 7, 32}).underwater)", "false");
    EXPECT(L, "return tostring(W.sample({18, 5, 32}).underwater)", "false"); /* on the surface */
    EXPECT(L, "return tostring(W.sample({18, 4.999, 32}).underwater)", "true");
    EXPECT(L, "return tostring(W.sample({18, 0, 32}).underwater)", "true"); /* on the bed */
    EXPECT(L, "return tostring(W.sample({18, -0.001, 32}).underwater)", "false");
    /* The terrain filter. */
    EXPECT(L, "return S(W.sample({18, 2, 32}, 'twin')) == S(W.sample({18, 2, 32})) and 'same'",
           "same");
    EXPECT(L, "return S(W.sample({18, 2, 32}, 'nope'))", "nil");
    EXPECT(L, "return S(W.sample({18, 2, 32}, nil)) ~= 'nil' and 'wet'", "wet");
    /* Disabled placements never answer; enabled again they do. */
    EXPECT(L,
           "local w = T.default_world(); w:set_enabled('twin', false)\n"
           "local a = S(W.sample({18, 2, 32})); w:set_enabled('twin', true)\n"
           "return a .. ' ' .. W.sample({18, 2, 32}).body_id",
           "nil west");
    EXPECT(L, "local w = T.default_world(); return ERR(w.set_enabled, w, 'twin', 1)",
           "bad argument #2 to 'set_enabled' (boolean expected, got number)");
    /* Ground. */
    EXPECT(L,
           "local g = T.default_world():ground({18, 40, 32})\n"
           "return g.terrain_id .. ' ' .. V(g.point) .. ' ' .. V(g.normal) .. ' ' .. g.biome .. "
           "' ' .. g.role",
           "twin 18,0,32 0,1,0 meadow underwater");
    EXPECT(L,
           "local g = T.default_world():ground({18, 40, 32}); return g.material .. ' ' .. "
           "g.texture_scale",
           "asset://materials/meadow 4.0");
    EXPECT(L, "return tostring(T.default_world():ground({-5, 0, 0}))", "nil");
    /* surface_blending: a placement's own, true until set. */
    EXPECT(L,
           "local w = T.default_world(); local a = w:ground({18, 40, 32}).surface_blending\n"
           "w:set_surface_blending('twin', false); local b = w:ground({18, 40, 32}).surface_blending\n"
           "w:set_surface_blending('twin', true)\n"
           "return tostring(a) .. ' ' .. tostring(b) .. ' ' .. "
           "ERR(w.set_surface_blending, w, 'twin', 1) .. ' | ' .. "
           "ERR(w.set_surface_blending, w, 'nope', true)",
           "true false bad argument #2 to 'set_surface_blending' (boolean expected, got number) | "
           "no placement 'nope' in the world");
    /* bind: another world answers; nil goes back to the default. */
    EXPECT(L,
           "local other = T.world(); local before = W.bind(other)\n"
           "local a = S(W.sample({18, 2, 32})); local was = W.bind(nil)\n"
           "return a .. ' ' .. tostring(before == T.default_world()) .. ' ' .. tostring(was == "
           "other) .. ' ' .. W.sample({18, 2, 32}).body_id .. ' ' .. tostring(W.world() == "
           "T.default_world())",
           "nil true true west true");
    EXPECT(L, "return ERR(W.bind, {})",
           "bad argument #1 to 'bind' (terrane world expected, got table)");
    lua_close(L);
}

static void test_tracker(void)
{
    lua_State *L = new_state(true);
    /* Dry, enter west, stay, west -> east in one step, stay, out, out again. */
    EXPECT(L,
           "local t = W.tracker(); local out = {}\n"
           "for _, p in ipairs({{2, 12, 2}, {18, 2, 32}, {20, 3, 30}, {46, 2, 32}, {40, 1, 20},\n"
           "                    {2, 12, 2}, {2, 12, 2}}) do\n"
           "  local ev = t:update(p); local c = t:current()\n"
           "  out[#out + 1] = E(ev) .. (c and c.body_id or '-')\n"
           "end\n"
           "return table.concat(out, ' ')",
           "[]- [enter:west]west [stay:west]west [exit:west enter:east]east [stay:east]east "
           "[exit:east]- []-");
    /* Events carry whole samples: the exit keeps the last immersed one. */
    EXPECT(L,
           "local t = W.tracker(); t:update({18, 2, 32}); local stay = t:update({18, 4, 32})\n"
           "local exit = t:update({18, 6, 32})\n"
           "return stay[1].phase .. ' ' .. S(stay[1].sample) .. ' | ' .. exit[1].phase .. ' ' .. "
           "V(exit[1].sample.surface) .. ' ' .. #exit",
           "stay twin/west/lake d=5 u=true s=18,5,32 n=0,1,0 up=0,1,0 f=0.5,0,0 | exit 18,5,32 "
           "1");
    /* Above the surface of a wet column is not immersed: no enter. */
    EXPECT(L, "local t = W.tracker(); return E(t:update({18, 7, 32})) .. tostring(t:current())",
           "[]nil");
    /* reset forgets without an event; the next update inside enters again. */
    EXPECT(L,
           "local t = W.tracker(); t:update({18, 2, 32}); t:reset()\n"
           "local c = tostring(t:current()); return c .. ' ' .. E(t:update({18, 2, 32}))",
           "nil [enter:west]");
    /* The filter: a tracker of another terrain id sees nothing. */
    EXPECT(L, "local t = W.tracker('other'); return E(t:update({18, 2, 32}))", "[]");
    EXPECT(L, "local t = W.tracker('twin'); return E(t:update({18, 2, 32}))", "[enter:west]");
    /* Disabling the placement is seen on the next update: exit. */
    EXPECT(L,
           "local w = T.default_world(); local t = W.tracker(); t:update({18, 2, 32})\n"
           "w:set_enabled('twin', false); local a = E(t:update({18, 2, 32}))\n"
           "w:set_enabled('twin', true); return a .. ' ' .. E(t:update({18, 2, 32}))",
           "[exit:west] [enter:west]");
    /* A tracker keeps the world it was made on, whatever is bound later. */
    EXPECT(L,
           "local t = W.tracker(); W.bind(T.world()); local a = E(t:update({18, 2, 32}))\n"
           "local t2 = W.tracker(); local b = E(t2:update({18, 2, 32})); W.bind(nil)\n"
           "return a .. b",
           "[enter:west][]");
    /* Two placements of one payload: the same body id in another placement is another body. */
    EXPECT(L,
           "local w = T.world(); W.bind(w); local p = T.open(TWIN)\n"
           "w:place('a', p); w:place('b', p, {position = {100, 0, 0}})\n"
           "local t = W.tracker(); local a = E(t:update({18, 2, 32}))\n"
           "local b = E(t:update({118, 2, 32})); local c = t:current().terrain_id; W.bind(nil)\n"
           "return a .. b .. c",
           "[enter:west][exit:west enter:west]b");
    lua_close(L);
}

static void test_placements(void)
{
    lua_State *L = new_state(false);
    EXPECT(L, "P = T.open(TWIN); Wd = T.world(); W.bind(Wd); return tostring(Wd:count())", "0");
    /* Translated: the local point (18, 2, 32) is at (118, 12, -18). */
    EXPECT(L,
           "Wd:place('moved', P, {position = {100, 10, -50}})\n"
           "return S(W.sample({118, 12, -18})) .. ' ' .. S(W.sample({18, 2, 32}))",
           "moved/west/lake d=5 u=true s=118,15,-18 n=0,1,0 up=0,1,0 f=0.5,0,0 nil");
    /* Flipped Y: local up is world -Y, so the column_up and the surface follow. */
    EXPECT(L,
           "Wd:set_transform('moved', {scale = {1, -1, 1}})\n"
           "return S(W.sample({18, -2, 32})) .. ' ' .. tostring(W.sample({18, 2, 32}).underwater)",
           "moved/west/lake d=5 u=true s=18,-5,32 n=0,-1,0 up=0,-1,0 f=0.5,0,0 false");
    EXPECT(L, "return T.default_world():count() .. ' ' .. Wd:count()", "0 1");
    /* Uniform scale 2: depth and current in world units. */
    EXPECT(L, "Wd:set_transform('moved', {scale = 2}); return S(W.sample({36, 4, 64}))",
           "moved/west/lake d=10 u=true s=36,10,64 n=0,1,0 up=0,1,0 f=1,0,0");
    /* Yaw 90 degrees about +Y: local +x goes to world -z. */
    EXPECT(L, "Wd:set_transform('moved', {yaw = 90}); return S(W.sample({32, 2, -18}))",
           "moved/west/lake d=5 u=true s=32,5,-18 n=0,1,0 up=0,1,0 f=0,0,-0.5");
    /* The same as a quaternion, and roll 180 about +Z (a flip through rotation). */
    EXPECT(L,
           "local h = math.sqrt(0.5); Wd:set_transform('moved', {rotation = {0, h, 0, h}})\n"
           "return S(W.sample({32, 2, -18}))",
           "moved/west/lake d=5 u=true s=32,5,-18 n=0,1,0 up=0,1,0 f=0,0,-0.5");
    EXPECT(L, "Wd:set_transform('moved', {roll = 180}); return S(W.sample({-18, -2, 32}))",
           "moved/west/lake d=5 u=true s=-18,-5,32 n=0,-1,0 up=0,-1,0 f=-0.5,0,0");
    EXPECT(L, "Wd:set_transform('moved', {pitch = 90}); return V(W.sample({18, -32, 2}).column_up)",
           "0,0,1");
    /* Option errors. */
    EXPECT(L, "return ERR(Wd.set_transform, Wd, 'moved', {positon = {1, 2, 3}})",
           "bad argument #2 to 'set_transform' (unknown option 'positon' (expected position, "
           "rotation or yaw/pitch/roll, scale))");
    EXPECT(L, "return ERR(Wd.set_transform, Wd, 'moved', {enabled = true})",
           "bad argument #2 to 'set_transform' (unknown option 'enabled' (expected position, "
           "rotation or yaw/pitch/roll, scale))");
    EXPECT(L, "return ERR(Wd.place, Wd, 'x', P, {position = {1, 2}})",
           "bad argument #3 to 'place' (position: Vec3 expected: a table of exactly three finite "
           "numbers, got a table of 2 elements)");
    EXPECT(L, "return ERR(Wd.place, Wd, 'x', P, {rotation = {0, 0, 1}})",
           "bad argument #3 to 'place' (rotation: quaternion expected: a table of exactly four "
           "finite numbers {x, y, z, w}, got a table of 3 elements)");
    EXPECT(L, "return ERR(Wd.place, Wd, 'x', P, {rotation = {0, 0, 0, 1}, yaw = 5})",
           "bad argument #3 to 'place' (give rotation or yaw/pitch/roll, not both)");
    EXPECT(L, "return ERR(Wd.place, Wd, 'x', P, {yaw = '5'})",
           "bad argument #3 to 'place' (yaw: a finite number of degrees expected, got string)");
    EXPECT(L, "return ERR(Wd.place, Wd, 'x', P, {enabled = 1})",
           "bad argument #3 to 'place' (enabled: boolean expected, got number)");
    EXPECT(L, "return ERR(Wd.place, Wd, 'x', P, {scale = {1, 0/0, 1}})",
           "bad argument #3 to 'place' (scale: a number or a Vec3 (a table of exactly three finite "
           "numbers) expected, got a table whose element 2 is nan)");
    EXPECT(L, "return ERR(Wd.place, Wd, 'x', P, {scale = 0})",
           "a placement needs a finite translation and finite, nonzero scales (axis 0: scale 0)");
    EXPECT(L, "return ERR(Wd.place, Wd, 'x', P, {rotation = {0, 0, 0, 0}})",
           "a placement's rotation must be a finite, nonzero quaternion");
    EXPECT(L, "return ERR(Wd.place, Wd, 'moved', P)", "the world already has a placement 'moved'");
    EXPECT(L, "return ERR(Wd.place, Wd, 'x', {})",
           "bad argument #2 to 'place' (terrane payload expected, got table)");
    EXPECT(L, "return ERR(Wd.set_transform, Wd, 'nope', {})", "no placement 'nope' in the world");
    EXPECT(L, "return ERR(Wd.remove, Wd, 'nope')", "no placement 'nope' in the world");
    /* Failed places left the world as it was; the old placement still answers. */
    EXPECT(L,
           "Wd:set_transform('moved'); return Wd:count() .. ' ' .. W.sample({18, 2, 32}).body_id",
           "1 west");
    /* Placed disabled. */
    EXPECT(L,
           "Wd:place('off', P, {position = {0, 100, 0}, enabled = false})\n"
           "local a = S(W.sample({18, 102, 32}, 'off')); Wd:set_enabled('off', true)\n"
           "return a .. ' ' .. W.sample({18, 102, 32}, 'off').terrain_id",
           "nil off");
    /* A placed payload cannot be closed; removed from every world it can. */
    EXPECT(L, "return ERR(P.close, P)",
           "close: the payload still has 2 placements; remove them first");
    EXPECT(L,
           "Wd:remove('off'); Wd:remove('moved'); P:close()\n"
           "return Wd:count() .. ' ' .. tostring(P) .. ' ' .. ERR(P.height, P, 1, 1)",
           "0 terrane payload (closed) height: the payload is closed");
    EXPECT(L, "return ERR(Wd.place, Wd, 'again', P)", "place: the payload is closed");
    lua_close(L);
}

static void test_payload(void)
{
    lua_State *L = new_state(false);
    EXPECT(L, "P = T.open(TWIN); return tostring(P)", "terrane payload 'twin' (64 x 64 cells)");
    EXPECT(L,
           "return P:height(18, 32) .. ' ' .. P:height(2, 2) .. ' ' .. tostring(P:height(-1, 0))",
           "0.0 10.0 nil");
    EXPECT(L, "return V(P:normal(18, 32)) .. ' ' .. V(P:normal(65, 0))", "0,1,0 nil");
    EXPECT(L, "local n, i = P:biome(2, 2); return n .. ' ' .. i .. ' ' .. tostring(P:biome(-3, 0))",
           "meadow 0 nil");
    EXPECT(L, "return P:role(18, 32) .. ' ' .. tostring(P:role(99, 0))", "underwater nil");
    EXPECT(L, "return #P:ledgers()", "0"); /* no erosion in this recipe */
    EXPECT(L,
           "local b = P:biome_info(0); return b.name .. ' ' .. b.material .. ' ' .. "
           "b.texture_scale .. ' ' .. b.color[1] .. ' ' .. tostring(P:biome_info(1)) .. ' ' .. "
           "tostring(P:biome_info(-1))",
           "meadow asset://materials/meadow 4.0 0.40000000596046 nil nil");
    EXPECT(L, "return ERR(P.height, P, '1', 2)",
           "bad argument #1 to 'height' (number expected, got string)");
    EXPECT(L, "return ERR(P.normal, P, 1)",
           "bad argument #2 to 'normal' (number expected, got no value)");
    EXPECT(L, "return ERR(P.height, {}, 1, 2)",
           "bad argument #1 to 'height' (terrane payload expected, got table)");
    EXPECT(L,
           "local i = P:info()\n"
           "local ids = {}; for _, s in ipairs(i.sections) do\n"
           "  if s.id == 'HGHT' or s.id == 'WATR' then\n"
           "    ids[#ids + 1] = s.id .. '=' .. s.name .. ':' .. tostring(s.required) .. ':' ..\n"
           "      tostring(s.raw_size > 0 and s.compressed_size > 0 and s.offset > 0)\n"
           "  end end\n"
           "return string.format('%s %d %d %g %g %g %d %s %s %s %s/%s/%g %s/%s/%g', i.terrain_id,\n"
           "  i.cells_x, i.cells_z, i.size_x, i.size_z, i.sea_level, i.format_version,\n"
           "  tostring(i.generator_version > 0), table.concat(ids, ','), i.biomes[1],\n"
           "  i.water[1].id, i.water[1].kind, i.water[1].level, i.water[2].id, i.water[2].kind,\n"
           "  i.water[2].level)",
           "twin 64 64 64 64 -100 1 true HGHT=heights:true:true,WATR=water:false:true meadow "
           "west/lake/5 "
           "east/lake/6");
    EXPECT(L,
           "local list = P:instances(); local s = list[1]\n"
           "local ok = #list > 0\n"
           "for _, it in ipairs(list) do\n"
           "  ok = ok and it.rule == 'stone' and it.model == 'asset://models/stone' and\n"
           "       it.prefab == nil and it.collision == 'none' and it.category == 'rock' and\n"
           "       it.id:match('^stone/%-?%d+_%-?%d+$') and\n"
           "       it.position[2] == P:height(it.position[1], it.position[3])\n"
           "end\n"
           "return tostring(ok) .. ' ' .. type(s.yaw) .. ' ' .. type(s.scale)",
           "true number number");
    /* A placement's Terrain3D.scatter_exclusions: its kept instances, one-based. */
    EXPECT(L,
           "local w = T.world(); w:place('x', P); w:place('y', P)\n"
           "local list = P:instances()\n"
           "w:set_scatter_exclusions('x', {list[1].id, 'nothing/1_1'})\n"
           "local kx, ky = w:instance_indices('x'), w:instance_indices('y')\n"
           "local ok = #kx == #list - 1 and kx[1] == 2 and #ky == #list\n"
           "w:set_scatter_exclusions('x', {})\n"
           "return tostring(ok and #w:instance_indices('x') == #list)",
           "true");
    EXPECT(
        L,
        "local w = T.world(); w:place('x', P); return ERR(w.set_scatter_exclusions, w, 'x', {1})",
        "bad argument #2 to 'set_scatter_exclusions' (key 1 is number, not a string)");
    EXPECT(
        L,
        "local w = T.world(); w:place('x', P); return ERR(w.set_scatter_exclusions, w, 'x', 'a')",
        "bad argument #2 to 'set_scatter_exclusions' (table of keys expected, got string)");
    EXPECT(L,
           "local w = T.world(); w:place('x', P)\n"
           "return ERR(w.set_scatter_exclusions, w, 'x', {'a/1_1', 'a/1_1'})",
           "scatter_exclusions: the key 'a/1_1' is listed twice");
    /* Errors name the file: missing, damaged. */
    EXPECT(L,
           "return ERR(T.open, TWIN .. '.missing'):find(TWIN .. '.missing', 1, true) and 'named'",
           "named");
    EXPECT(L, "return ERR(T.open, 5)",
           "bad argument #1 to 'open' (path (string) expected, got number)");
    /* to-be-closed variables free the payload at the end of the block. */
    EXPECT(L,
           "local keep\n"
           "do local p <close> = T.open(TWIN); keep = p; assert(p:height(1, 1)) end\n"
           "return tostring(keep)",
           "terrane payload (closed)");
    /* ...but a placed one stays open for its world. */
    EXPECT(L,
           "local w = T.world(); local keep\n"
           "do local p <close> = T.open(TWIN); keep = p; w:place('t', p) end\n"
           "return w:sample({18, 2, 32}).body_id .. ' ' .. tostring(keep)",
           "west terrane payload 'twin' (64 x 64 cells)");
    EXPECT(L, "return T.version", TRN_VERSION_STRING);
    lua_close(L);

    /* A truncated payload: the message names the file and the offset. */
    char bad[800];
    snprintf(bad, sizeof bad, "%s/short.terrain.bin", tmp);
    size_t size = 0;
    uint8_t *bytes = trn_test_read_file(twin_path, &size);
    CHECK(bytes && size > 200);
    if (bytes) CHECK(trn_test_write_file(bad, bytes, size / 2));
    free(bytes);
    L = new_state(false);
    CHECK(trn_lua_load_payload(L, bad, "short") != LUA_OK);
    CHECK_CONTAINS(lua_tostring(L, -1), bad);
    CHECK_CONTAINS(lua_tostring(L, -1), "offset");
    lua_close(L);
    /* A flipped byte in the last section: the message names the file and the section. */
    snprintf(bad, sizeof bad, "%s/flipped.terrain.bin", tmp);
    bytes = trn_test_read_file(twin_path, &size);
    if (bytes) {
        bytes[size - 2] ^= 0x40;
        CHECK(trn_test_write_file(bad, bytes, size));
    }
    free(bytes);
    L = new_state(false);
    CHECK(trn_lua_load_payload(L, bad, "flipped") != LUA_OK);
    CHECK_CONTAINS(lua_tostring(L, -1), bad);
    CHECK_CONTAINS(lua_tostring(L, -1), "section '");
    lua_close(L);
    /* The same payload twice under one id: the second is refused. */
    L = new_state(true);
    CHECK(trn_lua_load_payload(L, twin_path, "twin") != LUA_OK);
    CHECK_CONTAINS(lua_tostring(L, -1), "the world already has a placement 'twin'");
    lua_settop(L, 0);
    EXPECT(L, "return T.default_world():count() .. ''", "1");
    lua_close(L);
}

static const char *write_script(const char *name, const char *text)
{
    static char path[800];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    CHECK(trn_test_write_file(path, text, strlen(text)));
    return path;
}

static void test_cli(void)
{
    const char *probe = write_script(
        "probe.lua", "local W = require('terrane.water')\n"
                     "print(#arg, arg[0]:match('probe.lua$'), ...)\n"
                     "local s = W.sample({tonumber(arg[1]), tonumber(arg[2]), tonumber(arg[3])})\n"
                     "print(s and s.body_id or 'dry', s and s.depth, s and s.underwater)\n");
    CHECK_EQ_INT(cli("lua %s %s --arg 18 --arg 2 --arg 32", probe, twin_path), 0);
    CHECK(out_text && strcmp(out_text, "3\tprobe.lua\t18\t2\t32\nwest\t5.0\ttrue\n") == 0);
    CHECK_EQ_INT(cli("lua %s %s -- 2 12 -4", probe, twin_path), 0);
    CHECK(out_text && strcmp(out_text, "3\tprobe.lua\t2\t12\t-4\ndry\tnil\tnil\n") == 0);
    /* Without payloads the default world is empty: everything is dry. */
    CHECK_EQ_INT(cli("lua %s --arg=18 --arg 2 --arg 32", probe), 0);
    CHECK(out_text && strcmp(out_text, "3\tprobe.lua\t18\t2\t32\ndry\tnil\tnil\n") == 0);

    /* A script's error: exit 1, the message and the traceback on stderr. */
    const char *bad = write_script("bad.lua", "local W = require('terrane.water')\n"
                                              "local function f() return W.sample({1, 2}) end\n"
                                              "f()\n");
    CHECK_EQ_INT(cli("lua %s %s", bad, twin_path), 1);
    CHECK_CONTAINS(err_text, "terrane lua: error: ");
    CHECK_CONTAINS(err_text, "bad.lua:2: bad argument #1 to 'sample' (Vec3 expected: a table of "
                             "exactly three finite numbers, got a table of 2 elements)");
    CHECK_CONTAINS(err_text, "stack traceback:\n\t");
    CHECK_CONTAINS(err_text, "bad.lua:3: in main chunk");
    const char *raise = write_script("raise.lua", "error({code = 3})\n");
    CHECK_EQ_INT(cli("lua %s", raise), 1);
    CHECK_CONTAINS(err_text, "(error object is a table value)");
    const char *syntax = write_script("syntax.lua", "print(\n");
    CHECK_EQ_INT(cli("lua %s", syntax), 1);
    CHECK_CONTAINS(err_text, "syntax.lua:2:");
    CHECK_EQ_INT(cli("lua %s/none.lua", tmp), 1);
    CHECK_CONTAINS(err_text, "cannot open");

    /* Payloads: missing, damaged, twice under one id. */
    CHECK_EQ_INT(cli("lua %s %s/missing.terrain.bin", probe, tmp), 1);
    CHECK_CONTAINS(err_text, "missing.terrain.bin");
    char short_path[800];
    snprintf(short_path, sizeof short_path, "%s/cut.terrain.bin", tmp);
    size_t size = 0;
    uint8_t *bytes = trn_test_read_file(twin_path, &size);
    if (bytes) CHECK(trn_test_write_file(short_path, bytes, size - 1));
    free(bytes);
    CHECK_EQ_INT(cli("lua %s %s", probe, short_path), 1);
    CHECK_CONTAINS(err_text, "terrane lua: error: ");
    CHECK_CONTAINS(err_text, "cut.terrain.bin");
    CHECK(out_text && out_text[0] == '\0'); /* the script never ran */
    CHECK_EQ_INT(cli("lua %s %s %s", probe, twin_path, twin_path), 1);
    CHECK_CONTAINS(err_text, "the world already has a placement 'twin'");

    /* The terrain id is the file stem. */
    const char *ids =
        write_script("ids.lua", "local w = require('terrane').default_world()\n"
                                "print(w:sample({18, 2, 32}).terrain_id, w:count())\n");
    CHECK_EQ_INT(cli("lua %s %s", ids, twin_path), 0);
    CHECK(out_text && strcmp(out_text, "twin\t1\n") == 0);

    /* Usage. */
    CHECK_EQ_INT(cli("lua%s", ""), 2);
    CHECK_CONTAINS(err_text, "needs a script");
    CHECK_EQ_INT(cli("lua %s --bogus", probe), 2);
    CHECK_CONTAINS(err_text, "unknown option '--bogus'");
    CHECK_EQ_INT(cli("lua %s --arg", probe), 2);
    CHECK_EQ_INT(cli("lua %s --format json", probe), 2);
    CHECK_EQ_INT(cli("lua --help%s", ""), 0);
    CHECK_CONTAINS(out_text, "usage: terrane lua SCRIPT.lua");
    CHECK_EQ_INT(cli("--help%s", ""), 0);
    CHECK_CONTAINS(out_text, "  lua ");
}

static void test_sensor(void)
{
    char sensor[700];
    snprintf(sensor, sizeof sensor, "%s/examples/scripts/water_sensor.lua", TRN_SOURCE_DIR);
    /* Along z = 32 from x = 0 to 64 in 4 steps of 16: dry, west, dry ridge, east, dry edge. */
    CHECK_EQ_INT(cli("lua %s %s --arg 0 --arg 2 --arg 32 --arg 64 --arg 2 --arg 32 --arg 4", sensor,
                     twin_path),
                 0);
    CHECK(out_text &&
          strcmp(out_text,
                 "step 1: water_enter entity=probe terrain=twin body=west kind=lake depth=5.00 "
                 "underwater=true\n"
                 "step 2: water_exit entity=probe terrain=twin body=west kind=lake depth=5.00 "
                 "underwater=true\n"
                 "step 3: water_enter entity=probe terrain=twin body=east kind=lake depth=6.00 "
                 "underwater=true\n"
                 "step 4: water_exit entity=probe terrain=twin body=east kind=lake depth=6.00 "
                 "underwater=true\n") == 0);
    /* Stay events, and offset_y lifting the point out of the water (y 3.5 + 2 is above 5 m in the
     * west lake, below 6 m in the east one). */
    CHECK_EQ_INT(cli("lua %s %s --arg 16 --arg 3.5 --arg 32 --arg 48 --arg 3.5 --arg 32 --arg 4 "
                     "--arg 2",
                     sensor, twin_path),
                 0);
    CHECK(out_text &&
          strcmp(out_text, "step 3: water_enter entity=probe terrain=twin body=east kind=lake "
                           "depth=6.00 underwater=true\n"
                           "step 4: water_stay entity=probe terrain=twin body=east kind=lake "
                           "depth=6.00 underwater=true\n") == 0);
    CHECK_EQ_INT(cli("lua %s %s --arg 16 --arg 2 --arg 32 --arg 48 --arg 2 --arg 32 --arg 4 "
                     "--arg 0 --arg nostay",
                     sensor, twin_path),
                 0);
    CHECK(out_text &&
          strcmp(out_text, "step 0: water_enter entity=probe terrain=twin body=west kind=lake "
                           "depth=5.00 underwater=true\n"
                           "step 2: water_exit entity=probe terrain=twin body=west kind=lake "
                           "depth=5.00 underwater=true\n"
                           "step 3: water_enter entity=probe terrain=twin body=east kind=lake "
                           "depth=6.00 underwater=true\n") == 0);

    /* As a module with a callback: the payload carries entity_id and the water sample; a
     * missing position resets without an event. */
    lua_State *L = new_state(true);
    char code[2048];
    snprintf(code, sizeof code,
             "package.path = '%s/examples/scripts/?.lua;' .. package.path\n"
             "local Sensor = require('water_sensor'); local got = {}\n"
             "local s = Sensor.new('boat', {offset_y = 1, emit_stay = false, on_event =\n"
             "  function(name, p) got[#got + 1] = name .. ':' .. p.entity_id .. ':' .. "
             "p.water.body_id end})\n"
             "s:update(18, 1, 32); s:update(18, 2, 32); local u = tostring(s.underwater)\n"
             "s:update(nil, 2, 32); local r = tostring(s.underwater); s:update(18, 3, 32)\n"
             "s:update(18, 4, 32)\n"
             "return table.concat(got, ' ') .. ' ' .. u .. ' ' .. r",
             TRN_SOURCE_DIR);
    EXPECT(L, code, "water_enter:boat:west water_enter:boat:west water_exit:boat:west true false");
    lua_close(L);
}

/* Every function and method with every kind of wrong argument: a Lua error each time, never a
 * crash (the sanitizers watch), and the objects still work afterwards. */
static void test_bad_input(void)
{
    lua_State *L = new_state(true);
    EXPECT(L,
           "local p = T.open(TWIN); local w = T.world(); local t = W.tracker()\n"
           "local junk = {false, true, 0, -1, 1e308, 0/0, math.huge, '', 'twin', '\\0', {},\n"
           "  {1, 2, 3}, {1, 2, 3, 4}, {x = 1}, print, coroutine.create(print), io.stdout, p, w,\n"
           "  t, setmetatable({}, {__index = error})}\n"
           "local calls = {\n"
           "  {T.open}, {T.world}, {W.sample}, {W.tracker}, {W.bind}, {p.height, p},\n"
           "  {p.normal, p}, {p.biome, p}, {p.role, p}, {p.info}, {p.instances}, {p.close},\n"
           "  {w.place, w}, {w.place, w, 'a'}, {w.place, w, 'b', p}, {w.set_transform, w},\n"
           "  {w.set_transform, w, 'a'}, {w.set_enabled, w}, {w.set_enabled, w, 'a'},\n"
           "  {w.remove, w}, {w.count}, {w.ground, w}, {w.ground, w, {1, 2, 3}}, {w.sample, w},\n"
           "  {w.tracker, w}, {w.tracker}, {t.update, t}, {t.update}, {t.current}, {t.reset}}\n"
           "local failed, ran = 0, 0\n"
           "for _, c in ipairs(calls) do\n"
           "  for _, a in ipairs(junk) do\n"
           "    for k = 1, 4 do local b = ({nil, 1, 'x', {}})[k]\n"
           "      local args = {table.unpack(c, 2)}; args[#args + 1] = a; args[#args + 1] = b\n"
           "      ran = ran + 1\n"
           "      if not pcall(c[1], table.unpack(args, 1, #c + 1)) then failed = failed + 1 end\n"
           "    end\n"
           "  end\n"
           "end\n"
           "W.bind(nil)\n"
           "return tostring(ran > 2000 and failed > 1000) .. ' ' .. W.sample({18, 2, 32}).body_id",
           "true west");
    lua_close(L);
}

/* The loadable module: require finds terrane.so on package.cpath, both modules in one file. */

/* Buoyancy: the submerged share of an upright segment about the body's position lifts it along
 * column_up (|gravity| x mass x density_ratio x share); drag pulls its velocity toward the flow.
 * The west lake: surface 5, bed 0, current 0.5 m/s along +x. */
static void test_buoyancy(void)
{
    lua_State *L = new_state(true);
    EXPECT(L,
           "B = require('terrane.water.buoyancy')\n"
           "boat = B.new('boat', {half_height = 0.5, density_ratio = 1.05})\n"
           "local s = boat:fixed_update(1/60, {position = {18, 5, 32}, mass = 100})\n"
           "return V(s.force) .. ' ' .. s.submerged .. ' ' .. tostring(s.active) .. ' ' .. "
           "s.sample.body_id .. ' ' .. s.immersion",
           "25,515.025,0 0.5 true west 0.0");
    EXPECT(L,
           "local s = boat:fixed_update(1/60, {position = {18, 4.75, 32}, velocity = {0.5, -1, 0},"
           " mass = 100})\nreturn V(s.force) .. ' ' .. s.submerged .. ' ' .. V(s.buoyancy) .. ' ' "
           ".. V(s.drag)",
           "0,847.538,0 0.75 0,772.538,0 0,75,0");
    EXPECT(L,
           "local s = boat:fixed_update(1/60, {position = {18, 2, 32}, mass = 100})\n"
           "return V(s.force) .. ' ' .. s.submerged",
           "50,1030.05,0 1.0");
    /* Above the water, on dry ground, or a body that takes no forces: zero force, the reason. */
    EXPECT(L,
           "local r = {}\n"
           "for _, b in ipairs({{position = {18, 5.5, 32}}, {position = {2, 12, 2}},\n"
           "    {position = {18, 4, 32}, type = 'static'}, {position = {18, 4, 32}, type = "
           "'kinematic'},\n"
           "    {position = {18, 4, 32}, enabled = false}}) do\n"
           "  local s = boat:fixed_update(1/60, b)\n"
           "  r[#r + 1] = s.reason .. '=' .. V(s.force) .. '/' .. tostring(s.active)\n"
           "end\n"
           "r[#r + 1] = boat:fixed_update(1/60, nil).reason\n"
           "return table.concat(r, ' ')",
           "above=0,0,0/false dry=0,0,0/false static=0,0,0/false kinematic=0,0,0/false "
           "disabled=0,0,0/false missing");
    /* The state is one table, reused (copy what must persist); state() returns it. */
    EXPECT(L,
           "local a = boat:fixed_update(1/60, {position = {18, 4, 32}})\n"
           "local b = boat:fixed_update(1/60, {position = {2, 12, 2}})\n"
           "return tostring(rawequal(a, b) and rawequal(a, boat:state())) .. ' ' .. a.reason .. "
           "' ' .. tostring(a.sample) .. ' ' .. a.name .. ' ' .. tostring(boat)",
           "true dry nil boat Buoyancy (boat)");
    /* Gravity's magnitude scales the lift; a terrain id filters the water. */
    EXPECT(L,
           "local g = B.new('g', {gravity = {0, -20, 0}, drag = 0})\n"
           "local n = B.new('n', {terrain_id = 'nope'})\n"
           "return V(g:fixed_update(1, {position = {18, 1, 32}, mass = 2}).force) .. ' ' .. "
           "n:fixed_update(1, {position = {18, 1, 32}}).reason",
           "0,40,0 dry");
    /* Another world, given as an option. */
    EXPECT(L,
           "local w = T.world(); local b = B.new('w', {world = w})\n"
           "return b:fixed_update(1, {position = {18, 1, 32}}).reason",
           "dry");
    EXPECT(L, "return ERR(B.new, 'b', {half_height = 0})",
           "bad argument #2 to 'new' (half_height: a number > 0 expected, got 0)");
    EXPECT(L, "return ERR(B.new, 'b', {densty_ratio = 1})",
           "bad argument #2 to 'new' (unknown option 'densty_ratio')");
    EXPECT(L, "return ERR(B.new, 'b', {gravity = {0, -9.81}})",
           "bad argument #2 to 'new' (gravity: Vec3 expected, got a table of 2 elements)");
    EXPECT(L, "return ERR(B.new, 3)", "bad argument #1 to 'new' (name (string) expected, got number)");
    EXPECT(L, "return ERR(boat.fixed_update, boat, 0, {position = {1, 2, 3}})",
           "bad argument #1 to 'fixed_update' (dt: a finite number > 0 expected)");
    EXPECT(L, "return ERR(boat.fixed_update, boat, 1, {position = {1, 2, 3}, type = 'flying'})",
           "bad argument #2 to 'fixed_update' (body.type: \"dynamic\", \"static\" or "
           "\"kinematic\" expected)");
    EXPECT(L, "return ERR(boat.fixed_update, boat, 1, {position = {1, 2, 3}, mass = 0})",
           "bad argument #2 to 'fixed_update' (body.mass: a number > 0 expected)");
    EXPECT(L, "return ERR(boat.fixed_update, boat, 1, {pos = {1, 2, 3}})",
           "bad argument #2 to 'fixed_update' (unknown option 'pos')");
    lua_close(L);
}

/* Swimming: under water at least min_depth deep and in a current of at most max_flow, the
 * force steers the velocity toward speed along the direction plus the flow. */
static void test_swimming(void)
{
    lua_State *L = new_state(true);
    EXPECT(L,
           "Sw = require('terrane.water.swimming')\n"
           "p = Sw.new('player', {speed = 3, min_depth = 1.5, max_flow = 2.5})\n"
           "local s = p:fixed_update(1/60, {2, 0, 0}, {position = {18, 3, 32}, mass = 70})\n"
           "return tostring(s.swimming) .. ' ' .. V(s.force) .. ' ' .. V(s.target_velocity) .. ' ' "
           ".. s.depth .. ' ' .. s.flow_speed",
           "true 1960,0,0 3.5,0,0 5.0 0.5");
    /* A long step takes the whole difference at once, never more (gain 1 / dt). */
    EXPECT(L,
           "local s = p:fixed_update(0.5, {0, 0, 0}, {position = {18, 3, 32}, velocity = {0, 1, 0},"
           " mass = 70})\nreturn V(s.force) .. ' ' .. V(s.target_velocity)",
           "70,-140,0 0.5,0,0");
    EXPECT(L,
           "local r = {}\n"
           "for _, c in ipairs({{p, {18, 6, 32}}, {Sw.new('d', {min_depth = 6}), {18, 3, 32}},\n"
           "    {Sw.new('c', {max_flow = 0.25}), {18, 3, 32}}, {p, {2, 12, 2}}}) do\n"
           "  local s = c[1]:fixed_update(1/60, {1, 0, 0}, {position = c[2]})\n"
           "  r[#r + 1] = s.reason .. '=' .. tostring(s.swimming) .. '/' .. V(s.force)\n"
           "end\n"
           "r[#r + 1] = p:fixed_update(1/60, {1, 0, 0}, {position = {18, 3, 32}, enabled = "
           "false}).reason\n"
           "return table.concat(r, ' ')",
           "dry=false/0,0,0 shallow=false/0,0,0 current=false/0,0,0 dry=false/0,0,0 disabled");
    EXPECT(L, "return ERR(p.fixed_update, p, 1, {1, 0}, {position = {1, 2, 3}})",
           "bad argument #2 to 'fixed_update' (Vec3 expected: a table of exactly three finite "
           "numbers, got a table of 2 elements)");
    EXPECT(L, "return ERR(Sw.new, 'x', {acceleration = 0})",
           "bad argument #2 to 'new' (acceleration: a number > 0 expected, got 0)");
    EXPECT(L, "return ERR(Sw.new, 'x', {half_height = 1})",
           "bad argument #2 to 'new' (unknown option 'half_height')");
    lua_close(L);
}

/* Environment3D budgets: defaults, checks naming the field, and a payload's render plan. */
static void test_environment(void)
{
    lua_State *L = new_state(true);
    EXPECT(L,
           "local e = T.environment()\n"
           "return e.terrain_lod_cache_mb .. ' ' .. e.terrain_lod_prepare_jobs .. ' ' .. "
           "e.terrain_gpu_cache_mb .. ' ' .. e.terrain_texture_max_size .. ' ' .. "
           "e.terrain_texture_cache_mb",
           "64.0 2 128.0 1024 128.0");
    EXPECT(L, "return T.environment({terrain_texture_max_size = 256}).terrain_texture_max_size",
           "256");
    EXPECT(L, "return ERR(T.environment, {terrain_texture_max_size = 1000})",
           "bad argument #1 to 'environment' (terrain_texture_max_size: expected a power of two "
           "from 64 to 8192, found 1000)");
    EXPECT(L, "return ERR(T.environment, {terrain_gpu_cache_mb = -1})",
           "bad argument #1 to 'environment' (terrain_gpu_cache_mb: expected MiB from 0 to "
           "1048576 (0 turns it off), found -1)");
    EXPECT(L, "return ERR(T.environment, {terrain_lod_prepare_jobs = 1.5})",
           "bad argument #1 to 'environment' (terrain_lod_prepare_jobs: a whole number 0..1024 "
           "expected)");
    EXPECT(L, "return ERR(T.environment, {terrain_gpu_cache = 1})",
           "bad argument #1 to 'environment' (unknown option 'terrain_gpu_cache')");
    /* 65 x 65 samples: 8 bytes each plus one shared patch fit the default GPU budget; the twin's
     * set has no mapping, so no texture arrays. */
    EXPECT(L,
           "local p = T.default_world() and T.open(TWIN)\n"
           "local r = p:render_plan()\n"
           "return tostring(r.gpu_patches) .. ' ' .. string.format('%.4f', r.gpu_field_mb) .. ' "
           "' .. tostring(r.texture_arrays) .. ' ' .. r.texture_fallback .. ' ' .. "
           "tostring(r.lod) .. ' ' .. r.prepare_jobs",
           "true 0.0952 false the payload's material set has no mapping true 2");
    EXPECT(L,
           "local p = T.open(TWIN)\n"
           "return p:render_plan({terrain_gpu_cache_mb = 0}).gpu_fallback .. ' | ' .. "
           "p:render_plan({terrain_gpu_cache_mb = 0.05}).gpu_fallback .. ' | ' .. "
           "p:render_plan(nil, {max_texture_size = 32}).gpu_fallback .. ' | ' .. "
           "p:render_plan(nil, {vertex_textures = false}).gpu_fallback .. ' | ' .. "
           "p:render_plan(nil, {instancing = false}).gpu_fallback .. ' | ' .. "
           "p:render_plan({terrain_lod_cache_mb = 0}).lod_note .. ' | ' .. "
           "p:render_plan({terrain_lod_prepare_jobs = 0}).lod_note",
           "terrain_gpu_cache_mb is 0: ordinary meshes | the field textures and patches need "
           "0.10 MiB; terrain_gpu_cache_mb is 0.05 | the field is 65 samples a side; the "
           "device's textures hold 32 | the device samples no textures in vertex shaders | the "
           "device draws no instances | terrain_lod_cache_mb is 0: full detail everywhere | "
           "terrain_lod_prepare_jobs is 0: preparation paused, ready meshes stay in use");
    EXPECT(L, "return ERR(T.open(TWIN).render_plan, T.open(TWIN), nil, {max_texture = 1})",
           "bad argument #2 to 'render_plan' (unknown option 'max_texture')");
    lua_close(L);
}

static void test_module(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_pushstring(L, twin_path);
    lua_setglobal(L, "TWIN");
    char code[1024];
    snprintf(code, sizeof code,
             "package.cpath = '%s/?.so'\n"
             "local T = require('terrane'); local W = require('terrane.water')\n"
             "T.default_world():place('twin', T.open(TWIN))\n"
             "return package.searchpath('terrane', package.cpath) ~= nil and T.version .. ' ' .. "
             "W.sample({18, 2, 32}).body_id",
             TRN_LUA_MODULE_DIR);
    EXPECT(L, code, TRN_VERSION_STRING " west");
    /* The controllers come from the same file (Lua's all-in-one loader). */
    EXPECT(L,
           "local B = require('terrane.water.buoyancy'); local S = require('terrane.water.swimming')\n"
           "return B.new('b'):fixed_update(1, {position = {18, 2, 32}}).sample.body_id .. ' ' .. "
           "tostring(S.new('s'):fixed_update(1, {1, 0, 0}, {position = {18, 2, 32}}).swimming)",
           "west true");
    lua_close(L);
}

/* Scripts run sandboxed unless trusted: no files, processes, environment, debug or C modules,
 * text-only load, and budgets on instructions and memory. */
static void test_sandbox(void)
{
    trn_lua_limits lim = {.max_instructions = 5000000, .max_memory = 16u << 20};
    lua_State *L = trn_lua_state_new(false, &lim);
    CHECK(L != NULL);
    static const char *const absent[] = {
        "return io.open",      "return io.popen",   "return io.output",   "return os.execute", "return os.getenv",   "return os.remove",
        "return os.exit",      "return debug",      "return dofile",      "return loadfile",
        "return package.loadlib", "return package.cpath", "return require('io').open",
        "return require('socket')"};
    for (size_t k = 0; k < sizeof absent / sizeof absent[0]; k++) {
        int st = luaL_dostring(L, absent[k]);
        /* Either absent (nil) or, for require('io'), not found. */
        CHECK(st != LUA_OK || lua_isnil(L, -1));
        if (st == LUA_OK && !lua_isnil(L, -1)) fprintf(stderr, "present: %s\n", absent[k]);
        lua_settop(L, 0);
    }
    static const char *const present[] = {
        "return type(require('terrane').open) == 'function'",
        "return type(require('terrane.water').sample) == 'function'",
        "return type(require('terrane.water.buoyancy').new) == 'function'",
        "return type(require('terrane.water.swimming').new) == 'function'",
        "return os.clock() >= 0 and type(os.time()) == 'number'",
        "return string.format('%d', 3) == '3' and math.floor(2.5) == 2 and utf8.char(65) == 'A'",
        "return coroutine.wrap(function() coroutine.yield(7) end)() == 7",
        "return load('return 40 + 2')() == 42",
        "local env = {x = 5}; return load('return x', 'c', 't', env)() == 5"};
    for (size_t k = 0; k < sizeof present / sizeof present[0]; k++) {
        CHECK_EQ_INT(luaL_dostring(L, present[k]), LUA_OK);
        CHECK(lua_toboolean(L, -1));
        lua_settop(L, 0);
    }
    /* Precompiled chunks could crash the interpreter: refused. */
    CHECK_EQ_INT(luaL_dostring(L, "local f, e = load(string.dump(function() end)); return e"),
                 LUA_OK);
    CHECK(lua_isstring(L, -1) && strstr(lua_tostring(L, -1), "binary chunk"));
    lua_settop(L, 0);
    /* The instruction budget stops an endless loop; the memory budget a huge allocation. */
    CHECK(luaL_dostring(L, "while true do end") != LUA_OK);
    CHECK_CONTAINS(lua_tostring(L, -1), "budget of 5000000 Lua instructions");
    lua_settop(L, 0);
    trn_lua_state_close(L);
    L = trn_lua_state_new(false, &lim);
    CHECK(luaL_dostring(L, "local s = string.rep('x', 32 << 20); return #s") != LUA_OK);
    CHECK_CONTAINS(lua_tostring(L, -1), "not enough memory");
    lua_settop(L, 0);
    /* Under its budgets the same state keeps working. */
    CHECK_EQ_INT(luaL_dostring(L, "local s = string.rep('x', 1 << 20); return #s"), LUA_OK);
    CHECK_EQ_INT((int)lua_tointeger(L, -1), 1 << 20);
    trn_lua_state_close(L);
    /* Trusted: every standard library, no budget unless given. */
    L = trn_lua_state_new(true, NULL);
    CHECK_EQ_INT(luaL_dostring(L, "return io ~= nil and os.execute ~= nil and debug ~= nil"),
                 LUA_OK);
    CHECK(lua_toboolean(L, -1));
    trn_lua_state_close(L);
    trn_lua_state_close(NULL);

    /* The command line: sandboxed by default, --trusted lifts it, budgets are options. */
    const char *shell = write_script("shell.lua", "print(os.execute ~= nil, io.open ~= nil)\n");
    CHECK_EQ_INT(cli("lua %s", shell), 0);
    CHECK(out_text && strcmp(out_text, "false\tfalse\n") == 0);
    CHECK_EQ_INT(cli("lua --trusted %s", shell), 0);
    CHECK(out_text && strcmp(out_text, "true\ttrue\n") == 0);
    const char *spin = write_script("spin.lua", "while true do end\n");
    CHECK_EQ_INT(cli("lua %s --max-instructions 2M", spin), 1);
    CHECK_CONTAINS(err_text, "budget of 2000000 Lua instructions");
    CHECK_CONTAINS(err_text, "--max-instructions raises");
    const char *hog = write_script("hog.lua", "local t = {} for i = 1, 1e7 do t[i] = i end\n");
    CHECK_EQ_INT(cli("lua %s --max-memory 8M", hog), 1);
    CHECK_CONTAINS(err_text, "memory budget is 8388608 bytes");
    CHECK_EQ_INT(cli("lua %s --max-memory lots", hog), 2);
    CHECK_CONTAINS(err_text, "--max-memory expects a whole number");
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return trn_test_skip("no temporary folder");
    snprintf(twin_path, sizeof twin_path, "%s/twin.terrain.bin", tmp);
    CHECK(cook_twin(twin_path));
    RUN(test_vec3_rules);
    RUN(test_samples);
    RUN(test_tracker);
    RUN(test_placements);
    RUN(test_payload);
    RUN(test_cli);
    RUN(test_sensor);
    RUN(test_bad_input);
    RUN(test_buoyancy);
    RUN(test_swimming);
    RUN(test_environment);
    RUN(test_module);
    RUN(test_sandbox);
    reset_output();
    return trn_test_finish();
}

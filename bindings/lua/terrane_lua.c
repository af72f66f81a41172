/* Lua 5.4 binding of the runtime: payloads, worlds, water samples and immersion trackers. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "terrane/runtime.h"
#include "terrane_lua.h"

#define PAYLOAD_MT "terrane.Payload"
#define WORLD_MT "terrane.World"
#define TRACKER_MT "terrane.WaterTracker"

/* Registry keys: the addresses are unique, so no name can clash with another library's. */
static const char default_world_key = 'd';
static const char bound_world_key = 'b';

typedef struct lua_payload {
    trn_payload *payload; /* NULL once closed */
    int placements;       /* how many worlds place it: close() waits for them */
} lua_payload;

typedef struct lua_world {
    trn_world *world;
} lua_world;

typedef struct lua_tracker {
    trn_water_tracker *tracker;
} lua_tracker;

/* ---------------------------------------------------------------------------------------------
 * Argument checks: strict types (no string-to-number coercion), never a crash.
 * ------------------------------------------------------------------------------------------- */

static int arg_error(lua_State *L, int shown, const char *fname, const char *what)
{
    return luaL_error(L, "bad argument #%d to '%s' (%s)", shown, fname, what);
}

static double check_number(lua_State *L, int idx, int shown, const char *fname)
{
    if (lua_type(L, idx) != LUA_TNUMBER) {
        char what[96];
        snprintf(what, sizeof what, "number expected, got %s", luaL_typename(L, idx));
        arg_error(L, shown, fname, what);
    }
    return lua_tonumber(L, idx);
}

/* A string without zero bytes (the C library reads ids as C strings). */
static const char *check_text(lua_State *L, int idx, int shown, const char *fname, const char *what)
{
    if (lua_type(L, idx) != LUA_TSTRING) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s expected, got %s", what, luaL_typename(L, idx));
        arg_error(L, shown, fname, msg);
    }
    size_t n;
    const char *s = lua_tolstring(L, idx, &n);
    if (!s || strlen(s) != n) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s expected, got a string with a zero byte", what);
        arg_error(L, shown, fname, msg);
    }
    return s;
}

/* nil / none: NULL (every enabled terrain); a string: that placement only. */
static const char *opt_terrain_id(lua_State *L, int idx, int shown, const char *fname)
{
    if (lua_isnoneornil(L, idx)) return NULL;
    return check_text(L, idx, shown, fname, "terrain id (string or nil)");
}

static void describe_number(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* Read a dense one-based array of exactly `count` finite numbers at idx (3: a Vec3, 4: a
 * quaternion). True with out filled; false with what was found described in got. Raw access
 * only: a metatable cannot make a table look like a vector. */
static bool read_numbers(lua_State *L, int idx, int count, double *out, char *got, size_t size)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE) {
        snprintf(got, size, "%s", luaL_typename(L, idx));
        return false;
    }
    lua_Integer keys = 0, max_key = 0;
    bool bad_key = false;
    const char *name_key = NULL; /* the least string key: the same whatever the hash order */
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        keys++;
        if (lua_type(L, -2) == LUA_TSTRING) {
            const char *k = lua_tostring(L, -2);
            if (!name_key || strcmp(k, name_key) < 0) name_key = k; /* the table keeps it alive */
        } else if (!bad_key && !lua_isinteger(L, -2)) {
            bad_key = true;
            if (lua_type(L, -2) == LUA_TNUMBER)
                snprintf(got, size, "a table with key %g", lua_tonumber(L, -2));
            else
                snprintf(got, size, "a table with a %s key", luaL_typename(L, -2));
        } else if (!bad_key) {
            const lua_Integer k = lua_tointeger(L, -2);
            if (k < 1) {
                bad_key = true;
                snprintf(got, size, "a table with key %lld", (long long)k);
            } else if (k > max_key) {
                max_key = k;
            }
        }
        lua_pop(L, 1);
    }
    if (name_key) {
        snprintf(got, size, "a table with key '%.40s'", name_key);
        return false;
    }
    if (bad_key) return false;
    if (max_key != keys) {
        /* Integer keys 1.. with a gap: name the first missing element. */
        lua_Integer missing = 1;
        while (lua_rawgeti(L, idx, missing) != LUA_TNIL) {
            lua_pop(L, 1);
            missing++;
        }
        lua_pop(L, 1);
        snprintf(got, size, "a table with a hole at element %lld", (long long)missing);
        return false;
    }
    if (keys != count) {
        if (keys == 0)
            snprintf(got, size, "an empty table");
        else
            snprintf(got, size, "a table of %lld element%s", (long long)keys, keys == 1 ? "" : "s");
        return false;
    }
    for (int k = 0; k < count; k++) {
        const int type = lua_rawgeti(L, idx, k + 1);
        if (type != LUA_TNUMBER) {
            snprintf(got, size, "a table whose element %d is a %s", k + 1, lua_typename(L, type));
            lua_pop(L, 1);
            return false;
        }
        out[k] = lua_tonumber(L, -1);
        lua_pop(L, 1);
        if (!isfinite(out[k])) {
            char num[8];
            describe_number(out[k], num, sizeof num);
            snprintf(got, size, "a table whose element %d is %s", k + 1, num);
            return false;
        }
    }
    return true;
}

static void check_vec3(lua_State *L, int idx, int shown, const char *fname, double out[3])
{
    char got[96];
    if (read_numbers(L, idx, 3, out, got, sizeof got)) return;
    char what[192];
    snprintf(what, sizeof what, "Vec3 expected: a table of exactly three finite numbers, got %s",
             got);
    arg_error(L, shown, fname, what);
}

/* ---------------------------------------------------------------------------------------------
 * Results as tables.
 * ------------------------------------------------------------------------------------------- */

static void push_vec3(lua_State *L, const double v[3])
{
    lua_createtable(L, 3, 0);
    for (int k = 0; k < 3; k++) {
        lua_pushnumber(L, v[k]);
        lua_rawseti(L, -2, k + 1);
    }
}

static void set_string(lua_State *L, const char *key, const char *value)
{
    if (value) {
        lua_pushstring(L, value);
        lua_setfield(L, -2, key);
    }
}

static void set_number(lua_State *L, const char *key, double value)
{
    lua_pushnumber(L, value);
    lua_setfield(L, -2, key);
}

static void set_integer(lua_State *L, const char *key, lua_Integer value)
{
    lua_pushinteger(L, value);
    lua_setfield(L, -2, key);
}

static void set_vec3(lua_State *L, const char *key, const double v[3])
{
    push_vec3(L, v);
    lua_setfield(L, -2, key);
}

/* The WaterSample table of docs/lua.md. */
static void push_sample(lua_State *L, const trn_world_water_sample *s)
{
    lua_createtable(L, 0, 9);
    set_string(L, "terrain_id", s->terrain_id);
    set_string(L, "body_id", s->body_id);
    set_string(L, "kind", trn_water_kind_name(s->kind));
    set_vec3(L, "surface", s->surface);
    set_vec3(L, "normal", s->normal);
    set_number(L, "depth", s->depth);
    set_vec3(L, "column_up", s->column_up);
    set_vec3(L, "flow_velocity", s->flow_velocity);
    lua_pushboolean(L, s->underwater);
    lua_setfield(L, -2, "underwater");
}

/* The runtime library carries no palette code: these mirror trn_surface_role_name and the
 * palette's collision and category words (src/recipe/palette.c). */
static const char *role_name(int role)
{
    static const char *const names[] = {"ground", "grass", "rock",       "cliff",     "sediment",
                                        "sand",   "snow",  "wet_ground", "underwater"};
    return role >= 0 && role < (int)(sizeof names / sizeof names[0]) ? names[role] : NULL;
}

static const char *collision_name(trn_scatter_collision c)
{
    return c == TRN_COLLISION_NONE ? "none" : c == TRN_COLLISION_TRIGGER ? "trigger" : "static";
}

static const char *category_name(trn_scatter_category c)
{
    return c == TRN_CATEGORY_GRASS  ? "grass"
           : c == TRN_CATEGORY_TREE ? "tree"
           : c == TRN_CATEGORY_ROCK ? "rock"
                                    : "prop";
}

/* Raise the library's error as a Lua error (file, offset, section in the message). */
static int raise_error(lua_State *L, const trn_error *err)
{
    char text[1200];
    trn_error_format(err, text, sizeof text);
    return luaL_error(L, "%s", text);
}

/* ---------------------------------------------------------------------------------------------
 * Payloads.
 * ------------------------------------------------------------------------------------------- */

static lua_payload *new_payload(lua_State *L)
{
    lua_payload *p = lua_newuserdatauv(L, sizeof *p, 0);
    p->payload = NULL;
    p->placements = 0;
    luaL_setmetatable(L, PAYLOAD_MT);
    return p;
}

static lua_payload *check_payload(lua_State *L, int idx, const char *fname)
{
    lua_payload *p = luaL_testudata(L, idx, PAYLOAD_MT);
    if (!p) {
        char what[96];
        snprintf(what, sizeof what, "terrane payload expected, got %s", luaL_typename(L, idx));
        arg_error(L, idx, fname, what);
    }
    if (!p->payload) luaL_error(L, "%s: the payload is closed", fname);
    return p;
}

/* terrane.open(path) */
static int l_open(lua_State *L)
{
    const char *path = check_text(L, 1, 1, "open", "path (string)");
    lua_payload *p = new_payload(L); /* first, so a failure to allocate it leaks nothing */
    trn_error err;
    trn_error_clear(&err);
    if (trn_payload_open(path, NULL, &p->payload, &err)) return raise_error(L, &err);
    return 1;
}

static int l_payload_height(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "height");
    const double x = check_number(L, 2, 1, "height"), z = check_number(L, 3, 2, "height");
    const double h = trn_payload_height_at(p->payload, x, z);
    if (isnan(h))
        lua_pushnil(L);
    else
        lua_pushnumber(L, h);
    return 1;
}

static int l_payload_normal(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "normal");
    const double x = check_number(L, 2, 1, "normal"), z = check_number(L, 3, 2, "normal");
    double n[3];
    if (trn_payload_normal_at(p->payload, x, z, n))
        push_vec3(L, n);
    else
        lua_pushnil(L);
    return 1;
}

static int l_payload_biome(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "biome");
    const double x = check_number(L, 2, 1, "biome"), z = check_number(L, 3, 2, "biome");
    const int label = trn_payload_biome_at(p->payload, x, z);
    if (label < 0) {
        lua_pushnil(L);
        return 1;
    }
    const char *name = trn_payload_biome_name(p->payload, (uint32_t)label);
    if (name)
        lua_pushstring(L, name);
    else
        lua_pushnil(L);
    lua_pushinteger(L, label);
    return 2;
}

/* payload:biome_info(label): what a renderer needs of one biome, nil past the table. */
static int l_payload_biome_info(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "biome_info");
    const lua_Integer label = luaL_checkinteger(L, 2);
    const char *name = label >= 0 && label < 256
                           ? trn_payload_biome_name(p->payload, (uint32_t)label)
                           : NULL;
    if (!name) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 0, 4);
    set_string(L, "name", name);
    float rgba[4];
    trn_payload_biome_color(p->payload, (uint32_t)label, rgba);
    lua_createtable(L, 4, 0);
    for (int k = 0; k < 4; k++) {
        lua_pushnumber(L, rgba[k]);
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "color");
    set_string(L, "material", trn_payload_biome_material(p->payload, (uint32_t)label));
    set_number(L, "texture_scale", trn_payload_biome_texture_scale(p->payload, (uint32_t)label));
    return 1;
}

/* payload:mapping(): the material set's mapping as a table, nil without one. */
static int l_payload_mapping(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "mapping");
    const trn_material_mapping *m = trn_payload_mapping(p->payload);
    if (!m) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 0, 9);
    lua_pushboolean(L, m->texture_arrays);
    lua_setfield(L, -2, "texture_arrays");
    lua_pushboolean(L, m->triplanar);
    lua_setfield(L, -2, "triplanar");
    set_number(L, "triplanar_slope", m->triplanar_slope);
    set_number(L, "triplanar_sharpness", m->triplanar_sharpness);
    lua_pushboolean(L, m->height_blend);
    lua_setfield(L, -2, "height_blend");
    set_number(L, "height_blend_contrast", m->height_blend_contrast);
    set_number(L, "macro_variation", m->macro_variation);
    set_number(L, "macro_scale", m->macro_scale);
    lua_createtable(L, TRN_MAPPING_ARRAY_COUNT, 0);
    for (int k = 0; k < TRN_MAPPING_ARRAY_COUNT; k++) {
        lua_pushstring(L, trn_mapping_array_name(k));
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "arrays");
    return 1;
}

/* payload:layers(): the texture layers' Material ids; Lua index k is array layer k - 1. */
static int l_payload_layers(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "layers");
    const uint32_t n = trn_payload_layer_count(p->payload);
    lua_createtable(L, (int)n, 0);
    for (uint32_t k = 0; k < n; k++) {
        lua_pushstring(L, trn_payload_layer_material(p->payload, k));
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    return 1;
}

/* payload:layer_maps(k): layer k's (Lua index) Material document as cooked, {texture_scale,
 * albedo, normal, roughness, height, emissive} with the maps it has (paths relative to the
 * project), or nil for a layer without one. */
static int l_payload_layer_maps(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "layer_maps");
    const lua_Integer k = luaL_checkinteger(L, 2);
    double scale = 1.0;
    const char *maps[TRN_MAP_COUNT];
    if (k < 1 || k > (lua_Integer)trn_payload_layer_count(p->payload) ||
        !trn_payload_layer_maps(p->payload, (uint32_t)(k - 1), &scale, maps)) {
        lua_pushnil(L);
        return 1;
    }
    /* The runtime library has no document reader (trn_material_map_name): the names here. */
    static const char *const names[TRN_MAP_COUNT] = {"albedo", "normal", "roughness", "height",
                                                     "emissive"};
    lua_createtable(L, 0, TRN_MAP_COUNT + 1);
    lua_pushnumber(L, scale);
    lua_setfield(L, -2, "texture_scale");
    for (int q = 0; q < TRN_MAP_COUNT; q++) {
        if (!maps[q][0]) continue;
        lua_pushstring(L, maps[q]);
        lua_setfield(L, -2, names[q]);
    }
    return 1;
}

/* payload:ledgers(): each erosion node's transport totals, in graph document order. */
static int l_payload_ledgers(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "ledgers");
    const uint32_t n = trn_payload_ledger_count(p->payload);
    lua_createtable(L, (int)n, 0);
    for (uint32_t k = 0; k < n; k++) {
        trn_erosion_ledger l;
        const char *id = trn_payload_ledger_at(p->payload, k, &l);
        lua_createtable(L, 0, 7);
        set_string(L, "node", id);
        set_number(L, "eroded", l.eroded);
        set_number(L, "deposited", l.deposited);
        set_number(L, "exported", l.exported);
        set_number(L, "suspended", l.suspended);
        set_integer(L, "droplets", (lua_Integer)l.droplets);
        set_integer(L, "steps", (lua_Integer)l.steps);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    return 1;
}

static int l_payload_role(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "role");
    const double x = check_number(L, 2, 1, "role"), z = check_number(L, 3, 2, "role");
    const char *name = role_name(trn_payload_role_at(p->payload, x, z));
    if (name)
        lua_pushstring(L, name);
    else
        lua_pushnil(L);
    return 1;
}

static int l_payload_info(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "info");
    trn_payload_info info;
    trn_payload_get_info(p->payload, &info);
    lua_createtable(L, 0, 16);
    set_integer(L, "format_version", info.format_version);
    set_integer(L, "generator_version", info.generator_version);
    set_string(L, "generator", info.generator);
    set_string(L, "terrain_id", info.terrain_id);
    char hex[24];
    snprintf(hex, sizeof hex, "%016" PRIx64, info.cache_key);
    set_string(L, "cache_key", hex);
    set_integer(L, "cells_x", info.cells_x);
    set_integer(L, "cells_z", info.cells_z);
    set_number(L, "size_x", info.size_x);
    set_number(L, "size_z", info.size_z);
    set_number(L, "sea_level", info.sea_level);

    lua_createtable(L, (int)info.section_count, 0);
    for (uint32_t k = 0; k < info.section_count; k++) {
        trn_payload_section s;
        if (!trn_payload_section_at(p->payload, k, &s)) break;
        lua_createtable(L, 0, 6);
        set_string(L, "id", s.id);
        set_string(L, "name", trn_payload_section_name(s.id));
        lua_pushboolean(L, s.required);
        lua_setfield(L, -2, "required");
        set_integer(L, "offset", (lua_Integer)s.offset);
        set_integer(L, "compressed_size", (lua_Integer)s.compressed_size);
        set_integer(L, "raw_size", (lua_Integer)s.raw_size);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "sections");

    const uint32_t biomes = trn_payload_biome_count(p->payload);
    lua_createtable(L, (int)biomes, 0);
    for (uint32_t k = 0; k < biomes; k++) {
        const char *name = trn_payload_biome_name(p->payload, k);
        lua_pushstring(L, name ? name : "");
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "biomes");

    const trn_water *water = trn_payload_water(p->payload);
    const uint32_t bodies = water ? water->body_count : 0;
    lua_createtable(L, (int)bodies, 0);
    for (uint32_t k = 0; k < bodies; k++) {
        const trn_water_body *b = &water->bodies[k];
        lua_createtable(L, 0, 3);
        set_string(L, "id", b->id);
        set_string(L, "kind", trn_water_kind_name(b->kind));
        set_number(L, "level", b->level);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "water");
    return 1;
}

static int l_payload_instances(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "instances");
    size_t count = 0;
    const trn_instance *items = trn_payload_instances(p->payload, &count);
    if (count > (size_t)INT32_MAX) return luaL_error(L, "instances: too many to list (%zu)", count);
    lua_createtable(L, (int)count, 0);
    for (size_t k = 0; k < count; k++) {
        const trn_instance *it = &items[k];
        trn_payload_rule rule;
        if (!trn_payload_rule_at(p->payload, it->rule, &rule)) continue;
        lua_createtable(L, 0, 8);
        char id[TRN_PALETTE_ID_MAX + 48];
        snprintf(id, sizeof id, "%s/%" PRId64 "_%" PRId64, rule.id ? rule.id : "", it->cx, it->cz);
        set_string(L, "id", id);
        set_string(L, "rule", rule.id);
        const double at[3] = {it->x, it->y, it->z};
        set_vec3(L, "position", at);
        set_number(L, "yaw", it->yaw);
        set_number(L, "scale", it->scale);
        set_string(L, "model", rule.model);
        set_string(L, "prefab", rule.prefab);
        set_string(L, "collision", collision_name(rule.collision));
        set_string(L, "category", category_name(rule.category));
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    return 1;
}

static int l_payload_close(lua_State *L)
{
    lua_payload *p = luaL_checkudata(L, 1, PAYLOAD_MT);
    if (p->placements > 0)
        return luaL_error(L, "close: the payload still has %d placement%s; remove %s first",
                          p->placements, p->placements == 1 ? "" : "s",
                          p->placements == 1 ? "it" : "them");
    trn_payload_free(p->payload);
    p->payload = NULL;
    return 0;
}

/* __gc, and __close of a to-be-closed variable: a payload still placed stays open for its
 * world (which keeps it reachable until it is removed). */
static int l_payload_release(lua_State *L)
{
    lua_payload *p = luaL_checkudata(L, 1, PAYLOAD_MT);
    if (p->placements == 0 || lua_gettop(L) == 1) {
        trn_payload_free(p->payload);
        p->payload = NULL;
    }
    return 0;
}

static int l_payload_tostring(lua_State *L)
{
    lua_payload *p = luaL_checkudata(L, 1, PAYLOAD_MT);
    if (!p->payload) {
        lua_pushstring(L, "terrane payload (closed)");
        return 1;
    }
    trn_payload_info info;
    trn_payload_get_info(p->payload, &info);
    lua_pushfstring(L, "terrane payload '%s' (%d x %d cells)",
                    info.terrain_id ? info.terrain_id : "", (int)info.cells_x, (int)info.cells_z);
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Worlds.
 * ------------------------------------------------------------------------------------------- */

static lua_world *new_world(lua_State *L)
{
    lua_world *w = lua_newuserdatauv(L, sizeof *w, 1);
    w->world = NULL;
    luaL_setmetatable(L, WORLD_MT);
    lua_newtable(L); /* terrain id -> payload userdata: keeps placed payloads alive */
    lua_setiuservalue(L, -2, 1);
    trn_error err;
    trn_error_clear(&err);
    if (trn_world_new(&w->world, &err)) raise_error(L, &err);
    return w;
}

static lua_world *check_world(lua_State *L, int idx, const char *fname)
{
    lua_world *w = luaL_testudata(L, idx, WORLD_MT);
    if (!w || !w->world) {
        char what[96];
        snprintf(what, sizeof what, "terrane world expected, got %s", luaL_typename(L, idx));
        arg_error(L, idx, fname, what);
    }
    return w;
}

/* terrane.world() */
static int l_world_new(lua_State *L)
{
    new_world(L);
    return 1;
}

/* Push the default world, made on first use. */
static void push_default_world(lua_State *L)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &default_world_key) == LUA_TUSERDATA) return;
    lua_pop(L, 1);
    new_world(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &default_world_key);
}

static int l_default_world(lua_State *L)
{
    push_default_world(L);
    return 1;
}

/* Push the world terrane.water answers from: the bound one, else the default. */
static void push_water_world(lua_State *L)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bound_world_key) == LUA_TUSERDATA) return;
    lua_pop(L, 1);
    push_default_world(L);
}

/* Quaternion (x, y, z, w) of yaw about +Y, then pitch about +X, then roll about +Z, in
 * degrees, applied roll first: q = q_yaw * q_pitch * q_roll. */
static void euler_quaternion(double yaw, double pitch, double roll, double q[4])
{
    const double rad = 3.14159265358979323846 / 360.0; /* half the angle, in radians */
    const double cy = cos(yaw * rad), sy = sin(yaw * rad);
    const double cp = cos(pitch * rad), sp = sin(pitch * rad);
    const double cr = cos(roll * rad), sr = sin(roll * rad);
    /* q_yaw * q_pitch = (cy sp, sy cp, -sy sp, cy cp), then times (0, 0, sr, cr). */
    const double ax = cy * sp, ay = sy * cp, az = -sy * sp, aw = cy * cp;
    q[0] = ax * cr + ay * sr;
    q[1] = ay * cr - ax * sr;
    q[2] = az * cr + aw * sr;
    q[3] = aw * cr - az * sr;
}

/* Read a placement options table at idx into *t (and *enabled when allow_enabled). Unknown keys
 * are refused so a misspelt option does not pass silently. */
static void read_placement(lua_State *L, int idx, int shown, const char *fname, bool allow_enabled,
                           trn_transform *t, bool *enabled)
{
    trn_transform_identity(t);
    if (lua_isnoneornil(L, idx)) return;
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE) {
        char what[96];
        snprintf(what, sizeof what, "options table or nil expected, got %s", luaL_typename(L, idx));
        arg_error(L, shown, fname, what);
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        static const char *const known[] = {"position", "rotation", "yaw",     "pitch",
                                            "roll",     "scale",    "enabled", NULL};
        bool ok = false;
        for (int k = 0; key && known[k]; k++)
            if (strcmp(key, known[k]) == 0 && (allow_enabled || strcmp(key, "enabled") != 0))
                ok = true;
        if (!ok) {
            char what[160];
            snprintf(what, sizeof what,
                     "unknown option %s%.40s%s (expected position, rotation or yaw/pitch/roll, "
                     "scale%s)",
                     key ? "'" : "", key ? key : luaL_typename(L, -2), key ? "'" : " key",
                     allow_enabled ? ", enabled" : "");
            arg_error(L, shown, fname, what);
        }
        lua_pop(L, 1);
    }
    char got[96], what[224];
    if (lua_getfield(L, idx, "position") != LUA_TNIL &&
        !read_numbers(L, -1, 3, t->translation, got, sizeof got)) {
        snprintf(what, sizeof what,
                 "position: Vec3 expected: a table of exactly three finite numbers, got %s", got);
        arg_error(L, shown, fname, what);
    }
    lua_pop(L, 1);
    const bool has_rotation = lua_getfield(L, idx, "rotation") != LUA_TNIL;
    if (has_rotation && !read_numbers(L, -1, 4, t->rotation, got, sizeof got)) {
        snprintf(what, sizeof what,
                 "rotation: quaternion expected: a table of exactly four finite numbers {x, y, z, "
                 "w}, got %s",
                 got);
        arg_error(L, shown, fname, what);
    }
    lua_pop(L, 1);
    double angles[3] = {0.0, 0.0, 0.0};
    bool has_angles = false;
    static const char *const angle_names[] = {"yaw", "pitch", "roll"};
    for (int k = 0; k < 3; k++) {
        const int type = lua_getfield(L, idx, angle_names[k]);
        if (type != LUA_TNIL) {
            has_angles = true;
            angles[k] = lua_tonumber(L, -1);
            if (type != LUA_TNUMBER || !isfinite(angles[k])) {
                snprintf(what, sizeof what, "%s: a finite number of degrees expected, got %s",
                         angle_names[k], type != LUA_TNUMBER ? luaL_typename(L, -1) : "nan or inf");
                arg_error(L, shown, fname, what);
            }
        }
        lua_pop(L, 1);
    }
    if (has_rotation && has_angles)
        arg_error(L, shown, fname, "give rotation or yaw/pitch/roll, not both");
    if (has_angles) euler_quaternion(angles[0], angles[1], angles[2], t->rotation);
    const int scale_type = lua_getfield(L, idx, "scale");
    if (scale_type == LUA_TNUMBER) {
        const double s = lua_tonumber(L, -1);
        t->scale[0] = t->scale[1] = t->scale[2] = s;
    } else if (scale_type != LUA_TNIL && !read_numbers(L, -1, 3, t->scale, got, sizeof got)) {
        snprintf(what, sizeof what,
                 "scale: a number or a Vec3 (a table of exactly three finite numbers) expected, "
                 "got %s",
                 got);
        arg_error(L, shown, fname, what);
    }
    lua_pop(L, 1);
    if (allow_enabled && enabled) {
        const int type = lua_getfield(L, idx, "enabled");
        if (type == LUA_TBOOLEAN)
            *enabled = lua_toboolean(L, -1);
        else if (type != LUA_TNIL) {
            snprintf(what, sizeof what, "enabled: boolean expected, got %s", luaL_typename(L, -1));
            arg_error(L, shown, fname, what);
        }
        lua_pop(L, 1);
    }
}

/* world:place(terrain_id, payload [, options]) */
static int l_world_place(lua_State *L)
{
    lua_world *w = check_world(L, 1, "place");
    const char *id = check_text(L, 2, 1, "place", "terrain id (string)");
    lua_payload *p = luaL_testudata(L, 3, PAYLOAD_MT);
    if (!p) {
        char what[96];
        snprintf(what, sizeof what, "terrane payload expected, got %s", luaL_typename(L, 3));
        return arg_error(L, 2, "place", what);
    }
    if (!p->payload) return luaL_error(L, "place: the payload is closed");
    trn_transform t;
    bool enabled = true;
    read_placement(L, 4, 3, "place", true, &t, &enabled);
    /* Room in the keep-alive table first, so nothing can fail once the world holds it. */
    lua_getiuservalue(L, 1, 1);
    lua_pushvalue(L, 2);
    const bool taken = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 1);
    if (!taken) {
        lua_pushvalue(L, 2);
        lua_pushboolean(L, 1);
        lua_rawset(L, -3);
    }
    trn_error err;
    trn_error_clear(&err);
    trn_status st = trn_world_place(w->world, id, p->payload, &t, &err);
    if (!st && !enabled) st = trn_world_set_enabled(w->world, id, false, &err);
    if (st) {
        if (!taken) {
            trn_world_remove(w->world, id, NULL);
            lua_pushvalue(L, 2);
            lua_pushnil(L);
            lua_rawset(L, -3);
        }
        return raise_error(L, &err);
    }
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 3);
    lua_rawset(L, -3);
    p->placements++;
    return 0;
}

static int l_world_set_transform(lua_State *L)
{
    lua_world *w = check_world(L, 1, "set_transform");
    const char *id = check_text(L, 2, 1, "set_transform", "terrain id (string)");
    trn_transform t;
    read_placement(L, 3, 2, "set_transform", false, &t, NULL);
    trn_error err;
    trn_error_clear(&err);
    if (trn_world_set_transform(w->world, id, &t, &err)) return raise_error(L, &err);
    return 0;
}

/* world:set_surface_blending(terrain_id, boolean): Terrain3D.surface_blending. */
static int l_world_set_surface_blending(lua_State *L)
{
    lua_world *w = check_world(L, 1, "set_surface_blending");
    const char *id = check_text(L, 2, 1, "set_surface_blending", "terrain id (string)");
    if (lua_type(L, 3) != LUA_TBOOLEAN) {
        char what[96];
        snprintf(what, sizeof what, "boolean expected, got %s", luaL_typename(L, 3));
        return arg_error(L, 2, "set_surface_blending", what);
    }
    trn_error err;
    trn_error_clear(&err);
    if (trn_world_set_surface_blending(w->world, id, lua_toboolean(L, 3), &err))
        return raise_error(L, &err);
    return 0;
}

static int l_world_set_enabled(lua_State *L)
{
    lua_world *w = check_world(L, 1, "set_enabled");
    const char *id = check_text(L, 2, 1, "set_enabled", "terrain id (string)");
    if (lua_type(L, 3) != LUA_TBOOLEAN) {
        char what[96];
        snprintf(what, sizeof what, "boolean expected, got %s", luaL_typename(L, 3));
        return arg_error(L, 2, "set_enabled", what);
    }
    trn_error err;
    trn_error_clear(&err);
    if (trn_world_set_enabled(w->world, id, lua_toboolean(L, 3), &err)) return raise_error(L, &err);
    return 0;
}

/* world:set_scatter_exclusions(terrain_id, {keys...}): the placement's
 * Terrain3D.scatter_exclusions; an empty table clears it. */
static int l_world_set_scatter_exclusions(lua_State *L)
{
    lua_world *w = check_world(L, 1, "set_scatter_exclusions");
    const char *id = check_text(L, 2, 1, "set_scatter_exclusions", "terrain id (string)");
    if (lua_type(L, 3) != LUA_TTABLE) {
        char what[96];
        snprintf(what, sizeof what, "table of keys expected, got %s", luaL_typename(L, 3));
        return arg_error(L, 2, "set_scatter_exclusions", what);
    }
    const lua_Integer n = luaL_len(L, 3);
    const char **keys = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *keys, 0);
    for (lua_Integer k = 1; k <= n; k++) {
        lua_geti(L, 3, k);
        if (lua_type(L, -1) != LUA_TSTRING) {
            char what[96];
            snprintf(what, sizeof what, "key %lld is %s, not a string", (long long)k,
                     luaL_typename(L, -1));
            return arg_error(L, 2, "set_scatter_exclusions", what);
        }
        keys[k - 1] = lua_tostring(L, -1);
        lua_pop(L, 1); /* the table keeps the string alive */
    }
    trn_error err;
    trn_error_clear(&err);
    if (trn_world_set_scatter_exclusions(w->world, id, keys, (size_t)n, &err))
        return raise_error(L, &err);
    return 0;
}

/* world:instance_indices(terrain_id): one-based indices into payload:instances() of the
 * instances the placement keeps after its exclusions. */
static int l_world_instance_indices(lua_State *L)
{
    lua_world *w = check_world(L, 1, "instance_indices");
    const char *id = check_text(L, 2, 1, "instance_indices", "terrain id (string)");
    trn_error err;
    trn_error_clear(&err);
    size_t kept = 0;
    if (trn_world_instances(w->world, id, NULL, 0, &kept, &err)) return raise_error(L, &err);
    size_t *idx = lua_newuserdatauv(L, (kept ? kept : 1) * sizeof *idx, 0);
    if (trn_world_instances(w->world, id, idx, kept, &kept, &err)) return raise_error(L, &err);
    lua_createtable(L, (int)kept, 0);
    for (size_t k = 0; k < kept; k++) {
        lua_pushinteger(L, (lua_Integer)idx[k] + 1);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    return 1;
}

static int l_world_remove(lua_State *L)
{
    lua_world *w = check_world(L, 1, "remove");
    const char *id = check_text(L, 2, 1, "remove", "terrain id (string)");
    trn_error err;
    trn_error_clear(&err);
    if (trn_world_remove(w->world, id, &err)) return raise_error(L, &err);
    lua_getiuservalue(L, 1, 1);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, -2) == LUA_TUSERDATA) {
        lua_payload *p = luaL_testudata(L, -1, PAYLOAD_MT);
        if (p && p->placements > 0) p->placements--;
    }
    lua_pop(L, 1);
    lua_pushvalue(L, 2);
    lua_pushnil(L);
    lua_rawset(L, -3);
    return 0;
}

static int l_world_count(lua_State *L)
{
    lua_world *w = check_world(L, 1, "count");
    lua_pushinteger(L, trn_world_count(w->world));
    return 1;
}

static int l_world_ground(lua_State *L)
{
    lua_world *w = check_world(L, 1, "ground");
    double pos[3];
    check_vec3(L, 2, 1, "ground", pos);
    const char *id = opt_terrain_id(L, 3, 2, "ground");
    trn_world_ground_sample g;
    if (!trn_world_ground_at(w->world, pos, id, &g)) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 0, 6);
    set_string(L, "terrain_id", g.terrain_id);
    set_vec3(L, "point", g.point);
    set_vec3(L, "normal", g.normal);
    set_string(L, "biome", g.biome_name);
    if (g.biome >= 0) set_integer(L, "biome_index", g.biome);
    set_string(L, "role", role_name(g.role));
    set_string(L, "material", g.biome_material);
    if (g.biome >= 0) set_number(L, "texture_scale", g.texture_scale);
    if (g.layer >= 0) set_integer(L, "layer", (lua_Integer)g.layer + 1); /* payload:layers() */
    set_string(L, "layer_material", g.material);
    lua_pushboolean(L, g.surface_blending);
    lua_setfield(L, -2, "surface_blending");
    return 1;
}

/* The shared body of world:sample and water.sample: world at widx, arguments from first. */
static int sample_in(lua_State *L, int widx, int first)
{
    lua_world *w = check_world(L, widx, "sample");
    double pos[3];
    check_vec3(L, first, 1, "sample", pos);
    const char *id = opt_terrain_id(L, first + 1, 2, "sample");
    trn_world_water_sample s;
    if (trn_world_water_sample_at(w->world, pos, id, &s))
        push_sample(L, &s);
    else
        lua_pushnil(L);
    return 1;
}

static int tracker_in(lua_State *L, int widx, int first)
{
    check_world(L, widx, "tracker");
    const char *id = opt_terrain_id(L, first, 1, "tracker");
    lua_tracker *t = lua_newuserdatauv(L, sizeof *t, 1);
    t->tracker = NULL;
    luaL_setmetatable(L, TRACKER_MT);
    lua_pushvalue(L, widx); /* the tracker keeps its world alive */
    lua_setiuservalue(L, -2, 1);
    trn_error err;
    trn_error_clear(&err);
    if (trn_water_tracker_new(id, &t->tracker, &err)) return raise_error(L, &err);
    return 1;
}

static int l_world_sample(lua_State *L)
{
    return sample_in(L, 1, 2);
}

static int l_world_tracker(lua_State *L)
{
    return tracker_in(L, 1, 2);
}

/* Placed payloads may be closed again once their world is gone. */
static int l_world_gc(lua_State *L)
{
    lua_world *w = luaL_checkudata(L, 1, WORLD_MT);
    if (lua_getiuservalue(L, 1, 1) == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_payload *p = luaL_testudata(L, -1, PAYLOAD_MT);
            if (p && p->placements > 0) p->placements--;
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    trn_world_free(w->world);
    w->world = NULL;
    return 0;
}

static int l_world_tostring(lua_State *L)
{
    lua_world *w = luaL_checkudata(L, 1, WORLD_MT);
    lua_pushfstring(L, "terrane world (%d placements)", (int)trn_world_count(w->world));
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Trackers.
 * ------------------------------------------------------------------------------------------- */

static lua_tracker *check_tracker(lua_State *L, const char *fname)
{
    lua_tracker *t = luaL_testudata(L, 1, TRACKER_MT);
    if (!t || !t->tracker) {
        char what[96];
        snprintf(what, sizeof what, "WaterTracker expected, got %s", luaL_typename(L, 1));
        arg_error(L, 1, fname, what);
    }
    return t;
}

/* tracker:update(position) -> {{phase=..., sample=...}, ...} */
static int l_tracker_update(lua_State *L)
{
    lua_tracker *t = check_tracker(L, "update");
    double pos[3];
    check_vec3(L, 2, 1, "update", pos);
    lua_getiuservalue(L, 1, 1);
    lua_world *w = luaL_testudata(L, -1, WORLD_MT);
    if (!w || !w->world) return luaL_error(L, "update: the tracker's world is gone");
    trn_water_event events[2];
    const uint32_t n = trn_water_tracker_update(t->tracker, w->world, pos, events);
    lua_createtable(L, (int)n, 0);
    for (uint32_t k = 0; k < n && k < 2; k++) {
        lua_createtable(L, 0, 2);
        set_string(L, "phase", trn_water_phase_name(events[k].phase));
        push_sample(L, &events[k].sample);
        lua_setfield(L, -2, "sample");
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    return 1;
}

static int l_tracker_current(lua_State *L)
{
    lua_tracker *t = check_tracker(L, "current");
    trn_world_water_sample s;
    if (trn_water_tracker_current(t->tracker, &s))
        push_sample(L, &s);
    else
        lua_pushnil(L);
    return 1;
}

static int l_tracker_reset(lua_State *L)
{
    lua_tracker *t = check_tracker(L, "reset");
    trn_water_tracker_reset(t->tracker);
    return 0;
}

static int l_tracker_gc(lua_State *L)
{
    lua_tracker *t = luaL_checkudata(L, 1, TRACKER_MT);
    trn_water_tracker_free(t->tracker);
    t->tracker = NULL;
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Modules.
 * ------------------------------------------------------------------------------------------- */

static void new_type(lua_State *L, const char *name, const luaL_Reg *methods)
{
    if (!luaL_newmetatable(L, name)) {
        lua_pop(L, 1);
        return;
    }
    luaL_setfuncs(L, methods, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "locked"); /* getmetatable() cannot reach the methods' table */
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}


static void register_types(lua_State *L);

/* ---------------------------------------------------------------------------------------------
 * Environment3D render budgets: terrane.environment(options) and payload:render_plan().
 * ------------------------------------------------------------------------------------------- */

/* options.key as a number (absent: keep *out); a string or other type is an argument error. */
static bool opt_field_number(lua_State *L, int idx, const char *key, int shown, const char *fname,
                             double *out)
{
    const int t = lua_getfield(L, idx, key);
    if (t == LUA_TNIL) {
        lua_pop(L, 1);
        return false;
    }
    if (t != LUA_TNUMBER || !isfinite(lua_tonumber(L, -1))) {
        char what[160];
        snprintf(what, sizeof what, "%s: a finite number expected, got %s", key,
                 t == LUA_TNUMBER ? "a non-finite number" : luaL_typename(L, -1));
        arg_error(L, shown, fname, what);
    }
    *out = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return true;
}

static bool opt_field_bool(lua_State *L, int idx, const char *key, int shown, const char *fname,
                           bool *out)
{
    const int t = lua_getfield(L, idx, key);
    if (t == LUA_TNIL) {
        lua_pop(L, 1);
        return false;
    }
    if (t != LUA_TBOOLEAN) {
        char what[160];
        snprintf(what, sizeof what, "%s: a boolean expected, got %s", key, luaL_typename(L, -1));
        arg_error(L, shown, fname, what);
    }
    *out = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return true;
}

/* Refuse keys that are not in keys (a misspelt budget must not pass silently). */
static void check_keys(lua_State *L, int idx, const char *const *keys, int shown, const char *fname)
{
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        bool known = false;
        if (lua_type(L, -2) == LUA_TSTRING)
            for (int k = 0; keys[k] && !known; k++)
                known = strcmp(lua_tostring(L, -2), keys[k]) == 0;
        if (!known) {
            char what[200];
            if (lua_type(L, -2) == LUA_TSTRING)
                snprintf(what, sizeof what, "unknown option '%.60s'", lua_tostring(L, -2));
            else
                snprintf(what, sizeof what, "unknown option of type %s", luaL_typename(L, -2));
            arg_error(L, shown, fname, what);
        }
        lua_pop(L, 1);
    }
}

static const char *const environment_keys[] = {
    "terrain_lod_cache_mb",     "terrain_lod_prepare_jobs", "terrain_gpu_cache_mb",
    "terrain_texture_max_size", "terrain_texture_cache_mb", NULL};

/* The environment at idx (a table, or nil/none for the defaults), checked. */
static void read_environment(lua_State *L, int idx, int shown, const char *fname,
                             trn_environment *env)
{
    trn_environment_default(env);
    if (lua_isnoneornil(L, idx)) return;
    if (lua_type(L, idx) != LUA_TTABLE) {
        char what[96];
        snprintf(what, sizeof what, "environment table expected, got %s", luaL_typename(L, idx));
        arg_error(L, shown, fname, what);
    }
    check_keys(L, idx, environment_keys, shown, fname);
    double v;
    opt_field_number(L, idx, "terrain_lod_cache_mb", shown, fname, &env->terrain_lod_cache_mb);
    opt_field_number(L, idx, "terrain_gpu_cache_mb", shown, fname, &env->terrain_gpu_cache_mb);
    opt_field_number(L, idx, "terrain_texture_cache_mb", shown, fname,
                     &env->terrain_texture_cache_mb);
    if (opt_field_number(L, idx, "terrain_lod_prepare_jobs", shown, fname, &v)) {
        if (!(v >= 0 && v <= 1024 && v == floor(v)))
            arg_error(L, shown, fname, "terrain_lod_prepare_jobs: a whole number 0..1024 expected");
        env->terrain_lod_prepare_jobs = (uint32_t)v;
    }
    if (opt_field_number(L, idx, "terrain_texture_max_size", shown, fname, &v)) {
        if (!(v >= 64 && v <= 8192 && v == floor(v)))
            arg_error(L, shown, fname,
                      "terrain_texture_max_size: a power of two from 64 to 8192 expected");
        env->terrain_texture_max_size = (uint32_t)v;
    }
    trn_error err;
    trn_error_clear(&err);
    if (trn_environment_check(env, &err)) {
        arg_error(L, shown, fname, err.message);
    }
}

static void push_environment(lua_State *L, const trn_environment *env)
{
    lua_createtable(L, 0, 5);
    set_number(L, "terrain_lod_cache_mb", env->terrain_lod_cache_mb);
    set_integer(L, "terrain_lod_prepare_jobs", env->terrain_lod_prepare_jobs);
    set_number(L, "terrain_gpu_cache_mb", env->terrain_gpu_cache_mb);
    set_integer(L, "terrain_texture_max_size", env->terrain_texture_max_size);
    set_number(L, "terrain_texture_cache_mb", env->terrain_texture_cache_mb);
}

/* terrane.environment([options]): the five budgets with their defaults filled in, checked. */
static int l_environment(lua_State *L)
{
    trn_environment env;
    read_environment(L, 1, 1, "environment", &env);
    push_environment(L, &env);
    return 1;
}

static const char *const device_keys[] = {"max_texture_size", "max_array_layers",
                                          "vertex_textures", "instancing", NULL};

/* payload:render_plan([environment [, device]]) */
static int l_payload_render_plan(lua_State *L)
{
    lua_payload *p = check_payload(L, 1, "render_plan");
    trn_environment env;
    read_environment(L, 2, 1, "render_plan", &env);
    trn_device_limits dev = {0, 0, false, false};
    if (!lua_isnoneornil(L, 3)) {
        if (lua_type(L, 3) != LUA_TTABLE)
            arg_error(L, 2, "render_plan", "device table expected");
        check_keys(L, 3, device_keys, 2, "render_plan");
        double v;
        bool b;
        if (opt_field_number(L, 3, "max_texture_size", 2, "render_plan", &v)) {
            if (!(v >= 1 && v <= 1048576 && v == floor(v)))
                arg_error(L, 2, "render_plan", "max_texture_size: a whole number >= 1 expected");
            dev.max_texture_size = (uint32_t)v;
        }
        if (opt_field_number(L, 3, "max_array_layers", 2, "render_plan", &v)) {
            if (!(v >= 1 && v <= 1048576 && v == floor(v)))
                arg_error(L, 2, "render_plan", "max_array_layers: a whole number >= 1 expected");
            dev.max_array_layers = (uint32_t)v;
        }
        if (opt_field_bool(L, 3, "vertex_textures", 2, "render_plan", &b)) dev.no_vertex_textures = !b;
        if (opt_field_bool(L, 3, "instancing", 2, "render_plan", &b)) dev.no_instancing = !b;
    }
    trn_render_plan plan;
    trn_error err;
    trn_error_clear(&err);
    if (trn_environment_plan(p->payload, &env, &dev, &plan, &err)) return raise_error(L, &err);
    lua_createtable(L, 0, 12);
    lua_pushboolean(L, plan.gpu_patches);
    lua_setfield(L, -2, "gpu_patches");
    set_number(L, "gpu_field_mb", (double)plan.gpu_field_bytes / 1048576.0);
    if (!plan.gpu_patches) set_string(L, "gpu_fallback", plan.gpu_fallback);
    lua_pushboolean(L, plan.texture_arrays);
    lua_setfield(L, -2, "texture_arrays");
    set_integer(L, "texture_layers", plan.texture_layers);
    if (plan.texture_arrays) {
        set_integer(L, "texture_size", plan.texture_size);
        set_number(L, "texture_mb", (double)plan.texture_bytes / 1048576.0);
    } else {
        set_string(L, "texture_fallback", plan.texture_fallback);
    }
    lua_pushboolean(L, plan.lod);
    lua_setfield(L, -2, "lod");
    set_number(L, "lod_mb", (double)plan.lod_bytes / 1048576.0);
    set_integer(L, "prepare_jobs", plan.prepare_jobs);
    if (plan.lod_note[0]) set_string(L, "lod_note", plan.lod_note);
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Buoyancy and swimming: forces a game applies to its own rigid bodies, from the water.
 * ------------------------------------------------------------------------------------------- */

#define BUOYANCY_MT "terrane.Buoyancy"
#define SWIMMING_MT "terrane.Swimming"

typedef struct lua_motion {
    bool swimming; /* a Swimming controller, else Buoyancy */
    double half_height, density_ratio, drag;
    double gravity[3];
    double speed, min_depth, max_flow, acceleration;
    bool has_terrain;
} lua_motion;

static double vdot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* options.key as a number inside [lo, hi] (open at lo when open_lo). */
static void motion_number(lua_State *L, int idx, const char *key, double lo, bool open_lo,
                          double hi, const char *fname, double *out)
{
    double v;
    if (!opt_field_number(L, idx, key, 2, fname, &v)) return;
    if (open_lo ? !(v > lo) : !(v >= lo)) {
        char what[160];
        snprintf(what, sizeof what, "%s: a number %s %g expected, got %g", key, open_lo ? ">" : ">=",
                 lo, v);
        arg_error(L, 2, fname, what);
    }
    if (v > hi) {
        char what[160];
        snprintf(what, sizeof what, "%s: a number <= %g expected, got %g", key, hi, v);
        arg_error(L, 2, fname, what);
    }
    *out = v;
}

/* Buoyancy.new(name, options) / Swimming.new(name, options). The controller keeps its name,
 * options, its world (options.world, else the one terrane.water answers from at each update),
 * its terrain id and the state table it reuses. */
static int motion_new(lua_State *L, bool swimming)
{
    const char *fname = "new";
    const char *name = check_text(L, 1, 1, fname, "name (string)");
    if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TTABLE) {
        char what[96];
        snprintf(what, sizeof what, "options table expected, got %s", luaL_typename(L, 2));
        arg_error(L, 2, fname, what);
    }
    if (lua_isnone(L, 2)) lua_pushnil(L);
    lua_motion m = {.swimming = swimming,
                    .half_height = 0.5,
                    .density_ratio = 1.0,
                    .drag = 1.0,
                    .gravity = {0.0, -9.81, 0.0},
                    .speed = 3.0,
                    .min_depth = 1.0,
                    .max_flow = INFINITY,
                    .acceleration = 8.0};
    static const char *const buoy_keys[] = {"half_height", "density_ratio", "drag", "gravity",
                                            "terrain_id", "world", NULL};
    static const char *const swim_keys[] = {"speed", "min_depth", "max_flow", "acceleration",
                                            "terrain_id", "world", NULL};
    if (lua_istable(L, 2)) {
        check_keys(L, 2, swimming ? swim_keys : buoy_keys, 2, fname);
        if (swimming) {
            motion_number(L, 2, "speed", 0, false, 1e6, fname, &m.speed);
            motion_number(L, 2, "min_depth", 0, false, 1e9, fname, &m.min_depth);
            motion_number(L, 2, "max_flow", 0, false, INFINITY, fname, &m.max_flow);
            motion_number(L, 2, "acceleration", 0, true, 1e6, fname, &m.acceleration);
        } else {
            motion_number(L, 2, "half_height", 0, true, 1e6, fname, &m.half_height);
            motion_number(L, 2, "density_ratio", 0, false, 1e6, fname, &m.density_ratio);
            motion_number(L, 2, "drag", 0, false, 1e6, fname, &m.drag);
            if (lua_getfield(L, 2, "gravity") != LUA_TNIL) {
                char got[96];
                if (!read_numbers(L, -1, 3, m.gravity, got, sizeof got)) {
                    char what[192];
                    snprintf(what, sizeof what, "gravity: Vec3 expected, got %s", got);
                    arg_error(L, 2, fname, what);
                }
            }
            lua_pop(L, 1);
        }
    }
    lua_motion *u = lua_newuserdatauv(L, sizeof *u, 4);
    *u = m;
    luaL_setmetatable(L, swimming ? SWIMMING_MT : BUOYANCY_MT);
    lua_pushstring(L, name);
    lua_setiuservalue(L, -2, 1);
    if (lua_istable(L, 2)) {
        if (lua_getfield(L, 2, "world") != LUA_TNIL) check_world(L, lua_gettop(L), fname);
        lua_setiuservalue(L, -2, 2);
        if (lua_getfield(L, 2, "terrain_id") != LUA_TNIL) {
            check_text(L, -1, 2, fname, "terrain_id (string)");
            u->has_terrain = true;
        }
        lua_setiuservalue(L, -2, 3);
    }
    lua_createtable(L, 0, 10);
    lua_pushstring(L, name);
    lua_setfield(L, -2, "name");
    lua_setiuservalue(L, -2, 4);
    return 1;
}

static int l_buoyancy_new(lua_State *L)
{
    return motion_new(L, false);
}

static int l_swimming_new(lua_State *L)
{
    return motion_new(L, true);
}

/* The body table: position, velocity (default zero), mass (> 0), type ("dynamic", "static",
 * "kinematic"; default dynamic) and enabled (default true). NULL reason: it takes forces. */
typedef struct motion_body {
    double position[3], velocity[3], mass;
    const char *reason;
} motion_body;

static void read_body(lua_State *L, int idx, int shown, const char *fname, motion_body *b)
{
    memset(b, 0, sizeof *b);
    b->mass = 1.0;
    if (lua_isnoneornil(L, idx)) {
        b->reason = "missing";
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE) {
        char what[96];
        snprintf(what, sizeof what, "body table expected, got %s", luaL_typename(L, idx));
        arg_error(L, shown, fname, what);
    }
    static const char *const keys[] = {"position", "velocity", "mass", "type", "enabled", NULL};
    check_keys(L, idx, keys, shown, fname);
    char got[96], what[192];
    lua_getfield(L, idx, "position");
    if (!read_numbers(L, -1, 3, b->position, got, sizeof got)) {
        snprintf(what, sizeof what, "body.position: Vec3 expected, got %s", got);
        arg_error(L, shown, fname, what);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "velocity") != LUA_TNIL &&
        !read_numbers(L, -1, 3, b->velocity, got, sizeof got)) {
        snprintf(what, sizeof what, "body.velocity: Vec3 expected, got %s", got);
        arg_error(L, shown, fname, what);
    }
    lua_pop(L, 1);
    double mass = 1.0;
    if (opt_field_number(L, idx, "mass", shown, fname, &mass) && !(mass > 0.0))
        arg_error(L, shown, fname, "body.mass: a number > 0 expected");
    b->mass = mass;
    bool enabled = true;
    opt_field_bool(L, idx, "enabled", shown, fname, &enabled);
    const int t = lua_getfield(L, idx, "type");
    const char *type = t == LUA_TSTRING ? lua_tostring(L, -1) : t == LUA_TNIL ? "dynamic" : NULL;
    if (!type || (strcmp(type, "dynamic") && strcmp(type, "static") && strcmp(type, "kinematic")))
        arg_error(L, shown, fname, "body.type: \"dynamic\", \"static\" or \"kinematic\" expected");
    b->reason = !enabled                       ? "disabled"
                : strcmp(type, "static") == 0    ? "static"
                : strcmp(type, "kinematic") == 0 ? "kinematic"
                                                 : NULL;
    lua_pop(L, 1);
}

/* The water under the controller's point, from its world (or terrane.water's). */
static bool motion_sample(lua_State *L, int self, const double pos[3], trn_world_water_sample *s)
{
    lua_getiuservalue(L, self, 2);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        push_water_world(L);
    }
    lua_world *w = check_world(L, lua_gettop(L), "fixed_update");
    lua_getiuservalue(L, self, 3);
    const char *id = lua_isnil(L, -1) ? NULL : lua_tostring(L, -1);
    const bool wet = trn_world_water_sample_at(w->world, pos, id, s);
    lua_pop(L, 2);
    return wet;
}

static double check_dt(lua_State *L, int idx)
{
    const double dt = check_number(L, idx, 1, "fixed_update");
    if (!(dt > 0.0 && isfinite(dt))) arg_error(L, 1, "fixed_update", "dt: a finite number > 0 expected");
    return dt;
}

/* Fill the reused state table (uservalue 4) and return it. */
static void state_begin(lua_State *L, int self)
{
    lua_getiuservalue(L, self, 4);
    static const char *const clear[] = {"reason", "sample", "depth", NULL};
    for (int k = 0; clear[k]; k++) {
        lua_pushnil(L);
        lua_setfield(L, -2, clear[k]);
    }
}

/* controller:fixed_update(dt, body): buoyancy along the sampled column_up for the submerged
 * share of an upright segment of half_height about the body's position, and drag relative to
 * the water's flow. */
static int l_buoyancy_update(lua_State *L)
{
    lua_motion *m = luaL_checkudata(L, 1, BUOYANCY_MT);
    const double dt = check_dt(L, 2);
    (void)dt;
    motion_body b;
    read_body(L, 3, 2, "fixed_update", &b);
    double force[3] = {0, 0, 0}, lift[3] = {0, 0, 0}, drag[3] = {0, 0, 0};
    double submerged = 0.0;
    trn_world_water_sample s;
    const bool wet = !b.reason && motion_sample(L, 1, b.position, &s);
    state_begin(L, 1);
    if (!b.reason && !wet) b.reason = "dry";
    if (!b.reason) {
        const double rel[3] = {s.surface[0] - b.position[0], s.surface[1] - b.position[1],
                               s.surface[2] - b.position[2]};
        const double d = vdot(rel, s.column_up); /* surface above the segment's centre */
        submerged = (d + m->half_height) / (2.0 * m->half_height);
        submerged = submerged < 0.0 ? 0.0 : submerged > 1.0 ? 1.0 : submerged;
        const double g = sqrt(vdot(m->gravity, m->gravity));
        for (int k = 0; k < 3; k++) {
            lift[k] = s.column_up[k] * g * b.mass * m->density_ratio * submerged;
            drag[k] = -m->drag * b.mass * submerged * (b.velocity[k] - s.flow_velocity[k]);
            force[k] = lift[k] + drag[k];
        }
        set_number(L, "immersion", d);
        push_sample(L, &s);
        lua_setfield(L, -2, "sample");
        if (submerged == 0.0) b.reason = "above";
    }
    lua_pushboolean(L, submerged > 0.0);
    lua_setfield(L, -2, "active");
    set_number(L, "submerged", submerged);
    set_vec3(L, "force", force);
    set_vec3(L, "buoyancy", lift);
    set_vec3(L, "drag", drag);
    set_string(L, "reason", b.reason);
    return 1;
}

/* swimmer:fixed_update(dt, direction, body): swimming where the point is under water at least
 * min_depth deep and the current is at most max_flow; the force steers the body's velocity
 * toward speed along direction (its length is ignored; zero: tread water) plus the flow, at
 * most `acceleration` per second of the difference. */
static int l_swimming_update(lua_State *L)
{
    lua_motion *m = luaL_checkudata(L, 1, SWIMMING_MT);
    const double dt = check_dt(L, 2);
    double dir[3];
    check_vec3(L, 3, 2, "fixed_update", dir);
    motion_body b;
    read_body(L, 4, 3, "fixed_update", &b);
    trn_world_water_sample s;
    const bool wet = !b.reason && motion_sample(L, 1, b.position, &s);
    state_begin(L, 1);
    double force[3] = {0, 0, 0}, target[3] = {0, 0, 0};
    bool swimming = false;
    if (!b.reason) {
        if (!wet || !s.underwater) {
            b.reason = "dry";
        } else {
            const double flow = sqrt(vdot(s.flow_velocity, s.flow_velocity));
            set_number(L, "depth", s.depth);
            set_number(L, "flow_speed", flow);
            push_sample(L, &s);
            lua_setfield(L, -2, "sample");
            if (s.depth < m->min_depth)
                b.reason = "shallow";
            else if (flow > m->max_flow)
                b.reason = "current";
        }
    }
    if (!b.reason) {
        swimming = true;
        const double len = sqrt(vdot(dir, dir));
        const double gain = m->acceleration * dt < 1.0 ? m->acceleration : 1.0 / dt;
        for (int k = 0; k < 3; k++) {
            target[k] = (len > 0.0 ? dir[k] / len * m->speed : 0.0) + s.flow_velocity[k];
            force[k] = b.mass * gain * (target[k] - b.velocity[k]);
        }
    }
    lua_pushboolean(L, swimming);
    lua_setfield(L, -2, "swimming");
    set_vec3(L, "force", force);
    set_vec3(L, "target_velocity", target);
    set_string(L, "reason", b.reason);
    return 1;
}

static int l_motion_state(lua_State *L)
{
    if (!luaL_testudata(L, 1, BUOYANCY_MT)) luaL_checkudata(L, 1, SWIMMING_MT);
    lua_getiuservalue(L, 1, 4);
    return 1;
}

static int l_motion_tostring(lua_State *L)
{
    const bool swim = luaL_testudata(L, 1, SWIMMING_MT) != NULL;
    lua_getiuservalue(L, 1, 1);
    lua_pushfstring(L, "%s (%s)", swim ? "Swimming" : "Buoyancy", lua_tostring(L, -1));
    return 1;
}

int luaopen_terrane_water_buoyancy(lua_State *L)
{
    static const luaL_Reg functions[] = {{"new", l_buoyancy_new}, {NULL, NULL}};
    register_types(L);
    luaL_newlib(L, functions);
    return 1;
}

int luaopen_terrane_water_swimming(lua_State *L)
{
    static const luaL_Reg functions[] = {{"new", l_swimming_new}, {NULL, NULL}};
    register_types(L);
    luaL_newlib(L, functions);
    return 1;
}

static void register_types(lua_State *L)
{
    static const luaL_Reg payload_methods[] = {
        {"height", l_payload_height},
        {"normal", l_payload_normal},
        {"biome", l_payload_biome},
        {"biome_info", l_payload_biome_info},
        {"ledgers", l_payload_ledgers},
        {"mapping", l_payload_mapping},
        {"layers", l_payload_layers},
        {"layer_maps", l_payload_layer_maps},
        {"render_plan", l_payload_render_plan},
        {"role", l_payload_role},
        {"info", l_payload_info},
        {"instances", l_payload_instances},
        {"close", l_payload_close},
        {"__gc", l_payload_release},
        {"__close", l_payload_release},
        {"__tostring", l_payload_tostring},
        {NULL, NULL},
    };
    static const luaL_Reg world_methods[] = {
        {"place", l_world_place},
        {"set_transform", l_world_set_transform},
        {"set_enabled", l_world_set_enabled},
        {"set_scatter_exclusions", l_world_set_scatter_exclusions},
        {"instance_indices", l_world_instance_indices},
        {"remove", l_world_remove},
        {"count", l_world_count},
        {"ground", l_world_ground},
        {"set_surface_blending", l_world_set_surface_blending},
        {"sample", l_world_sample},
        {"tracker", l_world_tracker},
        {"__gc", l_world_gc},
        {"__tostring", l_world_tostring},
        {NULL, NULL},
    };
    static const luaL_Reg tracker_methods[] = {
        {"update", l_tracker_update},
        {"current", l_tracker_current},
        {"reset", l_tracker_reset},
        {"__gc", l_tracker_gc},
        {NULL, NULL},
    };
    new_type(L, PAYLOAD_MT, payload_methods);
    new_type(L, WORLD_MT, world_methods);
    new_type(L, TRACKER_MT, tracker_methods);
    static const luaL_Reg buoyancy_methods[] = {
        {"fixed_update", l_buoyancy_update},
        {"state", l_motion_state},
        {"__tostring", l_motion_tostring},
        {NULL, NULL},
    };
    static const luaL_Reg swimming_methods[] = {
        {"fixed_update", l_swimming_update},
        {"state", l_motion_state},
        {"__tostring", l_motion_tostring},
        {NULL, NULL},
    };
    new_type(L, BUOYANCY_MT, buoyancy_methods);
    new_type(L, SWIMMING_MT, swimming_methods);
}

int luaopen_terrane(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"open", l_open},
        {"world", l_world_new},
        {"default_world", l_default_world},
        {"environment", l_environment},
        {NULL, NULL},
    };
    register_types(L);
    luaL_newlib(L, functions);
    lua_pushliteral(L, TRN_VERSION_STRING);
    lua_setfield(L, -2, "version");
    return 1;
}

/* water.sample(position [, terrain_id]) on the bound world. */
static int l_water_sample(lua_State *L)
{
    push_water_world(L);
    lua_insert(L, 1); /* as world:sample: a missing argument stays "no value" in messages */
    return sample_in(L, 1, 2);
}

static int l_water_tracker(lua_State *L)
{
    push_water_world(L);
    lua_insert(L, 1);
    return tracker_in(L, 1, 2);
}

/* water.bind(world): later samples and trackers use it; water.bind(nil) goes back to the
 * default world. Returns the world bound before. */
static int l_water_bind(lua_State *L)
{
    if (!lua_isnoneornil(L, 1)) check_world(L, 1, "bind");
    lua_settop(L, 1);
    push_water_world(L);
    lua_pushvalue(L, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bound_world_key);
    return 1;
}

static int l_water_world(lua_State *L)
{
    push_water_world(L);
    return 1;
}

int luaopen_terrane_water(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"sample", l_water_sample},
        {"tracker", l_water_tracker},
        {"bind", l_water_bind},
        {"world", l_water_world},
        {NULL, NULL},
    };
    register_types(L);
    luaL_newlib(L, functions);
    return 1;
}

void trn_lua_preload(lua_State *L)
{
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_terrane);
    lua_setfield(L, -2, "terrane");
    lua_pushcfunction(L, luaopen_terrane_water);
    lua_setfield(L, -2, "terrane.water");
    lua_pushcfunction(L, luaopen_terrane_water_buoyancy);
    lua_setfield(L, -2, "terrane.water.buoyancy");
    lua_pushcfunction(L, luaopen_terrane_water_swimming);
    lua_setfield(L, -2, "terrane.water.swimming");
    lua_pop(L, 1);
}

static int load_payload(lua_State *L)
{
    const char *path = lua_touserdata(L, 1);
    const char *id = lua_touserdata(L, 2);
    register_types(L);
    lua_payload *p = new_payload(L);
    const int pidx = lua_gettop(L);
    trn_error err;
    trn_error_clear(&err);
    if (trn_payload_open(path, NULL, &p->payload, &err)) {
        char text[1200];
        trn_error_format(&err, text, sizeof text);
        lua_pushstring(L, text);
        return lua_error(L); /* no position prefix: the CLI names the file itself */
    }
    push_default_world(L);
    lua_pushcfunction(L, l_world_place);
    lua_pushvalue(L, -2);
    lua_pushstring(L, id);
    lua_pushvalue(L, pidx);
    lua_call(L, 3, 0);
    return 0;
}

/* Payloads opened by trn_lua_place_payload, by path: placements of one asset share one. */
static const char payload_cache_key = 'p';

typedef struct place_args {
    const char *path, *id;
    const trn_transform *transform;
} place_args;

static int place_payload(lua_State *L)
{
    const place_args *a = lua_touserdata(L, 1);
    register_types(L);
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &payload_cache_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &payload_cache_key);
    }
    const int cache = lua_gettop(L);
    if (lua_getfield(L, cache, a->path) != LUA_TUSERDATA) {
        lua_pop(L, 1);
        lua_payload *p = new_payload(L);
        trn_error err;
        trn_error_clear(&err);
        if (trn_payload_open(a->path, NULL, &p->payload, &err)) {
            char text[1200];
            trn_error_format(&err, text, sizeof text);
            lua_pushstring(L, text);
            return lua_error(L);
        }
        lua_pushvalue(L, -1);
        lua_setfield(L, cache, a->path);
    }
    const int pidx = lua_gettop(L);
    push_default_world(L);
    lua_pushcfunction(L, l_world_place);
    lua_pushvalue(L, -2);
    lua_pushstring(L, a->id);
    lua_pushvalue(L, pidx);
    int nargs = 3;
    if (a->transform) {
        lua_createtable(L, 0, 3);
        set_vec3(L, "position", a->transform->translation);
        lua_createtable(L, 4, 0);
        for (int k = 0; k < 4; k++) {
            lua_pushnumber(L, a->transform->rotation[k]);
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "rotation");
        set_vec3(L, "scale", a->transform->scale);
        nargs = 4;
    }
    lua_call(L, nargs, 0);
    return 0;
}

int trn_lua_place_payload(lua_State *L, const char *path, const char *terrain_id,
                          const trn_transform *transform)
{
    place_args a = {path, terrain_id, transform};
    lua_pushcfunction(L, place_payload);
    lua_pushlightuserdata(L, &a);
    return lua_pcall(L, 1, 0, 0);
}

int trn_lua_load_payload(lua_State *L, const char *path, const char *terrain_id)
{
    lua_pushcfunction(L, load_payload);
    lua_pushlightuserdata(L, (void *)(uintptr_t)path);
    lua_pushlightuserdata(L, (void *)(uintptr_t)terrain_id);
    return lua_pcall(L, 2, 0, 0);
}

/* terrane lua: run a Lua 5.4 script with require("terrane") and a world of cooked payloads. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "cli.h"
#include "core/fileio.h"
#include "terrane/recipe.h"
#include "lua_verb.h"
#include "terrane_lua.h"

static const char *const help_text =
    "usage: terrane lua SCRIPT.lua [PAYLOAD.terrain.bin ...] [--arg VALUE ...] [-- VALUE ...]\n"
    "\n"
    "Run SCRIPT.lua in a fresh Lua 5.4 state with the modules require(\"terrane\")\n"
    "(payloads, worlds, ground queries) and require(\"terrane.water\")\n"
    "(water samples and immersion trackers). Each PAYLOAD (a *.terrain.bin from 'terrane cook')\n"
    "is opened and placed, enabled and at the identity transform, in the default world that\n"
    "terrane.water answers from, under its file name without .terrain.bin as terrain id\n"
    "(lake.terrain.bin: \"lake\"). The script gets its arguments in arg[1], arg[2], ... and\n"
    "as '...'; arg[0] is the script. docs/lua.md is the API reference.\n"
    "\n"
    "Scripts run sandboxed, as a game runs a level's scripts: the base functions (no dofile or\n"
    "loadfile; load takes text only), coroutine, table, string, math, utf8 and os.clock, time,\n"
    "date and difftime, io.write to standard output; no files, no other os function, no\n"
    "debug, and require finds the terrane modules alone. A script may run 2e9 Lua\n"
    "instructions (a few seconds) and hold 256 MiB; past either it stops with an error.\n"
    "--trusted gives a script you wrote yourself every standard library (files, processes)\n"
    "and no budgets unless given.\n"
    "\n"
    "options:\n"
    "  --arg VALUE             pass VALUE to the script (repeatable; keeps its order)\n"
    "  --scene COOKED.scene.json  place the terrains of a scene 'terrane cook' wrote: each\n"
    "                          entity whose Terrain3D names a payload, under its entity id\n"
    "                          at its Transform3D (placements of one asset share its payload)\n"
    "  --trusted               every standard library, no budgets unless given below\n"
    "  --max-instructions N    the instruction budget (0: none)\n"
    "  --max-memory BYTES      the memory budget, with an optional K, M or G suffix (0: none)\n"
    "  --                      every later word is passed to the script\n"
    "\n"
    "exit status: 0 the script ran to its end, 1 the script raised an error (message and Lua\n"
    "traceback on stderr) or a payload is missing, damaged or placed twice under one id,\n"
    "2 usage error.\n"
    "\n"
    "examples:\n"
    "  terrane lua examples/scripts/water_sensor.lua lake.terrain.bin\n"
    "  terrane lua probe.lua island.terrain.bin --arg 120 --arg 40\n"
    "  terrane lua --trusted export_csv.lua island.terrain.bin\n";

/* The terrain id of a payload: its file name without the directory and ".terrain.bin" (or,
 * for another name, without its last extension). */
static void payload_stem(const char *path, char *stem, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t n = strlen(name);
    static const char suffix[] = ".terrain.bin";
    const size_t sn = sizeof suffix - 1u;
    if (n > sn && strcmp(name + n - sn, suffix) == 0) {
        n -= sn;
    } else {
        const char *dot = strrchr(name, '.');
        if (dot && dot != name) n = (size_t)(dot - name);
    }
    snprintf(stem, size, "%.*s", (int)(n < size ? n : size - 1u), name);
}

/* A count with an optional K/M/G suffix (powers of 1024 when bytes). False when it is not. */
static bool parse_count(const char *text, bool bytes, uint64_t *out)
{
    if (!text || text[0] < '0' || text[0] > '9') return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text) return false;
    uint64_t scale = 1;
    if (*end && end[1] == '\0') {
        const uint64_t base = bytes ? 1024u : 1000u;
        if (*end == 'K' || *end == 'k')
            scale = base;
        else if (*end == 'M' || *end == 'm')
            scale = base * base;
        else if (*end == 'G' || *end == 'g')
            scale = base * base * base;
        else
            return false;
        end++;
    }
    if (*end || (scale > 1 && v > UINT64_MAX / scale)) return false;
    *out = (uint64_t)v * scale;
    return true;
}

/* The message handler: the error with Lua's traceback (as the lua interpreter prints it). */
static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Everything the script sees, in protected mode: the modules, arg, the chunk and its run. */
typedef struct lua_run {
    const char *script;
    char **values;
    int value_count;
} lua_run;

static int run_script(lua_State *L)
{
    const lua_run *run = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_createtable(L, run->value_count, 1);
    lua_pushstring(L, run->script);
    lua_rawseti(L, -2, 0);
    for (int k = 0; k < run->value_count; k++) {
        lua_pushstring(L, run->values[k]);
        lua_rawseti(L, -2, k + 1);
    }
    lua_setglobal(L, "arg");
    lua_pushcfunction(L, traceback);
    if (luaL_loadfile(L, run->script) != LUA_OK) return lua_error(L);
    for (int k = 0; k < run->value_count; k++)
        lua_pushstring(L, run->values[k]);
    if (lua_pcall(L, run->value_count, 0, 1) != LUA_OK) return lua_error(L);
    return 0;
}

/* The error and its traceback line by line: the traceback's leading tabs stay tabs, anything
 * else unprintable is escaped as in every message. */
static void print_lua_error(const char *msg)
{
    fputs("terrane lua: error: ", stderr);
    if (!msg) msg = "(error object is not a string)";
    while (*msg) {
        size_t n = strcspn(msg, "\n");
        while (n > 0 && *msg == '\t') {
            fputc('\t', stderr);
            msg++;
            n--;
        }
        cli_fprintf(stderr, "%.*s\n", (int)n, msg);
        msg += n;
        if (*msg == '\n') msg++;
    }
}

/* A cooked scene's placements: each entity whose Terrain3D names a payload is placed in the
 * default world under its entity id at its Transform3D, and keeps its scatter exclusions;
 * entities placing one payload share it. The scene is checked first (positions in errors). */
static int load_scene(cli_ctx *ctx, lua_State *L, const char *path)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    if (trn_file_read_all(path, (size_t)64 << 20, &data, &size, &e)) return cli_fail(ctx, &e);
    if (trn_scene_document_check((const char *)data, size, path, &e)) {
        free(data);
        return cli_fail(ctx, &e);
    }
    const size_t bom = size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    json_error_t je;
    json_t *doc = json_loadb((const char *)data + bom, size - bom, 0, &je);
    free(data);
    if (!doc) return cli_failf(ctx, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    const char *slash = strrchr(path, '/');
    const int dir_len = slash ? (int)(slash - path) + 1 : 0;
    const json_t *ents = json_object_get(doc, "entities");
    int rc = CLI_EXIT_OK, placed = 0;
    for (size_t k = 0; !rc && k < json_array_size(ents); k++) {
        const json_t *ent = json_array_get(ents, k);
        const json_t *comps = json_object_get(ent, "components");
        const json_t *t = json_object_get(comps, "Terrain3D");
        const char *payload = json_string_value(json_object_get(t, "payload"));
        if (!payload) {
            if (json_object_get(t, "recipe"))
                rc = cli_failf(ctx,
                               "%s: entities[%zu] has an inline recipe: a game loads cooked "
                               "terrain; run 'terrane cook' on the project and pass the cooked "
                               "scene",
                               path, k);
            continue;
        }
        const char *id = json_string_value(json_object_get(ent, "id"));
        if (!id || !id[0]) {
            rc = cli_failf(ctx, "%s: entities[%zu] places a payload but has no id", path, k);
            break;
        }
        trn_transform tf;
        trn_transform_identity(&tf);
        const json_t *tr = json_object_get(comps, "Transform3D");
        const json_t *pos = json_object_get(tr, "position"), *rot = json_object_get(tr, "rotation");
        const json_t *scl = json_object_get(tr, "scale");
        for (int c = 0; c < 3; c++) {
            if (pos) tf.translation[c] = json_number_value(json_array_get(pos, (size_t)c));
            if (scl) tf.scale[c] = json_number_value(json_array_get(scl, (size_t)c));
        }
        for (int c = 0; rot && c < 4; c++)
            tf.rotation[c] = json_number_value(json_array_get(rot, (size_t)c));
        char file[4096];
        snprintf(file, sizeof file, "%.*s%s", payload[0] == '/' ? 0 : dir_len, path, payload);
        if (trn_lua_place_payload(L, file, id, &tf) != LUA_OK) {
            const char *msg = lua_tostring(L, -1);
            rc = cli_failf(ctx, "%s: entities[%zu] ('%s'): %s", path, k, id,
                           msg ? msg : "could not be placed");
            break;
        }
        /* The placement's own look: surface_blending false draws each layer alone. */
        if (json_is_false(json_object_get(t, "surface_blending"))) {
            lua_getglobal(L, "require");
            lua_pushliteral(L, "terrane");
            if (lua_pcall(L, 1, 1, 0) == LUA_OK) {
                lua_getfield(L, -1, "default_world");
                lua_call(L, 0, 1);
                lua_getfield(L, -1, "set_surface_blending");
                lua_insert(L, -2);
                lua_pushstring(L, id);
                lua_pushboolean(L, 0);
                if (lua_pcall(L, 3, 0, 0) != LUA_OK)
                    rc = cli_failf(ctx, "%s: entities[%zu] ('%s'): %s", path, k, id,
                                   lua_tostring(L, -1));
            } else {
                rc = cli_failf(ctx, "%s: %s", path, lua_tostring(L, -1));
            }
            lua_settop(L, 0);
            if (rc) break;
        }
        /* The placement's own scatter exclusions, as the scene gives them. */
        const json_t *excl = json_object_get(t, "scatter_exclusions");
        if (json_array_size(excl)) {
            lua_getglobal(L, "require");
            lua_pushliteral(L, "terrane");
            if (lua_pcall(L, 1, 1, 0) == LUA_OK) {
                lua_getfield(L, -1, "default_world");
                lua_call(L, 0, 1);
                lua_getfield(L, -1, "set_scatter_exclusions");
                lua_insert(L, -2);
                lua_pushstring(L, id);
                lua_createtable(L, (int)json_array_size(excl), 0);
                for (size_t q = 0; q < json_array_size(excl); q++) {
                    lua_pushstring(L, json_string_value(json_array_get(excl, q)));
                    lua_rawseti(L, -2, (lua_Integer)q + 1);
                }
                if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
                    rc = cli_failf(ctx, "%s: entities[%zu] ('%s'): %s", path, k, id,
                                   lua_tostring(L, -1));
                }
            } else {
                rc = cli_failf(ctx, "%s: %s", path, lua_tostring(L, -1));
            }
            lua_settop(L, 0);
        }
        placed++;
    }
    json_decref(doc);
    if (!rc && !placed)
        rc = cli_failf(ctx,
                       "%s: no entity's Terrain3D names a payload: pass a scene 'terrane cook' "
                       "wrote",
                       path);
    return rc;
}

int cli_verb_lua(cli_ctx *ctx, int argc, char **argv)
{
    int rc = cli_text_only(ctx);
    if (rc != CLI_EXIT_OK) return rc;
    const char *script = NULL;
    /* Payloads and values point into argv: at most argc of each. */
    const char **payloads = calloc((size_t)argc, sizeof *payloads);
    char **values = calloc((size_t)argc, sizeof *values);
    int payload_count = 0, value_count = 0;
    const char *scene = NULL;
    bool trusted = false, set_instructions = false, set_memory = false;
    uint64_t max_instructions = TRN_LUA_DEFAULT_INSTRUCTIONS, max_memory = TRN_LUA_DEFAULT_MEMORY;
    lua_State *L = NULL;
    if (!payloads || !values) {
        rc = cli_failf(ctx, "out of memory");
        goto done;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            while (++i < argc)
                values[value_count++] = argv[i];
            break;
        }
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            goto done;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) {
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        if (c > 0) continue;
        if (strcmp(a, "--arg") == 0 || strncmp(a, "--arg=", 6) == 0) {
            const char *v = a[5] == '=' ? a + 6 : cli_option_value(ctx, argc, argv, &i);
            if (!v) {
                rc = CLI_EXIT_USAGE;
                goto done;
            }
            values[value_count++] = (char *)(uintptr_t)v;
        } else if (strcmp(a, "--scene") == 0) {
            if (!(scene = cli_option_value(ctx, argc, argv, &i))) {
                rc = CLI_EXIT_USAGE;
                goto done;
            }
        } else if (strcmp(a, "--trusted") == 0) {
            trusted = true;
        } else if (strcmp(a, "--max-instructions") == 0 || strcmp(a, "--max-memory") == 0) {
            const bool mem = a[6] == 'm';
            const char *v = cli_option_value(ctx, argc, argv, &i);
            if (!v) {
                rc = CLI_EXIT_USAGE;
                goto done;
            }
            if (!parse_count(v, mem, mem ? &max_memory : &max_instructions) ||
                (mem && max_memory > SIZE_MAX)) {
                rc = cli_usage_error(ctx, "%s expects a whole number%s, got '%s'", a,
                                     mem ? " of bytes (K, M, G suffixes allowed)" : "", v);
                goto done;
            }
            if (mem)
                set_memory = true;
            else
                set_instructions = true;
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage_error(ctx, "unknown option '%s'", a);
            goto done;
        } else if (!script) {
            script = a;
        } else {
            payloads[payload_count++] = a;
        }
    }
    if (!script) {
        rc = cli_usage_error(ctx, "needs a script, such as 'terrane lua probe.lua "
                                  "lake.terrain.bin'");
        goto done;
    }
    /* A trusted script keeps only the budgets it was given. */
    trn_lua_limits limits = {
        .max_instructions = trusted && !set_instructions ? 0 : max_instructions,
        .max_memory = trusted && !set_memory ? 0 : (size_t)max_memory};
    L = trn_lua_state_new(trusted, &limits);
    if (!L) {
        rc = cli_failf(ctx, "out of memory (no Lua state)");
        goto done;
    }
    for (int k = 0; k < payload_count; k++) {
        char stem[256];
        payload_stem(payloads[k], stem, sizeof stem);
        if (trn_lua_load_payload(L, payloads[k], stem) != LUA_OK) {
            const char *msg = lua_tostring(L, -1);
            /* A damaged payload's message starts with its path; a duplicate id's does not. */
            if (msg && strstr(msg, payloads[k]) == msg)
                rc = cli_failf(ctx, "%s", msg);
            else
                rc = cli_failf(ctx,
                               "%s: %s (a payload's terrain id is its file name without "
                               ".terrain.bin)",
                               payloads[k], msg ? msg : "could not be placed");
            goto done;
        }
    }
    if (scene && (rc = load_scene(ctx, L, scene))) goto done;
    lua_run run = {script, values, value_count};
    lua_pushcfunction(L, run_script);
    lua_pushlightuserdata(L, &run);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        fflush(stdout);
        print_lua_error(lua_tostring(L, -1));
        const char *msg = lua_tostring(L, -1);
        if (msg && strstr(msg, "not enough memory") && limits.max_memory)
            cli_note(ctx, "the script's memory budget is %zu bytes; --max-memory raises it",
                     limits.max_memory);
        else if (msg && strstr(msg, "Lua instructions"))
            cli_note(ctx, "--max-instructions raises the budget");
        rc = CLI_EXIT_FAIL;
    }
done:
    fflush(stdout);
    trn_lua_state_close(L);
    free(payloads);
    free(values);
    return rc;
}

/* Lua 5.4 binding of the terrane runtime: require("terrane") and require("terrane.water"). */
#ifndef TERRANE_LUA_H
#define TERRANE_LUA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "terrane/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The module tables (docs/lua.md). Both register the userdata types, so either may be loaded
 * first; as a loadable module (terrane.so) Lua finds both in the one file. */
int luaopen_terrane(lua_State *L);
int luaopen_terrane_water(lua_State *L);
/* require("terrane.water.buoyancy") and require("terrane.water.swimming"): controllers that
 * turn the water under a body into forces the game applies (docs/lua.md). */
int luaopen_terrane_water_buoyancy(lua_State *L);
int luaopen_terrane_water_swimming(lua_State *L);

/* Put both modules in package.preload of L (the package library must be open), so scripts
 * require them without a terrane.so on package.cpath. Raises a Lua error only when out of
 * memory: call it in protected mode when that matters. */
void trn_lua_preload(lua_State *L);

/* Open the payload at path and place it, at the identity transform and enabled, in L's
 * default world (terrane.default_world()) as terrain_id. Runs in protected mode: returns
 * LUA_OK, or another status with the message (file, section, offset; or the duplicate id) on
 * top of the stack. */
int trn_lua_load_payload(lua_State *L, const char *path, const char *terrain_id);

/* Place the payload at path in L's default world as terrain_id at transform (NULL: identity):
 * a scene's placements. A path placed before in this state is not read again: placements of one
 * asset share one payload, each with its own transform. Protected mode, as above. */
int trn_lua_place_payload(lua_State *L, const char *path, const char *terrain_id,
                          const trn_transform *transform);

/* Budgets for a script's state; 0 means no limit. */
typedef struct trn_lua_limits {
    uint64_t max_instructions; /* Lua VM instructions, counted in steps of 1000 */
    size_t max_memory;         /* bytes the state may hold */
} trn_lua_limits;

/* The budgets `terrane lua` gives a script unless told otherwise: a few seconds of Lua and
 * 256 MiB. */
#define TRN_LUA_DEFAULT_INSTRUCTIONS 2000000000ull
#define TRN_LUA_DEFAULT_MEMORY ((size_t)256 << 20)

/* A new state with both modules preloaded and the given budgets (NULL: none); a script past a
 * budget gets a Lua error ("not enough memory", or the instruction budget named). Sandboxed
 * (trusted false), for scripts from a level or a mod: the base functions without dofile and
 * loadfile (load takes text only), coroutine, table, string, math, utf8, os.clock/time/date/
 * difftime, io.write to standard output, and require for the terrane modules alone; no other
 * io or os function, no debug,
 * no C modules. Trusted: every standard library. NULL when out of memory. Close it with
 * trn_lua_state_close. */
lua_State *trn_lua_state_new(bool trusted, const trn_lua_limits *limits);
/* Close a state made by trn_lua_state_new (NULL is a no-op). */
void trn_lua_state_close(lua_State *L);

#ifdef __cplusplus
}
#endif

#endif

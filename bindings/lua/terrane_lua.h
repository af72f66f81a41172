/* Lua 5.4 binding of the terrane runtime: require("terrane") and require("terrane.water"). */
#ifndef TERRANE_LUA_H
#define TERRANE_LUA_H

#include <lua.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The module tables (docs/lua.md). Both register the userdata types, so either may be loaded
 * first; as a loadable module (terrane.so) Lua finds both in the one file. */
int luaopen_terrane(lua_State *L);
int luaopen_terrane_water(lua_State *L);

/* Put both modules in package.preload of L (the package library must be open), so scripts
 * require them without a terrane.so on package.cpath. Raises a Lua error only when out of
 * memory: call it in protected mode when that matters. */
void trn_lua_preload(lua_State *L);

/* Open the payload at path and place it, at the identity transform and enabled, in L's
 * default world (terrane.default_world()) as terrain_id. Runs in protected mode: returns
 * LUA_OK, or another status with the message (file, section, offset; or the duplicate id) on
 * top of the stack. */
int trn_lua_load_payload(lua_State *L, const char *path, const char *terrain_id);

#ifdef __cplusplus
}
#endif

#endif

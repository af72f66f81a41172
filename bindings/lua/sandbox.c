/* Lua states for scripts: sandboxed (safe libraries, instruction and memory budgets) or trusted. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "terrane_lua.h"

/* The allocator's user data: the budget and what the state holds now. */
typedef struct lua_budget {
    size_t used, max_memory;        /* bytes; max 0: unlimited */
    uint64_t executed, max_instructions; /* max 0: unlimited */
} lua_budget;

#define HOOK_EVERY 1000

static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    lua_budget *b = ud;
    const size_t old = ptr ? osize : 0; /* with ptr NULL, osize is the object's type */
    if (nsize == 0) {
        free(ptr);
        b->used -= old;
        return NULL;
    }
    /* Lua treats NULL as "not enough memory" and raises it as an error the script can see. */
    if (b->max_memory && nsize > old && b->used - old + nsize > b->max_memory) return NULL;
    void *p = realloc(ptr, nsize);
    if (!p) return NULL;
    b->used = b->used - old + nsize;
    return p;
}

static void budget_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    void *ud = NULL;
    lua_getallocf(L, &ud);
    lua_budget *b = ud;
    b->executed += HOOK_EVERY;
    if (b->max_instructions && b->executed > b->max_instructions)
        luaL_error(L, "the script ran past its budget of %I Lua instructions",
                   (lua_Integer)b->max_instructions);
}

/* load() for text only: precompiled chunks can crash the interpreter. */
static int text_load(lua_State *L)
{
    const int n = lua_gettop(L);
    luaL_checkany(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "__trn_load");
    lua_pushvalue(L, 1);
    if (n >= 2)
        lua_pushvalue(L, 2);
    else
        lua_pushnil(L);
    lua_pushliteral(L, "t");
    int args = 3;
    if (n >= 4) { /* an environment only when given: none means the global one */
        lua_pushvalue(L, 4);
        args = 4;
    }
    lua_call(L, args, LUA_MULTRET);
    return lua_gettop(L) - n;
}

/* The global library name holding only the functions keep names of what open makes; require
 * finds the same table, and the whole library is never reachable. */
static void open_part(lua_State *L, const char *name, lua_CFunction open,
                      const char *const *keep)
{
    lua_pushcfunction(L, open);
    lua_call(L, 0, 1);
    lua_newtable(L);
    for (int k = 0; keep[k]; k++) {
        lua_getfield(L, -2, keep[k]);
        lua_setfield(L, -2, keep[k]);
    }
    lua_pushvalue(L, -1);
    lua_setglobal(L, name);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_insert(L, -2);
    lua_setfield(L, -2, name);
    lua_pop(L, 2); /* the loaded table and the whole library */
}

static int open_sandbox(lua_State *L)
{
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},         {LUA_LOADLIBNAME, luaopen_package},
        {LUA_COLIBNAME, luaopen_coroutine}, {LUA_TABLIBNAME, luaopen_table},
        {LUA_STRLIBNAME, luaopen_string},  {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8},   {NULL, NULL},
    };
    for (const luaL_Reg *l = libs; l->func; l++) {
        luaL_requiref(L, l->name, l->func, 1);
        lua_pop(L, 1);
    }
    /* os: the clock and calendar only (no execute, exit, getenv, remove, rename, tmpname);
     * io: write to standard output only (no files, no popen, no changing the output). */
    static const char *const os_keep[] = {"clock", "time", "date", "difftime", NULL};
    static const char *const io_keep[] = {"write", NULL};
    open_part(L, LUA_OSLIBNAME, luaopen_os, os_keep);
    open_part(L, LUA_IOLIBNAME, luaopen_io, io_keep);
    /* No files: neither dofile nor loadfile; load takes text only. */
    lua_pushnil(L);
    lua_setglobal(L, "dofile");
    lua_pushnil(L);
    lua_setglobal(L, "loadfile");
    lua_getglobal(L, "load");
    lua_setfield(L, LUA_REGISTRYINDEX, "__trn_load");
    lua_pushcfunction(L, text_load);
    lua_setglobal(L, "load");
    /* require finds the terrane modules (package.preload) and nothing on disk. */
    lua_getglobal(L, LUA_LOADLIBNAME);
    lua_getfield(L, -1, "searchers");
    lua_createtable(L, 1, 0);
    lua_rawgeti(L, -2, 1); /* the preload searcher */
    lua_rawseti(L, -2, 1);
    lua_setfield(L, -3, "searchers");
    lua_pop(L, 1);
    static const char *const pkg_drop[] = {"loadlib", "searchpath", "path", "cpath", NULL};
    for (int k = 0; pkg_drop[k]; k++) {
        lua_pushnil(L);
        lua_setfield(L, -2, pkg_drop[k]);
    }
    lua_pop(L, 1);
    trn_lua_preload(L);
    return 0;
}

static int open_trusted(lua_State *L)
{
    luaL_openlibs(L);
    trn_lua_preload(L);
    return 0;
}

lua_State *trn_lua_state_new(bool trusted, const trn_lua_limits *limits)
{
    lua_budget *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    if (limits) {
        b->max_memory = limits->max_memory;
        b->max_instructions = limits->max_instructions;
    }
    lua_State *L = lua_newstate(budget_alloc, b);
    if (!L) {
        free(b);
        return NULL;
    }
    if (b->max_instructions) lua_sethook(L, budget_hook, LUA_MASKCOUNT, HOOK_EVERY);
    lua_pushcfunction(L, trusted ? open_trusted : open_sandbox);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        trn_lua_state_close(L);
        return NULL;
    }
    return L;
}

void trn_lua_state_close(lua_State *L)
{
    if (!L) return;
    void *ud = NULL;
    lua_Alloc f = lua_getallocf(L, &ud);
    lua_close(L);
    if (f == budget_alloc) free(ud);
}

/* PROJ and libgeotiff opened with dlopen on their first use (or linked: then nothing to open). */
#define _POSIX_C_SOURCE 200809L
#define TRN_GEO_LIBS_OWN_NAMES
#include "geo_libs.h"

#ifdef TRN_GEO_LIBS_LAZY
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

trn_geo_functions trn_geo_fn;

static pthread_once_t geo_once = PTHREAD_ONCE_INIT;
static bool geo_opened;
static char geo_why[512];

/* name's address in lib into *slot; false (why in geo_why) when lib lacks it. ISO C has no
 * conversion from void * to a function pointer: the bytes are copied, as POSIX's dlsym
 * requires every pointer to a function to be able to hold. */
static bool geo_sym(void *lib, const char *soname, const char *name, void *slot, size_t size)
{
    void *p = dlsym(lib, name);
    if (!p) {
        snprintf(geo_why, sizeof geo_why, "%s has no %s", soname, name);
        return false;
    }
    memcpy(slot, &p, size);
    return true;
}

/* RTLD_LOCAL: their symbols stay out of the process's global scope, so a program that links
 * its own PROJ (another version) keeps it. The handles stay open for the process's life. */
static void *geo_open(const char *soname)
{
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(geo_why, sizeof geo_why, "%s", e ? e : soname);
    }
    return lib;
}

static void geo_open_once(void)
{
    void *proj = geo_open(TRN_PROJ_SONAME);
    if (!proj) return;
    void *gtiff = geo_open(TRN_GEOTIFF_SONAME);
    if (!gtiff) return;
    bool ok = true;
#define GEO_SYM(lib, soname, name)                                                                \
    ok = ok && geo_sym(lib, soname, #name, &trn_geo_fn.name, sizeof trn_geo_fn.name);
#define PROJ_SYM(name) GEO_SYM(proj, TRN_PROJ_SONAME, name)
#define GEOTIFF_SYM(name) GEO_SYM(gtiff, TRN_GEOTIFF_SONAME, name)
    TRN_PROJ_FUNCTIONS(PROJ_SYM)
    TRN_GEOTIFF_FUNCTIONS(GEOTIFF_SYM)
#undef GEOTIFF_SYM
#undef PROJ_SYM
#undef GEO_SYM
    geo_opened = ok;
}

bool trn_geo_libs_open(const char **why)
{
    pthread_once(&geo_once, geo_open_once);
    if (why) *why = geo_opened ? NULL : geo_why;
    return geo_opened;
}

#else

bool trn_geo_libs_open(const char **why)
{
    if (why) *why = NULL;
    return true;
}

#endif

/* libmicrohttpd opened with dlopen on the studio's first start (or linked: nothing to open). */
#define _POSIX_C_SOURCE 200809L
#define STUDIO_MHD_OWN_NAMES
#include <stdio.h>
#include <string.h>

#include "studio_server.h"

#ifdef TRN_MHD_LAZY
#include <dlfcn.h>
#include <pthread.h>

studio_mhd_functions studio_mhd_fn;

static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static bool mhd_opened;
static char mhd_why[512];

/* The address of each function into its pointer: ISO C has no conversion from void * to a
 * function pointer, so the bytes are copied (POSIX's dlsym requires that they fit). RTLD_LOCAL
 * keeps its symbols out of the process's global scope; the handle stays open for its life. */
static void mhd_open_once(void)
{
    void *lib = dlopen(TRN_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(mhd_why, sizeof mhd_why, "%s", e ? e : TRN_MHD_SONAME);
        return;
    }
    void *p = NULL;
#define MHD_SYM(name)                                                                             \
    if (!(p = dlsym(lib, #name))) {                                                               \
        snprintf(mhd_why, sizeof mhd_why, "%s has no %s", TRN_MHD_SONAME, #name);                 \
        return;                                                                                   \
    }                                                                                             \
    memcpy(&studio_mhd_fn.name, &p, sizeof studio_mhd_fn.name);
    STUDIO_MHD_FUNCTIONS(MHD_SYM)
#undef MHD_SYM
    mhd_opened = true;
}

bool studio_mhd_open(char *why, size_t why_size)
{
    pthread_once(&mhd_once, mhd_open_once);
    if (!mhd_opened && why && why_size)
        snprintf(why, why_size, "libmicrohttpd could not be loaded: %s", mhd_why);
    return mhd_opened;
}

#else

bool studio_mhd_open(char *why, size_t why_size)
{
    (void)why;
    (void)why_size;
    return true;
}

#endif

/* PROJ and libgeotiff, opened on their first use where the build says so (TRN_GEO_LIBS_LAZY). */
#ifndef TRN_GEO_LIBS_H
#define TRN_GEO_LIBS_H

/* Why: the two bring about twenty shared libraries (PROJ's SQLite, curl, TLS, C++ runtime...)
 * whose loading and relocation took 15-35 ms of one core at every start of the CLI, before any
 * thread runs, while only DEMs with a CRS to read or reproject use them. Where the build opens
 * them here (Linux, their sonames known when configuring), the files of this directory call
 * them through the pointers below, under the libraries' own names; elsewhere the names are the
 * libraries' own functions, linked as usual. */

#include <stdbool.h>

#include <geo_normalize.h>
#include <geo_simpletags.h>
#include <geotiff.h>
#include <proj.h>

/* Opens PROJ and libgeotiff once a process (any thread; later calls return the first answer).
 * True when every function below can be called; false with the loader's words in *why (static
 * text) when one of them could not be opened. Always true where they are linked. */
bool trn_geo_libs_open(const char **why);

#ifdef TRN_GEO_LIBS_LAZY
/* Every function of theirs used here, by library. */
#define TRN_PROJ_FUNCTIONS(X)                                                                     \
    X(proj_clone)                                                                                 \
    X(proj_context_create)                                                                        \
    X(proj_context_destroy)                                                                       \
    X(proj_context_errno)                                                                         \
    X(proj_context_errno_string)                                                                  \
    X(proj_create)                                                                                \
    X(proj_create_crs_to_crs_from_pj)                                                             \
    X(proj_crs_get_coordinate_system)                                                             \
    X(proj_cs_get_axis_info)                                                                      \
    X(proj_destroy)                                                                               \
    X(proj_errno_reset)                                                                           \
    X(proj_get_name)                                                                              \
    X(proj_get_type)                                                                              \
    X(proj_log_level)                                                                             \
    X(proj_normalize_for_visualization)                                                           \
    X(proj_trans_generic)
#define TRN_GEOTIFF_FUNCTIONS(X)                                                                  \
    X(GTIFAllocDefn)                                                                              \
    X(GTIFAttachPROJContext)                                                                      \
    X(GTIFFree)                                                                                   \
    X(GTIFFreeDefn)                                                                               \
    X(GTIFGetDefn)                                                                                \
    X(GTIFNewWithMethodsEx)                                                                       \
    X(GTIFSetSimpleTagsMethods)                                                                   \
    X(ST_Create)                                                                                  \
    X(ST_Destroy)                                                                                 \
    X(ST_SetKey)

#define TRN_GEO_LIBS_MEMBER(name) __typeof__(name) *name;
typedef struct trn_geo_functions {
    TRN_PROJ_FUNCTIONS(TRN_GEO_LIBS_MEMBER)
    TRN_GEOTIFF_FUNCTIONS(TRN_GEO_LIBS_MEMBER)
} trn_geo_functions;
#undef TRN_GEO_LIBS_MEMBER

/* Set by trn_geo_libs_open; read only after it returned true. */
extern trn_geo_functions trn_geo_fn;

#ifndef TRN_GEO_LIBS_OWN_NAMES
#define proj_clone trn_geo_fn.proj_clone
#define proj_context_create trn_geo_fn.proj_context_create
#define proj_context_destroy trn_geo_fn.proj_context_destroy
#define proj_context_errno trn_geo_fn.proj_context_errno
#define proj_context_errno_string trn_geo_fn.proj_context_errno_string
#define proj_create trn_geo_fn.proj_create
#define proj_create_crs_to_crs_from_pj trn_geo_fn.proj_create_crs_to_crs_from_pj
#define proj_crs_get_coordinate_system trn_geo_fn.proj_crs_get_coordinate_system
#define proj_cs_get_axis_info trn_geo_fn.proj_cs_get_axis_info
#define proj_destroy trn_geo_fn.proj_destroy
#define proj_errno_reset trn_geo_fn.proj_errno_reset
#define proj_get_name trn_geo_fn.proj_get_name
#define proj_get_type trn_geo_fn.proj_get_type
#define proj_log_level trn_geo_fn.proj_log_level
#define proj_normalize_for_visualization trn_geo_fn.proj_normalize_for_visualization
#define proj_trans_generic trn_geo_fn.proj_trans_generic
#define GTIFAllocDefn trn_geo_fn.GTIFAllocDefn
#define GTIFAttachPROJContext trn_geo_fn.GTIFAttachPROJContext
#define GTIFFree trn_geo_fn.GTIFFree
#define GTIFFreeDefn trn_geo_fn.GTIFFreeDefn
#define GTIFGetDefn trn_geo_fn.GTIFGetDefn
#define GTIFNewWithMethodsEx trn_geo_fn.GTIFNewWithMethodsEx
#define GTIFSetSimpleTagsMethods trn_geo_fn.GTIFSetSimpleTagsMethods
#define ST_Create trn_geo_fn.ST_Create
#define ST_Destroy trn_geo_fn.ST_Destroy
#define ST_SetKey trn_geo_fn.ST_SetKey
#endif
#endif

#endif

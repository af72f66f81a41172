/* Environment3D render budgets: what of a cooked terrain a renderer can keep on the GPU. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime/payload_internal.h"
#include "terrane/runtime.h"

#define MIB 1048576.0

void trn_environment_default(trn_environment *env)
{
    if (!env) return;
    *env = (trn_environment){.terrain_lod_cache_mb = 64.0,
                             .terrain_lod_prepare_jobs = 2,
                             .terrain_gpu_cache_mb = 128.0,
                             .terrain_texture_max_size = 1024,
                             .terrain_texture_cache_mb = 128.0};
}

static bool power_of_two(uint32_t v)
{
    return v && (v & (v - 1u)) == 0;
}

trn_status trn_environment_check(const trn_environment *env, trn_error *err)
{
    if (!env)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_environment_check: env is required");
    const struct {
        const char *name;
        double v;
    } mb[] = {{"terrain_lod_cache_mb", env->terrain_lod_cache_mb},
              {"terrain_gpu_cache_mb", env->terrain_gpu_cache_mb},
              {"terrain_texture_cache_mb", env->terrain_texture_cache_mb}};
    for (size_t k = 0; k < 3; k++)
        if (!(isfinite(mb[k].v) && mb[k].v >= 0.0 && mb[k].v <= 1048576.0))
            return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                                 "%s: expected MiB from 0 to 1048576 (0 turns it off), found %g",
                                 mb[k].name, mb[k].v);
    if (env->terrain_lod_prepare_jobs > 1024)
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "terrain_lod_prepare_jobs: expected 0 to 1024 jobs, found %" PRIu32,
                             env->terrain_lod_prepare_jobs);
    const uint32_t t = env->terrain_texture_max_size;
    if (!power_of_two(t) || t < 64 || t > 8192)
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "terrain_texture_max_size: expected a power of two from 64 to 8192, "
                             "found %" PRIu32,
                             t);
    return TRN_OK;
}

/* Bytes of the five texture arrays: layers of size^2 RGBA8 texels with their mip chains (4/3). */
static uint64_t array_bytes(uint32_t size, uint32_t layers)
{
    return (uint64_t)size * size * 4u * layers * TRN_MAPPING_ARRAY_COUNT * 4u / 3u;
}

trn_status trn_environment_plan(const trn_payload *p, const trn_environment *env,
                                const trn_device_limits *device, trn_render_plan *out,
                                trn_error *err)
{
    if (!p || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_environment_plan: payload and out are required");
    memset(out, 0, sizeof *out);
    trn_environment def;
    if (!env) {
        trn_environment_default(&def);
        env = &def;
    }
    trn_status st = trn_environment_check(env, err);
    if (st) return st;
    const trn_device_limits none = {0, 0, false, false};
    if (!device) device = &none;
    const uint64_t samples = p->header.samples;
    const uint64_t cells = (uint64_t)p->header.cells_x * p->header.cells_z;
    const uint32_t side = (p->header.cells_x > p->header.cells_z ? p->header.cells_x
                                                                 : p->header.cells_z) + 1u;

    /* Field textures: height f32, normal RG8, layer id and flags (8 bytes a sample), and one
     * shared 64 x 64-cell patch (u16 x/z vertices, u16 indices) drawn instanced. */
    out->gpu_field_bytes = samples * 8u + 65u * 65u * 4u + 64u * 64u * 6u * 2u;
    const double gpu_budget = env->terrain_gpu_cache_mb * MIB;
    if (device->no_vertex_textures)
        snprintf(out->gpu_fallback, sizeof out->gpu_fallback,
                 "the device samples no textures in vertex shaders");
    else if (device->no_instancing)
        snprintf(out->gpu_fallback, sizeof out->gpu_fallback, "the device draws no instances");
    else if (env->terrain_gpu_cache_mb == 0.0)
        snprintf(out->gpu_fallback, sizeof out->gpu_fallback,
                 "terrain_gpu_cache_mb is 0: ordinary meshes");
    else if (device->max_texture_size && side > device->max_texture_size)
        snprintf(out->gpu_fallback, sizeof out->gpu_fallback,
                 "the field is %" PRIu32 " samples a side; the device's textures hold %" PRIu32,
                 side, device->max_texture_size);
    else if ((double)out->gpu_field_bytes > gpu_budget)
        snprintf(out->gpu_fallback, sizeof out->gpu_fallback,
                 "the field textures and patches need %.2f MiB; terrain_gpu_cache_mb is %g",
                 (double)out->gpu_field_bytes / MIB, env->terrain_gpu_cache_mb);
    else
        out->gpu_patches = true;

    /* Texture arrays: the mapped layers at the largest size the budget and the device allow. */
    const trn_material_mapping *m = trn_payload_mapping(p);
    out->texture_layers = p->layer_count;
    uint32_t size = env->terrain_texture_max_size;
    if (device->max_texture_size && device->max_texture_size < size) {
        size = 64;
        while (size * 2u <= device->max_texture_size && size < 8192u) size *= 2u;
    }
    const double tex_budget = env->terrain_texture_cache_mb * MIB;
    while (size > 64 && (double)array_bytes(size, p->layer_count) > tex_budget) size /= 2u;
    if (!m || !m->texture_arrays)
        snprintf(out->texture_fallback, sizeof out->texture_fallback,
                 m ? "the material set's mapping turns texture arrays off"
                   : "the payload's material set has no mapping");
    else if (!p->layer_count)
        snprintf(out->texture_fallback, sizeof out->texture_fallback,
                 "no sample has a Material: the biome tints");
    else if (!out->gpu_patches)
        snprintf(out->texture_fallback, sizeof out->texture_fallback,
                 "no GPU patches: ordinary meshes draw each Material on its own");
    else if (env->terrain_texture_cache_mb == 0.0)
        snprintf(out->texture_fallback, sizeof out->texture_fallback,
                 "terrain_texture_cache_mb is 0: ordinary mesh materials");
    else if (device->max_array_layers && p->layer_count > device->max_array_layers)
        snprintf(out->texture_fallback, sizeof out->texture_fallback,
                 "%" PRIu32 " layers; the device's arrays hold %" PRIu32, p->layer_count,
                 device->max_array_layers);
    else if ((double)array_bytes(size, p->layer_count) > tex_budget)
        snprintf(out->texture_fallback, sizeof out->texture_fallback,
                 "%" PRIu32 " layers need %.2f MiB even at 64 x 64; terrain_texture_cache_mb is %g",
                 p->layer_count, (double)array_bytes(64, p->layer_count) / MIB,
                 env->terrain_texture_cache_mb);
    else {
        out->texture_arrays = true;
        out->texture_size = size;
        out->texture_bytes = array_bytes(size, p->layer_count);
    }

    /* Reduced meshes for render LOD: every coarser level together holds about a third of the
     * full grid's vertices (1/4 + 1/16 + ...), 16 bytes each, and a third of its triangles. */
    out->lod_bytes = samples / 3u * 16u + cells / 3u * 2u * 3u * 4u;
    out->prepare_jobs = env->terrain_lod_prepare_jobs;
    if (env->terrain_lod_cache_mb == 0.0)
        snprintf(out->lod_note, sizeof out->lod_note,
                 "terrain_lod_cache_mb is 0: full detail everywhere");
    else if ((double)out->lod_bytes > env->terrain_lod_cache_mb * MIB)
        snprintf(out->lod_note, sizeof out->lod_note,
                 "reduced meshes need %.2f MiB; terrain_lod_cache_mb is %g: chunks past it keep "
                 "full detail",
                 (double)out->lod_bytes / MIB, env->terrain_lod_cache_mb);
    else if (!env->terrain_lod_prepare_jobs)
        snprintf(out->lod_note, sizeof out->lod_note,
                 "terrain_lod_prepare_jobs is 0: preparation paused, ready meshes stay in use");
    out->lod = env->terrain_lod_cache_mb > 0.0 &&
               (double)out->lod_bytes <= env->terrain_lod_cache_mb * MIB;
    return TRN_OK;
}

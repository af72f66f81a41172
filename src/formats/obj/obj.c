/* Wavefront OBJ + MTL writer for terrain meshes: one material per surface role, water groups. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/write_set.h"
#include "formats/gltf/scene.h"
#include "terrane/mesh.h"
#include "terrane/roles.h"

/* The material name of a section role. */
static const char *role_name(uint8_t role)
{
    if (role < TRN_ROLE_COUNT) return trn_surface_role_name((trn_surface_role)role);
    return role == TRN_MESH_NO_ROLE ? "terrain" : "none";
}

/* The material name of a section: its role's, or "biome_NAME" for a biome section (the
 * prefix keeps a biome named "water" apart from the water's material). */
static const char *section_name(const trn_mesh_scene *s, uint8_t role, char *buf, size_t size)
{
    if (!s->biome_sections) return role_name(role);
    snprintf(buf, size, "biome_%s", s->biome_materials[role].name);
    return buf;
}

/* An sRGB colour component 0..1 in linear light, through the byte it stands for. */
static double unit_to_linear(float c)
{
    const double b = c <= 0.0f ? 0.0 : c >= 1.0f ? 255.0 : (double)(int)((double)c * 255.0 + 0.5);
    return trn_srgb_to_linear((uint8_t)b);
}

/* A terrain z in the file's frame (x east, y up, -z north, as glTF): negated, 0 kept +0. */
static double flip_z(float z)
{
    return z == 0.0f ? 0.0 : -(double)z;
}

/* Vertices and normals of one mesh part. */
static void put_part(FILE *f, const float *positions, const float *normals, uint32_t vertex_count)
{
    for (uint32_t v = 0; v < vertex_count; v++) {
        const float *p = positions + 3u * (size_t)v;
        fprintf(f, "v %.9g %.9g %.9g\n", (double)p[0], (double)p[1], flip_z(p[2]));
    }
    for (uint32_t v = 0; v < vertex_count; v++) {
        const float *n = normals + 3u * (size_t)v;
        fprintf(f, "vn %.9g %.9g %.9g\n", (double)n[0], (double)n[1], flip_z(n[2]));
    }
}

/* Texture coordinates of a terrain part: u = x * scale, v = north * scale (OBJ's v runs up the
 * image, so north is up; the glTF file's v is minus this). */
static void put_uvs(FILE *f, const float *positions, uint32_t vertex_count, double scale)
{
    for (uint32_t v = 0; v < vertex_count; v++) {
        const float *p = positions + 3u * (size_t)v;
        fprintf(f, "vt %.9g %.9g\n", (double)(float)((double)p[0] * scale),
                (double)(float)((double)p[2] * scale));
    }
}

/* Faces "f v/vt/vn" of a part with UVs (the vt numbered as the v). */
static void put_faces_uv(FILE *f, const uint32_t *indices, uint32_t count, uint64_t base)
{
    for (uint32_t t = 0; t + 2u < count; t += 3u) {
        const unsigned long long a = base + indices[t], b = base + indices[t + 1u],
                                 c = base + indices[t + 2u];
        fprintf(f, "f %llu/%llu/%llu %llu/%llu/%llu %llu/%llu/%llu\n", a, a, a, c, c, c, b, b, b);
    }
}

/* Faces "f v//vn"; base is the OBJ index (1-based) of the part's first vertex. z is negated,
 * which mirrors: each triangle is written a, c, b to stay counter-clockwise seen from above. */
static void put_faces(FILE *f, const uint32_t *indices, uint32_t count, uint64_t base)
{
    for (uint32_t t = 0; t + 2u < count; t += 3u) {
        const unsigned long long a = base + indices[t], b = base + indices[t + 1u],
                                 c = base + indices[t + 2u];
        fprintf(f, "f %llu//%llu %llu//%llu %llu//%llu\n", a, a, c, c, b, b);
    }
}

static void write_obj(FILE *f, const trn_mesh_scene *s, trn_water_mesh **water,
                      uint32_t water_count, const char *mtl_name, bool used[258],
                      trn_mesh_write_report *rep)
{
    const trn_mesh *m = s->mesh;
    const size_t n = (size_t)m->chunks_x * m->chunks_z;
    fprintf(f, "# terrane terrain mesh: x east, y up, -z north (z = minus the terrain's row "
               "position; terrain-local units); faces counter-clockwise seen from above\n");
    fprintf(f, "mtllib %s\n", mtl_name);
    uint64_t base = 1;
    if (!s->chunks) fprintf(f, "o terrain\n");
    for (size_t k = 0; k < n; k++) {
        const trn_mesh_level *lv = trn_scene_level(s, k);
        rep->vertices += lv->vertex_count;
        rep->triangles += lv->index_count / 3u;
        if (!lv->index_count) continue;
        if (s->chunks) fprintf(f, "o chunk_%u_%u\n", m->chunks[k].cx, m->chunks[k].cz);
        put_part(f, lv->positions, lv->normals, lv->vertex_count);
        /* The terrain comes first, so its vt are numbered as its v. */
        if (s->uv_scale > 0.0) put_uvs(f, lv->positions, lv->vertex_count, s->uv_scale);
        for (uint32_t q = 0; q < lv->section_count; q++) {
            const trn_mesh_section *sec = &lv->sections[q];
            used[sec->role] = true;
            char buf[300];
            fprintf(f, "usemtl %s\n", section_name(s, sec->role, buf, sizeof buf));
            if (s->uv_scale > 0.0)
                put_faces_uv(f, lv->indices + sec->first, sec->count, base);
            else
                put_faces(f, lv->indices + sec->first, sec->count, base);
        }
        base += lv->vertex_count;
    }
    for (uint32_t b = 0; b < water_count; b++) {
        const trn_water_mesh *wm = water[b];
        if (!wm || !wm->triangle_count) continue;
        fprintf(f, "g water_%s\n", s->water->bodies[b].id);
        put_part(f, wm->positions, wm->normals, wm->vertex_count);
        fprintf(f, "usemtl water\n");
        used[256] = true;
        put_faces(f, wm->indices, 3u * wm->triangle_count, base);
        base += wm->vertex_count;
        rep->water_bodies++;
        rep->vertices += wm->vertex_count;
        rep->triangles += wm->triangle_count;
    }
    /* The collider last: its vertices have no vn, which would shift the numbering after it. */
    const trn_mesh *c = s->collider;
    if (c) {
        fprintf(f, "o collider\nusemtl collider\n");
        used[257] = true;
        const size_t cn = (size_t)c->chunks_x * c->chunks_z;
        for (size_t k = 0; k < cn; k++) {
            const trn_mesh_level *lv = &c->chunks[k].levels[0];
            if (!lv->index_count) continue;
            for (uint32_t v = 0; v < lv->vertex_count; v++) {
                const float *p = lv->positions + 3u * (size_t)v;
                fprintf(f, "v %.9g %.9g %.9g\n", (double)p[0], (double)p[1], flip_z(p[2]));
            }
            for (uint32_t t = 0; t + 2u < lv->index_count; t += 3u)
                fprintf(f, "f %llu %llu %llu\n", (unsigned long long)(base + lv->indices[t]),
                        (unsigned long long)(base + lv->indices[t + 2u]),
                        (unsigned long long)(base + lv->indices[t + 1u]));
            base += lv->vertex_count;
            rep->vertices += lv->vertex_count;
            rep->triangles += lv->index_count / 3u;
        }
    }
}

static void write_mtl(FILE *f, const trn_mesh_scene *s, const bool used[258])
{
    fprintf(f, "# terrane terrain materials: Kd is the %s colour in linear light\n",
            s->biome_sections ? "biome" : "role");
    for (int r = 0; r < 256; r++) {
        if (!used[r]) continue;
        if (s->biome_sections) {
            const trn_mesh_biome_material *bm = &s->biome_materials[r];
            fprintf(f, "newmtl biome_%s\nKa 0 0 0\nKd %.6f %.6f %.6f\nKs 0 0 0\nd 1\nillum 1\n\n",
                    bm->name, unit_to_linear(bm->color[0]), unit_to_linear(bm->color[1]),
                    unit_to_linear(bm->color[2]));
            continue;
        }
        uint8_t rgba[4] = {160, 160, 160, 255};
        if (r < TRN_ROLE_COUNT) trn_roles_color((uint8_t)r, rgba);
        fprintf(f, "newmtl %s\nKa 0 0 0\nKd %.6f %.6f %.6f\nKs 0 0 0\nd 1\nillum 1\n\n",
                role_name((uint8_t)r), trn_srgb_to_linear(rgba[0]), trn_srgb_to_linear(rgba[1]),
                trn_srgb_to_linear(rgba[2]));
    }
    if (used[256])
        fprintf(f, "newmtl water\nKa 0 0 0\nKd 0.020000 0.150000 0.500000\nKs 0.2 0.2 0.2\n"
                   "d 0.55\nillum 2\n");
    if (used[257]) fprintf(f, "newmtl collider\nKa 0 0 0\nKd 0.5 0.5 0.5\nKs 0 0 0\nd 1\nillum 1\n");
}

/* Commit af, first failing it when its stream saw an error; bytes receives the size. */
static trn_status finish_file(trn_atomic_file *af, uint64_t *bytes, trn_error *err)
{
    long at = ftell(af->fp);
    if (ferror(af->fp) && !af->failed) {
        af->failed = true;
        af->saved_errno = errno ? errno : EIO;
    }
    trn_status st = trn_atomic_file_commit(af, err);
    *bytes = at > 0 ? (uint64_t)at : 0u;
    return st;
}

trn_status trn_obj_write(const char *path, const trn_mesh_scene *scene,
                         trn_mesh_write_report *report, trn_error *err)
{
    trn_mesh_write_report local;
    trn_mesh_write_report *rep = report ? report : &local;
    memset(rep, 0, sizeof *rep);
    if (!path || !path[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "OBJ: a path is required");
    trn_status st = trn_scene_check(scene, "OBJ", err);
    if (st) return st;
    char *mtl_path = trn_scene_sibling(path, ".mtl");
    if (!mtl_path) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    if (strcmp(mtl_path, path) == 0) {
        free(mtl_path);
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "OBJ: the mesh may not be named .mtl: its material library is");
    }
    trn_water_mesh **water = NULL;
    uint32_t water_count = 0;
    st = trn_scene_water(scene, &water, &water_count, err);
    if (st) {
        free(mtl_path);
        return st;
    }
    trn_write_set *ws = NULL, *own = NULL;
    st = trn_write_own_begin(scene->writes, &ws, &own, err);
    if (!st) {
        bool used[258] = {false};
        const char *target = NULL;
        trn_atomic_file af;
        uint64_t bytes = 0;
        st = trn_write_target(ws, path, &target, err);
        if (!st) st = trn_atomic_file_open(&af, target, err);
        if (!st) {
            write_obj(af.fp, scene, water, water_count, trn_scene_basename(mtl_path), used, rep);
            st = finish_file(&af, &bytes, err);
            if (!st) {
                snprintf(rep->files[rep->file_count++], sizeof rep->files[0], "%s", path);
                rep->bytes += bytes;
            }
        }
        if (!st) st = trn_write_target(ws, mtl_path, &target, err);
        if (!st) st = trn_atomic_file_open(&af, target, err);
        if (!st) {
            write_mtl(af.fp, scene, used);
            st = finish_file(&af, &bytes, err);
            if (!st) {
                snprintf(rep->files[rep->file_count++], sizeof rep->files[0], "%s", mtl_path);
                rep->bytes += bytes;
            }
        }
        st = trn_write_own_finish(own, st, err);
    }
    if (st) {
        memset(rep, 0, sizeof *rep);
        trn_scene_error_dest(err, path);
        trn_scene_error_dest(err, mtl_path);
    }
    free(mtl_path);
    trn_scene_water_free(water, water_count);
    return st;
}

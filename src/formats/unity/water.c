/* Unity water: surface meshes as OBJ files beside the terrain's RAW and NAME.water.json. */
#define _XOPEN_SOURCE 700
#include "terrane/unity_water.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/fileio.h"
#include "core/write_set.h"
#include "terrane/water_mesh.h"

static trn_status oom(trn_error *err, const char *path)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
}

/* NAME_water_ID.obj with ID made file-name safe, unique (case ignored) among taken. */
static void mesh_file_name(const char *stem, const char *id, char **taken, uint32_t count,
                           char *out, size_t size)
{
    char base[512];
    size_t n = (size_t)snprintf(base, sizeof base, "%s_water_", stem);
    if (n >= sizeof base) n = sizeof base - 1;
    for (size_t i = 0; id[i] && n + 1 < sizeof base; i++) {
        const char c = id[i];
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == '-';
        base[n++] = keep ? c : '_';
    }
    base[n] = '\0';
    snprintf(out, size, "%s.obj", base);
    for (unsigned k = 1;; k++) {
        bool clash = false;
        for (uint32_t t = 0; t < count && !clash; t++)
            clash = taken[t] && strcasecmp(taken[t], out) == 0;
        if (!clash) break;
        snprintf(out, size, "%s_%u.obj", base, k);
    }
}

static trn_status io_error(trn_error *err, const char *path, const char *what)
{
    return trn_error_set(err, TRN_ERR_IO, path, -1, "cannot %s: %s", what, strerror(errno));
}

/* The mesh in OBJ form: x negated and faces a, c, b, so Unity's importer gives back x and the
 * up-facing winding; y relative to the Terrain's height_base. */
static trn_status write_obj(const char *target, const char *dest, const trn_water_body *b,
                            const trn_water_mesh *m, const char *object, double base,
                            trn_error *err)
{
    FILE *f = fopen(target, "wb");
    if (!f) return io_error(err, dest, "create the mesh file");
    fprintf(f, "# terrane water surface: %s '%s', %u vertices, %u triangles\n",
            trn_water_kind_name(b->kind), b->id, m->vertex_count, m->triangle_count);
    fprintf(f, "# Unity: x is negated for its OBJ import; place the mesh at the Terrain's "
               "position (the .water.json's)\n");
    fprintf(f, "o %s\n", object);
    for (size_t v = 0; v < m->vertex_count; v++) {
        const float *p = m->positions + 3 * v;
        fprintf(f, "v %.9g %.9g %.9g\n", (double)(0.0f - p[0]),
                (double)(float)((double)p[1] - base), (double)p[2]);
    }
    for (size_t v = 0; v < m->vertex_count; v++) {
        const float *n = m->normals + 3 * v;
        fprintf(f, "vn %.9g %.9g %.9g\n", (double)(0.0f - n[0]), (double)n[1], (double)n[2]);
    }
    for (size_t t = 0; t < m->triangle_count; t++) {
        const uint32_t *ix = m->indices + 3 * t;
        const unsigned long a = ix[0] + 1ul, b2 = ix[1] + 1ul, c = ix[2] + 1ul;
        fprintf(f, "f %lu//%lu %lu//%lu %lu//%lu\n", a, a, c, c, b2, b2);
    }
    const bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) return io_error(err, dest, "write the mesh file");
    return TRN_OK;
}

static json_t *reals(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

static json_t *look_json(const trn_water_look *l)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "shallow_color", reals(l->shallow_color, 4));
    json_object_set_new(o, "deep_color", reals(l->deep_color, 4));
    json_object_set_new(o, "absorption_distance", json_real(l->absorption_distance));
    json_object_set_new(o, "roughness", json_real(l->roughness));
    json_object_set_new(o, "wave_amplitude", json_real(l->wave_amplitude));
    json_object_set_new(o, "wave_length", json_real(l->wave_length));
    json_object_set_new(o, "wave_speed", json_real(l->wave_speed));
    json_object_set_new(o, "normal_strength", json_real(l->normal_strength));
    json_object_set_new(o, "foam_width", json_real(l->foam_width));
    json_object_set_new(o, "foam_strength", json_real(l->foam_strength));
    json_object_set_new(o, "foam_color", reals(l->foam_color, 4));
    return o;
}

/* Lakes and oceans: speed and the unit direction (x, 0, z); rivers: speed and the path, in the
 * meshes' frame (bed heights relative to height_base). */
static json_t *flow_json(const trn_water_body *b, double base)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "speed", json_real(b->look.flow_speed));
    if (b->kind == TRN_WATER_RIVER) {
        json_t *path = json_array();
        for (uint32_t k = 0; path && k < b->path_count; k++) {
            const double *q = b->path + 3u * (size_t)k;
            const double p[3] = {q[0], q[1] - base, q[2]};
            json_array_append_new(path, reals(p, 3));
        }
        json_object_set_new(o, "path", path);
        return o;
    }
    const double dx = b->look.flow_direction[0], dz = b->look.flow_direction[1];
    const double len = sqrt(dx * dx + dz * dz);
    const double dir[3] = {len > 0.0 ? dx / len : 0.0, 0.0, len > 0.0 ? dz / len : 0.0};
    json_object_set_new(o, "direction", reals(dir, 3));
    return o;
}

static trn_status write_json(trn_write_set *ws, const char *path, json_t *doc, trn_error *err)
{
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    if (!text) return oom(err, path);
    size_t n = strlen(text);
    text[n] = '\n'; /* replaces the NUL: the buffer is written by length */
    const char *target = NULL;
    trn_status st = trn_write_target(ws, path, &target, err);
    if (!st) st = trn_file_write_atomic(target, text, n + 1, err);
    free(text);
    return st;
}

typedef struct export_state {
    const char *dir, *stem;
    const trn_water *water;
    const trn_field *ground;
    const trn_unity_water_options *opt;
    trn_write_set *ws;
    char **files; /* mesh file per body, NULL for none */
    trn_unity_water_report *rep;
    trn_error *err;
} export_state;

static trn_status body_entry(export_state *s, uint32_t b, json_t *list)
{
    const trn_water_body *body = &s->water->bodies[b];
    trn_water_mesh *m = NULL;
    trn_status st = trn_water_mesh_new(s->water, s->ground, b, &m, s->err);
    if (st) return st;
    json_t *o = json_object();
    if (!o) {
        trn_water_mesh_free(m);
        return oom(s->err, s->dir);
    }
    json_object_set_new(o, "id", json_string(body->id));
    json_object_set_new(o, "kind", json_string(trn_water_kind_name(body->kind)));
    json_object_set_new(o, "level", json_real(body->level));
    const bool follow =
        body->kind == TRN_WATER_RIVER && body->surface_mode == TRN_RIVER_SURFACE_FOLLOW_BED;
    json_object_set_new(o, "surface", json_string(follow ? "follow-bed" : "level"));
    if (m->triangle_count) {
        char name[600], path[4096], object[600];
        mesh_file_name(s->stem, body->id, s->files, b, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", s->dir, name);
        snprintf(object, sizeof object, "%.*s", (int)(strlen(name) - 4), name);
        s->files[b] = strdup(name);
        const char *target = NULL;
        if (!s->files[b]) st = oom(s->err, path);
        if (!st) st = trn_write_target(s->ws, path, &target, s->err);
        if (!st) st = write_obj(target, path, body, m, object, s->opt->height_base, s->err);
        if (!st) {
            s->rep->meshes++;
            s->rep->files++;
        }
        json_object_set_new(o, "mesh", json_string(name));
    } else {
        s->rep->skipped++;
        json_object_set_new(o, "mesh", json_null());
    }
    json_object_set_new(o, "vertices", json_integer(m->vertex_count));
    json_object_set_new(o, "triangles", json_integer(m->triangle_count));
    json_object_set_new(o, "area", json_real(m->area));
    json_object_set_new(o, "deepest", json_real(m->deepest));
    json_object_set_new(o, "look", look_json(&body->look));
    json_object_set_new(o, "flow", flow_json(body, s->opt->height_base));
    trn_water_mesh_free(m);
    if (json_array_append_new(list, o) && !st) st = oom(s->err, s->dir);
    return st;
}

trn_status trn_unity_export_water(const char *dir, const trn_water *water, const trn_field *ground,
                                  const trn_unity_water_options *options,
                                  trn_unity_water_report *report, trn_error *err)
{
    trn_unity_water_report rep;
    memset(&rep, 0, sizeof rep);
    if (report) *report = rep;
    if (!dir || !dir[0] || !water || !ground || !options)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "Unity water needs a folder, the water, its ground and options");
    if (ground->cells_x != water->cells_x || ground->cells_z != water->cells_z ||
        ground->size_x != water->size_x || ground->size_z != water->size_z)
        return trn_error_set(err, TRN_ERR_MISMATCH, dir, -1,
                             "the ground is %u x %u cells over %g x %g but the water was resolved "
                             "on %u x %u cells over %g x %g",
                             ground->cells_x, ground->cells_z, ground->size_x, ground->size_z,
                             water->cells_x, water->cells_z, water->size_x, water->size_z);
    export_state s;
    memset(&s, 0, sizeof s);
    s.dir = dir;
    s.stem = options->name && options->name[0] ? options->name : "terrain";
    s.water = water;
    s.ground = ground;
    s.opt = options;
    s.rep = &rep;
    s.err = err;
    s.files = calloc(water->body_count ? water->body_count : 1, sizeof *s.files);
    json_t *doc = json_object(), *list = json_array();
    if (!s.files || !doc || !list) {
        free(s.files);
        json_decref(doc);
        json_decref(list);
        return oom(err, dir);
    }
    const double *p = options->position, base = options->height_base;
    const double at[3] = {p[0], p[1] + base, p[2]};
    json_object_set_new(doc, "format", json_string("terrane unity water 1"));
    json_object_set_new(doc, "terrain", json_string(s.stem));
    json_object_set_new(doc, "convention",
                        json_string("Unity axes: x and z from the terrain's corner, y up. Each "
                                    "mesh goes at position, the Terrain's own position; a "
                                    "height of h metres is at world y = position y + h - "
                                    "height_base. Rivers' flow follows the nearest path segment "
                                    "in path order."));
    json_object_set_new(doc, "position", reals(at, 3));
    json_object_set_new(doc, "height_base", json_real(base));
    trn_write_set *own = NULL;
    trn_status st = trn_mkdir_p(dir, err);
    if (!st) st = trn_write_own_begin(options->writes, &s.ws, &own, err);
    for (uint32_t b = 0; b < water->body_count && !st; b++)
        st = body_entry(&s, b, list);
    json_object_set_new(doc, "bodies", list);
    if (!st) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.water.json", dir, s.stem);
        st = write_json(s.ws, path, doc, err);
        rep.files += !st;
    }
    json_decref(doc);
    for (uint32_t b = 0; b < water->body_count; b++)
        free(s.files[b]);
    free(s.files);
    st = trn_write_own_finish(own, st, err);
    if (st) return st;
    if (report) *report = rep;
    return TRN_OK;
}

/* glTF and OBJ writers: read the files back and hold them to the glTF 2.0 rules. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "terrane/mesh.h"
#include "terrane/roles.h"
#include "test.h"
#include "water_helpers.h"

static char tmp[512];

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A diamond pit (|x - 4| + |z - 4|, unit cells) of 10 x 9 cells holding a lake at 2.5 m. */
static void scene_inputs(trn_field *f, trn_water *w, uint8_t **roles)
{
    water_test_field(f, 10, 9, 1.0, 1.0, diamond);
    water_test_init(w, f, 1, TRN_WATER_LAKE);
    w->bodies[0].level = 2.5;
    water_plane p = {2.5, 0, 0};
    water_test_cover(w, f, 0, &p, 0, 10, 0, 9);
    water_test_shore(w, f, &p);
    const size_t n = 11u * 10u;
    *roles = malloc(n);
    for (size_t k = 0; k < n; k++)
        (*roles)[k] = w->wet[k] ? TRN_ROLE_UNDERWATER : (uint8_t)(k % 3u); /* ground grass rock */
}

static const char palette_text[] =
    "{\"format_version\": 3, \"name\": \"P\", \"placements\": {"
    "\"pine\": {\"model\": \"asset://trees/pine\", \"collision\": \"none\", \"density\": 0.1},"
    "\"hut\": {\"prefab\": \"prefab://hut\", \"density\": 0.01}}}";

/* A parsed glTF: its JSON and its buffer bytes. */
typedef struct parsed {
    json_t *root;
    uint8_t *bin;
    size_t bin_size;
} parsed;

static bool parse_glb(const char *path, parsed *out)
{
    memset(out, 0, sizeof *out);
    size_t size = 0;
    uint8_t *data = trn_test_read_file(path, &size);
    CHECK(data != NULL);
    if (!data) return false;
    CHECK(size >= 20);
    CHECK(memcmp(data, "glTF", 4) == 0);
    CHECK_EQ_INT(get_u32(data + 4), 2);
    CHECK_EQ_INT(get_u32(data + 8), size);
    const uint32_t json_len = get_u32(data + 12);
    CHECK(memcmp(data + 16, "JSON", 4) == 0);
    CHECK_EQ_INT(json_len % 4u, 0);
    CHECK(20u + json_len <= size);
    json_error_t je;
    out->root = json_loadb((const char *)data + 20, json_len, 0, &je);
    CHECK(out->root != NULL);
    if (20u + json_len + 8u <= size) {
        const uint8_t *b = data + 20 + json_len;
        const uint32_t bin_len = get_u32(b);
        CHECK(memcmp(b + 4, "BIN\0", 4) == 0);
        CHECK_EQ_INT(bin_len % 4u, 0);
        CHECK_EQ_INT(20u + json_len + 8u + bin_len, size);
        out->bin = malloc(bin_len + 1u);
        memcpy(out->bin, b + 8, bin_len);
        out->bin_size = bin_len;
    } else {
        CHECK_EQ_INT(20u + json_len, size);
    }
    free(data);
    return out->root != NULL;
}

static void parsed_dispose(parsed *p)
{
    json_decref(p->root);
    free(p->bin);
}

static float bin_float(const parsed *p, size_t at)
{
    float v;
    memcpy(&v, p->bin + at, 4);
    return v;
}

/* Hold the document to glTF's rules: views in the buffer and aligned, accessors inside their
 * views and aligned, POSITION min/max equal to the data's, indices below the vertex count,
 * materials and meshes referenced exist. Returns the number of triangles. */
static uint64_t check_document(const parsed *p)
{
    json_t *root = p->root;
    json_t *asset = json_object_get(root, "asset");
    CHECK(strcmp(json_string_value(json_object_get(asset, "version")), "2.0") == 0);
    CHECK(strcmp(json_string_value(json_object_get(asset, "generator")), "terrane") == 0);
    json_t *buffers = json_object_get(root, "buffers");
    const size_t blen =
        (size_t)json_integer_value(json_object_get(json_array_get(buffers, 0), "byteLength"));
    CHECK(blen <= p->bin_size && p->bin_size - blen < 4);
    json_t *views = json_object_get(root, "bufferViews");
    json_t *accessors = json_object_get(root, "accessors");
    size_t i;
    json_t *v;
    json_array_foreach(views, i, v)
    {
        const json_int_t off = json_integer_value(json_object_get(v, "byteOffset"));
        const json_int_t len = json_integer_value(json_object_get(v, "byteLength"));
        const json_int_t target = json_integer_value(json_object_get(v, "target"));
        CHECK(off % 4 == 0 && len > 0 && (size_t)(off + len) <= blen);
        CHECK(target == 34962 || target == 34963);
        CHECK_EQ_INT(json_integer_value(json_object_get(v, "buffer")), 0);
    }
    json_t *a;
    json_array_foreach(accessors, i, a)
    {
        json_t *view =
            json_array_get(views, (size_t)json_integer_value(json_object_get(a, "bufferView")));
        CHECK(view != NULL);
        const json_int_t aoff = json_integer_value(json_object_get(a, "byteOffset"));
        const json_int_t count = json_integer_value(json_object_get(a, "count"));
        const char *type = json_string_value(json_object_get(a, "type"));
        const json_int_t comp = json_integer_value(json_object_get(a, "componentType"));
        const int width = strcmp(type, "VEC3") == 0 ? 3 : strcmp(type, "VEC2") == 0 ? 2 : 1;
        CHECK(strcmp(type, "VEC3") == 0 || strcmp(type, "VEC2") == 0 ||
              strcmp(type, "SCALAR") == 0);
        CHECK(comp == (width > 1 ? 5126 : 5125));
        CHECK(aoff % 4 == 0 && count > 0);
        CHECK(aoff + count * 4 * width <= json_integer_value(json_object_get(view, "byteLength")));
        json_t *mn = json_object_get(a, "min"), *mx = json_object_get(a, "max");
        if (mn) {
            const size_t base =
                (size_t)json_integer_value(json_object_get(view, "byteOffset")) + (size_t)aoff;
            for (int c = 0; c < 3; c++) {
                float lo = INFINITY, hi = -INFINITY;
                for (json_int_t e = 0; e < count; e++) {
                    const float x = bin_float(p, base + 12u * (size_t)e + 4u * (size_t)c);
                    CHECK(isfinite(x));
                    if (x < lo) lo = x;
                    if (x > hi) hi = x;
                }
                CHECK((float)json_real_value(json_array_get(mn, (size_t)c)) == lo);
                CHECK((float)json_real_value(json_array_get(mx, (size_t)c)) == hi);
            }
        }
    }
    uint64_t triangles = 0;
    json_t *meshes = json_object_get(root, "meshes"),
           *materials = json_object_get(root, "materials");
    json_t *m;
    json_array_foreach(meshes, i, m)
    {
        json_t *prims = json_object_get(m, "primitives");
        CHECK(json_array_size(prims) > 0);
        size_t q;
        json_t *pr;
        json_array_foreach(prims, q, pr)
        {
            json_t *attr = json_object_get(pr, "attributes");
            json_t *pos = json_array_get(
                accessors, (size_t)json_integer_value(json_object_get(attr, "POSITION")));
            /* The collider alone has no normals and no material. */
            const char *mname = json_string_value(json_object_get(m, "name"));
            const bool collider = mname && strcmp(mname, "collider") == 0;
            json_t *nor = json_object_get(attr, "NORMAL")
                              ? json_array_get(accessors, (size_t)json_integer_value(
                                                              json_object_get(attr, "NORMAL")))
                              : NULL;
            json_t *ind = json_array_get(
                accessors, (size_t)json_integer_value(json_object_get(pr, "indices")));
            CHECK(pos && ind);
            CHECK(collider ? !json_object_get(attr, "NORMAL") : nor != NULL);
            CHECK(json_object_get(pos, "min") != NULL && json_object_get(pos, "max") != NULL);
            if (collider)
                CHECK(!json_object_get(pr, "material") && !json_object_get(attr, "TEXCOORD_0"));
            else
                CHECK(json_array_get(materials, (size_t)json_integer_value(
                                                    json_object_get(pr, "material"))) != NULL);
            const json_int_t vc = json_integer_value(json_object_get(pos, "count"));
            if (nor) CHECK_EQ_INT(json_integer_value(json_object_get(nor, "count")), vc);
            json_t *uv = json_object_get(attr, "TEXCOORD_0");
            if (uv) {
                json_t *ua = json_array_get(accessors, (size_t)json_integer_value(uv));
                CHECK_EQ_INT(json_integer_value(json_object_get(ua, "count")), vc);
                CHECK(strcmp(json_string_value(json_object_get(ua, "type")), "VEC2") == 0);
            }
            json_t *iview = json_array_get(
                views, (size_t)json_integer_value(json_object_get(ind, "bufferView")));
            CHECK_EQ_INT(json_integer_value(json_object_get(iview, "target")), 34963);
            const size_t base = (size_t)json_integer_value(json_object_get(iview, "byteOffset")) +
                                (size_t)json_integer_value(json_object_get(ind, "byteOffset"));
            const json_int_t ic = json_integer_value(json_object_get(ind, "count"));
            CHECK(ic % 3 == 0);
            triangles += (uint64_t)ic / 3u;
            json_int_t bad = 0;
            for (json_int_t e = 0; e < ic; e++)
                bad += get_u32(p->bin + base + 4u * (size_t)e) >= (uint32_t)vc;
            CHECK_EQ_INT(bad, 0);
        }
    }
    /* every node's mesh exists; the scene lists roots */
    json_t *nodes = json_object_get(root, "nodes"), *n;
    json_array_foreach(nodes, i, n)
    {
        json_t *mesh = json_object_get(n, "mesh");
        if (mesh) CHECK(json_array_get(meshes, (size_t)json_integer_value(mesh)) != NULL);
    }
    CHECK(json_array_size(
              json_object_get(json_array_get(json_object_get(root, "scenes"), 0), "nodes")) >= 1);
    return triangles;
}

static json_t *find_named(json_t *list, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        const char *s = json_string_value(json_object_get(o, "name"));
        if (s && strcmp(s, name) == 0) return o;
    }
    return NULL;
}

static void test_glb_scene(void)
{
    trn_field f;
    trn_water w;
    uint8_t *roles;
    scene_inputs(&f, &w, &roles);
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 4;
    trn_mesh *m = NULL;
    CHECK_OK(trn_mesh_build(&f, roles, &o, &m, NULL, NULL, NULL));
    trn_palette pal;
    CHECK_OK(trn_palette_parse(palette_text, strlen(palette_text), "p.json", &pal, NULL));
    trn_instance items[2] = {{0, 3, -2, 1.5, 2.0, 7.25, 90.0, 2.0}, {1, 0, 0, 5, 1, 5, 0, 1}};
    trn_instances inst = {items, 2};
    uint32_t levels[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    trn_mesh_scene s = {m,   levels, true, &w,   &f,    &pal, &inst, NULL,
                        0.0, NULL,   0,    NULL, false, NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
    char path[700];
    snprintf(path, sizeof path, "%s/scene.glb", tmp);
    trn_mesh_write_report rep;
    CHECK_OK(trn_gltf_write(path, TRN_GLTF_GLB, &s, &rep, NULL));
    CHECK_EQ_INT(rep.file_count, 1);
    CHECK_EQ_INT(rep.water_bodies, 1);
    CHECK_EQ_INT(rep.instances, 2);
    parsed p;
    if (m && parse_glb(path, &p)) {
        const uint64_t tris = check_document(&p);
        CHECK_EQ_INT(tris, rep.triangles + 2u * 12u - 0u);
        json_t *nodes = json_object_get(p.root, "nodes");
        json_t *meshes = json_object_get(p.root, "meshes");
        CHECK(find_named(nodes, "chunk_0_0") != NULL);
        CHECK(find_named(nodes, "chunk_2_2") != NULL);
        CHECK(find_named(nodes, "water_b0") != NULL);
        /* one primitive per role section, the role's material by name and linear colour */
        json_t *c00 = find_named(meshes, "chunk_0_0");
        CHECK_EQ_INT(json_array_size(json_object_get(c00, "primitives")),
                     m->chunks[0].levels[0].section_count);
        json_t *materials = json_object_get(p.root, "materials");
        json_t *rock = find_named(materials, "rock");
        CHECK(rock != NULL);
        uint8_t rgba[4];
        trn_roles_color(TRN_ROLE_ROCK, rgba);
        json_t *bc =
            json_object_get(json_object_get(rock, "pbrMetallicRoughness"), "baseColorFactor");
        CHECK(fabs(json_real_value(json_array_get(bc, 0)) - trn_srgb_to_linear(rgba[0])) < 1e-7);
        CHECK(json_real_value(json_array_get(bc, 3)) == 1.0);
        json_t *water = find_named(materials, "water");
        CHECK(strcmp(json_string_value(json_object_get(water, "alphaMode")), "BLEND") == 0);
        CHECK(find_named(materials, "underwater") != NULL);
        /* instances: proxy meshes per rule, nodes keyed "<rule>/<cx>_<cz>" */
        json_t *pine = find_named(meshes, "pine");
        CHECK(strcmp(json_string_value(json_object_get(json_object_get(pine, "extras"), "model")),
                     "asset://trees/pine") == 0);
        json_t *hut = find_named(meshes, "hut");
        CHECK(strcmp(json_string_value(json_object_get(json_object_get(hut, "extras"), "prefab")),
                     "prefab://hut") == 0);
        json_t *inode = find_named(nodes, "pine/3_-2");
        CHECK(inode != NULL);
        CHECK(strcmp(json_string_value(json_object_get(json_object_get(inode, "extras"), "id")),
                     "pine/3_-2") == 0);
        json_t *rot = json_object_get(inode, "rotation");
        /* glTF's frame mirrors the terrain's z (north is -z): the position's z negated and the
         * 90-degree yaw turned the other way. */
        CHECK(fabs(json_real_value(json_array_get(rot, 1)) + sqrt(0.5)) < 1e-7);
        CHECK(fabs(json_real_value(json_array_get(rot, 3)) - sqrt(0.5)) < 1e-7);
        CHECK(json_real_value(json_array_get(rot, 0)) == 0.0);
        CHECK(json_real_value(json_array_get(json_object_get(inode, "translation"), 2)) == -7.25);
        CHECK(json_real_value(json_array_get(json_object_get(inode, "translation"), 0)) == 1.5);
        CHECK(json_real_value(json_array_get(json_object_get(inode, "scale"), 1)) == 2.0);
        CHECK(json_object_get(inode, "mesh") != NULL &&
              json_array_get(meshes, (size_t)json_integer_value(json_object_get(inode, "mesh"))) ==
                  pine);
        CHECK(find_named(nodes, "hut/0_0") != NULL);
        /* Box winding: every proxy triangle faces out of the box (centre (0, 0.5, 0)). */
        json_t *prim = json_array_get(json_object_get(pine, "primitives"), 0);
        json_t *acc = json_object_get(p.root, "accessors"),
               *bv = json_object_get(p.root, "bufferViews");
        json_t *pa = json_array_get(acc, (size_t)json_integer_value(json_object_get(
                                             json_object_get(prim, "attributes"), "POSITION")));
        json_t *ia =
            json_array_get(acc, (size_t)json_integer_value(json_object_get(prim, "indices")));
        const size_t pbase = (size_t)json_integer_value(json_object_get(
            json_array_get(bv, (size_t)json_integer_value(json_object_get(pa, "bufferView"))),
            "byteOffset"));
        const size_t ibase = (size_t)json_integer_value(json_object_get(
            json_array_get(bv, (size_t)json_integer_value(json_object_get(ia, "bufferView"))),
            "byteOffset"));
        int outward = 0;
        for (int t = 0; t < 12; t++) {
            double q[3][3];
            for (int c = 0; c < 3; c++) {
                const uint32_t vi = get_u32(p.bin + ibase + 4u * (size_t)(3 * t + c));
                for (int k = 0; k < 3; k++)
                    q[c][k] = bin_float(&p, pbase + 12u * vi + 4u * (size_t)k);
            }
            const double u[3] = {q[1][0] - q[0][0], q[1][1] - q[0][1], q[1][2] - q[0][2]};
            const double v2[3] = {q[2][0] - q[0][0], q[2][1] - q[0][1], q[2][2] - q[0][2]};
            const double n[3] = {u[1] * v2[2] - u[2] * v2[1], u[2] * v2[0] - u[0] * v2[2],
                                 u[0] * v2[1] - u[1] * v2[0]};
            const double cx = (q[0][0] + q[1][0] + q[2][0]) / 3.0,
                         cy = (q[0][1] + q[1][1] + q[2][1]) / 3.0 - 0.5,
                         cz = (q[0][2] + q[1][2] + q[2][2]) / 3.0;
            outward += n[0] * cx + n[1] * cy + n[2] * cz > 0.0;
        }
        CHECK_EQ_INT(outward, 12);
        parsed_dispose(&p);
    }
    /* The same scene merged: one terrain mesh, one primitive per role. */
    s.chunks = false;
    s.instances = NULL;
    s.water = NULL;
    CHECK_OK(trn_gltf_write(path, TRN_GLTF_GLB, &s, &rep, NULL));
    CHECK_EQ_INT(rep.water_bodies, 0);
    if (m && parse_glb(path, &p)) {
        const uint64_t tris = check_document(&p);
        CHECK_EQ_INT(tris, rep.triangles);
        json_t *terrain = find_named(json_object_get(p.root, "meshes"), "terrain");
        CHECK(terrain != NULL);
        CHECK_EQ_INT(json_array_size(json_object_get(p.root, "meshes")), 1);
        CHECK_EQ_INT(json_array_size(json_object_get(terrain, "primitives")), 4);
        parsed_dispose(&p);
    }
    trn_palette_dispose(&pal);
    trn_mesh_free(m);
    free(roles);
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

/* The byte offset of accessor `index`'s data in the buffer. */
static size_t accessor_base(const parsed *p, json_int_t index)
{
    json_t *a = json_array_get(json_object_get(p->root, "accessors"), (size_t)index);
    json_t *v = json_array_get(json_object_get(p->root, "bufferViews"),
                               (size_t)json_integer_value(json_object_get(a, "bufferView")));
    return (size_t)json_integer_value(json_object_get(v, "byteOffset")) +
           (size_t)json_integer_value(json_object_get(a, "byteOffset"));
}

/* Every triangle of primitive prim (positions on the 24 x 20 unit grid of f) faces up in glTF's
 * frame and keeps every sample it covers within allowance of f; adds twice its area in cells
 * to *area2 and the samples checked to *samples. */
static void check_within(const parsed *p, json_t *prim, const trn_field *f, double allowance,
                         int64_t *area2, uint64_t *samples)
{
    const json_int_t pos_acc =
        json_integer_value(json_object_get(json_object_get(prim, "attributes"), "POSITION"));
    const json_int_t ind_acc = json_integer_value(json_object_get(prim, "indices"));
    const size_t pbase = accessor_base(p, pos_acc), ibase = accessor_base(p, ind_acc);
    const json_int_t count = json_integer_value(json_object_get(
        json_array_get(json_object_get(p->root, "accessors"), (size_t)ind_acc), "count"));
    for (json_int_t t = 0; t < count; t += 3) {
        int64_t pi[3], pj[3];
        double ph[3];
        for (int c = 0; c < 3; c++) {
            const uint32_t v = get_u32(p->bin + ibase + 4u * (size_t)(t + c));
            pi[c] = (int64_t)lrint(bin_float(p, pbase + 12u * v));
            ph[c] = bin_float(p, pbase + 12u * v + 4u);
            pj[c] = -(int64_t)lrint(bin_float(p, pbase + 12u * v + 8u)); /* north at -z */
        }
        /* up in glTF's frame: (b - a) x (c - a) has +y, z = -j */
        const int64_t up =
            (-(pj[1] - pj[0])) * (pi[2] - pi[0]) - (pi[1] - pi[0]) * (-(pj[2] - pj[0]));
        CHECK(up > 0);
        *area2 += up;
        for (int64_t j = 0; j <= 20; j++)
            for (int64_t i = 0; i <= 24; i++) {
                const int64_t w0 = (pj[2] - pj[1]) * (i - pi[1]) - (pi[2] - pi[1]) * (j - pj[1]);
                const int64_t w1 = (pj[0] - pj[2]) * (i - pi[2]) - (pi[0] - pi[2]) * (j - pj[2]);
                const int64_t w2 = (pj[1] - pj[0]) * (i - pi[0]) - (pi[1] - pi[0]) * (j - pj[0]);
                if (!((w0 >= 0 && w1 >= 0 && w2 >= 0) || (w0 <= 0 && w1 <= 0 && w2 <= 0)))
                    continue;
                const double sum = (double)(w0 + w1 + w2);
                const double plane =
                    ((double)w0 * ph[0] + (double)w1 * ph[1] + (double)w2 * ph[2]) / sum;
                CHECK(fabs(plane - f->heights[j * 25 + i]) <= allowance + 1e-9);
                (*samples)++;
            }
    }
}

/* The rough test surface: a bowl with hashed bumps, 24 x 20 unit cells. */
static void rough_field(trn_field *f)
{
    CHECK_OK(trn_field_init(f, 24, 20, 24.0, 20.0, NULL));
    for (uint32_t j = 0; j <= 20; j++)
        for (uint32_t i = 0; i <= 24; i++) {
            uint32_t h = i * 73856093u ^ j * 19349663u;
            h ^= h >> 13;
            f->heights[j * 25u + i] = (float)(0.05 * (double)(i * i) + (double)(h % 8u) / 8.0);
        }
}

/* An adaptive mesh read back from a merged .glb: every triangle faces up in glTF's frame and
 * keeps every sample it covers within the allowance, and the triangles tile the terrain. */
static void test_glb_adaptive(void)
{
    trn_field f;
    rough_field(&f);
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 8;
    o.adaptive = true;
    o.adaptive_error = 0.75;
    o.max_levels = 1;
    trn_mesh *m = NULL;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, NULL));
    trn_mesh_scene s = {m,   NULL, false, NULL, NULL,  NULL, NULL, NULL,
                        0.0, NULL, 0,     NULL, false, NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
    char path[700];
    snprintf(path, sizeof path, "%s/adaptive.glb", tmp);
    trn_mesh_write_report rep;
    CHECK_OK(trn_gltf_write(path, TRN_GLTF_GLB, &s, &rep, NULL));
    CHECK(rep.triangles < 2u * 24u * 20u);
    parsed p;
    if (m && parse_glb(path, &p)) {
        CHECK_EQ_INT(check_document(&p), rep.triangles);
        json_t *terrain = find_named(json_object_get(p.root, "meshes"), "terrain");
        json_t *prims = json_object_get(terrain, "primitives");
        int64_t area2 = 0;
        uint64_t samples = 0;
        for (size_t k = 0; k < json_array_size(prims); k++)
            check_within(&p, json_array_get(prims, k), &f, 0.75, &area2, &samples);
        CHECK(area2 == 2 * 24 * 20);
        CHECK(samples >= 25u * 21u);
        /* Without uv_scale, biome materials or a collider the file has none of them. */
        CHECK(!json_object_get(json_object_get(json_array_get(prims, 0), "attributes"),
                               "TEXCOORD_0"));
        CHECK(!json_object_get(json_array_get(json_object_get(p.root, "materials"), 0), "extras"));
        CHECK(!find_named(json_object_get(p.root, "nodes"), "collider"));
        parsed_dispose(&p);
    }
    trn_mesh_free(m);
    trn_field_dispose(&f);
}

static bool str_is(json_t *value, const char *want)
{
    const char *s = json_string_value(value);
    return s && strcmp(s, want) == 0;
}

/* Every primitive of mesh holds TEXCOORD_0 giving each vertex u = x * scale, v = z * scale of
 * its written position (glTF's frame); returns the vertices checked (a UV accessor shared by
 * the primitives counted once). */
static uint64_t check_uvs(const parsed *p, json_t *mesh, double scale)
{
    uint64_t checked = 0, bad = 0;
    json_int_t last = -1;
    json_t *prims = json_object_get(mesh, "primitives");
    for (size_t k = 0; k < json_array_size(prims); k++) {
        json_t *attr = json_object_get(json_array_get(prims, k), "attributes");
        json_t *uv = json_object_get(attr, "TEXCOORD_0");
        CHECK(uv != NULL);
        if (!uv) continue;
        const json_int_t pa = json_integer_value(json_object_get(attr, "POSITION"));
        const json_int_t ta = json_integer_value(uv);
        if (ta == last) continue;
        last = ta;
        const size_t pbase = accessor_base(p, pa), tbase = accessor_base(p, ta);
        const json_int_t count = json_integer_value(json_object_get(
            json_array_get(json_object_get(p->root, "accessors"), (size_t)pa), "count"));
        for (json_int_t v = 0; v < count; v++) {
            const float x = bin_float(p, pbase + 12u * (size_t)v);
            const float z = bin_float(p, pbase + 12u * (size_t)v + 8u);
            bad += bin_float(p, tbase + 8u * (size_t)v) != (float)((double)x * scale);
            bad += bin_float(p, tbase + 8u * (size_t)v + 4u) != (float)((double)z * scale);
            checked++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    return checked;
}

/* UVs scaled by the texture scale, the biomes' materials in the terrain materials' extras and
 * a collider node within its error, read back from .glb files (chunked and merged). */
static void test_glb_uvs_collider(void)
{
    trn_field f;
    rough_field(&f);
    uint8_t *roles = malloc(25u * 21u);
    for (size_t k = 0; k < 25u * 21u; k++)
        roles[k] = (uint8_t)(k % 3u);
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 8;
    trn_mesh *m = NULL, *c = NULL;
    CHECK_OK(trn_mesh_build(&f, roles, &o, &m, NULL, NULL, NULL));
    o.adaptive = true;
    o.adaptive_error = 0.5;
    o.max_levels = 1;
    o.skirt_depth = 0.0;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &c, NULL, NULL, NULL));
    const trn_mesh_biome_material biomes[2] = {{"meadow", "materials/grass_a", 0.25, {0, 1, 0, 1}},
                                               {"scree", NULL, 0.125, {0.5f, 0.5f, 0.5f, 1}}};
    uint32_t levels[9] = {0, 1, 2, 0, 1, 3, 2, 0, 1};
    for (int chunked = 0; chunked < 2; chunked++) {
        trn_mesh_scene s = {m, levels, chunked != 0, NULL, NULL, NULL, NULL, NULL, 0.25, biomes,
                            2, c,      false,        NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
        char path[700];
        snprintf(path, sizeof path, "%s/uv%d.glb", tmp, chunked);
        trn_mesh_write_report rep;
        CHECK_OK(trn_gltf_write(path, TRN_GLTF_GLB, &s, &rep, NULL));
        parsed p;
        if (!m || !c || !parse_glb(path, &p)) continue;
        CHECK_EQ_INT(check_document(&p), rep.triangles);
        json_t *meshes = json_object_get(p.root, "meshes");
        uint64_t uvs = 0, want = 0;
        for (size_t k = 0; k < 9; k++)
            want += m->chunks[k].levels[levels[k]].vertex_count;
        for (size_t k = 0; k < json_array_size(meshes); k++) {
            json_t *mesh = json_array_get(meshes, k);
            const char *name = json_string_value(json_object_get(mesh, "name"));
            if (strcmp(name, "collider") != 0) uvs += check_uvs(&p, mesh, 0.25);
        }
        /* merged: each primitive repeats the shared vertices; chunked: one set per chunk */
        if (chunked) CHECK_EQ_INT(uvs, want);
        CHECK(uvs >= want);
        /* every terrain material: uv_scale and the biomes, in order */
        json_t *materials = json_object_get(p.root, "materials");
        CHECK_EQ_INT(json_array_size(materials), 3);
        for (size_t k = 0; k < json_array_size(materials); k++) {
            json_t *ex = json_object_get(json_array_get(materials, k), "extras");
            CHECK(json_real_value(json_object_get(ex, "uv_scale")) == 0.25);
            json_t *list = json_object_get(ex, "biomes");
            CHECK_EQ_INT(json_array_size(list), 2);
            json_t *b0 = json_array_get(list, 0), *b1 = json_array_get(list, 1);
            CHECK(str_is(json_object_get(b0, "name"), "meadow"));
            CHECK(str_is(json_object_get(b0, "material"), "materials/grass_a"));
            CHECK(json_real_value(json_object_get(b0, "texture_scale")) == 0.25);
            CHECK(json_is_null(json_object_get(b1, "material")));
            CHECK(json_real_value(json_object_get(b1, "texture_scale")) == 0.125);
        }
        /* the collider: a root node, its extras, every sample within its error, the whole
         * terrain covered once */
        json_t *node = find_named(json_object_get(p.root, "nodes"), "collider");
        CHECK(node != NULL);
        json_t *ex = json_object_get(node, "extras");
        CHECK(json_is_true(json_object_get(ex, "collider")));
        CHECK(json_real_value(json_object_get(ex, "max_error")) == 0.5);
        json_t *roots = json_object_get(json_array_get(json_object_get(p.root, "scenes"), 0), "nodes");
        bool is_root = false;
        for (size_t k = 0; k < json_array_size(roots); k++)
            is_root |= json_array_get(json_object_get(p.root, "nodes"),
                                      (size_t)json_integer_value(json_array_get(roots, k))) == node;
        CHECK(is_root);
        json_t *cm = json_array_get(meshes, (size_t)json_integer_value(json_object_get(node, "mesh")));
        json_t *prims = json_object_get(cm, "primitives");
        CHECK_EQ_INT(json_array_size(prims), 1);
        int64_t area2 = 0;
        uint64_t samples = 0;
        check_within(&p, json_array_get(prims, 0), &f, 0.5, &area2, &samples);
        CHECK(area2 == 2 * 24 * 20);
        CHECK(samples >= 25u * 21u);
        uint64_t ctri = 0;
        for (size_t k = 0; k < 9; k++)
            ctri += c->chunks[k].levels[0].index_count / 3u;
        CHECK(ctri < 2u * 24u * 20u);
        CHECK_EQ_INT(json_integer_value(json_object_get(
                         json_array_get(json_object_get(p.root, "accessors"),
                                        (size_t)json_integer_value(json_object_get(
                                            json_array_get(prims, 0), "indices"))),
                         "count")),
                     3u * ctri);
        parsed_dispose(&p);
    }
    /* refused: a negative or NaN scale, biomes without their list */
    trn_mesh_scene bad = {m,    NULL, false, NULL, NULL,  NULL, NULL, NULL,
                          -1.0, NULL, 0,     NULL, false, NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
    char path[700];
    snprintf(path, sizeof path, "%s/bad.glb", tmp);
    trn_error e;
    CHECK_STATUS(trn_gltf_write(path, TRN_GLTF_GLB, &bad, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "uv_scale");
    bad.uv_scale = NAN;
    CHECK_STATUS(trn_gltf_write(path, TRN_GLTF_GLB, &bad, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    bad.uv_scale = 1.0;
    bad.biome_material_count = 1;
    CHECK_STATUS(trn_obj_write(path, &bad, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(!trn_test_exists(path));
    trn_mesh_free(c);
    trn_mesh_free(m);
    free(roles);
    trn_field_dispose(&f);
}

/* .gltf beside a .bin, and with the buffer embedded. */
static void test_gltf_text(void)
{
    trn_field f;
    trn_water w;
    uint8_t *roles;
    scene_inputs(&f, &w, &roles);
    trn_mesh *m = NULL;
    CHECK_OK(trn_mesh_build(&f, roles, NULL, &m, NULL, NULL, NULL));
    trn_mesh_scene s = {m,   NULL, false, &w,   &f,    NULL, NULL, NULL,
                        0.0, NULL, 0,     NULL, false, NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
    char path[700], bin[700];
    snprintf(path, sizeof path, "%s/t.gltf", tmp);
    snprintf(bin, sizeof bin, "%s/t.bin", tmp);
    trn_mesh_write_report rep;
    CHECK_OK(trn_gltf_write(path, TRN_GLTF_SEPARATE, &s, &rep, NULL));
    CHECK_EQ_INT(rep.file_count, 2);
    CHECK(strcmp(rep.files[1], bin) == 0);
    size_t jsize = 0, bsize = 0;
    char *text = (char *)trn_test_read_file(path, &jsize);
    uint8_t *data = trn_test_read_file(bin, &bsize);
    CHECK(text && data);
    CHECK_EQ_INT(rep.bytes, jsize + bsize);
    if (text && data) {
        parsed p = {json_loadb(text, jsize, 0, NULL), data, bsize};
        json_t *b0 = json_array_get(json_object_get(p.root, "buffers"), 0);
        CHECK(strcmp(json_string_value(json_object_get(b0, "uri")), "t.bin") == 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(b0, "byteLength")), bsize);
        check_document(&p);
        json_decref(p.root);
        /* Embedded: the same buffer as base64 */
        snprintf(path, sizeof path, "%s/e.gltf", tmp);
        CHECK_OK(trn_gltf_write(path, TRN_GLTF_EMBEDDED, &s, &rep, NULL));
        CHECK_EQ_INT(rep.file_count, 1);
        size_t esize = 0;
        char *etext = (char *)trn_test_read_file(path, &esize);
        json_t *eroot = etext ? json_loadb(etext, esize, 0, NULL) : NULL;
        const char *uri = json_string_value(
            json_object_get(json_array_get(json_object_get(eroot, "buffers"), 0), "uri"));
        CHECK(uri && strncmp(uri, "data:application/octet-stream;base64,", 37) == 0);
        if (uri) {
            /* decode and compare with the .bin */
            const char *b64 = uri + 37;
            size_t len = strlen(b64), o = 0;
            uint8_t *dec = malloc(len);
            uint32_t acc = 0;
            int bits = 0;
            for (size_t k = 0; k < len && b64[k] != '='; k++) {
                const char *abc =
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
                acc = acc << 6 | (uint32_t)(strchr(abc, b64[k]) - abc);
                bits += 6;
                if (bits >= 8) {
                    bits -= 8;
                    dec[o++] = (uint8_t)(acc >> bits);
                }
            }
            CHECK_EQ_INT(o, bsize);
            CHECK(memcmp(dec, data, bsize) == 0);
            free(dec);
        }
        json_decref(eroot);
        free(etext);
    }
    free(text);
    free(data);
    trn_mesh_free(m);
    free(roles);
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

static void test_obj(void)
{
    trn_field f;
    trn_water w;
    uint8_t *roles;
    scene_inputs(&f, &w, &roles);
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 4;
    trn_mesh *m = NULL;
    CHECK_OK(trn_mesh_build(&f, roles, &o, &m, NULL, NULL, NULL));
    uint32_t levels[9] = {2, 1, 0, 2, 1, 0, 2, 1, 0};
    trn_mesh_scene s = {m,   levels, true, &w,   &f,    NULL, NULL, NULL,
                        0.0, NULL,   0,    NULL, false, NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
    char path[700], mtl[700];
    snprintf(path, sizeof path, "%s/m.obj", tmp);
    snprintf(mtl, sizeof mtl, "%s/m.mtl", tmp);
    trn_mesh_write_report rep;
    CHECK_OK(trn_obj_write(path, &s, &rep, NULL));
    CHECK_EQ_INT(rep.file_count, 2);
    size_t size = 0, msize = 0;
    char *text = (char *)trn_test_read_file(path, &size);
    char *mt = (char *)trn_test_read_file(mtl, &msize);
    CHECK(text && mt);
    if (text && mt) {
        CHECK_CONTAINS(text, "mtllib m.mtl\n");
        CHECK_CONTAINS(text, "o chunk_2_1\n");
        CHECK_CONTAINS(text, "g water_b0\n");
        CHECK_CONTAINS(mt, "newmtl water\n");
        uint64_t v = 0, vn = 0, faces = 0, bad = 0, unknown = 0;
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (strncmp(line, "v ", 2) == 0) v++;
            if (strncmp(line, "vn ", 3) == 0) vn++;
            if (strncmp(line, "usemtl ", 7) == 0) {
                char want[80];
                snprintf(want, sizeof want, "newmtl %s\n", line + 7);
                unknown += strstr(mt, want) == NULL;
            }
            if (strncmp(line, "f ", 2) == 0) {
                unsigned long long a, a2, b, b2, c, c2;
                CHECK(sscanf(line, "f %llu//%llu %llu//%llu %llu//%llu", &a, &a2, &b, &b2, &c,
                             &c2) == 6);
                bad += a < 1 || b < 1 || c < 1 || a > v || b > v || c > v || a != a2 || b != b2 ||
                       c != c2;
                faces++;
            }
        }
        CHECK_EQ_INT(v, vn);
        CHECK_EQ_INT(v, rep.vertices);
        CHECK_EQ_INT(faces, rep.triangles);
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(unknown, 0);
        uint8_t rgba[4];
        trn_roles_color(TRN_ROLE_GRASS, rgba);
        char kd[120];
        snprintf(kd, sizeof kd, "newmtl grass\nKa 0 0 0\nKd %.6f %.6f %.6f\n",
                 trn_srgb_to_linear(rgba[0]), trn_srgb_to_linear(rgba[1]),
                 trn_srgb_to_linear(rgba[2]));
        CHECK_CONTAINS(mt, kd);
        CHECK(rep.bytes == size + msize);
    }
    free(text);
    free(mt);
    /* A mesh named .mtl would be its own library: refused, nothing written. */
    snprintf(path, sizeof path, "%s/x.mtl", tmp);
    trn_error e;
    CHECK_STATUS(trn_obj_write(path, &s, &rep, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(!trn_test_exists(path));
    trn_mesh_free(m);
    free(roles);
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

/* A triangle as its three corners' sample numbers (j * 25 + i), rotated so the least is first
 * (winding kept). */
typedef struct tri_key {
    uint32_t v[3];
} tri_key;

static int tri_cmp(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(tri_key));
}

static tri_key tri_make(uint32_t a, uint32_t b, uint32_t c)
{
    tri_key t = {{a, b, c}};
    while (t.v[0] > t.v[1] || t.v[0] > t.v[2])
        t = (tri_key){{t.v[1], t.v[2], t.v[0]}};
    return t;
}

/* Per-biome primitives: a mesh built on a biome map writes one primitive per biome, each
 * triangle in exactly one, in the primitive of its corners' majority biome; the materials
 * are the biomes with their material ids and texture scales. */
static void test_glb_biome_sections(void)
{
    trn_field f;
    rough_field(&f);
    uint8_t *biome = malloc(25u * 21u);
    for (uint32_t j = 0; j <= 20; j++)
        for (uint32_t i = 0; i <= 24; i++) {
            uint32_t h = i * 2654435761u ^ j * 40503u;
            biome[j * 25u + i] = (uint8_t)(i < 9 ? 0 : i > 15 ? 2 : (h >> 7) % 3u);
        }
    const trn_mesh_biome_material biomes[3] = {{"meadow", "materials/grass", 0.25, {0, 1, 0, 1}},
                                               {"scree", NULL, 0.125, {0.5f, 0.5f, 0.5f, 1}},
                                               {"beach", "materials/sand", 2.0, {1, 1, 0, 1}}};
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 8;
    trn_mesh *m = NULL;
    CHECK_OK(trn_mesh_build(&f, biome, &o, &m, NULL, NULL, NULL));
    uint32_t levels[9] = {0, 1, 0, 2, 0, 1, 0, 0, 3};
    /* the mesh's own surface triangles, skirts left out */
    size_t want_n = 0, cap = 2u * 24u * 20u;
    tri_key *want = malloc(cap * sizeof *want);
    for (size_t k = 0; m && k < 9; k++) {
        const trn_mesh_level *lv = &m->chunks[k].levels[levels[k]];
        for (uint32_t q = 0; q < lv->section_count; q++) {
            const trn_mesh_section *sec = &lv->sections[q];
            for (uint32_t t = sec->first; t < sec->first + sec->count - sec->skirt_count; t += 3) {
                uint32_t id[3];
                for (int c = 0; c < 3; c++) {
                    const float *pp = lv->positions + 3u * lv->indices[t + (uint32_t)c];
                    id[c] = (uint32_t)lrintf(pp[2]) * 25u + (uint32_t)lrintf(pp[0]);
                }
                /* written a, c, b: the file's winding */
                if (want_n < cap) want[want_n++] = tri_make(id[0], id[2], id[1]);
            }
        }
    }
    qsort(want, want_n, sizeof *want, tri_cmp);
    for (int chunked = 0; chunked < 2; chunked++) {
        trn_mesh_scene s = {m,      levels, chunked != 0, NULL, NULL, NULL, NULL, NULL, 1.0,
                            biomes, 3,      NULL,         true, NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
        char path[700];
        snprintf(path, sizeof path, "%s/biome%d.glb", tmp, chunked);
        trn_mesh_write_report rep;
        CHECK_OK(trn_gltf_write(path, TRN_GLTF_GLB, &s, &rep, NULL));
        parsed p;
        if (!m || !parse_glb(path, &p)) continue;
        CHECK_EQ_INT(check_document(&p), rep.triangles);
        json_t *materials = json_object_get(p.root, "materials");
        CHECK_EQ_INT(json_array_size(materials), 3);
        size_t got_n = 0, wrong = 0, skirts = 0;
        tri_key *got = malloc((cap + 4096u) * sizeof *got);
        json_t *meshes = json_object_get(p.root, "meshes");
        for (size_t k = 0; k < json_array_size(meshes); k++) {
            json_t *prims = json_object_get(json_array_get(meshes, k), "primitives");
            for (size_t q = 0; q < json_array_size(prims); q++) {
                json_t *prim = json_array_get(prims, q);
                json_t *mat = json_array_get(
                    materials, (size_t)json_integer_value(json_object_get(prim, "material")));
                json_t *ex = json_object_get(mat, "extras");
                const char *bname = json_string_value(json_object_get(ex, "biome"));
                int b = -1;
                for (int c = 0; c < 3; c++)
                    if (bname && strcmp(bname, biomes[c].name) == 0) b = c;
                CHECK(b >= 0);
                if (b < 0) continue;
                CHECK(str_is(json_object_get(mat, "name"), biomes[b].name));
                CHECK(json_real_value(json_object_get(ex, "texture_scale")) ==
                      biomes[b].texture_scale);
                if (biomes[b].material)
                    CHECK(str_is(json_object_get(ex, "material"), biomes[b].material));
                else
                    CHECK(json_is_null(json_object_get(ex, "material")));
                const json_int_t pa = json_integer_value(
                    json_object_get(json_object_get(prim, "attributes"), "POSITION"));
                const json_int_t ia = json_integer_value(json_object_get(prim, "indices"));
                const size_t pbase = accessor_base(&p, pa), ibase = accessor_base(&p, ia);
                const json_int_t count = json_integer_value(json_object_get(
                    json_array_get(json_object_get(p.root, "accessors"), (size_t)ia), "count"));
                for (json_int_t t = 0; t < count; t += 3) {
                    uint32_t id[3];
                    for (int c = 0; c < 3; c++) {
                        const uint32_t v = get_u32(p.bin + ibase + 4u * (size_t)(t + c));
                        id[c] = (uint32_t)lrint(-bin_float(&p, pbase + 12u * v + 8u)) * 25u +
                                (uint32_t)lrint(bin_float(&p, pbase + 12u * v));
                    }
                    /* a skirt triangle has two corners over one sample: not a surface one */
                    if (id[0] == id[1] || id[1] == id[2] || id[0] == id[2]) {
                        skirts++;
                        continue;
                    }
                    const uint8_t l0 = biome[id[0]], l1 = biome[id[1]], l2 = biome[id[2]];
                    const uint8_t maj = (l1 == l2) ? l1 : l0;
                    wrong += maj != (uint8_t)b;
                    if (got_n < cap + 4096u) got[got_n++] = tri_make(id[0], id[1], id[2]);
                }
            }
        }
        CHECK(skirts > 0);
        CHECK_EQ_INT(wrong, 0);
        qsort(got, got_n, sizeof *got, tri_cmp);
        CHECK_EQ_INT(got_n, want_n);
        CHECK(got_n == want_n && memcmp(got, want, got_n * sizeof *got) == 0);
        free(got);
        parsed_dispose(&p);
    }
    /* a section beyond the list is refused */
    trn_mesh_scene bad = {m,   levels, false, NULL, NULL, NULL, NULL, NULL,
                          0.0, biomes, 2,     NULL, true, NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
    char path[700];
    snprintf(path, sizeof path, "%s/biome_bad.glb", tmp);
    trn_error e;
    CHECK_STATUS(trn_gltf_write(path, TRN_GLTF_GLB, &bad, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "biome 2");
    CHECK(!trn_test_exists(path));
    free(want);
    trn_mesh_free(m);
    free(biome);
    trn_field_dispose(&f);
}

/* OBJ with UVs and a collider: each terrain v has its vt (u = x * scale, v = north * scale),
 * faces name them, and the object "collider" follows with its own faces. */
static void test_obj_uvs_collider(void)
{
    trn_field f;
    rough_field(&f);
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 8;
    trn_mesh *m = NULL, *c = NULL;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, NULL));
    o.adaptive = true;
    o.adaptive_error = 0.5;
    o.max_levels = 1;
    o.skirt_depth = 0.0;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &c, NULL, NULL, NULL));
    trn_mesh_scene s = {m,   NULL, true, NULL, NULL,  NULL, NULL, NULL,
                        0.5, NULL, 0,    c,    false, NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
    char path[700], mtl[700];
    snprintf(path, sizeof path, "%s/uv.obj", tmp);
    snprintf(mtl, sizeof mtl, "%s/uv.mtl", tmp);
    trn_mesh_write_report rep;
    CHECK_OK(trn_obj_write(path, &s, &rep, NULL));
    size_t size = 0, msize = 0;
    char *text = (char *)trn_test_read_file(path, &size);
    char *mt = (char *)trn_test_read_file(mtl, &msize);
    uint64_t terrain_v = 0, terrain_t = 0, collider_t = 0;
    for (size_t k = 0; m && c && k < 9u; k++) {
        terrain_v += m->chunks[k].levels[0].vertex_count;
        terrain_t += m->chunks[k].levels[0].index_count / 3u;
        collider_t += c->chunks[k].levels[0].index_count / 3u;
    }
    if (text && mt && m && c) {
        CHECK_CONTAINS(mt, "newmtl collider\n");
        float *xz = malloc(2u * terrain_v * sizeof *xz);
        uint64_t v = 0, vt = 0, faces_uv = 0, faces_plain = 0, bad = 0;
        bool in_collider = false;
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            double x, y, z;
            if (sscanf(line, "v %lf %lf %lf", &x, &y, &z) == 3) {
                if (v < terrain_v) {
                    xz[2u * v] = (float)x;
                    xz[2u * v + 1u] = (float)z;
                }
                v++;
            }
            if (strcmp(line, "o collider") == 0) in_collider = true;
            if (sscanf(line, "vt %lf %lf", &x, &y) == 2) {
                CHECK(vt < terrain_v);
                if (vt < terrain_v) {
                    bad += (float)x != (float)((double)xz[2u * vt] * 0.5);
                    /* the file's z is minus north; OBJ's v is north */
                    bad += (float)y != (float)(-(double)xz[2u * vt + 1u] * 0.5);
                }
                vt++;
            }
            unsigned long long a[9];
            if (strncmp(line, "f ", 2) == 0) {
                if (sscanf(line, "f %llu/%llu/%llu %llu/%llu/%llu %llu/%llu/%llu", &a[0], &a[1],
                           &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8]) == 9) {
                    CHECK(!in_collider);
                    for (int q = 0; q < 3; q++)
                        bad += a[3 * q] != a[3 * q + 1] || a[3 * q] != a[3 * q + 2] ||
                               a[3 * q] > terrain_v;
                    faces_uv++;
                } else if (sscanf(line, "f %llu %llu %llu", &a[0], &a[1], &a[2]) == 3) {
                    CHECK(in_collider);
                    for (int q = 0; q < 3; q++)
                        bad += a[q] <= terrain_v || a[q] > v;
                    faces_plain++;
                }
            }
        }
        CHECK_EQ_INT(vt, terrain_v);
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(faces_uv, terrain_t);
        CHECK_EQ_INT(faces_plain, collider_t);
        CHECK_EQ_INT(rep.triangles, terrain_t + collider_t);
        free(xz);
    }
    free(text);
    free(mt);
    trn_mesh_free(c);
    trn_mesh_free(m);
    trn_field_dispose(&f);
}

static void test_refusals(void)
{
    trn_field f;
    water_test_field(&f, 4, 4, 1.0, 1.0, flat);
    trn_mesh *m = NULL;
    CHECK_OK(trn_mesh_build(&f, NULL, NULL, &m, NULL, NULL, NULL));
    char path[700];
    snprintf(path, sizeof path, "%s/bad.glb", tmp);
    trn_error e;
    uint32_t level = 7;
    trn_mesh_scene s = {m,   &level, false, NULL, NULL,  NULL, NULL, NULL,
                        0.0, NULL,   0,     NULL, false, NULL, NULL, NULL, NULL, 0, NULL, {NULL}};
    CHECK_STATUS(trn_gltf_write(path, TRN_GLTF_GLB, &s, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "level 7");
    CHECK(!trn_test_exists(path));
    s.levels = NULL;
    trn_instance one = {3, 0, 0, 0, 0, 0, 0, 1};
    trn_instances inst = {&one, 1};
    trn_palette pal;
    CHECK_OK(trn_palette_parse(palette_text, strlen(palette_text), "p.json", &pal, NULL));
    s.instances = &inst;
    s.palette = &pal;
    CHECK_STATUS(trn_gltf_write(path, TRN_GLTF_GLB, &s, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "names rule 3");
    CHECK_STATUS(trn_obj_write(path, &s, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(!trn_test_exists(path));
    s.instances = NULL;
    CHECK_STATUS(trn_gltf_write(path, (trn_gltf_container)9, &s, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_gltf_write(path, TRN_GLTF_GLB, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    /* An unwritable place (a folder that is a file): an error, nothing left behind. */
    char blocker[700];
    snprintf(blocker, sizeof blocker, "%s/blocker", tmp);
    CHECK(trn_test_write_file(blocker, "x", 1));
    snprintf(path, sizeof path, "%s/blocker/x.glb", tmp);
    CHECK(trn_gltf_write(path, TRN_GLTF_GLB, &s, NULL, &e) != TRN_OK);
    CHECK(!trn_test_exists(path));
    CHECK(strstr(e.file, ".tmp-") == NULL); /* the error names the file, not a temporary */
    CHECK(trn_obj_write(path, &s, NULL, &e) != TRN_OK);
    CHECK(strstr(e.file, ".tmp-") == NULL);
    /* All holes: a valid file with no buffer. */
    for (size_t k = 0; k < 25; k++)
        f.heights[k] = NAN;
    trn_mesh_free(m);
    CHECK_OK(trn_mesh_build(&f, NULL, NULL, &m, NULL, NULL, NULL));
    s.mesh = m;
    snprintf(path, sizeof path, "%s/empty.glb", tmp);
    CHECK_OK(trn_gltf_write(path, TRN_GLTF_GLB, &s, NULL, &e));
    parsed p;
    if (parse_glb(path, &p)) {
        CHECK(json_object_get(p.root, "buffers") == NULL);
        CHECK(p.bin == NULL);
        parsed_dispose(&p);
    }
    trn_palette_dispose(&pal);
    trn_mesh_free(m);
    trn_field_dispose(&f);
}

/* Deferred levels written chunk by chunk (trn_mesh_scene.deferred_field) give the bytes of the
 * same levels fully built, in every container, with UVs, merged or chunked, and with some
 * chunks already realized. */
static void test_deferred_bytes(void)
{
    trn_field f;
    trn_water w;
    uint8_t *roles = NULL;
    scene_inputs(&f, &w, &roles);
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 4;
    trn_mesh *full = NULL, *lazy = NULL;
    CHECK_OK(trn_mesh_build(&f, roles, &o, &full, NULL, NULL, NULL));
    o.defer_levels = true;
    CHECK_OK(trn_mesh_build(&f, roles, &o, &lazy, NULL, NULL, NULL));
    if (!full || !lazy) goto done;
    uint32_t levels[9] = {0, 1, 2, 2, 1, 0, 1, 0, 2};
    static const trn_gltf_container containers[3] = {TRN_GLTF_GLB, TRN_GLTF_SEPARATE,
                                                     TRN_GLTF_EMBEDDED};
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            /* chunks 0..3 realized at their drawn level, the rest at another (still deferred) */
            uint32_t some[9];
            for (int k = 0; k < 9; k++)
                some[k] = k < 4 ? levels[k] : (levels[k] + 1u) % lazy->level_count;
            CHECK_OK(trn_mesh_realize(&f, roles, lazy, some, 1, NULL));
            CHECK(lazy->chunks[0].levels[levels[0]].positions != NULL);
            CHECK(lazy->chunks[8].levels[levels[8]].positions == NULL);
        }
        for (int c = 0; c < 3; c++)
            for (int chunked = 0; chunked < 2; chunked++) {
                trn_mesh_scene a;
                memset(&a, 0, sizeof a);
                a.mesh = full;
                a.levels = levels;
                a.chunks = chunked != 0;
                a.uv_scale = chunked ? 0.25 : 0.0;
                trn_mesh_scene b = a;
                b.mesh = lazy;
                b.deferred_field = &f;
                b.deferred_roles = roles;
                /* the same names in two folders (a .gltf names its .bin) */
                const char *ext = containers[c] == TRN_GLTF_GLB ? "glb" : "gltf";
                char pa[700], pb[700];
                snprintf(pa, sizeof pa, "%s/full", tmp);
                snprintf(pb, sizeof pb, "%s/lazy", tmp);
                mkdir(pa, 0755);
                mkdir(pb, 0755);
                snprintf(pa, sizeof pa, "%s/full/t%d%d.%s", tmp, c, chunked, ext);
                snprintf(pb, sizeof pb, "%s/lazy/t%d%d.%s", tmp, c, chunked, ext);
                trn_mesh_write_report ra, rb;
                CHECK_OK(trn_gltf_write(pa, containers[c], &a, &ra, NULL));
                CHECK_OK(trn_gltf_write(pb, containers[c], &b, &rb, NULL));
                CHECK(trn_test_same_bytes(pa, pb));
                CHECK(ra.vertices == rb.vertices && ra.triangles == rb.triangles);
                if (containers[c] == TRN_GLTF_SEPARATE) {
                    snprintf(pa, sizeof pa, "%s/full/t%d%d.bin", tmp, c, chunked);
                    snprintf(pb, sizeof pb, "%s/lazy/t%d%d.bin", tmp, c, chunked);
                    CHECK(trn_test_same_bytes(pa, pb));
                }
            }
    }
    {
        /* 120 chunks, levels 0 to 2 mixed, UVs. */
        trn_field big;
        water_test_field(&big, 48, 40, 1.0, 1.0, diamond);
        trn_mesh *bf = NULL, *bl = NULL;
        trn_mesh_options_default(&o);
        o.chunk_cells = 4;
        CHECK_OK(trn_mesh_build(&big, NULL, &o, &bf, NULL, NULL, NULL));
        o.defer_levels = true;
        CHECK_OK(trn_mesh_build(&big, NULL, &o, &bl, NULL, NULL, NULL));
        uint32_t *many = calloc(120, sizeof *many);
        if (bf && bl && many) {
            CHECK_EQ_INT(bf->chunks_x * bf->chunks_z, 120);
            for (size_t k = 0; k < 120; k++)
                many[k] = (uint32_t)(k * 7u % 3u);
            for (int chunked = 0; chunked < 2; chunked++) {
                trn_mesh_scene a;
                memset(&a, 0, sizeof a);
                a.mesh = bf;
                a.levels = many;
                a.chunks = chunked != 0;
                a.uv_scale = 0.5;
                trn_mesh_scene b = a;
                b.mesh = bl;
                b.deferred_field = &big;
                char pa[700], pb[700];
                snprintf(pa, sizeof pa, "%s/full/big%d.glb", tmp, chunked);
                snprintf(pb, sizeof pb, "%s/lazy/big%d.glb", tmp, chunked);
                CHECK_OK(trn_gltf_write(pa, TRN_GLTF_GLB, &a, NULL, NULL));
                CHECK_OK(trn_gltf_write(pb, TRN_GLTF_GLB, &b, NULL, NULL));
                CHECK(trn_test_same_bytes(pa, pb));
            }
        }
        free(many);
        trn_mesh_free(bf);
        trn_mesh_free(bl);
        trn_field_dispose(&big);
    }
    {
        /* Refused: deferred levels without the field to build them from, and in OBJ. */
        trn_mesh_scene b;
        memset(&b, 0, sizeof b);
        b.mesh = lazy;
        b.levels = levels;
        char path[700];
        snprintf(path, sizeof path, "%s/nofield.glb", tmp);
        trn_error e;
        CHECK_STATUS(trn_gltf_write(path, TRN_GLTF_GLB, &b, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(e.message, "chunk 1_1: its level has no geometry");
        CHECK(!trn_test_exists(path));
        b.deferred_field = &f;
        snprintf(path, sizeof path, "%s/deferred.obj", tmp);
        CHECK_STATUS(trn_obj_write(path, &b, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(e.message, "OBJ: chunk 1_1: its level has no geometry");
    }
done:
    trn_mesh_free(full);
    trn_mesh_free(lazy);
    free(roles);
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_glb_scene);
    RUN(test_glb_adaptive);
    RUN(test_glb_uvs_collider);
    RUN(test_glb_biome_sections);
    RUN(test_gltf_text);
    RUN(test_deferred_bytes);
    RUN(test_obj);
    RUN(test_obj_uvs_collider);
    RUN(test_refusals);
    return trn_test_finish();
}

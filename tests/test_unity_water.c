/* Tests for Unity water: OBJ meshes (x negated, faces up for Unity's importer, heights from the
 * Terrain's base) and NAME.water.json, exact on hand-built water. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/unity_water.h"
#include "test.h"
#include "water_helpers.h"

static char *read_text(const char *path)
{
    size_t n = 0;
    uint8_t *d = trn_test_read_file(path, &n);
    if (!d) return NULL;
    char *s = malloc(n + 1);
    memcpy(s, d, n);
    s[n] = '\0';
    free(d);
    return s;
}

/* Counts of v, vn and f lines; every face, read as Unity reads the file (x negated back, order
 * reversed), must face up, which in the file's own right-handed terms is a counter-clockwise
 * face with its normal up. */
static void check_obj(const char *text, int *v, int *vn, int *f)
{
    *v = *vn = *f = 0;
    double(*pos)[3] = malloc(4096 * sizeof *pos);
    for (const char *line = text; line && *line;) {
        double a, b, c;
        unsigned long i[6];
        if (sscanf(line, "v %lf %lf %lf", &a, &b, &c) == 3 && line[1] == ' ') {
            if (*v < 4096) {
                pos[*v][0] = a;
                pos[*v][1] = b;
                pos[*v][2] = c;
            }
            ++*v;
        } else if (strncmp(line, "vn ", 3) == 0) {
            ++*vn;
        } else if (sscanf(line, "f %lu//%lu %lu//%lu %lu//%lu", &i[0], &i[1], &i[2], &i[3], &i[4],
                          &i[5]) == 6) {
            ++*f;
            CHECK(i[0] == i[1] && i[2] == i[3] && i[4] == i[5]);
            const double *p = pos[i[0] - 1], *q = pos[i[2] - 1], *r = pos[i[4] - 1];
            /* y of (q - p) x (r - p) in the file's coordinates */
            double up = (q[2] - p[2]) * (r[0] - p[0]) - (q[0] - p[0]) * (r[2] - p[2]);
            CHECK(up > 0);
        }
        line = strchr(line, '\n');
        if (line) line++;
    }
    free(pos);
}

static double num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static bool vec_is(const json_t *a, double x, double y, double z)
{
    return json_array_size(a) == 3 && json_number_value(json_array_get(a, 0)) == x &&
           json_number_value(json_array_get(a, 1)) == y &&
           json_number_value(json_array_get(a, 2)) == z;
}

/* A sea on a ramp over rows 0..3 (the mesh test's shore at x = 3.5: 29 vertices, 36 triangles,
 * area 14), a dry lake, a river over rows 5..8. */
static void test_meshes_and_json(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, ramp);
    trn_water w;
    water_test_init(&w, &g, 3, TRN_WATER_OCEAN);
    snprintf(w.bodies[0].id, sizeof w.bodies[0].id, "sea");
    w.bodies[0].level = 3.5;
    w.bodies[0].look.flow_speed = 0.5;
    w.bodies[0].look.flow_direction[0] = 3.0;
    w.bodies[0].look.flow_direction[1] = -4.0;
    snprintf(w.bodies[1].id, sizeof w.bodies[1].id, "pond/dry");
    w.bodies[1].kind = TRN_WATER_LAKE;
    w.bodies[1].level = -5.0;
    trn_water_body *r = &w.bodies[2];
    snprintf(r->id, sizeof r->id, "creek");
    r->kind = TRN_WATER_RIVER;
    r->surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    const double path[6] = {0, 2, 8, 8, 2, 8};
    r->path = malloc(sizeof path);
    memcpy(r->path, path, sizeof path);
    r->path_count = 2;
    water_plane p[3] = {{3.5, 0, 0}, {-5, 0, 0}, {3.0, 0, 0}};
    water_test_cover(&w, &g, 0, &p[0], 0, 8, 0, 3);
    water_test_cover(&w, &g, 2, &p[2], 0, 8, 5, 8);
    char dir[512], path_buf[800];
    trn_test_tmpdir(dir, sizeof dir);
    trn_unity_water_options o = {"isle", {10.0, 20.0, 30.0}, 1.0, NULL};
    trn_unity_water_report rep;
    CHECK_OK(trn_unity_export_water(dir, &w, &g, &o, &rep, NULL));
    CHECK(rep.meshes == 2 && rep.skipped == 1 && rep.files == 3);

    snprintf(path_buf, sizeof path_buf, "%s/isle_water_sea.obj", dir);
    char *obj = read_text(path_buf);
    CHECK(obj && strncmp(obj, "# terrane water surface: ocean 'sea', ", 38) == 0);
    CHECK_CONTAINS(obj, "\no isle_water_sea\nv 0 2.5 0\nv -1 2.5 1\nv -1 2.5 0\n");
    CHECK_CONTAINS(obj, "\nvn 0 1 0\n");
    CHECK_CONTAINS(obj, "\nf 1//1 3//3 2//2\n");
    CHECK(obj && !strstr(obj, "-0 "));
    int v, vn, f;
    check_obj(obj, &v, &vn, &f);
    CHECK_EQ_INT(v, 29);
    CHECK_EQ_INT(f, 36);
    CHECK_EQ_INT(vn, v);
    free(obj);
    snprintf(path_buf, sizeof path_buf, "%s/isle_water_pond_dry.obj", dir);
    CHECK(!trn_test_exists(path_buf));
    snprintf(path_buf, sizeof path_buf, "%s/isle_water_creek.obj", dir);
    CHECK(trn_test_exists(path_buf));

    snprintf(path_buf, sizeof path_buf, "%s/isle.water.json", dir);
    json_error_t je;
    json_t *doc = json_load_file(path_buf, 0, &je);
    CHECK(doc != NULL);
    CHECK(strcmp(json_string_value(json_object_get(doc, "format")), "terrane unity water 1") == 0);
    CHECK(strcmp(json_string_value(json_object_get(doc, "terrain")), "isle") == 0);
    CHECK(vec_is(json_object_get(doc, "position"), 10, 21, 30));
    CHECK(num(doc, "height_base") == 1.0);
    const json_t *bodies = json_object_get(doc, "bodies");
    CHECK_EQ_INT(json_array_size(bodies), 3);
    const json_t *sea = json_array_get(bodies, 0), *pond = json_array_get(bodies, 1),
                 *creek = json_array_get(bodies, 2);
    CHECK(strcmp(json_string_value(json_object_get(sea, "id")), "sea") == 0);
    CHECK(strcmp(json_string_value(json_object_get(sea, "kind")), "ocean") == 0);
    CHECK(strcmp(json_string_value(json_object_get(sea, "surface")), "level") == 0);
    CHECK(strcmp(json_string_value(json_object_get(sea, "mesh")), "isle_water_sea.obj") == 0);
    CHECK(num(sea, "level") == 3.5 && num(sea, "area") == 14.0 && num(sea, "deepest") == 3.5);
    CHECK(json_integer_value(json_object_get(sea, "vertices")) == v);
    CHECK(json_integer_value(json_object_get(sea, "triangles")) == f);
    const json_t *look = json_object_get(sea, "look");
    CHECK(num(look, "absorption_distance") == 4.0 && num(look, "wave_length") == 2.0);
    CHECK(json_array_size(json_object_get(look, "shallow_color")) == 4);
    CHECK(json_number_value(json_array_get(json_object_get(look, "deep_color"), 3)) == 0.9);
    const json_t *flow = json_object_get(sea, "flow");
    CHECK(num(flow, "speed") == 0.5 && vec_is(json_object_get(flow, "direction"), 0.6, 0, -0.8));
    CHECK(json_is_null(json_object_get(pond, "mesh")));
    CHECK(json_integer_value(json_object_get(pond, "triangles")) == 0);
    CHECK(strcmp(json_string_value(json_object_get(creek, "surface")), "follow-bed") == 0);
    const json_t *river_path = json_object_get(json_object_get(creek, "flow"), "path");
    CHECK(json_array_size(river_path) == 2 && vec_is(json_array_get(river_path, 0), 0, 1, 8) &&
          vec_is(json_array_get(river_path, 1), 8, 1, 8));
    json_decref(doc);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* File names: the id made safe, then _1, _2 when two bodies would share one. */
static void test_names_and_errors(void)
{
    trn_field g, other;
    water_test_field(&g, 4, 4, 1.0, 1.0, ramp);
    water_test_field(&other, 4, 4, 2.0, 1.0, ramp);
    trn_water w;
    water_test_init(&w, &g, 3, TRN_WATER_LAKE);
    snprintf(w.bodies[0].id, sizeof w.bodies[0].id, "a/b");
    snprintf(w.bodies[1].id, sizeof w.bodies[1].id, "A_B");
    snprintf(w.bodies[2].id, sizeof w.bodies[2].id, "x-1");
    water_plane p = {2.0, 0, 0};
    for (int b = 0; b < 3; b++) {
        w.bodies[b].level = 2.0;
        water_test_cover(&w, &g, b, &p, 0, 4, (uint32_t)b, (uint32_t)b);
    }
    char dir[512], path[800];
    trn_test_tmpdir(dir, sizeof dir);
    trn_unity_water_options o = {NULL, {0, 0, 0}, 0.0, NULL};
    CHECK_OK(trn_unity_export_water(dir, &w, &g, &o, NULL, NULL));
    const char *names[] = {"terrain_water_a_b.obj", "terrain_water_A_B_1.obj",
                           "terrain_water_x-1.obj", "terrain.water.json"};
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        CHECK(trn_test_exists(path));
    }
    trn_error e;
    trn_unity_water_report rep;
    CHECK_STATUS(trn_unity_export_water(dir, &w, &other, &o, &rep, &e), TRN_ERR_MISMATCH);
    CHECK(rep.files == 0);
    CHECK_STATUS(trn_unity_export_water("", &w, &g, &o, &rep, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_unity_export_water(dir, &w, &g, NULL, &rep, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
    trn_field_dispose(&other);
}

int main(void)
{
    RUN(test_meshes_and_json);
    RUN(test_names_and_errors);
    return trn_test_finish();
}

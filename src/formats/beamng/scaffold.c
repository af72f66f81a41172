/* BeamNG level scaffold: info.json, preview, spawn point, sky, sun and the editor's groups. */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fileio.h"
#include "core/write_set.h"
#include "level_internal.h"
#include "terrane/render.h"

static trn_status oom(trn_error *err, const char *path)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
}

/* ------------------------------------------------------------------------------------------
 * Where the spawn point goes.
 * ---------------------------------------------------------------------------------------- */

static double height_at(const trn_ter *ter, const trn_terrain_block *tb, uint32_t i, uint32_t j)
{
    return (double)ter->heights[(size_t)j * ter->size + i] * tb->max_height / 65536.0 +
           tb->position[2];
}

/* A vehicle needs a flat, dry, solid patch: candidates on a grid of at most 256 x 256, each
 * judged by the 3 x 3 samples k apart around it (k = 4 m or one sample, a car's length over
 * the footprint): a hole among them
 * rules it out, as does its lowest point under sea level + 0.5 m; the score is the rise over
 * the footprint per metre plus a mild pull to the centre (0.02 at the edge), so the flattest
 * spot of the central area wins and near ties go to the centre. The central disc (a quarter
 * of the width in radius) is searched first, the whole terrain when it has no dry spot; equal
 * scores keep the first in row order, so the choice is deterministic. */
bool trn_lvl_spawn_spot(const trn_ter *ter, const trn_terrain_block *tb, bool has_sea_level,
                        double sea_level, double world[3])
{
    const uint32_t n = ter->size;
    const double sq = tb->square_size > 0 ? tb->square_size : 1.0;
    uint32_t k = (uint32_t)ceil(4.0 / sq);
    if (k < 1) k = 1;
    const uint32_t step = n > 256 ? n / 256 : 1;
    const double centre = (n - 1) / 2.0, half = n / 2.0;
    bool found = false;
    uint32_t bi = 0, bj = 0;
    double best = INFINITY, top = 0;
    for (int pass = 0; pass < 2 && !found; pass++) {
        const double radius = pass == 0 ? n / 4.0 : INFINITY;
        for (uint32_t j = k; n > 2 * k && j < n - k; j += step)
            for (uint32_t i = k; i < n - k; i += step) {
                const double d = hypot((double)i - centre, (double)j - centre);
                if (d > radius) continue;
                double lo = INFINITY, hi = -INFINITY;
                bool hole = false;
                for (int b = -1; b <= 1 && !hole; b++)
                    for (int a = -1; a <= 1; a++) {
                        uint32_t x = (uint32_t)((int64_t)i + a * (int64_t)k);
                        uint32_t y = (uint32_t)((int64_t)j + b * (int64_t)k);
                        if (ter->layers[(size_t)y * n + x] == TRN_LABEL_NONE) {
                            hole = true;
                            break;
                        }
                        const double h = height_at(ter, tb, x, y);
                        lo = h < lo ? h : lo;
                        hi = h > hi ? h : hi;
                    }
                if (hole || (has_sea_level && lo < sea_level + 0.5)) continue;
                const double score = (hi - lo) / (2.0 * k * sq) + 0.02 * d / half;
                if (score < best) {
                    best = score;
                    bi = i;
                    bj = j;
                    top = hi;
                    found = true;
                }
            }
    }
    if (!found) {
        /* Under water or holes everywhere: the centre, above the water. */
        bi = bj = (uint32_t)floor(centre);
        top = height_at(ter, tb, bi, bj);
        if (has_sea_level && top < sea_level) top = sea_level;
    }
    world[0] = tb->position[0] + bi * sq;
    world[1] = tb->position[1] + bj * sq;
    world[2] = top + 0.5; /* just above the ground: the vehicle settles onto it */
    return found;
}

/* ------------------------------------------------------------------------------------------
 * Scene objects.
 * ---------------------------------------------------------------------------------------- */

typedef struct scaffold {
    trn_write_set *ws;
    const char *level_dir, *level_name;
    trn_lvl_scene scene; /* as the level was before scaffold added anything */
    char group[256], group_dir[PATH_MAX], group_items[PATH_MAX + 20];
    char *added[16]; /* names given to objects added here */
    size_t added_count;
    trn_beamng_level_result *res;
} scaffold;

static bool name_taken(const scaffold *sc, const char *name)
{
    if (trn_lvl_scene_find(&sc->scene, NULL, name) >= 0) return true;
    for (size_t i = 0; i < sc->added_count; i++)
        if (trn_lvl_ieq(sc->added[i], name)) return true;
    return false;
}

/* A name no object of the level has (Torque names are global): base, base_1, ... */
static trn_status unique_name(scaffold *sc, const char *base, char *out, size_t size,
                              trn_error *err)
{
    snprintf(out, size, "%s", base);
    for (unsigned i = 1; name_taken(sc, out); i++) {
        if (i > 9999)
            return trn_error_set(err, TRN_ERR_LIMIT, sc->level_dir, -1,
                                 "no free object name for %s", base);
        snprintf(out, size, "%s_%u", base, i);
    }
    if (sc->added_count == sizeof sc->added / sizeof sc->added[0]) return TRN_OK;
    if (!(sc->added[sc->added_count] = trn_lvl_strdup(out))) return oom(err, sc->level_dir);
    sc->added_count++;
    return TRN_OK;
}

static bool set_vec(json_t *o, const char *key, const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, trn_lvl_json_number(v[i]))) {
            json_decref(a);
            return false;
        }
    return a && !json_object_set_new(o, key, a);
}

static bool set_num(json_t *o, const char *key, double v)
{
    return !json_object_set_new(o, key, trn_lvl_json_number(v));
}

static bool set_str(json_t *o, const char *key, const char *v)
{
    return !json_object_set_new(o, key, json_string(v));
}

/* The folder of group name: where the level has that SimGroup, else a new one in MissionGroup. */
static trn_status group_folder(scaffold *sc, const char *name, bool enabled_flag, char *dir,
                               size_t size, trn_error *err)
{
    ptrdiff_t g = trn_lvl_scene_find(&sc->scene, "SimGroup", name);
    if (g >= 0)
        return trn_lvl_scene_group_dir(&sc->scene, (size_t)g, dir, size)
                   ? TRN_OK
                   : trn_error_set(err, TRN_ERR_LIMIT, sc->level_dir, -1, "path too long");
    if (!trn_lvl_join(dir, size, sc->group_dir, name))
        return trn_error_set(err, TRN_ERR_LIMIT, sc->level_dir, -1, "path too long");
    json_t *o = trn_lvl_new_object(sc->level_name, "SimGroup", name, sc->group);
    if (!o || (enabled_flag && !set_str(o, "enabled", "1"))) {
        json_decref(o);
        return oom(err, sc->group_items);
    }
    trn_status st = trn_lvl_items_append(sc->ws, sc->group_items, o, err);
    json_decref(o);
    if (!st) sc->res->objects_added++;
    return st;
}

/* Append o (leading keys already set) to the items file of the group in dir. */
static trn_status add_to_group(scaffold *sc, const char *dir, json_t *o, trn_error *err)
{
    char items[PATH_MAX + 20];
    if (!trn_lvl_join(items, sizeof items, dir, "items.level.json")) {
        json_decref(o);
        return trn_error_set(err, TRN_ERR_LIMIT, sc->level_dir, -1, "path too long");
    }
    trn_status st = trn_lvl_items_append(sc->ws, items, o, err);
    json_decref(o);
    if (!st) sc->res->objects_added++;
    return st;
}

/* A new object of class cls named like base (made unique) in the group in dir; NULL when the
 * level has one of that class already (*st TRN_OK) or on failure (*st set). */
static json_t *begin_object(scaffold *sc, const char *cls, const char *base, const char *dir,
                            char *name, size_t name_size, trn_status *st, trn_error *err)
{
    *st = TRN_OK;
    if (trn_lvl_scene_find(&sc->scene, cls, NULL) >= 0) return NULL;
    if ((*st = unique_name(sc, base, name, name_size, err))) return NULL;
    const char *parent = strrchr(dir, '/');
    json_t *o = trn_lvl_new_object(sc->level_name, cls, name, parent ? parent + 1 : dir);
    if (!o) *st = oom(err, dir);
    return o;
}

static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* The fields the World Editor saves for each object class the scaffold adds, beyond name,
 * class, persistentId, __parent and position, in the editor's order (alphabetical, as it
 * writes them). The lists are those of editor-saved levels (sky_and_sun and Water groups of
 * levels made with BeamNG.drive 0.2x-0.3x); the values are the editor's defaults for a new
 * object, rounded, with the stock game's gradient, cubemap, flare and moon assets. */
static const char scatter_sky_fields[] =
    "{\"ambientScale\":[1,0.89,0.78,1],"
    "\"ambientScaleGradientFile\":\"art/sky_gradients/default/gradient_ambient.png\","
    "\"azimuth\":200,\"colorize\":[0.22,0.35,0.6,1],"
    "\"colorizeGradientFile\":\"art/sky_gradients/default/gradient_colorize.png\","
    "\"elevation\":45,\"enableFogFallBack\":false,\"fadeStartDistance\":1000,"
    "\"flareScale\":5,\"flareType\":\"BNG_Sunflare_3\",\"fogScale\":[0.4,0.67,1,1],"
    "\"fogScaleGradientFile\":\"art/sky_gradients/default/gradient_fog.png\","
    "\"lastSplitTerrainOnly\":true,\"logWeight\":0.98,\"mieScattering\":0.00022,"
    "\"moonLightColor\":[0.1,0.1,0.1,1],\"moonMat\":\"Moon_Glow_Mat\",\"moonScale\":0.03,"
    "\"nightColor\":[0.02,0.02,0.02,1],\"nightCubemap\":\"nightCubemap\","
    "\"nightFogColor\":[0.4,0.67,1,1],"
    "\"nightFogGradientFile\":\"art/sky_gradients/default/gradient_fog.png\","
    "\"nightGradientFile\":\"art/sky_gradients/default/gradient_ambient.png\","
    "\"occlusionScale\":0.025,\"overDarkFactor\":[40000,8000,5000,650],"
    "\"rayleighScattering\":0.003,\"shadowDarkenColor\":[0,0,0,0],\"shadowDistance\":1600,"
    "\"shadowSoftness\":0.2,\"skyBrightness\":40,\"sunScale\":[1,0.71,0.56,1],"
    "\"sunScaleGradientFile\":\"art/sky_gradients/default/gradient_sunscale.png\","
    "\"texSize\":1024,\"useNightCubemap\":true}";

/* Three cloud textures moving at different speeds and scales, as a new CloudLayer has them;
 * the texture is the stock cloud normal map the editor's default levels use. */
static const char cloud_layer_fields[] =
    "{\"Textures\":[{\"texDirection\":[1,0],\"texScale\":1.5,\"texSpeed\":0.002},"
    "{\"texDirection\":[0.8,0.2],\"texScale\":3,\"texSpeed\":0.025},"
    "{\"texDirection\":[0.2,0.5],\"texScale\":4,\"texSpeed\":0.035}],"
    "\"baseColor\":[1,1,1,1],\"coverage\":0.2,\"exposure\":1.3,\"height\":4,"
    "\"texture\":\"levels/driver_training/art/skies/SkyNormals_05.dds\",\"windSpeed\":0.2}";

/* A WaterPlane's foam, ripple and wave layers and the surface settings, as the editor saves an
 * ocean; the textures are the game's core water maps. */
static const char water_plane_fields[] =
    "{\"Foam\":[{\"foamDir\":[1,0],\"foamOpacity\":1,\"foamSpeed\":0.01,"
    "\"foamTexScale\":[1,1]},{\"foamDir\":[0,-1],\"foamOpacity\":1,\"foamSpeed\":0.01,"
    "\"foamTexScale\":[4,4]}],"
    "\"Ripples (texture animation)\":[{\"rippleDir\":[0,1],\"rippleMagnitude\":1,"
    "\"rippleSpeed\":0.065,\"rippleTexScale\":[7.14,7.14]},{\"rippleDir\":[0.707,0.707],"
    "\"rippleMagnitude\":1,\"rippleSpeed\":0.09,\"rippleTexScale\":[6.25,12.5]},"
    "{\"rippleDir\":[0.5,0.86],\"rippleMagnitude\":1,\"rippleSpeed\":0.04,"
    "\"rippleTexScale\":[50,50]}],"
    "\"Waves (vertex undulation)\":[{\"waveDir\":[0,1],\"waveMagnitude\":0.2,"
    "\"waveSpeed\":1},{\"waveDir\":[0.707,0.707],\"waveMagnitude\":0.2,\"waveSpeed\":1},"
    "{\"waveDir\":[0.5,0.86],\"waveMagnitude\":0.2,\"waveSpeed\":1}],"
    "\"baseColor\":[45,108,171,255],\"clarity\":0.5,\"cubemap\":\"DefaultSkyCubemap\","
    "\"depthGradientMax\":50,\"depthGradientTex\":\"core/art/water/depthcolor_ramp\","
    "\"distortEndDist\":20,\"distortFullDepth\":3.5,\"distortStartDist\":0.1,"
    "\"foamAmbientLerp\":0.5,\"foamMaxDepth\":2,\"foamRippleInfluence\":0.05,"
    "\"foamTex\":\"core/art/water/foam\",\"fresnelBias\":0.3,\"fresnelPower\":6,"
    "\"gridSize\":100,\"overallFoamOpacity\":1,\"overallRippleMagnitude\":1,"
    "\"overallWaveMagnitude\":1,\"reflectDetailAdjust\":1,\"reflectMaxRateMs\":15,"
    "\"reflectivity\":0.5,\"rippleTex\":\"core/art/water/ripple\",\"specularPower\":48,"
    "\"underwaterColor\":[9,6,5,240],\"viscosity\":1,\"waterFogDensity\":0.1,"
    "\"waterFogDensityOffset\":1,\"wetDarkening\":0.2,\"wetDepth\":1.5}";

/* Append the fields of a list above to o, after what o has (keys it has are kept). */
static bool add_fields(json_t *o, const char *fields)
{
    json_t *f = json_loads(fields, 0, NULL);
    if (!json_is_object(f)) {
        json_decref(f);
        return false;
    }
    const char *k;
    json_t *v;
    bool ok = true;
    json_object_foreach(f, k, v)
    {
        if (ok && !json_object_get(o, k)) ok = !json_object_set(o, k, v);
    }
    json_decref(f);
    return ok;
}

bool trn_lvl_water_plane_defaults(json_t *plane)
{
    return add_fields(plane, water_plane_fields);
}

/* Rows right, forward, up of a camera at from looking at to (Torque: y forward, z up). */
static void look_at(const double from[3], const double to[3], double m[9])
{
    double f[3] = {to[0] - from[0], to[1] - from[1], to[2] - from[2]};
    double len = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    if (!(len > 0)) {
        memcpy(m, identity, sizeof identity);
        return;
    }
    for (int i = 0; i < 3; i++)
        f[i] /= len;
    /* right = forward x up; the camera looks down at an angle, never straight down */
    double r[3] = {f[1], -f[0], 0};
    double rl = hypot(r[0], r[1]);
    if (!(rl > 0)) {
        memcpy(m, identity, sizeof identity);
        return;
    }
    r[0] /= rl;
    r[1] /= rl;
    double u[3] = {r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0]};
    double rows[9] = {r[0], r[1], r[2], f[0], f[1], f[2], u[0], u[1], u[2]};
    /* Rounded to 1e-6, so tiny float noise cannot show up in the file. */
    for (int i = 0; i < 9; i++)
        m[i] = round(rows[i] * 1e6) / 1e6 + 0.0;
}

static double round_mm(double v)
{
    return round(v * 1000.0) / 1000.0 + 0.0; /* + 0.0 turns -0 into 0 */
}

static trn_status add_objects(scaffold *sc, const trn_ter *ter, const trn_terrain_block *tb,
                              const trn_beamng_level_options *opt, char *spawn_name,
                              size_t spawn_size, trn_error *err)
{
    trn_beamng_level_result *res = sc->res;
    char drop[PATH_MAX], sky[PATH_MAX], cams[PATH_MAX], water[PATH_MAX], veg[PATH_MAX];
    trn_status st;
    if ((st = group_folder(sc, "PlayerDropPoints", true, drop, sizeof drop, err)) ||
        (st = group_folder(sc, "sky_and_sun", false, sky, sizeof sky, err)) ||
        (st = group_folder(sc, "CameraBookmarks", false, cams, sizeof cams, err)) ||
        (st = group_folder(sc, "Water", false, water, sizeof water, err)) ||
        (st = group_folder(sc, "vegetation", false, veg, sizeof veg, err)))
        return st;
    /* The AI's groups, empty until waypoints or decal roads are drawn: the editor's AI tools
     * and the navigation graph look for these names. */
    char ai[PATH_MAX];
    if ((st = group_folder(sc, "AIWaypointsGroup", false, ai, sizeof ai, err)) ||
        (st = group_folder(sc, "AIDecalWaypointsGroup", false, ai, sizeof ai, err)))
        return st;
    const double world = ter->size * (tb->square_size > 0 ? tb->square_size : 1.0);
    double spawn[3];
    res->spawn_dry =
        trn_lvl_spawn_spot(ter, tb, opt->scaffold.has_sea_level, opt->scaffold.sea_level, spawn);
    for (int i = 0; i < 3; i++)
        spawn[i] = round_mm(spawn[i]);
    char name[300];
    bool ok = true;

    /* The spawn point (or the level's own first SpawnSphere, for info.json). */
    json_t *o =
        begin_object(sc, "SpawnSphere", "spawns_default", drop, name, sizeof name, &st, err);
    if (st) return st;
    if (o) {
        ok = set_vec(o, "position", spawn, 3) && set_str(o, "dataBlock", "SpawnSphereMarker") &&
             set_str(o, "enabled", "1") && set_str(o, "homingCount", "0") &&
             set_str(o, "indoorWeight", "1") && set_str(o, "isAIControlled", "0") &&
             set_str(o, "lockCount", "0") && set_str(o, "outdoorWeight", "1") &&
             set_num(o, "radius", 1) && set_vec(o, "rotationMatrix", identity, 9) &&
             set_str(o, "sphereWeight", "1");
        if (!ok) {
            json_decref(o);
            return oom(err, drop);
        }
        if ((st = add_to_group(sc, drop, o, err))) return st;
        res->spawn_added = true;
        memcpy(res->spawn_position, spawn, sizeof spawn);
        trn_lvl_copy(spawn_name, spawn_size, name);
    } else {
        ptrdiff_t s = trn_lvl_scene_find(&sc->scene, "SpawnSphere", NULL);
        for (size_t i = (size_t)s; i < sc->scene.count && !spawn_name[0]; i++)
            if (strcmp(sc->scene.objects[i].cls, "SpawnSphere") == 0 && sc->scene.objects[i].name)
                trn_lvl_copy(spawn_name, spawn_size, sc->scene.objects[i].name);
    }

    /* Level info: gravity, fog, how far one sees (the terrain and some, 1.5 to 20 km). */
    o = begin_object(sc, "LevelInfo", "theLevelInfo", sky, name, sizeof name, &st, err);
    if (st) return st;
    if (o) {
        double visible = ceil(world * 1.2 / 100.0) * 100.0;
        visible = visible < 1500 ? 1500 : visible > 20000 ? 20000 : visible;
        static const double fog[4] = {0.74, 0.82, 0.93, 1};
        /* The editor writes the clear colour as RGBA bytes, and names the sky's reflection
         * cubemap (its spelling, "Enviroment", is the engine's field name). */
        static const double clear[4] = {1, 1, 1, 255};
        ok = set_vec(o, "canvasClearColor", clear, 4) && set_str(o, "enabled", "1") &&
             set_num(o, "fogAtmosphereHeight", 800) && set_vec(o, "fogColor", fog, 4) &&
             set_num(o, "fogDensity", 0.0002) &&
             set_str(o, "globalEnviromentMap", "BNG_Sky_02_cubemap") &&
             set_num(o, "gravity", -9.81) && set_num(o, "visibleDistance", visible);
        if (!ok) {
            json_decref(o);
            return oom(err, sky);
        }
        if ((st = add_to_group(sc, sky, o, err))) return st;
    }

    /* Time of day: early afternoon, standing still (time 0 is noon, 0.5 midnight). */
    o = begin_object(sc, "TimeOfDay", "tod", sky, name, sizeof name, &st, err);
    if (st) return st;
    if (o) {
        ok = set_vec(o, "position", spawn, 3) && set_num(o, "axisTilt", 10) &&
             set_num(o, "azimuthOverride", 0) && !json_object_set_new(o, "play", json_false()) &&
             set_num(o, "startTime", 0.1) && set_num(o, "time", 0.1);
        if (!ok) {
            json_decref(o);
            return oom(err, sky);
        }
        if ((st = add_to_group(sc, sky, o, err))) return st;
    }

    /* The sun and sky (the time of day moves the sun). */
    o = begin_object(sc, "ScatterSky", "sunsky", sky, name, sizeof name, &st, err);
    if (st) return st;
    if (o) {
        ok = set_vec(o, "position", spawn, 3) && add_fields(o, scatter_sky_fields);
        if (!ok) {
            json_decref(o);
            return oom(err, sky);
        }
        if ((st = add_to_group(sc, sky, o, err))) return st;
    }

    /* A cloud layer: the sky lights the level through it (cloud cover, transmittance). */
    o = begin_object(sc, "CloudLayer", "clouds", sky, name, sizeof name, &st, err);
    if (st) return st;
    if (o) {
        double above[3] = {spawn[0], spawn[1], round_mm(spawn[2] + 400)};
        ok = set_vec(o, "position", above, 3) && add_fields(o, cloud_layer_fields);
        if (!ok) {
            json_decref(o);
            return oom(err, sky);
        }
        if ((st = add_to_group(sc, sky, o, err))) return st;
    }

    /* A camera bookmark looking at the spawn point from the south-west, above it. */
    o = begin_object(sc, "CameraBookmark", "bookmark_overview", cams, name, sizeof name, &st, err);
    if (st) return st;
    if (o) {
        double d = world * 0.1;
        d = d < 20 ? 20 : d > 300 ? 300 : d;
        double cam[3] = {round_mm(spawn[0] - d), round_mm(spawn[1] - d),
                         round_mm(spawn[2] + d * 0.75)};
        double rot[9];
        look_at(cam, spawn, rot);
        /* The editor lists a bookmark by internalName, right after the name. */
        json_t *b = json_object();
        ok = b && set_str(b, "name", name) && set_str(b, "internalName", "overview");
        const char *k;
        json_t *v;
        json_object_foreach(o, k, v)
        {
            if (ok && strcmp(k, "name") != 0) ok = !json_object_set(b, k, v);
        }
        json_decref(o);
        o = b;
        ok = ok && set_vec(o, "position", cam, 3) &&
             set_str(o, "dataBlock", "CameraBookmarkMarker") && set_str(o, "isAIControlled", "0") &&
             set_vec(o, "rotationMatrix", rot, 9);
        if (!ok) {
            json_decref(o);
            return oom(err, cams);
        }
        if ((st = add_to_group(sc, cams, o, err))) return st;
    }

    /* Where forest items go (the editor's forest tool paints into it), and the wind that sways
     * them beside it, as the World Editor's new-level template has them: the emitter with a
     * position and nothing else, every wind value the engine's default. */
    o = begin_object(sc, "Forest", "theForest", veg, name, sizeof name, &st, err);
    if (st) return st;
    if (o && (st = add_to_group(sc, veg, o, err))) return st;
    o = begin_object(sc, "ForestWindEmitter", "theForestWind", veg, name, sizeof name, &st, err);
    if (st) return st;
    if (o) {
        static const double origin[3] = {0, 0, 0};
        if (!set_vec(o, "position", origin, 3)) {
            json_decref(o);
            return oom(err, veg);
        }
        if ((st = add_to_group(sc, veg, o, err))) return st;
    }

    /* The sea, when its level is known. */
    if (opt->scaffold.has_sea_level) {
        o = begin_object(sc, "WaterPlane", "ocean", water, name, sizeof name, &st, err);
        if (st) return st;
        if (o) {
            double at[3] = {0, 0, round_mm(opt->scaffold.sea_level)};
            ok = set_vec(o, "position", at, 3) && add_fields(o, water_plane_fields);
            if (!ok) {
                json_decref(o);
                return oom(err, water);
            }
            if ((st = add_to_group(sc, water, o, err))) return st;
        }
    }
    return TRN_OK;
}

/* ------------------------------------------------------------------------------------------
 * info.json and the preview.
 * ---------------------------------------------------------------------------------------- */

/* A grey multidirectional hillshade of the terrain, north up, at most 512 pixels a side. */
static trn_status write_preview(const trn_ter *ter, const trn_terrain_block *tb, const char *path,
                                trn_error *err)
{
    const uint32_t n = ter->size;
    const uint32_t step = (n + 511) / 512;
    const uint32_t m = (n - 1) / step + 1;
    if (m < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "a %u x %u terrain is too small for a preview", n, n);
    const double sq = tb->square_size > 0 ? tb->square_size : 1.0;
    trn_field f;
    trn_status st = trn_field_init(&f, m - 1, m - 1, (m - 1) * step * sq, (m - 1) * step * sq, err);
    if (st) return st;
    for (uint32_t j = 0; j < m; j++)
        for (uint32_t i = 0; i < m; i++)
            f.heights[(size_t)j * m + i] = (float)height_at(ter, tb, i * step, j * step);
    trn_render_options ro;
    trn_render_options_default(&ro);
    ro.multidirectional = true;
    trn_raster8 r;
    st = trn_render_hillshade(&f, &ro, &r, NULL, NULL, err);
    trn_field_dispose(&f);
    if (st) return st;
    trn_image img;
    if (!(st = trn_image_init(&img, r.width, r.height, 1, 8, err))) {
        memcpy(img.data, r.pixels, (size_t)r.width * r.height);
        trn_png_options po;
        trn_png_options_default(&po);
        po.compression_level = 9;
        po.srgb = true; /* a picture for people, as previews are */
        st = trn_png_write(path, &img, &po, NULL, NULL, err);
        trn_image_dispose(&img);
    }
    trn_raster8_dispose(&r);
    return st;
}

static bool exists_now(const trn_write_set *ws, const char *path)
{
    struct stat sb;
    return stat(trn_write_set_current(ws, path), &sb) == 0;
}

static trn_status write_info(scaffold *sc, const trn_ter *ter, const trn_terrain_block *tb,
                             const trn_beamng_level_options *opt, const char *spawn_name,
                             trn_error *err)
{
    trn_beamng_level_result *res = sc->res;
    char info[PATH_MAX], preview[PATH_MAX];
    static const char preview_file[] = "preview.png";
    if (!trn_lvl_join(info, sizeof info, sc->level_dir, "info.json") ||
        !trn_lvl_join(preview, sizeof preview, sc->level_dir, preview_file))
        return trn_error_set(err, TRN_ERR_LIMIT, sc->level_dir, -1, "path too long");
    /* The level's own info.json and preview stay as they are. */
    if (exists_now(sc->ws, info)) return TRN_OK;
    const char *target = NULL;
    trn_status st;
    if (!exists_now(sc->ws, preview)) {
        if ((st = trn_write_target(sc->ws, preview, &target, err)) ||
            (st = write_preview(ter, tb, target, err)))
            return st;
        trn_lvl_copy(res->preview_path, sizeof res->preview_path, preview);
    }
    const double world = ter->size * (tb->square_size > 0 ? tb->square_size : 1.0);
    const double size[2] = {world, world};
    json_t *o = json_object(), *previews = json_array(), *spawns = json_array();
    bool ok = o && previews && spawns;
    ok = ok && set_str(o, "title", opt->scaffold.title ? opt->scaffold.title : sc->level_name);
    ok = ok && set_str(o, "description",
                       opt->scaffold.description ? opt->scaffold.description
                                                 : "A terrain made with terrane.");
    ok = ok && set_vec(o, "size", size, 2);
    ok = ok && !json_array_append_new(previews, json_string(preview_file));
    ok = ok && !json_object_set(o, "previews", previews);
    if (ok && spawn_name[0]) {
        json_t *sp = json_object();
        ok = sp && set_str(sp, "translationId", "Default spawn") &&
             set_str(sp, "objectname", spawn_name) && set_str(sp, "preview", preview_file) &&
             !json_array_append(spawns, sp);
        json_decref(sp);
        ok = ok && set_str(o, "defaultSpawnPointName", spawn_name);
        ok = ok && !json_object_set(o, "spawnPoints", spawns);
    }
    json_decref(previews);
    json_decref(spawns);
    if (!ok) {
        json_decref(o);
        return oom(err, info);
    }
    trn_lvl_buf b = {0};
    trn_lvl_json_pretty(&b, o);
    json_decref(o);
    if (b.failed) {
        trn_lvl_buf_free(&b);
        return oom(err, info);
    }
    if (!(st = trn_write_target(sc->ws, info, &target, err)))
        st = trn_file_write_atomic(target, b.data, b.len, err);
    trn_lvl_buf_free(&b);
    if (!st) trn_lvl_copy(res->info_path, sizeof res->info_path, info);
    return st;
}

trn_status trn_lvl_scaffold(trn_write_set *ws, const trn_ter *ter, const trn_terrain_block *tb,
                            const trn_beamng_level_options *opt, trn_beamng_level_result *res,
                            trn_error *err)
{
    scaffold sc;
    memset(&sc, 0, sizeof sc);
    sc.ws = ws;
    sc.level_dir = opt->level_dir;
    sc.level_name = res->level_name;
    sc.res = res;
    trn_status st =
        trn_lvl_ensure_mission_group(ws, opt->level_dir, res->level_name, sc.group, sizeof sc.group,
                                     sc.group_dir, sizeof sc.group_dir, NULL, err);
    if (st) return st;
    if (!trn_lvl_join(sc.group_items, sizeof sc.group_items, sc.group_dir, "items.level.json"))
        return trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
    if ((st = trn_lvl_scene_read(ws, opt->level_dir, &sc.scene, err))) return st;
    char spawn_name[300] = "";
    st = add_objects(&sc, ter, tb, opt, spawn_name, sizeof spawn_name, err);
    if (!st) st = write_info(&sc, ter, tb, opt, spawn_name, err);
    trn_lvl_scene_dispose(&sc.scene);
    for (size_t i = 0; i < sc.added_count; i++)
        free(sc.added[i]);
    return st;
}

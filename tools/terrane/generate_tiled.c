/* terrane generate --tiles: the graph's heights tile by tile into a GeoTIFF within --memory. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* mkdtemp */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "generate_internal.h"
#include "terrane/mesh.h"

/* ---- tiled, out of core ---- */

/* Where each tile goes: the BigTIFF, and for Unity tiles a raw float file a tile (the Unity
 * tiles need their neighbours' first row and column, and one height scale for every tile). */
typedef struct tiled_out {
    trn_geotiff_tiled *w;
    const char *pieces; /* folder of the raw tiles; NULL: no Unity tiles */
    uint32_t tile;
    float lo, hi;
} tiled_out;

static void piece_path(const tiled_out *o, uint32_t tx, uint32_t tz, char *buf, size_t size)
{
    snprintf(buf, size, "%s/t_%u_%u.f32", o->pieces, tx, tz);
}

/* The biome labels of tile (tx, tz) of the run (clipped at the grid's far edges), kept between
 * the pass that finds the world's materials and the engine tiles cut from them. */
static void biome_path(const tiled_out *o, uint32_t tx, uint32_t tz, char *buf, size_t size)
{
    snprintf(buf, size, "%s/b_%u_%u.u8", o->pieces, tx, tz);
}

/* n labels to a tile's biome file. */
static trn_status biome_write(const tiled_out *o, uint32_t tx, uint32_t tz, const uint8_t *v,
                              size_t n, trn_error *err)
{
    char path[4200];
    biome_path(o, tx, tz, path, sizeof path);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(v, 1, n, f) == n;
    if (f && fclose(f) != 0) ok = false;
    return ok ? TRN_OK : trn_error_set(err, TRN_ERR_IO, path, -1, "cannot write a tile's biomes");
}

static trn_status tiled_put(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                            const float *values, trn_error *err)
{
    tiled_out *o = user;
    if (o->w) {
        trn_status st = trn_geotiff_tiled_put(o->w, x0, z0, nx, nz, values, err);
        if (st) return st;
    }
    if (!o->pieces) return TRN_OK;
    const size_t n = (size_t)nx * nz;
    for (size_t k = 0; k < n; k++)
        if (isfinite(values[k])) {
            if (values[k] < o->lo) o->lo = values[k];
            if (values[k] > o->hi) o->hi = values[k];
        }
    char path[4200];
    piece_path(o, x0 / o->tile, z0 / o->tile, path, sizeof path);
    FILE *f = fopen(path, "wb");
    const bool ok = f && fwrite(values, sizeof(float), n, f) == n;
    if (f && fclose(f) != 0) return trn_error_set(err, TRN_ERR_IO, path, -1, "cannot write a tile");
    return ok ? TRN_OK : trn_error_set(err, TRN_ERR_IO, path, -1, "cannot write a tile");
}

/* World samples [x0, x0 + nx) x [z0, z0 + nz) from the run's tiles (tiles of o->tile, the last
 * column and row narrower) into dst (nx a row): heights (floats) or, with labels, the biome
 * labels (bytes). */
typedef void (*tile_path_fn)(const tiled_out *o, uint32_t tx, uint32_t tz, char *buf, size_t size);

static trn_status window_read_as(const tiled_out *o, uint32_t W, uint32_t H, uint32_t x0,
                                 uint32_t z0, uint32_t nx, uint32_t nz, void *dst, size_t elem,
                                 tile_path_fn path_of, trn_error *err)
{
    const uint32_t t = o->tile;
    trn_status st = TRN_OK;
    for (uint32_t tz = z0 / t; !st && tz * t < z0 + nz; tz++)
        for (uint32_t tx = x0 / t; !st && tx * t < x0 + nx; tx++) {
            const uint32_t tw = W - tx * t < t ? W - tx * t : t,
                           th = H - tz * t < t ? H - tz * t : t;
            const uint32_t ax = x0 > tx * t ? x0 : tx * t, az = z0 > tz * t ? z0 : tz * t;
            const uint32_t bx = x0 + nx < tx * t + tw ? x0 + nx : tx * t + tw,
                           bz = z0 + nz < tz * t + th ? z0 + nz : tz * t + th;
            char path[4200];
            path_of(o, tx, tz, path, sizeof path);
            FILE *f = fopen(path, "rb");
            if (!f) return trn_error_set(err, TRN_ERR_IO, path, -1, "cannot read a tile back");
            for (uint32_t z = az; z < bz && !st; z++)
                if (fseek(f, (long)(((size_t)(z - tz * t) * tw + (ax - tx * t)) * elem),
                          SEEK_SET) != 0 ||
                    fread((uint8_t *)dst + ((size_t)(z - z0) * nx + (ax - x0)) * elem, elem,
                          bx - ax, f) != bx - ax)
                    st = trn_error_set(err, TRN_ERR_TRUNCATED, path, -1, "a tile is short");
            fclose(f);
        }
    return st;
}

static trn_status window_read(const tiled_out *o, uint32_t W, uint32_t H, uint32_t x0, uint32_t z0,
                              uint32_t nx, uint32_t nz, void *dst, bool labels, trn_error *err)
{
    return window_read_as(o, W, H, x0, z0, nx, nz, dst, labels ? 1u : sizeof(float),
                          labels ? biome_path : piece_path, err);
}

/* The wet samples of tile (tx, tz) of the run (the sea reached from the world's border). */
static void wet_path(const tiled_out *o, uint32_t tx, uint32_t tz, char *buf, size_t size)
{
    snprintf(buf, size, "%s/w_%u_%u.u8", o->pieces, tx, tz);
}

/* An extent of cells cells whose size / cells is spacing bit for bit (the world's spacing). */
static double extent_of(double spacing, uint32_t cells)
{
    double s = spacing * (double)cells;
    for (int k = 0; k < 64 && s / (double)cells != spacing; k++)
        s = s / (double)cells < spacing ? nextafter(s, HUGE_VAL) : nextafter(s, -HUGE_VAL);
    return s;
}

/* A square tile of t cells at the world's spacing, over heights h. */
static trn_field tile_piece(double dx, double dz, uint32_t t, float *h)
{
    trn_field piece;
    memset(&piece, 0, sizeof piece);
    piece.cells_x = piece.cells_z = t;
    piece.size_x = extent_of(dx, t);
    piece.size_z = extent_of(dz, t);
    piece.heights = h;
    return piece;
}

/* The recipe file's name without folders and extensions: the Unity terrain's name. */
static void unity_stem(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, size, "%s", slash ? slash + 1 : path);
    char *dot = strchr(out, '.');
    if (dot && dot != out) *dot = '\0';
    if (!out[0]) snprintf(out, size, "terrain");
}

/* ---- the surface materials of Unity tiles ---- */

/* Why a tiled run cannot give the splat maps the whole grid's export gives; NULL: it can. Biome
 * rules read a sample's height, slope (one sample around it), moisture (a function of position)
 * and, where asked, the distance to water, which the whole surface decides. */
static const char *biomes_unavailable(const trn_recipe *recipe)
{
    for (uint32_t r = 0; r < recipe->rule_count; r++)
        if (recipe->rules[r].water_distance.set || recipe->rules[r].substrate_mask)
            return "a biome rule measures the distance to water or the substrate, which the "
                   "whole surface decides";
    for (uint32_t k = 0; k < recipe->stroke_count; k++)
        if (recipe->strokes[k].kind == TRN_STROKE_REGION)
            return "painted regions change the biomes over their whole box";
    if (recipe->rule_count > 256u) return "more than 256 biome rules";
    return NULL;
}

/* The surface materials as well: a palette whose material set binds surface roles (the whole
 * grid then classifies roles, which read the drainage of the whole surface); a palette without
 * one leaves the biomes' materials, as the whole grid's export does. */
static const char *splats_unavailable(const trn_recipe *recipe, const placements *pl)
{
    if (recipe->palette_json && (!pl || !pl->loaded || gen_set_binds_any(&pl->set)))
        return "the palette's material set binds materials to surface roles, which a tiled run "
               "does not compute";
    return biomes_unavailable(recipe);
}

/* A Biome Rules node upstream of the output (the whole grid's run says the same). */
static bool feeds_biome_rules(const trn_graph *g, const char *id, uint32_t depth)
{
    if (!id || depth > g->node_count) return false;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const trn_graph_node *n = &g->nodes[k];
        if (strcmp(n->id, id) != 0) continue;
        if (!strcmp(n->type, "biome_rules")) return true;
        for (uint32_t i = 0; i < n->input_count; i++)
            if (feeds_biome_rules(g, n->inputs[i].node, depth + 1u)) return true;
        return false;
    }
    return false;
}

/* What the biome of a sample needs, as the whole grid's biome pass has it. */
typedef struct tile_biomes {
    const trn_recipe *recipe;
    const tiled_out *o;
    bool rules;
    bool need_slope, need_moisture;
    uint8_t default_biome;
    uint8_t rule_biome[256], rule_active[256];
    double sea_level;
    float *win; /* the tile's heights grown by one sample (cut at the world's edges) */
} tile_biomes;

/* Biome labels of samples [i0, i0 + w) x [j0, j0 + h) (row 0 south) into out (w a row): the
 * rule each sample's context picks, the context computed as the whole grid's pass computes it
 * (Horn's slope with the world's edges replicated, moisture at the sample's position). */
static trn_status tile_biome_labels(const tile_biomes *tb, float *win, uint32_t i0, uint32_t j0,
                                    uint32_t w, uint32_t h, uint8_t *out, trn_error *err)
{
    const trn_recipe *r = tb->recipe;
    const uint32_t W = r->cells_x + 1u, H = r->cells_z + 1u;
    const uint32_t x0 = i0 ? i0 - 1u : 0u, z0 = j0 ? j0 - 1u : 0u;
    const uint32_t x1 = i0 + w < W ? i0 + w : W - 1u, z1 = j0 + h < H ? j0 + h : H - 1u;
    const uint32_t nx = x1 - x0 + 1u, nz = z1 - z0 + 1u;
    trn_status st = window_read(tb->o, W, H, x0, z0, nx, nz, win, false, err);
    if (st) return st;
    const double dx = r->size_x / r->cells_x, dz = r->size_z / r->cells_z;
    trn_field wf;
    memset(&wf, 0, sizeof wf);
    wf.cells_x = nx - 1u;
    wf.cells_z = nz - 1u;
    wf.size_x = extent_of(dx, nx - 1u);
    wf.size_z = extent_of(dz, nz - 1u);
    wf.heights = win;
    for (uint32_t j = j0; j < j0 + h; j++)
        for (uint32_t i = i0; i < i0 + w; i++) {
            trn_sample_context ctx;
            ctx.height = (double)win[(size_t)(j - z0) * nx + (i - x0)];
            ctx.slope = tb->need_slope ? trn_field_slope_at(&wf, i - x0, j - z0) : 0.0;
            ctx.moisture =
                tb->need_moisture
                    ? (double)(float)trn_moisture_at(r->seed, (double)i * r->size_x / r->cells_x,
                                                     (double)j * r->size_z / r->cells_z)
                    : 0.0;
            ctx.water_distance = INFINITY; /* no rule reads it (splats_unavailable) */
            ctx.substrate =
                trn_substrate_classify(ctx.height, ctx.slope, ctx.water_distance, tb->sea_level);
            const int k =
                tb->rules ? trn_rules_pick_active(r->rules, r->rule_count, tb->rule_active, &ctx)
                          : -1;
            out[(size_t)(j - j0) * w + (i - i0)] = k >= 0 ? tb->rule_biome[k] : tb->default_biome;
        }
    return TRN_OK;
}

/* The surface materials of the whole world without holding it: which biomes occur anywhere
 * (one pass over the tiles, each tile's labels kept on disk for the second), then the whole grid's
 * assignment of those biomes (materials in the same order, named the same), as a biome -> material
 * table. */
static trn_status world_materials(const tile_biomes *tb, uint8_t *scratch,
                                  trn_surface_materials *sm, uint8_t map[256], trn_error *err)
{
    const trn_recipe *r = tb->recipe;
    const uint32_t t = tb->o->tile, W = r->cells_x + 1u, H = r->cells_z + 1u;
    bool present[256] = {false};
    for (uint32_t tz = 0; tz * t < H; tz++)
        for (uint32_t tx = 0; tx * t < W; tx++) {
            const uint32_t tw = W - tx * t < t ? W - tx * t : t,
                           th = H - tz * t < t ? H - tz * t : t;
            trn_status st = tile_biome_labels(tb, tb->win, tx * t, tz * t, tw, th, scratch, err);
            if (!st) st = biome_write(tb->o, tx, tz, scratch, (size_t)tw * th, err);
            if (st) return st;
            for (size_t k = 0; k < (size_t)tw * th; k++)
                present[scratch[k]] = true;
        }
    /* One sample of each biome present (the rest repeat the first): the assignment's names and
     * order depend only on which biomes occur. */
    trn_labels fake;
    trn_status st = trn_labels_init(&fake, r->biome_count, 1, err);
    for (uint32_t b = 0; !st && b < r->biome_count; b++)
        st = trn_labels_add_name(&fake, r->biomes[b].name, strlen(r->biomes[b].name), err);
    if (st) {
        trn_labels_dispose(&fake);
        return st;
    }
    size_t n = 0, total = 2u * ((size_t)r->biome_count + 1u);
    int first = -1;
    for (uint32_t b = 0; b < r->biome_count; b++)
        if (present[b]) {
            if (first < 0) first = (int)b;
            fake.values[n++] = (uint8_t)b;
        }
    for (; n < total; n++)
        fake.values[n] = (uint8_t)(first < 0 ? 0 : first);
    trn_surface_materials_input in;
    memset(&in, 0, sizeof in);
    in.biomes = &fake;
    in.recipe_biomes = r->biomes;
    in.recipe_biome_count = r->biome_count;
    st = trn_surface_materials_assign(&in, sm, err);
    memset(map, TRN_LABEL_NONE, 256);
    for (size_t k = 0; !st && k < total; k++)
        map[fake.values[k]] = sm->labels.values[k];
    trn_labels_dispose(&fake);
    return st;
}

/* What every engine tile of the run shares: one 16-bit height rule over the world's range, and
 * the surface materials the whole grid assigns (when splats_unavailable allows), their biome
 * labels waiting on disk tile by tile. */
typedef struct tiled_surface {
    trn_height_scale scale;
    const char *how;  /* the height rule, in words */
    const char *none; /* why there are no surface materials; NULL: there are */
    tile_biomes tb;
    trn_surface_materials sm;
    uint8_t map[256]; /* biome -> surface material */
    const char *sources[TRN_SURFACE_MATERIALS_MAX];
    char names[TRN_SURFACE_MATERIALS_MAX][TRN_SURFACE_NAME_MAX]; /* engine names */
} tiled_surface;

static void tiled_surface_dispose(tiled_surface *ts)
{
    free(ts->tb.win);
    trn_surface_materials_dispose(&ts->sm);
    memset(ts, 0, sizeof *ts);
}

static int tiled_surface_prepare(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                                 const tiled_out *o, bool rules, const placements *pl,
                                 tiled_surface *ts)
{
    memset(ts, 0, sizeof *ts);
    /* The one 16-bit rule (--scale, --height-range, --max-height, else lowest to highest) over
     * the heights' range. */
    float range[4] = {o->lo, o->hi, o->lo, o->hi};
    if (!(o->lo <= o->hi)) range[0] = range[1] = range[2] = range[3] = 0.0f;
    trn_field rf;
    memset(&rf, 0, sizeof rf);
    rf.cells_x = rf.cells_z = 1;
    rf.size_x = rf.size_z = 1.0;
    rf.heights = range;
    int rc = cli_scale_choose(ctx, &a->scale, a->has_max_height ? a->max_height : 0.0, &rf,
                              &ts->scale, &ts->how);
    if (rc) return rc;
    /* The surface: biomes per tile from the heights (a sample around each tile), materials as
     * the whole grid assigns them. */
    ts->none = splats_unavailable(recipe, pl);
    tile_biomes *tb = &ts->tb;
    tb->recipe = recipe;
    tb->o = o;
    tb->rules = rules;
    const int def = trn_recipe_find_biome(recipe, recipe->default_biome);
    tb->default_biome = (uint8_t)(def < 0 ? 0 : def);
    for (uint32_t k = 0; k < recipe->rule_count && k < 256u; k++) {
        const int b = trn_recipe_find_biome(recipe, recipe->rules[k].biome);
        tb->rule_biome[k] = (uint8_t)(b < 0 ? 0 : b);
        tb->rule_active[k] = trn_recipe_rule_active(recipe, &recipe->rules[k]);
        if (recipe->rules[k].slope.set || recipe->rules[k].substrate_mask) tb->need_slope = true;
        if (recipe->rules[k].moisture.set) tb->need_moisture = true;
    }
    tb->sea_level = trn_recipe_sea_level(recipe, NULL, NULL, 0);
    if (ts->none) return CLI_EXIT_OK;
    const size_t r = (size_t)o->tile + 2u;
    tb->win = malloc(r * r * sizeof(float));
    uint8_t *scratch = malloc((size_t)o->tile * o->tile);
    trn_error e;
    trn_status st = TRN_OK;
    if (!tb->win || !scratch)
        st = trn_error_set(&e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a tile's biomes");
    if (!st) st = world_materials(tb, scratch, &ts->sm, ts->map, &e);
    if (!st) st = trn_surface_materials_engine_names(&ts->sm, ts->names, &e);
    free(scratch);
    for (uint32_t k = 0; !st && k < ts->sm.labels.name_count; k++)
        ts->sources[k] = trn_surface_source_name(ts->sm.materials[k].source);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

/* ---- the palette's instances, tile by tile ---- */

/* Why a tiled run cannot place the palette's instances as the whole grid places them (NULL: it
 * can). Placement itself is local (trn_scatter_run_window): a site's lattice, draws and spacing
 * are hashes of world positions, and its filters read the samples around it. What is not local
 * is refused: water bodies and the distance to water (the whole surface decides them), biomes
 * where the whole surface decides those, a graph's Scatter Palette node (it places candidates
 * on its own input, before the layers), exclusion strokes (a mask over the strokes' whole box).
 * A scene's --scatter-exclusions is local: each tile's instances lose the keys it lists. */
static const char *scatter_unavailable(const trn_recipe *recipe, const trn_palette *palette,
                                       bool water, char *buf, size_t size)
{
    if (cli_graph_places_palette(recipe))
        return "a Scatter Palette node places its candidates on its own input field before the "
               "recipe's layers, which a tiled run does not keep";
    if (water)
        return "the recipe's water bodies decide which samples are wet, and a tiled run does not "
               "resolve water";
    for (uint32_t k = 0; k < recipe->stroke_count; k++)
        if (recipe->strokes[k].kind == TRN_STROKE_EXCLUSION)
            return "exclusion strokes block placements through a mask of their whole box";
    for (uint32_t r = 0; r < palette->rule_count; r++) {
        const trn_scatter_rule *rule = &palette->rules[r];
        if (rule->water_distance.has) {
            snprintf(buf, size,
                     "placement \"%s\" reads the distance to water, which the whole surface "
                     "decides",
                     rule->id);
            return buf;
        }
        if (rule->biome_count > 0 && biomes_unavailable(recipe)) {
            snprintf(buf, size, "placement \"%s\" lists biomes, and %s", rule->id,
                     biomes_unavailable(recipe));
            return buf;
        }
    }
    return NULL;
}

/* The inferred sea across the run's tiles: a sample is wet when it lies strictly below the sea
 * level and reaches the world's border through such samples, 4-neighbour steps (as
 * trn_water_distance_fill floods it). Each tile labels its own components; those that touch the
 * tile's border get an id, joined across tile edges and marked open where they touch the
 * world's border; each tile's wet samples then wait on disk for the placements. */
typedef struct tiled_sea {
    double level;
    uint32_t *parent; /* over the border components' ids */
    uint8_t *open;
    size_t count, cap;
} tiled_sea;

static uint32_t uf_find(uint32_t *parent, uint32_t k)
{
    while (parent[k] != k) {
        parent[k] = parent[parent[k]];
        k = parent[k];
    }
    return k;
}

static void uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a == b) return;
    if (a < b)
        parent[b] = a;
    else
        parent[a] = b;
}

/* One tile's components below the level (par: UINT32_MAX dry, else a union-find over the
 * samples) and the ids of those touching its border (gid[root], base onwards, in the order of a
 * walk round the border: south row, north row, west and east columns). Returns the ids used. */
static uint32_t sea_tile(const float *h, uint32_t tw, uint32_t th, double level, uint32_t *par,
                         uint32_t *gid, uint32_t base)
{
    const size_t n = (size_t)tw * th;
    for (size_t k = 0; k < n; k++) {
        par[k] = (double)h[k] < level ? (uint32_t)k : UINT32_MAX;
        gid[k] = UINT32_MAX;
    }
    for (uint32_t j = 0; j < th; j++)
        for (uint32_t i = 0; i < tw; i++) {
            const size_t k = (size_t)j * tw + i;
            if (par[k] == UINT32_MAX) continue;
            if (i && par[k - 1] != UINT32_MAX) uf_union(par, (uint32_t)k, (uint32_t)(k - 1));
            if (j && par[k - tw] != UINT32_MAX) uf_union(par, (uint32_t)k, (uint32_t)(k - tw));
        }
    uint32_t used = 0;
    for (int side = 0; side < 4; side++) {
        const uint32_t len = side < 2 ? tw : th;
        for (uint32_t q = 0; q < len; q++) {
            const size_t k = side == 0   ? q
                             : side == 1 ? (size_t)(th - 1u) * tw + q
                             : side == 2 ? (size_t)q * tw
                                         : (size_t)q * tw + (tw - 1u);
            if (par[k] == UINT32_MAX) continue;
            const uint32_t r = uf_find(par, (uint32_t)k);
            if (gid[r] == UINT32_MAX) gid[r] = base + used++;
        }
    }
    return used;
}

/* Strip (side 0 south, 1 north, 2 west, 3 east) of a tile as ids (UINT32_MAX: dry or no id). */
static void sea_strip(const uint32_t *par, const uint32_t *gid, uint32_t tw, uint32_t th,
                      int side, uint32_t *out)
{
    const uint32_t len = side < 2 ? tw : th;
    for (uint32_t q = 0; q < len; q++) {
        const size_t k = side == 0   ? q
                         : side == 1 ? (size_t)(th - 1u) * tw + q
                         : side == 2 ? (size_t)q * tw
                                     : (size_t)q * tw + (tw - 1u);
        out[q] = par[k] == UINT32_MAX ? UINT32_MAX : gid[uf_find((uint32_t *)par, (uint32_t)k)];
    }
}

static trn_status sea_grow(tiled_sea *sea, size_t want, trn_error *e)
{
    if (want <= sea->cap) return TRN_OK;
    size_t cap = sea->cap ? sea->cap * 2u : 1024u;
    while (cap < want)
        cap *= 2u;
    uint32_t *p = realloc(sea->parent, cap * sizeof *p);
    if (p) sea->parent = p;
    uint8_t *o = p ? realloc(sea->open, cap) : NULL;
    if (o) sea->open = o;
    if (!p || !o) return trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for the sea");
    sea->cap = cap;
    return TRN_OK;
}

/* Solve the sea over the run's tiles and write each tile's wet samples (wet_path). */
static trn_status sea_solve(const tiled_out *o, const trn_recipe *recipe, tiled_sea *sea,
                            trn_error *e)
{
    const uint32_t t = o->tile, W = recipe->cells_x + 1u, H = recipe->cells_z + 1u;
    const uint32_t kx = (W + t - 1u) / t, kz = (H + t - 1u) / t;
    const size_t n = (size_t)t * t;
    float *h = malloc(n * sizeof *h);
    uint32_t *par = malloc(n * sizeof *par), *gid = malloc(n * sizeof *gid);
    /* Each tile's id base and its four strips (2 (t + t) ids), kept across the pass. */
    uint32_t *base = malloc(((size_t)kx * kz + 1u) * sizeof *base);
    uint32_t *strips = malloc((size_t)kx * kz * 4u * t * sizeof *strips);
    uint8_t *wet = malloc(n);
    trn_status st = TRN_OK;
    if (!h || !par || !gid || !base || !strips || !wet)
        st = trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for the sea");
    if (base) base[0] = 0;
    for (int pass = 0; pass < 2 && !st; pass++)
        for (uint32_t tz = 0; tz < kz && !st; tz++)
            for (uint32_t tx = 0; tx < kx && !st; tx++) {
                const uint32_t tw = W - tx * t < t ? W - tx * t : t,
                               th = H - tz * t < t ? H - tz * t : t;
                const size_t id = (size_t)tz * kx + tx;
                if ((st = window_read(o, W, H, tx * t, tz * t, tw, th, h, false, e))) break;
                const uint32_t used = sea_tile(h, tw, th, sea->level, par, gid, base[id]);
                if (pass == 0) {
                    if ((uint64_t)base[id] + used >= UINT32_MAX) {
                        st = trn_error_set(e, TRN_ERR_LIMIT, NULL, -1,
                                           "the sea has more than 2^32 pieces at tile borders");
                        break;
                    }
                    base[id + 1u] = base[id] + used; /* the next tile's first id */
                    if ((st = sea_grow(sea, (size_t)base[id] + used, e))) break;
                    for (uint32_t g = 0; g < used; g++) {
                        sea->parent[base[id] + g] = base[id] + g;
                        sea->open[base[id] + g] = 0;
                    }
                    uint32_t *sp = strips + id * 4u * t;
                    for (int side = 0; side < 4; side++)
                        sea_strip(par, gid, tw, th, side, sp + (size_t)side * t);
                    /* Open where the world's border is the tile's. */
                    const bool edge[4] = {tz == 0, tz == kz - 1u, tx == 0, tx == kx - 1u};
                    for (int side = 0; side < 4; side++)
                        for (uint32_t q = 0; edge[side] && q < (side < 2 ? tw : th); q++)
                            if (sp[(size_t)side * t + q] != UINT32_MAX)
                                sea->open[sp[(size_t)side * t + q]] = 1;
                    /* Joined with the tiles west and south, already labelled. */
                    if (tx) {
                        const uint32_t *west = strips + (id - 1u) * 4u * t + 3u * t;
                        for (uint32_t q = 0; q < th; q++)
                            if (west[q] != UINT32_MAX && sp[2u * t + q] != UINT32_MAX)
                                uf_union(sea->parent, west[q], sp[2u * t + q]);
                    }
                    if (tz) {
                        const uint32_t *south = strips + (id - kx) * 4u * t + 1u * t;
                        for (uint32_t q = 0; q < tw; q++)
                            if (south[q] != UINT32_MAX && sp[q] != UINT32_MAX)
                                uf_union(sea->parent, south[q], sp[q]);
                    }
                    if (id + 1u == (size_t)kx * kz) {
                        sea->count = (size_t)base[id] + used;
                        for (size_t g = 0; g < sea->count; g++)
                            if (sea->open[g]) sea->open[uf_find(sea->parent, (uint32_t)g)] = 1;
                    }
                    continue;
                }
                for (size_t k = 0; k < (size_t)tw * th; k++) {
                    const uint32_t g =
                        par[k] == UINT32_MAX ? UINT32_MAX : gid[uf_find(par, (uint32_t)k)];
                    wet[k] = g != UINT32_MAX && sea->open[uf_find(sea->parent, g)];
                }
                char path[4200];
                wet_path(o, tx, tz, path, sizeof path);
                FILE *f = fopen(path, "wb");
                bool ok = f && fwrite(wet, 1, (size_t)tw * th, f) == (size_t)tw * th;
                if (f && fclose(f) != 0) ok = false;
                if (!ok) st = trn_error_set(e, TRN_ERR_IO, path, -1, "cannot write a tile's sea");
            }
    free(h);
    free(par);
    free(gid);
    free(base);
    free(strips);
    free(wet);
    return st;
}

/* What placing a rectangle needs: the palette, the biomes' rules, the sea, buffers. */
typedef struct tiled_palette {
    const trn_recipe *recipe;
    const trn_palette *palette;
    const tiled_out *o;
    const tile_biomes *tb;
    bool need_biomes, need_moisture, sea; /* sea: some samples are wet (on disk by tile) */
    const char **names;
    const trn_material_mapping *mapping; /* the material set's, as the whole grid's JSON lists */
    uint64_t placed, ceiling;
    /* The scene's suppression list (NULL: none), which of its keys matched in some tile, and
     * the placements it removed, each counted once, in the tile whose cells hold it. */
    const trn_scatter_exclusions *suppress;
    uint8_t *matched;
    uint64_t suppressed;
} tiled_palette;

/* The whole grid's instances at x0 <= x < x1, z0 <= z < z1 (rule, cz, cx order). */
static trn_status tiled_place(tiled_palette *tp, double x0, double z0, double x1, double z1,
                              trn_instances *out, trn_error *e)
{
    const trn_recipe *r = tp->recipe;
    const uint32_t W = r->cells_x + 1u, H = r->cells_z + 1u;
    trn_scatter_window w = {r->cells_x, r->cells_z, r->size_x, r->size_z, 0, 0, x0, z0, x1, z1};
    uint32_t i0, j0, i1, j1;
    trn_status st = trn_scatter_window_samples(&w, &i0, &j0, &i1, &j1, e);
    if (st) return st;
    w.i0 = i0;
    w.j0 = j0;
    const uint32_t nx = i1 - i0 + 1u, nz = j1 - j0 + 1u;
    const size_t n = (size_t)nx * nz;
    float *h = malloc(n * sizeof *h), *moist = tp->need_moisture ? malloc(n * sizeof *moist) : NULL;
    float *around = tp->need_biomes ? malloc((size_t)(nx + 2u) * (nz + 2u) * sizeof *around) : NULL;
    uint8_t *wet = tp->sea ? malloc(n) : NULL, *labels = tp->need_biomes ? malloc(n) : NULL;
    if (!h || (tp->need_moisture && !moist) || (tp->need_biomes && (!around || !labels)) ||
        (tp->sea && !wet))
        st = trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a tile's placements");
    if (!st) st = window_read(tp->o, W, H, i0, j0, nx, nz, h, false, e);
    if (!st && wet) st = window_read_as(tp->o, W, H, i0, j0, nx, nz, wet, 1u, wet_path, e);
    if (!st && labels) st = tile_biome_labels(tp->tb, around, i0, j0, nx, nz, labels, e);
    for (uint32_t j = 0; !st && moist && j < nz; j++)
        for (uint32_t i = 0; i < nx; i++)
            moist[(size_t)j * nx + i] = (float)trn_moisture_at(
                r->seed, (double)(i0 + i) * r->size_x / r->cells_x,
                (double)(j0 + j) * r->size_z / r->cells_z);
    if (!st) {
        const double dx = r->size_x / r->cells_x, dz = r->size_z / r->cells_z;
        trn_field part = tile_piece(dx, dz, 1u, h);
        part.cells_x = nx - 1u;
        part.cells_z = nz - 1u;
        part.size_x = extent_of(dx, nx - 1u);
        part.size_z = extent_of(dz, nz - 1u);
        trn_scatter_env env;
        memset(&env, 0, sizeof env);
        env.field = &part;
        env.biome = labels;
        env.biome_names = labels ? tp->names : NULL;
        env.biome_name_count = labels ? r->biome_count : 0u;
        env.moisture = moist;
        env.wet = wet;
        env.scatter_seed = trn_subseed(r->seed, "scatter");
        st = trn_scatter_run_window(tp->palette, &env, &w, NULL, out, NULL, e);
    }
    free(h);
    free(moist);
    free(around);
    free(wet);
    free(labels);
    return st;
}

/* Unity tile (ux, uz)'s trees and detail layers: the instances the whole grid's export puts in
 * it. The rectangle reaches a cell beyond the tile each way (a tree's tile is decided from its
 * position as a float, a detail point's from its cell), the export keeps the tile's own; the
 * instances within the tile's cells count towards the whole world's placement ceiling. */
typedef struct unity_placed {
    trn_instances inst;
    trn_unity_tree *trees;
    trn_unity_placed_prototype *protos;
    trn_unity_detail_layer details[TRN_UNITY_MAX_DETAIL_LAYERS];
    double *points;
    uint32_t tree_count, proto_count, detail_count;
} unity_placed;

static void unity_placed_dispose(unity_placed *up)
{
    trn_instances_dispose(&up->inst);
    free(up->trees);
    free(up->protos);
    free(up->points);
    memset(up, 0, sizeof *up);
}

/* How many of the instances lie in x0 <= x < x1, z0 <= z < z1. */
static uint64_t count_within(const trn_instances *inst, double x0, double z0, double x1,
                             double z1)
{
    uint64_t n = 0;
    for (size_t k = 0; k < inst->count; k++) {
        const trn_instance *in = &inst->items[k];
        n += in->x >= x0 && in->x < x1 && in->z >= z0 && in->z < z1;
    }
    return n;
}

static trn_status unity_tile_place(tiled_palette *tp, uint32_t ux, uint32_t uz, uint32_t kx,
                                   uint32_t kz, unity_placed *up, trn_error *e)
{
    memset(up, 0, sizeof *up);
    const trn_recipe *r = tp->recipe;
    const trn_palette *pal = tp->palette;
    const uint32_t t = tp->o->tile;
    const double dx = r->size_x / r->cells_x, dz = r->size_z / r->cells_z;
    const double x0 = ux ? (double)(ux * t - 1u) * dx : -INFINITY,
                 z0 = uz ? (double)(uz * t - 1u) * dz : -INFINITY;
    const double x1 = ux + 1u < kx ? (double)((ux + 1u) * t + 1u) * dx : INFINITY,
                 z1 = uz + 1u < kz ? (double)((uz + 1u) * t + 1u) * dz : INFINITY;
    trn_status st = tiled_place(tp, x0, z0, x1, z1, &up->inst, e);
    if (st) return st;
    /* The ceiling: every instance counted once, in the tile whose cells hold it, before the
     * scene's list suppresses any (the whole grid places, then suppresses). */
    const double cx0 = ux ? (double)(ux * t) * dx : -INFINITY,
                 cz0 = uz ? (double)(uz * t) * dz : -INFINITY;
    const double cx1 = ux + 1u < kx ? (double)((ux + 1u) * t) * dx : INFINITY,
                 cz1 = uz + 1u < kz ? (double)((uz + 1u) * t) * dz : INFINITY;
    const uint64_t own = count_within(&up->inst, cx0, cz0, cx1, cz1);
    tp->placed += own;
    if (tp->placed > tp->ceiling)
        return trn_error_set(e, TRN_ERR_LIMIT, NULL, -1,
                             "the palette places more than %" PRIu64
                             " instances over the world, the ceiling the whole grid keeps "
                             "(the first ones in placement order), which tiles cannot choose: "
                             "lower the palette's densities",
                             tp->ceiling);
    if (tp->suppress) {
        st = trn_instances_suppress_marking(tp->palette, &up->inst, tp->suppress, tp->matched,
                                            NULL, e);
        if (st) return st;
        tp->suppressed += own - count_within(&up->inst, cx0, cz0, cx1, cz1);
    }
    const size_t count = up->inst.count;
    up->trees = malloc((count ? count : 1u) * sizeof *up->trees);
    up->protos = malloc((pal->rule_count ? pal->rule_count : 1u) * sizeof *up->protos);
    up->points = malloc((count ? count : 1u) * 2u * sizeof *up->points);
    int32_t *proto_of = malloc((pal->rule_count ? pal->rule_count : 1u) * sizeof *proto_of);
    if (!up->trees || !up->protos || !up->points || !proto_of) {
        free(proto_of);
        return trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a tile's trees");
    }
    /* As the whole grid's export builds them (generate_engines.c): a prototype a tree, rock or
     * prop rule, a detail layer a grass rule, both in rule order. */
    size_t used = 0;
    for (uint32_t q = 0; q < pal->rule_count; q++) {
        const trn_scatter_rule *rule = &pal->rules[q];
        proto_of[q] = -1;
        if (rule->category != TRN_CATEGORY_GRASS) {
            proto_of[q] = (int32_t)up->proto_count;
            up->protos[up->proto_count++] =
                (trn_unity_placed_prototype){rule->id, rule->prefab, rule->model};
            continue;
        }
        if (up->detail_count == TRN_UNITY_MAX_DETAIL_LAYERS) {
            free(proto_of);
            return trn_error_set(e, TRN_ERR_LIMIT, NULL, -1,
                                 "--export unity: the palette has more than %u grass rules; "
                                 "Unity detail layers are one a rule",
                                 TRN_UNITY_MAX_DETAIL_LAYERS);
        }
        trn_unity_detail_layer *d = &up->details[up->detail_count++];
        d->name = rule->id;
        d->prototype = rule->prefab ? rule->prefab : rule->model;
        d->points = up->points + 2u * used;
        d->point_count = 0;
        for (size_t k = 0; k < count; k++)
            if (up->inst.items[k].rule == q) {
                up->points[2u * used] = up->inst.items[k].x;
                up->points[2u * used + 1u] = up->inst.items[k].z;
                used++;
                d->point_count++;
            }
    }
    for (size_t k = 0; k < count; k++) {
        const trn_instance *in = &up->inst.items[k];
        if (in->rule >= pal->rule_count || proto_of[in->rule] < 0) continue;
        trn_unity_tree *tr = &up->trees[up->tree_count++];
        memset(tr, 0, sizeof *tr);
        tr->position[0] = (float)(in->x / r->size_x);
        tr->position[1] = (float)in->y;
        tr->position[2] = (float)(in->z / r->size_z);
        tr->width_scale = tr->height_scale = (float)in->scale;
        tr->rotation = (float)(in->yaw * 3.14159265358979323846 / 180.0);
        tr->color = 0xffffffffu;
        tr->lightmap_color = 0xffffffffu;
        tr->prototype = proto_of[in->rule];
    }
    free(proto_of);
    return TRN_OK;
}

/* Heights and, with surface materials, their labels of samples [x0, x0 + n) x [z0, z0 + n) of the
 * world, cut from the run's tiles. */
static trn_status engine_tile_read(const tiled_surface *ts, uint32_t x0, uint32_t z0, uint32_t n,
                                   float *h, uint8_t *labels, trn_error *e)
{
    const trn_recipe *r = ts->tb.recipe;
    const uint32_t W = r->cells_x + 1u, H = r->cells_z + 1u;
    trn_status st = window_read(ts->tb.o, W, H, x0, z0, n, n, h, false, e);
    if (!st && !ts->none && labels) {
        st = window_read(ts->tb.o, W, H, x0, z0, n, n, labels, true, e);
        for (size_t k = 0; !st && k < (size_t)n * n; k++)
            labels[k] = ts->map[labels[k]];
    }
    return st;
}

/* Unity terrain tiles of tile + 1 samples sharing their edges (tile (ux, uz) covers samples
 * ux * tile .. (ux + 1) * tile), one height scale for all: the files 'terrane unity export
 * OUT.tif DIR --tiles KXxKZ' writes from the whole grid, and the splat maps of the surface
 * materials the whole grid's --export unity assigns (when splats_unavailable allows). */
typedef struct unity_written {
    char name[256];
    double tile_size[3], height_base;
    uint32_t splat_maps, materials;
    uint32_t layer_textures; /* the terrain layers' textures, written once for every tile */
    const char *no_splats;   /* why there are none */
    uint64_t trees, detail_points; /* the palette's instances, every tile together */
    uint32_t detail_layers;
} unity_written;

static int write_unity_tiles(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                             const tiled_surface *ts, tiled_palette *tp, unity_written *written)
{
    const uint32_t t = a->tiles, kx = recipe->cells_x / t, kz = recipe->cells_z / t;
    char *name = written->name;
    unity_stem(a->recipe_path, name, sizeof written->name);
    const double dx = recipe->size_x / recipe->cells_x, dz = recipe->size_z / recipe->cells_z;
    const size_t r = (size_t)t + 1u;
    written->no_splats = ts->none;
    float *h = malloc(r * r * sizeof *h);
    trn_labels lab;
    memset(&lab, 0, sizeof lab);
    trn_error e;
    trn_status st =
        h ? TRN_OK
          : trn_error_set(&e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a Unity tile");
    if (!st && !ts->none) st = trn_labels_init(&lab, t, t, &e);
    for (uint32_t k = 0; !st && !ts->none && k < ts->sm.labels.name_count; k++)
        st = trn_labels_add_name(&lab, ts->sm.labels.names[k], strlen(ts->sm.labels.names[k]), &e);
    trn_write_set *ws = st ? NULL : cli_write_set(ctx);
    if (!st && !ws) {
        free(h);
        trn_labels_dispose(&lab);
        return CLI_EXIT_FAIL;
    }
    /* The splat layers' TerrainLayers, written once; every tile's JSON names them. */
    unity_layers *ul = NULL;
    if (!st && !ts->none) {
        surface_out *so = calloc(1, sizeof *so);
        ul = calloc(1, sizeof *ul);
        if (!so || !ul)
            st = trn_error_set(&e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a Unity tile");
        if (!st) {
            so->sm = ts->sm; /* shared, not owned: only the names and materials are read */
            st = gen_unity_terrain_layers(ctx, a, recipe, so, a->unity_dir, name, ul, &e);
        }
        free(so);
        if (!st) written->layer_textures = ul->textures;
    }
    for (uint32_t uz = 0; uz < kz && !st; uz++)
        for (uint32_t ux = 0; ux < kx && !st; ux++) {
            /* This tile with its east neighbour's first column, its north neighbour's first row
             * and the corner. */
            st = engine_tile_read(ts, ux * t, uz * t, t + 1u, h, ts->none ? NULL : lab.values, &e);
            if (st) break;
            const trn_field piece = tile_piece(dx, dz, t, h);
            trn_unity_export_options uo;
            trn_unity_export_options_default(&uo);
            uo.name = name;
            uo.writes = ws;
            uo.height_base = ts->scale.base;
            uo.height_size = 65535.0 * ts->scale.quantum;
            uo.first_tile_x = ux;
            uo.first_tile_z = uz;
            uo.total_tiles_x = kx;
            uo.total_tiles_z = kz;
            uo.position[0] = (double)(ux * t) * dx;
            uo.position[2] = (double)(uz * t) * dz;
            if (!ts->none) uo.layer_sources = ts->sources;
            if (ul) uo.terrain_layers = ul->layers;
            unity_placed up;
            memset(&up, 0, sizeof up);
            if (tp && (st = unity_tile_place(tp, ux, uz, kx, kz, &up, &e))) {
                unity_placed_dispose(&up);
                break;
            }
            if (tp) {
                uo.mapping = tp->mapping;
                uo.trees = up.trees;
                uo.tree_count = up.tree_count;
                uo.placed_prototypes = up.protos;
                uo.placed_prototype_count = up.proto_count;
                uo.details = up.details;
                uo.detail_count = up.detail_count;
            }
            trn_unity_export_report rep;
            st = trn_unity_export(a->unity_dir, &piece, ts->none ? NULL : &lab, NULL, &uo, &rep,
                                  NULL, NULL, &e);
            unity_placed_dispose(&up);
            if (!st) {
                written->trees += rep.trees;
                written->detail_points += rep.detail_points;
                written->detail_layers = rep.detail_layers;
                memcpy(written->tile_size, rep.tile_size, sizeof rep.tile_size);
                written->height_base = rep.height_base;
                written->splat_maps = rep.splat_textures;
            }
        }
    written->materials = ts->sm.labels.name_count;
    free(ul);
    free(h);
    trn_labels_dispose(&lab);
    if (st) return cli_fail(ctx, &e);
    cli_note(ctx,
             "wrote %s: %u x %u Unity terrains of %u samples sharing their edges (RAW 0 = "
             "%.9g m, 65535 = %.9g m: %s)",
             a->unity_dir, kx, kz, t + 1u, ts->scale.base,
             ts->scale.base + 65535.0 * ts->scale.quantum, ts->how ? ts->how : "");
    if (written->no_splats)
        cli_note(ctx, "no splat maps: %s (generate without --tiles writes them)",
                 written->no_splats);
    else
        cli_note(ctx,
                 "splat maps: %u a terrain, of %u surface material(s); %u terrain layer "
                 "texture(s) %s_layer<K>_*.png shared by every terrain",
                 written->splat_maps, written->materials, written->layer_textures, name);
    if (tp)
        cli_note(ctx,
                 "trees: %" PRIu64 " tree instance(s) in %s_X_Z_trees.json; grass: %" PRIu64
                 " instance(s) in %u detail layer(s) a terrain (the palette's instances, as "
                 "the whole grid places them)",
                 written->trees, name, written->detail_points, written->detail_layers);
    return CLI_EXIT_OK;
}

/* The level folder of BeamNG tile (ux, uz) of kx x kz: DIR/levels/NAME_X_Z beside the one
 * --export beamng names (one tile: that folder itself). */
static void level_tile_dir(const gen_args *a, uint32_t ux, uint32_t uz, uint32_t kx, uint32_t kz,
                           char *buf, size_t size)
{
    size_t n = strlen(a->export_dir);
    while (n > 1 && a->export_dir[n - 1] == '/')
        n--;
    if (kx * kz == 1)
        snprintf(buf, size, "%.*s", (int)n, a->export_dir);
    else
        snprintf(buf, size, "%.*s_%u_%u", (int)n, a->export_dir, ux, uz);
}

/* BeamNG levels, one a tile of tile x tile samples (tile (ux, uz) covers samples ux * tile ..
 * (ux + 1) * tile - 1; the world's last row and column, one cell wide, are left out as the whole
 * grid's level leaves them out), one height rule for all, each .ter the whole grid's .ter cut
 * to the tile: its heights, its layer map and the whole world's material list. */
typedef struct beamng_written {
    uint64_t forest_items, cover_instances, unshaped_items; /* the palette's, every level */
    uint32_t levels, materials;
    uint32_t mapped; /* detail textures from Material documents' maps, every level together */
    double square_size;
} beamng_written;

/* BeamNG tile (ux, uz)'s forest and ground cover: the whole grid's instances in the tile's
 * cells (the last tile's reach to the world's far edge, as the whole grid's level has them), in
 * the level's own frame (x and z from the tile's corner, the TerrainBlock centred as in every
 * level), written as the whole grid's level writes its own, with the level's layer map. */
static trn_status beamng_tile_forest(tiled_palette *tp, uint32_t ux, uint32_t uz, uint32_t kx,
                                     uint32_t kz, const char *dir, const surface_out *so,
                                     trn_write_set *ws, trn_beamng_forest_result *res,
                                     trn_error *e)
{
    const trn_recipe *r = tp->recipe;
    const uint32_t t = tp->o->tile;
    const double dx = r->size_x / r->cells_x, dz = r->size_z / r->cells_z;
    const double ox = (double)(ux * t) * dx, oz = (double)(uz * t) * dz;
    trn_instances inst = {NULL, 0};
    trn_status st = tiled_place(tp, ux ? ox : -INFINITY, uz ? oz : -INFINITY,
                                ux + 1u < kx ? (double)((ux + 1u) * t) * dx : INFINITY,
                                uz + 1u < kz ? (double)((uz + 1u) * t) * dz : INFINITY, &inst, e);
    if (st) return st;
    tp->placed += inst.count;
    if (tp->placed > tp->ceiling) {
        trn_instances_dispose(&inst);
        return trn_error_set(e, TRN_ERR_LIMIT, NULL, -1,
                             "the palette places more than %" PRIu64
                             " instances over the world, the ceiling the whole grid keeps "
                             "(the first ones in placement order), which tiles cannot choose: "
                             "lower the palette's densities",
                             tp->ceiling);
    }
    if (tp->suppress) {
        size_t gone = 0;
        st = trn_instances_suppress_marking(tp->palette, &inst, tp->suppress, tp->matched, &gone,
                                            e);
        tp->suppressed += gone;
        if (st) {
            trn_instances_dispose(&inst);
            return st;
        }
    }
    for (size_t k = 0; k < inst.count; k++) {
        inst.items[k].x -= ox;
        inst.items[k].z -= oz;
    }
    trn_beamng_forest_options fo;
    memset(&fo, 0, sizeof fo);
    fo.level_dir = dir;
    fo.origin_x = fo.origin_y = -(double)t * dx / 2.0;
    const char *names[TRN_SURFACE_MATERIALS_MAX];
    const uint32_t count = so->sm.labels.name_count;
    for (uint32_t k = 0; k < count && k < TRN_SURFACE_MATERIALS_MAX; k++)
        names[k] = so->names[k];
    fo.layers = so->sm.labels.values;
    fo.layers_width = fo.layers_height = t;
    fo.layers_spacing = dx;
    fo.layer_names = names;
    fo.layer_count = count < TRN_SURFACE_MATERIALS_MAX ? count : TRN_SURFACE_MATERIALS_MAX;
    fo.writes = ws;
    st = trn_beamng_level_write_forest(tp->palette, &inst, &fo, res, e);
    trn_instances_dispose(&inst);
    return st;
}

static int write_beamng_tiles(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                              const tiled_surface *ts, tiled_palette *tp,
                              beamng_written *written)
{
    const uint32_t t = a->tiles, kx = recipe->cells_x / t, kz = recipe->cells_z / t;
    height_mapping m;
    memset(&m, 0, sizeof m);
    m.base = ts->scale.base;
    m.quantum = ts->scale.quantum;
    m.max_height = 65536.0 * ts->scale.quantum;
    m.rule = ts->how;
    trn_sea_level_source src = TRN_SEA_LEVEL_DERIVED;
    const double sea = trn_recipe_sea_level(recipe, &src, NULL, 0);
    surface_out *so = calloc(1, sizeof *so);
    float *h = malloc((size_t)t * t * sizeof *h);
    trn_error e;
    trn_status st = TRN_OK;
    if (!so || !h || trn_labels_init(&so->sm.labels, t, t, &e)) {
        free(h);
        free(so);
        return cli_failf(ctx, "out of memory for a BeamNG tile");
    }
    /* The world's materials, each tile's layer map indexing them. */
    memcpy(so->sm.materials, ts->sm.materials, sizeof so->sm.materials);
    for (uint32_t k = 0; !st && k < ts->sm.labels.name_count; k++)
        st = trn_labels_add_name(&so->sm.labels, ts->sm.labels.names[k],
                                 strlen(ts->sm.labels.names[k]), &e);
    memcpy(so->names, ts->names, sizeof so->names);
    written->square_size = recipe->size_x / recipe->cells_x;
    for (uint32_t uz = 0; uz < kz && !st; uz++)
        for (uint32_t ux = 0; ux < kx && !st; ux++) {
            st = engine_tile_read(ts, ux * t, uz * t, t, h, so->sm.labels.values, &e);
            if (st) break;
            trn_generated piece;
            memset(&piece, 0, sizeof piece);
            piece.field.cells_x = piece.field.cells_z = t - 1u;
            piece.field.size_x = piece.field.size_z = extent_of(written->square_size, t - 1u);
            piece.field.heights = h;
            trn_ter ter;
            st = gen_build_ter(&piece, so, &m, &ter, &e);
            if (st) break;
            char dir[4200];
            level_tile_dir(a, ux, uz, kx, kz, dir, sizeof dir);
            trn_beamng_level_result res;
            uint32_t tinted = 0, mapped = 0;
            st = gen_level_terrain(ctx, a, dir, recipe, so, &ter, &m, written->square_size,
                                   src == TRN_SEA_LEVEL_EXPLICIT, sea, &res, &tinted, &mapped, &e);
            written->mapped += mapped;
            trn_ter_dispose(&ter);
            if (!st && tp) {
                trn_beamng_forest_result fr;
                memset(&fr, 0, sizeof fr);
                st = beamng_tile_forest(tp, ux, uz, kx, kz, dir, so, cli_write_set(ctx), &fr, &e);
                written->forest_items += fr.items;
                written->cover_instances += fr.cover_instances;
                written->unshaped_items += fr.unshaped_items;
            }
            written->levels += !st;
        }
    written->materials = so->sm.labels.name_count;
    trn_labels_dispose(&so->sm.labels);
    free(so);
    free(h);
    if (st) return cli_fail(ctx, &e);
    char first[4200];
    level_tile_dir(a, 0, 0, kx, kz, first, sizeof first);
    cli_note(ctx,
             "wrote %u x %u BeamNG level(s) of %u x %u samples (%s%s), squareSize %g m, "
             "maxHeight %g m, TerrainBlock position z %.6g (%s), %u material(s)",
             kx, kz, t, t, first, kx * kz > 1 ? " and its neighbours" : "", written->square_size,
             m.max_height, m.base, ts->how ? ts->how : "", written->materials);
    if (tp)
        cli_note(ctx,
                 "forest: %" PRIu64 " item(s), ground cover for %" PRIu64
                 " grass instance(s), every level together (the palette's instances, as the "
                 "whole grid places them)%s",
                 written->forest_items, written->cover_instances,
                 written->unshaped_items ? "; instances of rules without a .dae or .cdae shape "
                                           "left out, as the whole grid's level leaves them"
                                         : "");
    return CLI_EXIT_OK;
}

/* glTF meshes, one .glb a tile of tile + 1 samples sharing their edges (tile (ux, uz) covers
 * samples ux * tile .. (ux + 1) * tile), in the tile's own frame (its south-west corner at the
 * origin): what 'terrane mesh' writes for the whole grid with --chunks, chunk for chunk (the
 * recipe's chunk_cells), finest level, a material per surface role by slope. Normals and roles
 * at a tile's edges come from the samples beyond it, as the whole grid's mesh has them, so
 * tiles placed side by side meet without a crack or a shading seam. */
typedef struct gltf_written {
    char name[256];
    uint32_t files, chunk_cells;
    uint64_t vertices, triangles, bytes;
} gltf_written;

static int write_gltf_tiles(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                            const tiled_out *o, gltf_written *written)
{
    const uint32_t t = a->tiles, kx = recipe->cells_x / t, kz = recipe->cells_z / t;
    const uint32_t W = recipe->cells_x + 1u, H = recipe->cells_z + 1u;
    unity_stem(a->recipe_path, written->name, sizeof written->name);
    const double dx = recipe->size_x / recipe->cells_x, dz = recipe->size_z / recipe->cells_z;
    const size_t r = (size_t)t + 1u, rr = (size_t)t + 3u;
    written->chunk_cells = recipe->chunk_cells ? recipe->chunk_cells : TRN_ROLES_CHUNK_CELLS;
    if (written->chunk_cells > TRN_MESH_CHUNK_CELLS_MAX)
        written->chunk_cells = TRN_MESH_CHUNK_CELLS_MAX;
    float *h = malloc(r * r * sizeof *h), *win = malloc(rr * rr * sizeof *win);
    uint8_t *wroles = malloc(rr * rr), *roles = malloc(r * r);
    trn_write_set *ws = cli_write_set(ctx);
    if (!h || !win || !wroles || !roles || !ws) {
        free(h);
        free(win);
        free(wroles);
        free(roles);
        return ws ? cli_failf(ctx, "out of memory for a glTF tile") : CLI_EXIT_FAIL;
    }
    trn_error e;
    trn_status st = TRN_OK;
    for (uint32_t uz = 0; uz < kz && !st; uz++)
        for (uint32_t ux = 0; ux < kx && !st; ux++) {
            /* The tile grown by a sample where the world goes on: the reach of a normal and of
             * a role's slope. */
            const uint32_t i0 = ux * t, j0 = uz * t;
            const uint32_t x0 = i0 ? i0 - 1u : 0u, z0 = j0 ? j0 - 1u : 0u;
            const uint32_t x1 = i0 + t + 1u < W ? i0 + t + 1u : W - 1u,
                           z1 = j0 + t + 1u < H ? j0 + t + 1u : H - 1u;
            const uint32_t nx = x1 - x0 + 1u, nz = z1 - z0 + 1u;
            st = window_read(o, W, H, x0, z0, nx, nz, win, false, &e);
            if (st) break;
            trn_field around;
            memset(&around, 0, sizeof around);
            around.cells_x = nx - 1u;
            around.cells_z = nz - 1u;
            around.size_x = extent_of(dx, nx - 1u);
            around.size_z = extent_of(dz, nz - 1u);
            around.heights = win;
            trn_roles_input ri;
            memset(&ri, 0, sizeof ri);
            ri.field = &around;
            trn_roles_params rp;
            trn_roles_params_default(&rp);
            rp.threads = a->threads;
            st = trn_roles_classify(&ri, &rp, wroles, &e);
            if (st) break;
            for (uint32_t j = 0; j <= t; j++) {
                const size_t from = (size_t)(j0 + j - z0) * nx + (i0 - x0);
                memcpy(h + (size_t)j * r, win + from, r * sizeof *h);
                memcpy(roles + (size_t)j * r, wroles + from, r);
            }
            const trn_field piece = tile_piece(dx, dz, t, h);
            trn_mesh_options mo;
            trn_mesh_options_default(&mo);
            mo.chunk_cells = written->chunk_cells;
            mo.threads = a->threads;
            mo.defer_levels = true; /* the finest level only is built, chunk by chunk */
            mo.around = &around;
            mo.around_i0 = i0 - x0;
            mo.around_j0 = j0 - z0;
            trn_mesh *m = NULL;
            st = trn_mesh_build(&piece, roles, &mo, &m, NULL, NULL, &e);
            if (st) break;
            uint32_t *levels = calloc((size_t)m->chunks_x * m->chunks_z, sizeof *levels);
            if (!levels) {
                trn_mesh_free(m);
                st = trn_error_set(&e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
                break;
            }
            trn_mesh_scene scene;
            memset(&scene, 0, sizeof scene);
            scene.mesh = m;
            scene.levels = levels;
            scene.chunks = true;
            scene.deferred_field = &piece;
            scene.deferred_roles = roles;
            scene.writes = ws;
            char path[4200];
            if (kx * kz == 1)
                snprintf(path, sizeof path, "%s/%s.glb", a->gltf_dir, written->name);
            else
                snprintf(path, sizeof path, "%s/%s_%u_%u.glb", a->gltf_dir, written->name, ux, uz);
            trn_mesh_write_report rep;
            memset(&rep, 0, sizeof rep);
            st = trn_gltf_write(path, TRN_GLTF_GLB, &scene, &rep, &e);
            free(levels);
            trn_mesh_free(m);
            if (st) break;
            written->files++;
            written->vertices += rep.vertices;
            written->triangles += rep.triangles;
            written->bytes += rep.bytes;
        }
    free(h);
    free(win);
    free(wroles);
    free(roles);
    if (st) return cli_fail(ctx, &e);
    char first[4200];
    snprintf(first, sizeof first, kx * kz == 1 ? "%s.glb" : "%s_0_0.glb", written->name);
    cli_note(ctx,
             "wrote %s: %u x %u glTF tiles (%s%s) of %u x %u cells in chunks of %u, each in its "
             "own frame (tile X_Z's south-west corner at x = X * %g, north Z * %g m), %" PRIu64
             " vertices, %" PRIu64 " triangles",
             a->gltf_dir, kx, kz, first, kx * kz > 1 ? " and its neighbours" : "", t, t,
             written->chunk_cells, (double)t * dx, (double)t * dz, written->vertices,
             written->triangles);
    return CLI_EXIT_OK;
}

static double mib(uint64_t bytes)
{
    return (double)bytes / 1048576.0;
}

/* "100 KiB", "5.5 MiB", "3.25 GiB": a size as people read it. */
static const char *size_text(uint64_t bytes, char *buf, size_t size)
{
    if (bytes < ((uint64_t)1 << 20))
        snprintf(buf, size, "%.0f KiB", (double)bytes / 1024.0);
    else if (bytes < ((uint64_t)1 << 30))
        snprintf(buf, size, "%.1f MiB", mib(bytes));
    else
        snprintf(buf, size, "%.2f GiB", (double)bytes / 1073741824.0);
    return buf;
}

/* What a tiled run holds beside its grids (see generate_tiled). */
#define GENERATE_BASE_BYTES ((uint64_t)24u << 20)

/* The graph's published heights tile by tile straight into a tiled COG, within the memory
 * budget: refused up front when one tile with its halos (and the whole grids global nodes hold)
 * cannot fit. */
int generate_tiled(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, double t0)
{
    trn_error e;
    trn_graph g;
    if (trn_graph_from_recipe(recipe, &g, &e)) return cli_fail(ctx, &e);
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = a->threads;
    o.quality = a->quality;
    o.max_work = a->max_work;
    uint64_t need = 0;
    int global = -1;
    if (trn_graph_tiles_memory(&g, recipe, &o, a->tiles, &need, &global, &e)) {
        trn_graph_dispose(&g);
        return cli_fail(ctx, &e);
    }
    /* The program itself before it holds any grid: code, libraries, the recipe and the thread
     * pool (measured: 21-23 MiB resident for a Mountain Range of 65^2 samples). */
    need += GENERATE_BASE_BYTES;
    /* The writer's band: three tile heights across the width; the rows the strokes hold. */
    need += (uint64_t)3u * a->tiles * ((uint64_t)recipe->cells_x + 1u) * sizeof(float);
    uint64_t held = 0;
    if (trn_recipe_tiles_held(recipe, a->tiles, &held, &e)) {
        trn_graph_dispose(&g);
        return cli_fail(ctx, &e);
    }
    need += held;
    /* An engine tile being cut: its heights with a sample around (floats), labels, the 16-bit
     * heights and layer map the engine file holds and the writer's image of them, about 16 bytes
     * a sample. */
    if (a->unity_dir || a->export_dir || a->gltf_dir)
        need += (uint64_t)16u * (a->tiles + 3u) * (a->tiles + 3u);
    /* A glTF tile: its roles (a byte a sample, above) and one chunk's level at a time, which the
     * writer builds as it writes the file: positions, normals and six indices a cell, about 48
     * bytes a sample of the chunk (measured: 4097^2 in tiles of 1024, no more resident than the
     * GeoTIFF alone). */
    if (a->gltf_dir) {
        const uint64_t cc = recipe->chunk_cells ? recipe->chunk_cells : TRN_ROLES_CHUNK_CELLS;
        need += 48u * (cc + 3u) * (cc + 3u);
    }
    if (a->memory && need > a->memory) {
        char why[200] = "";
        if (global >= 0)
            snprintf(why, sizeof why,
                     "; node '%.60s' (%.32s) reads the whole grid, so the whole grid is held",
                     g.nodes[global].id, g.nodes[global].type);
        char have[32], want[32];
        const int r =
            cli_failf(ctx,
                      "--memory %s is below the %s a tile of %u samples with its "
                      "halos is estimated to need on this %u x %u-sample grid%s; give "
                      "--memory %.0fMiB or more%s",
                      size_text(a->memory, have, sizeof have), size_text(need, want, sizeof want),
                      a->tiles, recipe->cells_x + 1u, recipe->cells_z + 1u, why, ceil(mib(need)),
                      global >= 0 ? "" : ", or smaller --tiles");
        trn_graph_dispose(&g);
        return r;
    }
    /* Unity tiles: 2^n + 1 samples a side, so tiles of 2^n that divide the grid. */
    if (a->unity_dir && ((a->tiles & (a->tiles - 1u)) || a->tiles < 32 || a->tiles > 4096 ||
                         recipe->cells_x % a->tiles || recipe->cells_z % a->tiles)) {
        const int r = cli_failf(ctx,
                                "--export unity with --tiles: Unity terrains have 2^n + 1 "
                                "samples (33..4097) and share their edges, so --tiles must be a "
                                "power of two from 32 to 4096 that divides the grid's %u x %u "
                                "cells, not %u (--resolution 4096x4096 --tiles 1024: 4 x 4 "
                                "terrains of 1025)",
                                recipe->cells_x, recipe->cells_z, a->tiles);
        trn_graph_dispose(&g);
        return r;
    }
    /* BeamNG tiles: terrains of 2^n samples (128..8192), the whole grid's level cut. */
    if (a->export_dir && ((a->tiles & (a->tiles - 1u)) || a->tiles < TRN_BEAMNG_MIN_RESOLUTION ||
                          a->tiles > TRN_BEAMNG_MAX_RESOLUTION || recipe->cells_x % a->tiles ||
                          recipe->cells_z % a->tiles)) {
        const int r = cli_failf(ctx,
                                "--export beamng with --tiles: BeamNG terrains have 2^n samples "
                                "(%u..%u), so --tiles must be a power of two in that range that "
                                "divides the grid's %u x %u cells, not %u (--resolution "
                                "4096x4096 --tiles 1024: 4 x 4 levels of 1024)",
                                TRN_BEAMNG_MIN_RESOLUTION, TRN_BEAMNG_MAX_RESOLUTION,
                                recipe->cells_x, recipe->cells_z, a->tiles);
        trn_graph_dispose(&g);
        return r;
    }
    /* glTF tiles share their edges: tiles that divide the grid. */
    if (a->gltf_dir && (recipe->cells_x % a->tiles || recipe->cells_z % a->tiles)) {
        const int r = cli_failf(ctx,
                                "--export gltf with --tiles: the meshes share their edges, so "
                                "--tiles must divide the grid's %u x %u cells, not %u",
                                recipe->cells_x, recipe->cells_z, a->tiles);
        trn_graph_dispose(&g);
        return r;
    }
    bool water = false;
    for (uint32_t k = 0; k < g.node_count; k++)
        water = water || !strcmp(g.nodes[k].type, "water_body") ||
                !strcmp(g.nodes[k].type, "basin_water") || !strcmp(g.nodes[k].type, "river_route");
    /* Engine tiles of a recipe with a palette carry its instances (Unity's trees and grass,
     * BeamNG's forest and ground cover), placed tile by tile as the whole grid places them, or
     * the run is refused naming why they cannot be. */
    placements pl;
    memset(&pl, 0, sizeof pl);
    if ((a->unity_dir || a->export_dir) && recipe->palette_json) {
        int prc = cli_palette_load(ctx, a->recipe_path, recipe, &pl.palette, &pl.set);
        if (prc) {
            trn_graph_dispose(&g);
            return prc;
        }
        pl.loaded = true;
    }
    /* The scene's suppression list, read before the tiles so a bad file fails fast. */
    int xrc = gen_exclusions_read(ctx, a, &pl);
    if (xrc) {
        gen_placements_dispose(&pl);
        trn_graph_dispose(&g);
        return xrc;
    }
    /* BeamNG levels: materials the tiles can decide. */
    if (a->export_dir && splats_unavailable(recipe, &pl)) {
        const int r = cli_failf(ctx,
                                "--export beamng with --tiles: a level's terrain needs its "
                                "surface materials, and %s; generate without --tiles writes the "
                                "level",
                                splats_unavailable(recipe, &pl));
        gen_placements_dispose(&pl);
        trn_graph_dispose(&g);
        return r;
    }
    if (pl.loaded) {
        /* A tile's placements: its window's layers (heights, moisture, the biomes' heights,
         * labels, wet: 17 bytes a sample) and its instances, at most each rule's density over
         * the tile grown by a cell, with the Unity trees' JSON (about 700 bytes a tree). */
        const double dx = recipe->size_x / recipe->cells_x, dz = recipe->size_z / recipe->cells_z;
        const double area = (a->tiles + 2.0) * dx * (a->tiles + 2.0) * dz;
        double bytes = 17.0 * (a->tiles + 8.0) * (a->tiles + 8.0);
        for (uint32_t k = 0; k < pl.palette.rule_count; k++) {
            const trn_scatter_rule *rule = &pl.palette.rules[k];
            const double per = sizeof(trn_instance) + 16.0 +
                               (rule->category != TRN_CATEGORY_GRASS && a->unity_dir
                                    ? sizeof(trn_unity_tree) + 700.0
                                    : 0.0);
            bytes += trn_palette_rule_density(&pl.palette, rule) * area * per;
        }
        if (bytes > 0.0 && bytes < 1e18) need += (uint64_t)bytes;
        if (a->memory && need > a->memory) {
            char have[32], want[32];
            const int r = cli_failf(ctx,
                                    "--memory %s is below the %s a tile of %u samples with its "
                                    "halos and the palette's instances over it is estimated to "
                                    "need; give --memory %.0fMiB or more, or smaller --tiles",
                                    size_text(a->memory, have, sizeof have),
                                    size_text(need, want, sizeof want), a->tiles,
                                    ceil(mib(need)));
            gen_placements_dispose(&pl);
            trn_graph_dispose(&g);
            return r;
        }
        char why[400];
        const char *no = scatter_unavailable(recipe, &pl.palette, water, why, sizeof why);
        if (no) {
            const int r = cli_failf(ctx,
                                    "--export %s with --tiles: the palette's instances cannot be "
                                    "placed tile by tile as the whole grid places them: %s; "
                                    "generate without --tiles writes them",
                                    a->unity_dir ? "unity" : "beamng", no);
            gen_placements_dispose(&pl);
            trn_graph_dispose(&g);
            return r;
        }
    }

    tiled_out to_out = {NULL, NULL, a->tiles, INFINITY, -INFINITY};
    if (a->out && trn_geotiff_tiled_open(a->out_file, recipe->cells_x, recipe->cells_z,
                                         recipe->size_x, recipe->size_z, a->tiles, &to_out.w, &e)) {
        gen_placements_dispose(&pl);
        trn_graph_dispose(&g);
        return cli_fail(ctx, &e);
    }
    trn_geotiff_tiled *w = to_out.w;
    /* Global results wait on disk beside the output (or where --tile-cache says); so do the
     * raw tiles the engines' tiles are cut from. */
    char *folder = NULL;
    if (!a->tile_cache) {
        const char *near = a->out         ? a->out
                           : a->unity_dir ? a->unity_dir
                           : a->gltf_dir  ? a->gltf_dir
                                          : a->export_dir;
        const char *slash = strrchr(near, '/');
        const size_t n = slash ? (size_t)(slash - near) : 0u;
        folder = malloc(n + 2u);
        if (folder) {
            if (slash)
                snprintf(folder, n + 2u, "%.*s", (int)(n ? n : 1u), near);
            else
                strcpy(folder, ".");
            /* A level's DIR/levels may not exist yet: the nearest folder above that does. */
            char *up;
            while (access(folder, F_OK) != 0 && (up = strrchr(folder, '/')) != NULL)
                *(up == folder ? up + 1 : up) = '\0';
            if (access(folder, F_OK) != 0) strcpy(folder, ".");
        }
    }
    char *pieces = NULL;
    if (a->unity_dir || a->export_dir || a->gltf_dir) {
        const char *in = a->tile_cache ? a->tile_cache : folder ? folder : ".";
        pieces = malloc(strlen(in) + 32u);
        if (pieces) sprintf(pieces, "%s/terrane-pieces-XXXXXX", in);
        if (!pieces || !mkdtemp(pieces)) {
            const int r =
                cli_failf(ctx, "cannot make a folder in %s for the engine tiles' pieces", in);
            free(pieces);
            free(folder);
            if (w) trn_geotiff_tiled_abort(w);
            gen_placements_dispose(&pl);
            trn_graph_dispose(&g);
            return r;
        }
        to_out.pieces = pieces;
    }
    const trn_graph_tile_options to = {.tile = a->tiles,
                                       .cache_dir = a->tile_cache ? a->tile_cache : folder};
    trn_status st =
        trn_recipe_evaluate_tiles(recipe, &g, &o, &to, tiled_put, &to_out, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    free(folder);
    const bool rules = feeds_biome_rules(&g, g.output, 0);
    trn_graph_dispose(&g);
    int unity_rc = CLI_EXIT_OK;
    unity_written unity;
    memset(&unity, 0, sizeof unity);
    beamng_written beamng;
    memset(&beamng, 0, sizeof beamng);
    tiled_surface ts;
    memset(&ts, 0, sizeof ts);
    gltf_written gltf;
    memset(&gltf, 0, sizeof gltf);
    if (!st && a->gltf_dir) unity_rc = write_gltf_tiles(ctx, a, recipe, &to_out, &gltf);
    if (!st && !unity_rc && (a->unity_dir || a->export_dir))
        unity_rc = tiled_surface_prepare(ctx, a, recipe, &to_out, rules, &pl, &ts);
    /* The palette: the sea across the tiles, then each Unity tile's instances as it is cut. */
    tiled_palette tp;
    memset(&tp, 0, sizeof tp);
    tiled_sea sea;
    memset(&sea, 0, sizeof sea);
    const char **biome_names = NULL;
    uint8_t *matched = NULL;
    if (!st && !unity_rc && pl.loaded) {
        tp.recipe = recipe;
        tp.palette = &pl.palette;
        tp.mapping = &pl.set.mapping;
        tp.o = &to_out;
        tp.tb = &ts.tb;
        tp.ceiling =
            a->max_placements ? a->max_placements : TRN_SCATTER_DEFAULT_MAX_PLACEMENTS;
        if (a->scatter_exclusions) {
            tp.suppress = &pl.suppress;
            matched = calloc(pl.suppress.count ? pl.suppress.count : 1u, 1);
            tp.matched = matched;
        }
        for (uint32_t k = 0; k < pl.palette.rule_count; k++) {
            tp.need_biomes = tp.need_biomes || pl.palette.rules[k].biome_count > 0;
            tp.need_moisture = tp.need_moisture || pl.palette.rules[k].moisture.has;
        }
        sea.level = trn_recipe_sea_level(recipe, NULL, NULL, 0);
        tp.sea = (double)to_out.lo < sea.level; /* else nothing lies below it: nothing wet */
        biome_names = calloc(recipe->biome_count ? recipe->biome_count : 1u, sizeof *biome_names);
        for (uint32_t b = 0; biome_names && b < recipe->biome_count; b++)
            biome_names[b] = recipe->biomes[b].name;
        tp.names = biome_names;
        trn_error se;
        if (!biome_names || (a->scatter_exclusions && !matched))
            unity_rc = cli_failf(ctx, "out of memory for the biome names");
        else if (tp.sea && sea_solve(&to_out, recipe, &sea, &se))
            unity_rc = cli_fail(ctx, &se);
    }
    if (!st && !unity_rc && a->unity_dir)
        unity_rc = write_unity_tiles(ctx, a, recipe, &ts, pl.loaded ? &tp : NULL, &unity);
    /* Each engine's tiles count the world's instances once. */
    const uint64_t suppressed = tp.suppressed;
    tp.placed = tp.suppressed = 0;
    if (!st && !unity_rc && a->export_dir)
        unity_rc = write_beamng_tiles(ctx, a, recipe, &ts, pl.loaded ? &tp : NULL, &beamng);
    if (!st && !unity_rc && tp.suppress) {
        /* A key matched nothing only if it matched nothing in any tile. */
        size_t unmatched = 0;
        for (size_t k = 0; k < pl.suppress.count; k++)
            unmatched += matched[k] == 0;
        gen_exclusions_note(ctx, a, (size_t)(a->export_dir ? tp.suppressed : suppressed),
                            unmatched);
    }
    free(matched);
    free(sea.parent);
    free(sea.open);
    free(biome_names);
    gen_placements_dispose(&pl);
    tiled_surface_dispose(&ts);
    if (pieces) {
        /* The pieces go whatever happened. */
        const uint32_t nx = (recipe->cells_x + a->tiles) / a->tiles,
                       nz = (recipe->cells_z + a->tiles) / a->tiles;
        char path[4200];
        for (uint32_t tz = 0; tz < nz; tz++)
            for (uint32_t tx = 0; tx < nx; tx++) {
                piece_path(&to_out, tx, tz, path, sizeof path);
                (void)remove(path);
                biome_path(&to_out, tx, tz, path, sizeof path);
                (void)remove(path);
                wet_path(&to_out, tx, tz, path, sizeof path);
                (void)remove(path);
            }
        (void)rmdir(pieces);
        free(pieces);
    }
    if (st) {
        if (w) trn_geotiff_tiled_abort(w);
        return cli_fail(ctx, &e);
    }
    if (unity_rc) {
        if (w) trn_geotiff_tiled_abort(w);
        return unity_rc;
    }
    if (w && trn_geotiff_tiled_close(w, &e)) return cli_fail(ctx, &e);
    /* What the engine tiles leave out, where the recipe has it. */
    if ((a->unity_dir || a->export_dir || a->gltf_dir) && water)
        cli_note(ctx, "the engine tiles have no water: the recipe's water is resolved over the "
                      "whole surface (generate without --tiles writes it)");
    if (a->gltf_dir && recipe->palette_json)
        cli_note(ctx, "the glTF tiles have no trees, rocks or grass: terrane mesh writes the "
                      "palette's instances for the whole grid");
    /* Every output lands together, then each level is checked as written. */
    size_t level_errors = 0, level_warnings = 0;
    if (beamng.levels) {
        int rc = cli_commit(ctx);
        const uint32_t kx = recipe->cells_x / a->tiles, kz = recipe->cells_z / a->tiles;
        for (uint32_t uz = 0; uz < kz && !rc; uz++)
            for (uint32_t ux = 0; ux < kx && !rc; ux++) {
                char dir[4200];
                level_tile_dir(a, ux, uz, kx, kz, dir, sizeof dir);
                size_t errors = 0, warnings = 0;
                rc = gen_level_check(ctx, dir, true, &errors, &warnings);
                level_errors += errors;
                level_warnings += warnings;
            }
        if (rc) return rc;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char peak[32], est[32];
    const uint32_t per_x = (recipe->cells_x + a->tiles) / a->tiles,
                   per_z = (recipe->cells_z + a->tiles) / a->tiles;
    const double seconds = now_s() - t0;
    const uint64_t resident = (uint64_t)ru.ru_maxrss * 1024u;
    char what[4200];
    if (a->out)
        snprintf(what, sizeof what, "wrote %s:", a->out);
    else
        snprintf(what, sizeof what, "generated");
    cli_note(ctx,
             "%s %u x %u samples in %u x %u tiles of %u, %.1f s, peak resident %s "
             "(%s estimated before the run)",
             what, recipe->cells_x + 1u, recipe->cells_z + 1u, per_x, per_z, a->tiles, seconds,
             size_text(resident, peak, sizeof peak), size_text(need, est, sizeof est));
    if (ctx->json) {
        json_t *summary = json_object();
        json_object_set_new(summary, "input", cli_json_string(a->recipe_path));
        json_object_set_new(summary, "input_format", json_string("recipe"));
        json_t *size = json_array();
        json_array_append_new(size, json_real(recipe->size_x));
        json_array_append_new(size, json_real(recipe->size_z));
        json_object_set_new(summary, "size", size);
        json_t *cells = json_array();
        json_array_append_new(cells, json_integer(recipe->cells_x));
        json_array_append_new(cells, json_integer(recipe->cells_z));
        json_object_set_new(summary, "cells", cells);
        json_object_set_new(
            summary, "samples",
            json_integer((json_int_t)(recipe->cells_x + 1u) * (json_int_t)(recipe->cells_z + 1u)));
        json_t *tiles = json_object();
        json_object_set_new(tiles, "size", json_integer(a->tiles));
        json_t *count = json_array();
        json_array_append_new(count, json_integer(per_x));
        json_array_append_new(count, json_integer(per_z));
        json_object_set_new(tiles, "count", count);
        json_object_set_new(tiles, "memory_budget", json_integer((json_int_t)a->memory));
        json_object_set_new(tiles, "estimated_bytes", json_integer((json_int_t)need));
        json_object_set_new(tiles, "peak_resident_bytes", json_integer((json_int_t)resident));
        json_object_set_new(tiles, "seconds", json_real(seconds));
        json_object_set_new(summary, "tiles", tiles);
        if (a->unity_dir) {
            /* As the whole grid's --export unity says it (one terrain's resolution and size;
             * tiles.count says how many). */
            json_t *u = json_object();
            json_object_set_new(u, "output", cli_json_string(a->unity_dir));
            json_object_set_new(u, "name", cli_json_string(unity.name));
            json_object_set_new(u, "resolution", json_integer(a->tiles + 1u));
            json_t *tsz = json_array();
            for (int k = 0; k < 3; k++)
                json_array_append_new(tsz, json_real(unity.tile_size[k]));
            json_object_set_new(u, "tile_size", tsz);
            json_object_set_new(u, "height_base", json_real(unity.height_base));
            json_object_set_new(u, "splat_maps", json_integer(unity.splat_maps));
            json_object_set_new(u, "layer_textures", json_integer(unity.layer_textures));
            json_object_set_new(u, "surface_materials", json_integer(unity.materials));
            if (unity.no_splats) json_object_set_new(u, "no_splats", json_string(unity.no_splats));
            if (recipe->palette_json) {
                /* The palette's instances, every terrain together. */
                json_object_set_new(u, "tree_count", json_integer((json_int_t)unity.trees));
                json_object_set_new(u, "detail_layers", json_integer(unity.detail_layers));
                json_object_set_new(u, "detail_instances",
                                    json_integer((json_int_t)unity.detail_points));
            }
            json_object_set_new(summary, "unity", u);
        }
        if (a->gltf_dir) {
            json_t *gj = json_object();
            json_object_set_new(gj, "output", cli_json_string(a->gltf_dir));
            json_object_set_new(gj, "name", cli_json_string(gltf.name));
            json_object_set_new(gj, "files", json_integer(gltf.files));
            json_object_set_new(gj, "chunk_cells", json_integer(gltf.chunk_cells));
            json_object_set_new(gj, "vertices", json_integer((json_int_t)gltf.vertices));
            json_object_set_new(gj, "triangles", json_integer((json_int_t)gltf.triangles));
            json_object_set_new(gj, "bytes", json_integer((json_int_t)gltf.bytes));
            json_t *step = json_array();
            json_array_append_new(step, json_real(recipe->size_x / recipe->cells_x * a->tiles));
            json_array_append_new(step, json_real(recipe->size_z / recipe->cells_z * a->tiles));
            json_object_set_new(gj, "tile_size", step);
            json_object_set_new(summary, "gltf", gj);
        }
        if (a->export_dir) {
            json_t *b = json_object();
            json_object_set_new(b, "levels", json_integer(beamng.levels));
            json_t *first = json_array();
            const uint32_t kx = recipe->cells_x / a->tiles, kz = recipe->cells_z / a->tiles;
            for (uint32_t uz = 0; uz < kz; uz++)
                for (uint32_t ux = 0; ux < kx; ux++) {
                    char dir[4200];
                    level_tile_dir(a, ux, uz, kx, kz, dir, sizeof dir);
                    json_array_append_new(first, cli_json_string(dir));
                }
            json_object_set_new(b, "level_dirs", first);
            json_object_set_new(b, "resolution", json_integer(a->tiles));
            json_object_set_new(b, "square_size", json_real(beamng.square_size));
            json_object_set_new(b, "surface_materials", json_integer(beamng.materials));
            json_object_set_new(b, "textures_mapped", json_integer(beamng.mapped));
            if (recipe->palette_json) {
                json_object_set_new(b, "forest_items",
                                    json_integer((json_int_t)beamng.forest_items));
                json_object_set_new(b, "ground_cover_instances",
                                    json_integer((json_int_t)beamng.cover_instances));
            }
            json_object_set_new(b, "validate_error_count", json_integer((json_int_t)level_errors));
            json_object_set_new(b, "validate_warning_count",
                                json_integer((json_int_t)level_warnings));
            json_object_set_new(summary, "beamng", b);
        }
        cli_print_json(summary);
    }
    if (level_errors)
        return cli_failf(ctx, "the levels have %zu validation error(s) (listed above)",
                         level_errors);
    return CLI_EXIT_OK;
}

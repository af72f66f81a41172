/* Runtime worlds: placed payloads answering world-space ground and water queries, and trackers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/runtime.h"

typedef struct placement {
    char *id;
    const trn_payload *payload;
    trn_transform t; /* rotation normalised */
    bool enabled;
    bool surface_blending; /* Terrain3D.surface_blending (default true) */
    char **exclusions; /* Terrain3D.scatter_exclusions, sorted (strcmp) for binary search */
    size_t exclusion_count;
} placement;

static void free_exclusions(placement *p)
{
    for (size_t k = 0; k < p->exclusion_count; k++)
        free(p->exclusions[k]);
    free(p->exclusions);
    p->exclusions = NULL;
    p->exclusion_count = 0;
}

struct trn_world {
    placement *items;
    uint32_t count, capacity;
};

void trn_transform_identity(trn_transform *t)
{
    if (!t) return;
    memset(t, 0, sizeof *t);
    t->rotation[3] = 1.0;
    t->scale[0] = t->scale[1] = t->scale[2] = 1.0;
}

static trn_status check_transform(const trn_transform *in, trn_transform *out, trn_error *err)
{
    if (!in) {
        trn_transform_identity(out);
        return TRN_OK;
    }
    *out = *in;
    for (int k = 0; k < 3; k++)
        if (!isfinite(in->translation[k]) || !isfinite(in->scale[k]) || in->scale[k] == 0.0)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "a placement needs a finite translation and finite, nonzero "
                                 "scales (axis %d: scale %g)",
                                 k, in->scale[k]);
    const double *q = in->rotation;
    const double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(len > 0.0) || !isfinite(len))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "a placement's rotation must be a finite, nonzero quaternion");
    for (int k = 0; k < 4; k++)
        out->rotation[k] = q[k] / len;
    return TRN_OK;
}

/* v rotated by the unit quaternion q (x, y, z, w); conj rotates by its inverse. */
static void rotate(const double q[4], bool conj, const double v[3], double out[3])
{
    const double s = conj ? -1.0 : 1.0;
    const double qx = s * q[0], qy = s * q[1], qz = s * q[2], qw = q[3];
    const double tx = 2.0 * (qy * v[2] - qz * v[1]);
    const double ty = 2.0 * (qz * v[0] - qx * v[2]);
    const double tz = 2.0 * (qx * v[1] - qy * v[0]);
    out[0] = v[0] + qw * tx + (qy * tz - qz * ty);
    out[1] = v[1] + qw * ty + (qz * tx - qx * tz);
    out[2] = v[2] + qw * tz + (qx * ty - qy * tx);
}

static void to_local(const trn_transform *t, const double w[3], double local[3])
{
    const double d[3] = {w[0] - t->translation[0], w[1] - t->translation[1],
                         w[2] - t->translation[2]};
    rotate(t->rotation, true, d, local);
    for (int k = 0; k < 3; k++)
        local[k] /= t->scale[k];
}

/* A point (translated) or a vector (not) from terrain-local into world space. */
static void to_world(const trn_transform *t, const double local[3], bool point, double w[3])
{
    const double s[3] = {local[0] * t->scale[0], local[1] * t->scale[1], local[2] * t->scale[2]};
    rotate(t->rotation, false, s, w);
    if (point)
        for (int k = 0; k < 3; k++)
            w[k] += t->translation[k];
}

/* A normal by the inverse transpose (R S^-1), made unit length again. */
static void normal_to_world(const trn_transform *t, const double n[3], double w[3])
{
    const double s[3] = {n[0] / t->scale[0], n[1] / t->scale[1], n[2] / t->scale[2]};
    rotate(t->rotation, false, s, w);
    const double len = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    for (int k = 0; k < 3; k++)
        w[k] = len > 0.0 ? w[k] / len : 0.0;
}

trn_status trn_world_new(trn_world **out, trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_world_new: out is required");
    *out = calloc(1, sizeof **out);
    return *out ? TRN_OK : trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
}

void trn_world_free(trn_world *world)
{
    if (!world) return;
    for (uint32_t k = 0; k < world->count; k++) {
        free(world->items[k].id);
        free_exclusions(&world->items[k]);
    }
    free(world->items);
    free(world);
}

static placement *find(const trn_world *world, const char *id)
{
    for (uint32_t k = 0; world && id && k < world->count; k++)
        if (strcmp(world->items[k].id, id) == 0) return &world->items[k];
    return NULL;
}

static trn_status not_found(trn_error *err, const char *id)
{
    return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1, "no placement '%.200s' in the world",
                         id ? id : "(null)");
}

trn_status trn_world_place(trn_world *world, const char *terrain_id, const trn_payload *payload,
                           const trn_transform *transform, trn_error *err)
{
    if (!world || !terrain_id || !payload)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_world_place: world, terrain_id and payload are required");
    if (find(world, terrain_id))
        return trn_error_set(err, TRN_ERR_CONFLICT, NULL, -1,
                             "the world already has a placement '%.200s'", terrain_id);
    trn_transform t;
    trn_status st = check_transform(transform, &t, err);
    if (st) return st;
    if (world->count == world->capacity) {
        const uint32_t cap = world->capacity ? world->capacity * 2u : 4u;
        placement *grown = realloc(world->items, cap * sizeof *grown);
        if (!grown) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        world->items = grown;
        world->capacity = cap;
    }
    const size_t n = strlen(terrain_id);
    char *id = malloc(n + 1u);
    if (!id) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    memcpy(id, terrain_id, n + 1u);
    placement *p = &world->items[world->count++];
    p->id = id;
    p->payload = payload;
    p->t = t;
    p->enabled = true;
    p->surface_blending = true;
    p->exclusions = NULL;
    p->exclusion_count = 0;
    return TRN_OK;
}

trn_status trn_world_set_transform(trn_world *world, const char *terrain_id,
                                   const trn_transform *transform, trn_error *err)
{
    placement *p = find(world, terrain_id);
    if (!p) return not_found(err, terrain_id);
    trn_transform t;
    trn_status st = check_transform(transform, &t, err);
    if (!st) p->t = t;
    return st;
}

trn_status trn_world_set_enabled(trn_world *world, const char *terrain_id, bool enabled,
                                 trn_error *err)
{
    placement *p = find(world, terrain_id);
    if (!p) return not_found(err, terrain_id);
    p->enabled = enabled;
    return TRN_OK;
}

trn_status trn_world_set_surface_blending(trn_world *world, const char *terrain_id,
                                         bool surface_blending, trn_error *err)
{
    placement *p = find(world, terrain_id);
    if (!p) return not_found(err, terrain_id);
    p->surface_blending = surface_blending;
    return TRN_OK;
}

trn_status trn_world_set_payload(trn_world *world, const char *terrain_id,
                                 const trn_payload *payload, trn_error *err)
{
    placement *p = find(world, terrain_id);
    if (!p) return not_found(err, terrain_id);
    if (!payload)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_world_set_payload: payload is required");
    p->payload = payload;
    return TRN_OK;
}

trn_status trn_world_remove(trn_world *world, const char *terrain_id, trn_error *err)
{
    placement *p = find(world, terrain_id);
    if (!p) return not_found(err, terrain_id);
    free(p->id);
    free_exclusions(p);
    const size_t at = (size_t)(p - world->items);
    memmove(p, p + 1, (world->count - at - 1u) * sizeof *p);
    world->count--;
    return TRN_OK;
}

uint32_t trn_world_count(const trn_world *world)
{
    return world ? world->count : 0;
}

static bool answers(const placement *p, const char *terrain_id)
{
    return p->enabled && (!terrain_id || strcmp(p->id, terrain_id) == 0);
}

bool trn_world_water_sample_at(const trn_world *world, const double position[3],
                               const char *terrain_id, trn_world_water_sample *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!world || !position) return false;
    for (uint32_t k = 0; k < world->count; k++) {
        const placement *p = &world->items[k];
        if (!answers(p, terrain_id)) continue;
        double local[3];
        to_local(&p->t, position, local);
        trn_water_sample s;
        if (!trn_payload_water_at(p->payload, local[0], local[1], local[2], &s)) continue;
        if (!out) return true;
        const double up[3] = {0.0, p->t.scale[1] < 0.0 ? -1.0 : 1.0, 0.0};
        out->terrain_id = p->id;
        out->body_id = s.body_id;
        out->kind = s.kind;
        to_world(&p->t, s.surface, true, out->surface);
        normal_to_world(&p->t, s.normal, out->normal);
        out->depth = s.depth * fabs(p->t.scale[1]);
        rotate(p->t.rotation, false, up, out->column_up);
        to_world(&p->t, s.flow_velocity, false, out->flow_velocity);
        out->underwater = s.underwater;
        return true;
    }
    return false;
}

bool trn_world_ground_at(const trn_world *world, const double position[3], const char *terrain_id,
                         trn_world_ground_sample *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!world || !position) return false;
    for (uint32_t k = 0; k < world->count; k++) {
        const placement *p = &world->items[k];
        if (!answers(p, terrain_id)) continue;
        double local[3], n[3];
        to_local(&p->t, position, local);
        const double h = trn_payload_height_at(p->payload, local[0], local[2]);
        if (isnan(h) || !trn_payload_normal_at(p->payload, local[0], local[2], n)) continue;
        if (!out) return true;
        const double at[3] = {local[0], h, local[2]};
        out->terrain_id = p->id;
        to_world(&p->t, at, true, out->point);
        normal_to_world(&p->t, n, out->normal);
        out->biome = trn_payload_biome_at(p->payload, local[0], local[2]);
        out->biome_name =
            out->biome >= 0 ? trn_payload_biome_name(p->payload, (uint32_t)out->biome) : NULL;
        out->biome_material =
            out->biome >= 0 ? trn_payload_biome_material(p->payload, (uint32_t)out->biome) : NULL;
        out->texture_scale =
            out->biome >= 0 ? trn_payload_biome_texture_scale(p->payload, (uint32_t)out->biome)
                            : 1.0;
        out->role = trn_payload_role_at(p->payload, local[0], local[2]);
        out->layer = trn_payload_layer_at(p->payload, local[0], local[2]);
        out->surface_blending = p->surface_blending;
        out->material =
            out->layer >= 0 ? trn_payload_layer_material(p->payload, (uint32_t)out->layer) : NULL;
        return true;
    }
    return false;
}

/* ---- trackers ---- */

/* A sample with its strings copied into the slot, so it outlives the world's placements. */
typedef struct kept_sample {
    trn_world_water_sample sample;
    const trn_world *world; /* identity only: never dereferenced */
    char *terrain_id;       /* owned, grown as needed */
    size_t terrain_id_capacity;
    char body_id[TRN_WATER_ID_MAX];
} kept_sample;

struct trn_water_tracker {
    char *filter;
    bool immersed;
    kept_sample slots[2];
    int current; /* the slot holding the current sample */
};

const char *trn_water_phase_name(trn_water_phase phase)
{
    switch (phase) {
    case TRN_WATER_ENTER:
        return "enter";
    case TRN_WATER_EXIT:
        return "exit";
    case TRN_WATER_STAY:
        return "stay";
    }
    return "unknown";
}

trn_status trn_water_tracker_new(const char *terrain_id, trn_water_tracker **out, trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_water_tracker_new: out is required");
    trn_water_tracker *t = calloc(1, sizeof *t);
    if (t && terrain_id) {
        const size_t n = strlen(terrain_id);
        t->filter = malloc(n + 1u);
        if (t->filter) memcpy(t->filter, terrain_id, n + 1u);
    }
    if (!t || (terrain_id && !t->filter)) {
        if (t) free(t);
        *out = NULL;
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    }
    *out = t;
    return TRN_OK;
}

void trn_water_tracker_free(trn_water_tracker *t)
{
    if (!t) return;
    free(t->slots[0].terrain_id);
    free(t->slots[1].terrain_id);
    free(t->filter);
    free(t);
}

/* Copy a sample into a slot; false when its terrain id cannot be copied (out of memory). */
static bool keep(kept_sample *slot, const trn_world *world, const trn_world_water_sample *s)
{
    const char *id = s->terrain_id ? s->terrain_id : "";
    const size_t n = strlen(id) + 1u;
    if (n > slot->terrain_id_capacity) {
        char *grown = realloc(slot->terrain_id, n);
        if (!grown) return false;
        slot->terrain_id = grown;
        slot->terrain_id_capacity = n;
    }
    memcpy(slot->terrain_id, id, n);
    slot->world = world;
    slot->sample = *s;
    snprintf(slot->body_id, sizeof slot->body_id, "%s", s->body_id ? s->body_id : "");
    slot->sample.terrain_id = slot->terrain_id;
    slot->sample.body_id = slot->body_id;
    return true;
}

static bool same_body(const kept_sample *a, const trn_world *world, const trn_world_water_sample *s)
{
    return a->world == world && strcmp(a->terrain_id, s->terrain_id ? s->terrain_id : "") == 0 &&
           strcmp(a->body_id, s->body_id ? s->body_id : "") == 0;
}

uint32_t trn_water_tracker_update(trn_water_tracker *t, const trn_world *world,
                                  const double position[3], trn_water_event events[2])
{
    if (!t || !events) return 0;
    trn_world_water_sample s;
    const bool in = trn_world_water_sample_at(world, position, t->filter, &s) && s.underwater;
    uint32_t n = 0;
    if (t->immersed && in && same_body(&t->slots[t->current], world, &s)) {
        keep(&t->slots[t->current], world, &s); /* the same id fits: cannot fail */
        events[n].phase = TRN_WATER_STAY;
        events[n++].sample = t->slots[t->current].sample;
        return n;
    }
    if (t->immersed) {
        /* The old sample stays in its slot for the exit event; the new one takes the other. */
        events[n].phase = TRN_WATER_EXIT;
        events[n++].sample = t->slots[t->current].sample;
        t->current ^= 1;
        t->immersed = false;
    }
    /* Out of memory for the id: not immersed (no enter now, so no exit later). */
    if (in && keep(&t->slots[t->current], world, &s)) {
        t->immersed = true;
        events[n].phase = TRN_WATER_ENTER;
        events[n++].sample = t->slots[t->current].sample;
    }
    return n;
}

bool trn_water_tracker_current(const trn_water_tracker *t, trn_world_water_sample *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!t || !t->immersed) return false;
    if (out) *out = t->slots[t->current].sample;
    return true;
}

void trn_water_tracker_reset(trn_water_tracker *t)
{
    if (t) t->immersed = false;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

trn_status trn_world_set_scatter_exclusions(trn_world *world, const char *terrain_id,
                                            const char *const *keys, size_t count, trn_error *err)
{
    placement *p = find(world, terrain_id);
    if (!p) return not_found(err, terrain_id);
    if (count && !keys)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter_exclusions: %zu keys announced, none given", count);
    char **copy = count ? calloc(count, sizeof *copy) : NULL;
    if (count && !copy) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    trn_status st = TRN_OK;
    for (size_t k = 0; k < count && !st; k++) {
        if (!keys[k] || !keys[k][0]) {
            st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                               "scatter_exclusions[%zu]: expected a nonempty placement key, "
                               "found %s",
                               k, keys[k] ? "\"\"" : "nothing");
            break;
        }
        const size_t n = strlen(keys[k]);
        if (!(copy[k] = malloc(n + 1u))) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
            break;
        }
        memcpy(copy[k], keys[k], n + 1u);
    }
    if (!st && count) {
        qsort(copy, count, sizeof *copy, cmp_key);
        for (size_t k = 1; k < count && !st; k++)
            if (strcmp(copy[k - 1], copy[k]) == 0)
                st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                   "scatter_exclusions: the key '%.200s' is listed twice", copy[k]);
    }
    if (st) {
        for (size_t k = 0; copy && k < count; k++)
            free(copy[k]);
        free(copy);
        return st;
    }
    free_exclusions(p);
    p->exclusions = copy;
    p->exclusion_count = count;
    return TRN_OK;
}

trn_status trn_world_instances(const trn_world *world, const char *terrain_id, size_t *indices,
                               size_t capacity, size_t *kept, trn_error *err)
{
    if (kept) *kept = 0;
    const placement *p = find(world, terrain_id);
    if (!p) return not_found(err, terrain_id);
    size_t count = 0, n = 0;
    const trn_instance *items = trn_payload_instances(p->payload, &count);
    for (size_t k = 0; k < count; k++) {
        trn_payload_rule rule;
        if (p->exclusion_count && trn_payload_rule_at(p->payload, items[k].rule, &rule)) {
            /* The key terrane scatter prints: "<rule id>/<cx>_<cz>". */
            char key[160];
            const char *want = key;
            snprintf(key, sizeof key, "%s/%lld_%lld", rule.id, (long long)items[k].cx,
                     (long long)items[k].cz);
            if (bsearch(&want, p->exclusions, p->exclusion_count, sizeof *p->exclusions, cmp_key))
                continue;
        }
        if (indices && n < capacity) indices[n] = k;
        n++;
    }
    if (kept) *kept = n;
    if (indices && n > capacity)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "placement '%.200s' keeps %zu instances, room for %zu", terrain_id, n,
                             capacity);
    return TRN_OK;
}

/* Stationeers terrain.dat reader and writer: pre-order voxel octree and vein section. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/cursor.h"
#include "core/fileio.h"
#include "terrane/stationeers.h"

#define VEIN_FIXED_BYTES 17u /* six int16, int32 IdHash, u8 minable count */
#define MINABLE_BYTES 5u
#define KNOWN_FLAGS (TRN_STATIONEERS_LEAF | TRN_STATIONEERS_MODIFIED)
#define KNOWN_TYPES 0x0fu

void trn_stationeers_limits_default(trn_stationeers_limits *limits)
{
    limits->max_depth = 14;
    limits->max_nodes = (uint64_t)1 << 31;
    limits->max_veins = 1u << 20;
    limits->accept_unknown_bits = false;
    limits->max_samples = TRN_STATIONEERS_MAX_SAMPLES_DEFAULT;
}

bool trn_stationeers_sniff(const uint8_t *data, size_t size)
{
    return data && size >= 5 && data[0] <= TRN_STATIONEERS_DEPTH_ABSURD && data[1] == 0 &&
           data[2] == 0 && data[3] == 0 && data[4] <= KNOWN_FLAGS;
}

void trn_stationeers_dispose(trn_stationeers_terrain *terrain)
{
    if (!terrain) return;
    free(terrain->nodes);
    free(terrain->veins);
    free(terrain->minables);
    memset(terrain, 0, sizeof *terrain);
}

/* "root node (depth 0)" or "node at depth 3 (path 7/0/2)": the child indices from the root. */
static const char *node_name(const uint8_t *child, uint32_t depth, char *buf, size_t size)
{
    if (depth == 0) {
        snprintf(buf, size, "root node (depth 0)");
        return buf;
    }
    size_t k = (size_t)snprintf(buf, size, "node at depth %u (path ", depth);
    for (uint32_t d = 0; d < depth && k + 4 < size; d++)
        k += (size_t)snprintf(buf + k, size - k, "%s%u", d ? "/" : "", child[d]);
    if (k + 2 < size) snprintf(buf + k, size - k, ")");
    return buf;
}

typedef struct dat_parse {
    trn_cursor c;
    const char *path;
    const trn_stationeers_limits *limits;
    trn_error *err;
} dat_parse;

static trn_status parse_octree(dat_parse *p, trn_stationeers_terrain *t)
{
    uint8_t child[TRN_STATIONEERS_DEPTH_ABSURD + 1];
    char name[256];
    uint32_t depth = 0;
    const size_t start = p->c.pos;
    for (;;) {
        size_t at = p->c.pos;
        uint8_t flags;
        if (!trn_cursor_u8(&p->c, &flags)) {
            /* Nothing after the 4-byte header: say so rather than name a node. */
            if (at == start)
                return trn_error_set(p->err, TRN_ERR_TRUNCATED, p->path, (int64_t)at,
                                     "terrain.dat truncated after MaxDepth at offset %zu: "
                                     "expected the flags byte of the root node (depth 0), found "
                                     "the end of the file",
                                     at);
            return trn_error_set(p->err, TRN_ERR_TRUNCATED, p->path, (int64_t)at,
                                 "octree: %s: expected its flags byte at offset %zu, found the "
                                 "end of the file",
                                 node_name(child, depth, name, sizeof name), at);
        }
        if ((flags & ~KNOWN_FLAGS) && !p->limits->accept_unknown_bits)
            return trn_error_set(p->err, TRN_ERR_FORMAT, p->path, (int64_t)at,
                                 "octree: %s: flags 0x%02x have bits other than IS_LEAF (0x01) "
                                 "and IS_MODIFIED (0x02)",
                                 node_name(child, depth, name, sizeof name), flags);
        if (t->node_count >= p->limits->max_nodes)
            return trn_error_set(p->err, TRN_ERR_LIMIT, p->path, (int64_t)at,
                                 "octree: more than %llu nodes (the limit); %s is one more",
                                 (unsigned long long)p->limits->max_nodes,
                                 node_name(child, depth, name, sizeof name));
        t->node_count++;
        if (!(flags & TRN_STATIONEERS_LEAF)) {
            if (depth >= t->max_depth)
                return trn_error_set(p->err, TRN_ERR_FORMAT, p->path, (int64_t)at,
                                     "octree: %s is a branch (flags 0x%02x) but depth %u = "
                                     "MaxDepth is a single voxel and must be a leaf",
                                     node_name(child, depth, name, sizeof name), flags, depth);
            t->branch_count++;
            child[depth++] = 0;
            continue;
        }
        const uint8_t *b = trn_cursor_take(&p->c, 2);
        if (!b)
            return trn_error_set(p->err, TRN_ERR_TRUNCATED, p->path, (int64_t)p->c.pos,
                                 "octree: %s (leaf): expected 2 bytes (density, node type) at "
                                 "offset %zu, found %zu (file ends)",
                                 node_name(child, depth, name, sizeof name), p->c.pos,
                                 trn_cursor_left(&p->c));
        if ((b[1] & ~KNOWN_TYPES) && !p->limits->accept_unknown_bits)
            return trn_error_set(p->err, TRN_ERR_FORMAT, p->path, (int64_t)(at + 2),
                                 "octree: %s (leaf): node type 0x%02x has bits other than "
                                 "Crust 1, Dirt 2, Macro 4, Bedrock 8",
                                 node_name(child, depth, name, sizeof name), b[1]);
        t->leaf_count++;
        /* Next sibling, climbing out of branches whose eight children are done. */
        for (;;) {
            if (depth == 0) {
                t->nodes_size = p->c.pos - start;
                return TRN_OK;
            }
            if (child[depth - 1] < 7) {
                child[depth - 1]++;
                break;
            }
            depth--;
        }
    }
}

static trn_status parse_veins(dat_parse *p, trn_stationeers_terrain *t)
{
    size_t at = p->c.pos;
    int32_t count;
    if (!trn_cursor_i32le(&p->c, &count))
        return trn_error_set(p->err, TRN_ERR_TRUNCATED, p->path, (int64_t)at,
                             "vein section: expected the int32 vein count at offset %zu, found "
                             "%zu bytes (file ends; the section is present even with no veins)",
                             at, trn_cursor_left(&p->c));
    if (count < 0)
        return trn_error_set(p->err, TRN_ERR_FORMAT, p->path, (int64_t)at,
                             "vein section: vein count %d is negative", count);
    if ((uint32_t)count > p->limits->max_veins)
        return trn_error_set(p->err, TRN_ERR_LIMIT, p->path, (int64_t)at,
                             "vein section: %d veins, more than the limit %u", count,
                             p->limits->max_veins);
    if (count == 0) return TRN_OK;
    /* Never allocate more veins than the bytes left could hold. */
    size_t cap = trn_cursor_left(&p->c) / VEIN_FIXED_BYTES + 1;
    if (cap > (size_t)count) cap = (size_t)count;
    t->veins = calloc(cap, sizeof *t->veins);
    if (!t->veins)
        return trn_error_set(p->err, TRN_ERR_NO_MEMORY, p->path, (int64_t)at,
                             "vein section: no memory for %zu veins", cap);
    size_t minable_cap = 0;
    for (uint32_t v = 0; v < (uint32_t)count; v++) {
        size_t vat = p->c.pos;
        const uint8_t *b = trn_cursor_take(&p->c, VEIN_FIXED_BYTES);
        if (!b || v >= cap)
            return trn_error_set(p->err, TRN_ERR_TRUNCATED, p->path, (int64_t)vat,
                                 "vein section: vein %u of %d: expected %u bytes (positions, "
                                 "IdHash, minable count) at offset %zu, found %zu (file ends)",
                                 v, count, VEIN_FIXED_BYTES, vat, trn_cursor_left(&p->c));
        trn_stationeers_vein *vein = &t->veins[v];
        for (int k = 0; k < 3; k++) {
            vein->world_position[k] = (int16_t)(uint16_t)(b[2 * k] | (b[2 * k + 1] << 8));
            vein->cluster_position[k] = (int16_t)(uint16_t)(b[6 + 2 * k] | (b[6 + 2 * k + 1] << 8));
        }
        vein->id_hash = (int32_t)((uint32_t)b[12] | ((uint32_t)b[13] << 8) |
                                  ((uint32_t)b[14] << 16) | ((uint32_t)b[15] << 24));
        vein->minable_count = b[16];
        vein->first_minable = t->minable_count;
        t->vein_count = v + 1;
        for (uint32_t m = 0; m < vein->minable_count; m++) {
            size_t mat = p->c.pos;
            const uint8_t *mb = trn_cursor_take(&p->c, MINABLE_BYTES);
            if (!mb)
                return trn_error_set(p->err, TRN_ERR_TRUNCATED, p->path, (int64_t)mat,
                                     "vein section: vein %u, minable %u of %u: expected %u "
                                     "bytes (X, Y, Z, ParentIndex, IsActive) at offset %zu, "
                                     "found %zu (file ends)",
                                     v, m, vein->minable_count, MINABLE_BYTES, mat,
                                     trn_cursor_left(&p->c));
            if (t->minable_count == minable_cap) {
                size_t next = minable_cap ? minable_cap * 2 : 64;
                trn_stationeers_minable *grown = realloc(t->minables, next * sizeof *grown);
                if (!grown)
                    return trn_error_set(p->err, TRN_ERR_NO_MEMORY, p->path, (int64_t)mat,
                                         "vein section: no memory for %zu minables", next);
                t->minables = grown;
                minable_cap = next;
            }
            trn_stationeers_minable *mn = &t->minables[t->minable_count++];
            mn->x = mb[0];
            mn->y = mb[1];
            mn->z = mb[2];
            mn->parent_index = mb[3];
            mn->is_active = mb[4];
        }
    }
    return TRN_OK;
}

trn_status trn_stationeers_parse(const uint8_t *data, size_t size, const char *path,
                                 const trn_stationeers_limits *limits,
                                 trn_stationeers_terrain *terrain, trn_error *err)
{
    memset(terrain, 0, sizeof *terrain);
    trn_stationeers_limits defaults;
    if (!limits) {
        trn_stationeers_limits_default(&defaults);
        limits = &defaults;
    }
    dat_parse p = {{0}, path, limits, err};
    trn_cursor_init(&p.c, data, data ? size : 0);
    int32_t max_depth;
    if (!trn_cursor_i32le(&p.c, &max_depth))
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, 0,
                             "header: expected the int32 MaxDepth (4 bytes), found %zu bytes",
                             data ? size : 0);
    if (max_depth < 0 || (uint32_t)max_depth > TRN_STATIONEERS_DEPTH_ABSURD)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 0,
                             "header: MaxDepth %d is not a terrain depth (expected 0..%u; "
                             "Stationeers worlds use 10 to 12): not a terrain.dat?",
                             max_depth, TRN_STATIONEERS_DEPTH_ABSURD);
    if ((uint32_t)max_depth > limits->max_depth)
        return trn_error_set(err, TRN_ERR_LIMIT, path, 0,
                             "header: MaxDepth %d (%llu voxels a side) is over the limit %u",
                             max_depth, 1ull << max_depth, limits->max_depth);
    /* (2^d)^2 fits: d <= 24 here. */
    const uint64_t samples = (uint64_t)1 << (2 * max_depth);
    if (limits->max_samples && samples > limits->max_samples)
        return trn_error_set(err, TRN_ERR_LIMIT, path, 0,
                             "header: MaxDepth %d means a heightfield of %llu x %llu = %llu "
                             "samples, over the limit of %llu samples (about %u bytes each "
                             "when converted); raise the limit (terrane: --max-samples N) if "
                             "the memory is there",
                             max_depth, 1ull << max_depth, 1ull << max_depth,
                             (unsigned long long)samples, (unsigned long long)limits->max_samples,
                             TRN_STATIONEERS_SAMPLE_BYTES);
    trn_stationeers_terrain t;
    memset(&t, 0, sizeof t);
    t.max_depth = (uint32_t)max_depth;
    trn_status st = parse_octree(&p, &t);
    if (st == TRN_OK) st = parse_veins(&p, &t);
    if (st == TRN_OK && trn_cursor_left(&p.c) > 0)
        st = trn_error_set(err, TRN_ERR_TRAILING_DATA, path, (int64_t)p.c.pos,
                           "%zu bytes after the vein section (it ends at offset %zu)",
                           trn_cursor_left(&p.c), p.c.pos);
    if (st == TRN_OK && t.nodes_size) {
        t.nodes = malloc(t.nodes_size);
        if (!t.nodes)
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, 4, "octree: no memory for %zu bytes",
                               t.nodes_size);
        else
            memcpy(t.nodes, data + 4, t.nodes_size);
    }
    if (st) {
        trn_stationeers_dispose(&t);
        return st;
    }
    *terrain = t;
    return TRN_OK;
}

trn_status trn_stationeers_read(const char *path, const trn_stationeers_limits *limits,
                                trn_stationeers_terrain *terrain, trn_error *err)
{
    memset(terrain, 0, sizeof *terrain);
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st) return st;
    st = trn_stationeers_parse(mf.data, mf.size, path, limits, terrain, err);
    trn_mapped_file_close(&mf);
    return st;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

trn_status trn_stationeers_encode(const trn_stationeers_terrain *terrain, uint8_t **out,
                                  size_t *out_size, trn_error *err)
{
    *out = NULL;
    *out_size = 0;
    if (!terrain || terrain->max_depth > TRN_STATIONEERS_DEPTH_ABSURD ||
        (terrain->nodes_size && !terrain->nodes) || (terrain->vein_count && !terrain->veins))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stationeers_encode: no terrain, or MaxDepth over %u",
                             TRN_STATIONEERS_DEPTH_ABSURD);
    if (terrain->vein_count > INT32_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stationeers_encode: %u veins do not fit the int32 count",
                             terrain->vein_count);
    size_t total = 0;
    bool ok = trn_add_size(8, terrain->nodes_size, &total);
    for (uint32_t v = 0; ok && v < terrain->vein_count; v++) {
        const trn_stationeers_vein *vein = &terrain->veins[v];
        if (vein->first_minable > terrain->minable_count ||
            vein->minable_count > terrain->minable_count - vein->first_minable)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stationeers_encode: vein %u's minables %zu..%zu are past the "
                                 "%zu minables",
                                 v, vein->first_minable, vein->first_minable + vein->minable_count,
                                 terrain->minable_count);
        ok = trn_add_size(total, VEIN_FIXED_BYTES + (size_t)vein->minable_count * MINABLE_BYTES,
                          &total);
    }
    if (!ok)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "stationeers_encode: the file size overflows");
    uint8_t *buf = malloc(total);
    if (!buf)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "stationeers_encode: no memory for %zu bytes", total);
    uint8_t *p = buf;
    put_u32(p, terrain->max_depth);
    p += 4;
    if (terrain->nodes_size) memcpy(p, terrain->nodes, terrain->nodes_size);
    p += terrain->nodes_size;
    put_u32(p, terrain->vein_count);
    p += 4;
    for (uint32_t v = 0; v < terrain->vein_count; v++) {
        const trn_stationeers_vein *vein = &terrain->veins[v];
        for (int k = 0; k < 3; k++)
            put_u16(p + 2 * k, (uint16_t)vein->world_position[k]);
        for (int k = 0; k < 3; k++)
            put_u16(p + 6 + 2 * k, (uint16_t)vein->cluster_position[k]);
        put_u32(p + 12, (uint32_t)vein->id_hash);
        p[16] = vein->minable_count;
        p += VEIN_FIXED_BYTES;
        for (uint32_t m = 0; m < vein->minable_count; m++) {
            const trn_stationeers_minable *mn = &terrain->minables[vein->first_minable + m];
            p[0] = mn->x;
            p[1] = mn->y;
            p[2] = mn->z;
            p[3] = mn->parent_index;
            p[4] = mn->is_active;
            p += MINABLE_BYTES;
        }
    }
    *out = buf;
    *out_size = total;
    return TRN_OK;
}

trn_status trn_stationeers_write(const char *path, const trn_stationeers_terrain *terrain,
                                 trn_error *err)
{
    uint8_t *buf;
    size_t size;
    trn_status st = trn_stationeers_encode(terrain, &buf, &size, err);
    if (st) return st;
    st = trn_file_write_atomic(path, buf, size, err);
    free(buf);
    return st;
}

void trn_stationeers_iter_init(trn_stationeers_iter *it, const trn_stationeers_terrain *terrain)
{
    memset(it, 0, sizeof *it);
    it->terrain = terrain;
}

bool trn_stationeers_iter_next(trn_stationeers_iter *it, trn_stationeers_node *node)
{
    const trn_stationeers_terrain *t = it->terrain;
    if (!t || !t->nodes || it->pos >= t->nodes_size) return false;
    while (it->top > 0 && it->stack[it->top - 1].next_child == 8)
        it->top--;
    uint32_t x = 0, y = 0, z = 0, size = 1u << t->max_depth;
    uint8_t k = 0;
    if (it->top > 0) {
        trn_stationeers_iter_frame *f = &it->stack[it->top - 1];
        k = f->next_child++;
        size = f->size >> 1;
        x = f->x + (k & 1u) * size;
        y = f->y + ((k >> 1) & 1u) * size;
        z = f->z + ((k >> 2) & 1u) * size;
    } else if (it->pos > 0) {
        return false; /* the root's subtree is done; nothing else is a node */
    }
    uint8_t flags = t->nodes[it->pos];
    node->depth = it->top;
    node->x = x;
    node->y = y;
    node->z = z;
    node->size = size;
    node->flags = flags;
    node->child_index = k;
    node->offset = it->pos + 4;
    if (flags & TRN_STATIONEERS_LEAF) {
        if (t->nodes_size - it->pos < 3) return false;
        node->density = t->nodes[it->pos + 1];
        node->type = t->nodes[it->pos + 2];
        it->pos += 3;
    } else {
        if (size <= 1 || it->top > TRN_STATIONEERS_DEPTH_ABSURD) return false;
        node->density = 0;
        node->type = 0;
        it->pos += 1;
        it->stack[it->top].x = x;
        it->stack[it->top].y = y;
        it->stack[it->top].z = z;
        it->stack[it->top].size = size;
        it->stack[it->top].next_child = 0;
        it->top++;
    }
    return true;
}

void trn_stationeers_stats_compute(const trn_stationeers_terrain *terrain,
                                   trn_stationeers_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    if (!terrain) return;
    trn_stationeers_iter it;
    trn_stationeers_iter_init(&it, terrain);
    trn_stationeers_node n;
    while (trn_stationeers_iter_next(&it, &n)) {
        bool modified = (n.flags & TRN_STATIONEERS_MODIFIED) != 0;
        if (!(n.flags & TRN_STATIONEERS_LEAF)) {
            stats->branches++;
            stats->modified_branches += modified;
            continue;
        }
        const double voxels = (double)n.size * (double)n.size * (double)n.size;
        stats->leaves++;
        stats->modified_leaves += modified;
        if (modified) stats->modified_voxels += voxels;
        stats->density_leaves[n.density]++;
        stats->type_leaves[n.type]++;
        stats->type_voxels[n.type] += voxels;
        stats->leaves_by_depth[n.depth]++;
        if (n.density >= TRN_STATIONEERS_SOLID) stats->solid_voxels += voxels;
    }
    stats->veins = terrain->vein_count;
    stats->minables = terrain->minable_count;
    for (size_t m = 0; m < terrain->minable_count; m++)
        stats->active_minables += terrain->minables[m].is_active != 0;
}

/* ---- world sizes: base terrain files -------------------------------------------------------- */

uint32_t trn_stationeers_world_files(uint32_t max_depth)
{
    if (max_depth < TRN_STATIONEERS_BASE_DEPTH || max_depth > 14) return 0;
    return 1u << (3u * (max_depth - TRN_STATIONEERS_BASE_DEPTH));
}

/* The end of the subtree stored from pos (already checked by the parser), and its counts. */
static size_t subtree_end(const uint8_t *nodes, size_t pos, uint64_t *branches, uint64_t *leaves)
{
    uint64_t pending = 1;
    while (pending) {
        pending--;
        if (nodes[pos] & TRN_STATIONEERS_LEAF) {
            (*leaves)++;
            pos += 3;
        } else {
            (*branches)++;
            pos += 1;
            pending += 8;
        }
    }
    return pos;
}

trn_status trn_stationeers_world_part(const trn_stationeers_terrain *world, uint32_t index,
                                      trn_stationeers_terrain *part, uint32_t corner[3],
                                      trn_error *err)
{
    memset(part, 0, sizeof *part);
    const uint32_t files = world ? trn_stationeers_world_files(world->max_depth) : 0;
    if (!world || !world->nodes || !files)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "world part: a world is MaxDepth %u to 14, not %u",
                             TRN_STATIONEERS_BASE_DEPTH, world ? world->max_depth : 0);
    if (index >= files)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "world part: a MaxDepth-%u world has %u base files, not file %u",
                             world->max_depth, files, index);
    if (world->vein_count)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "world part: the world holds %u veins; splitting it would have to "
                             "place each in a block, which the format notes do not say how",
                             world->vein_count);
    const uint32_t levels = world->max_depth - TRN_STATIONEERS_BASE_DEPTH;
    uint32_t c[3] = {0, 0, 0};
    size_t pos = 0;
    bool inside_leaf = false;
    for (uint32_t m = 1; m <= levels; m++) {
        const uint32_t child = (index >> (3u * (levels - m))) & 7u;
        const uint32_t half = 1u << (world->max_depth - m);
        c[0] += (child & 1u) * half;
        c[1] += (child >> 1 & 1u) * half;
        c[2] += (child >> 2 & 1u) * half;
        if (inside_leaf) continue;
        if (world->nodes[pos] & TRN_STATIONEERS_LEAF) {
            inside_leaf = true; /* the block is part of this leaf */
            continue;
        }
        pos++;
        uint64_t b = 0, l = 0;
        for (uint32_t k = 0; k < child; k++)
            pos = subtree_end(world->nodes, pos, &b, &l);
    }
    uint64_t branches = 0, leaves = 0;
    size_t end;
    uint8_t leaf[3];
    const uint8_t *from;
    if (inside_leaf) {
        leaf[0] = world->nodes[pos];
        leaf[1] = world->nodes[pos + 1];
        leaf[2] = world->nodes[pos + 2];
        from = leaf;
        end = 3;
        leaves = 1;
    } else {
        from = world->nodes + pos;
        end = subtree_end(world->nodes, pos, &branches, &leaves) - pos;
    }
    part->nodes = malloc(end);
    if (!part->nodes)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "world part: no memory for %zu node bytes", end);
    memcpy(part->nodes, from, end);
    part->nodes_size = end;
    part->max_depth = TRN_STATIONEERS_BASE_DEPTH;
    part->branch_count = branches;
    part->leaf_count = leaves;
    part->node_count = branches + leaves;
    if (corner) memcpy(corner, c, sizeof c);
    return TRN_OK;
}

/* Built-in presets, terrain_preset project assets, and merging a preset into a recipe. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/textbuf.h"
#include "core/fileio.h"
#include "recipe/assets.h"
#include "recipe/recipe_internal.h"
#include "terrane/presets.h"

/* ---- built-in presets ------------------------------------------------------------------
 * Bare recipes, read by the ordinary recipe parser so they obey the same grammar. Each carries
 * a graph that reads left to right (x grows along the flow), with comment nodes on shape,
 * appearance and output: the graph is what generates. The grammar still wants a default
 * landform (painted regions blend toward landforms), so each keeps one with the settings of its
 * main noise node. Version 2: the graphs (version 1 was landforms alone). The island carries an
 * Ocean Water body and the river a River Route. Rolling hills and mountain range (version 3),
 * basin and drainage river (version 4) evolve their river networks with a Stream Power node;
 * their next versions (4, 5, 5, 5) add fine steps on larger output grids. The versions after
 * (3, 3, 5, 6, 6, 3, 4, 6) describe places at their real size, in metres: a 512 m building
 * site, 1.5 km of dunes, 2 km of rolling hills, a 12.8 km mountain range, a 4 km basin and
 * plateau, an 8 km island, a 2 km river valley, each on a default grid of 8-50 m cells (64 to
 * 256 cells a side) fine enough for every biome band to show. Every length (noise features,
 * warps, masks, water, rule bands) is in metres, slopes are those of real land, and the
 * evolution grids are given in metres (`evolution_cell`), so a regridded preset keeps its
 * valleys: --resolution changes detail, not the landscape. The same versions of the evolving
 * presets (5, 6, 6, 6) also route their water free of the grid's directions (Rho8) and bring
 * coarse runs back by the warped spline (the Stream Power node's new defaults). Their next
 * versions (6, 7, 7, 7) lay down sediment where slopes drop (the node's deposition G: 1 in
 * the mountain range and the basin, whose valleys now fill and widen downstream into
 * floodplains and fans at the lake; 0.5 in the river valley, whose floor is then graded
 * downstream instead of filled flat, so its river no longer runs down a straight trough) and,
 * but for the river valley (whose River Route must reach the edge where its valley does), keep
 * base level only where valleys meet the map edge (border outlets), so the land no longer
 * ramps down to every edge; the basin's base level rises from its 64 m bed to 76 m, so the
 * shelving floor under the lake stays smooth instead of evolving into a stair-step of
 * coarse-cell terraces. The next versions of the four that did not evolve (building site 4,
 * dunes 4, plateau 4, island 5) drain as real land does, measured at their own grids and at
 * 1025^2: their noise alone held closed hollows (3-16% of the dry ground) and no river network
 * (drainage-area exponent 0.6-1.2 against 0.38-0.58 for real land), so each now runs a Stream
 * Power node with its evolution grid in metres. The building site's ground gets shallow swales
 * that run around its pad, which is now smaller than the site's swales (an exact 125 x 120 m
 * rectangle: the flat pad's own routing is no river network), raised on a low embankment so it
 * dams no swale, and turned 16 degrees: a plot follows its roads, not the map's north, and the
 * axis-aligned pad's 40 m blend band was what made 1.55 times the chance share of its slopes
 * face multiples of 45 degrees. The dunes get shallow wadis joining their floors; the plateau's
 * mesa is cut back by canyons and its cap rock levelled after; the island's ridges and valleys
 * evolve before its coast is blended in. The dunes' and plateau's next versions (5, 5) keep base
 * level only where their valleys meet the map edge (border outlets, as the mountain range):
 * with the whole border as base level, the land beside every edge drained straight to it and
 * a frame of short gullies and a divide parallel to the edge outlined the map. The basin's next version (8) keeps the bed under its
 * lake as the hollow left it: base level at the 96 m lake level instead of 76 m, and no droplet
 * erosion after the evolution (its droplets and the evolution's comb of short gullies along the
 * 76 m contour scored the submerged bed with radial spokes around the lake). The dunes' next
 * version (6) is wind-blown sand instead of stretched noise cut by water: a Dune Field node
 * (gentle stoss slopes, slip faces at the angle of repose, crests that bend and fork, open
 * interdune floors) with no landscape evolution, so no gullies and no line along the edge.
 * The mountain range's next version (8) evolves through rock of varied strength (the node's
 * rock_variation 2, diffusion 0.1): with uniform rock, incision and creep cut valleys of one
 * width (the length of creep over incision) and on the range's planar flanks they ran side by
 * side, a ladder of parallel valleys four to five evolution cells apart, which the
 * amplification magnified into broad evenly spaced valleys at 1025^2 and beyond. Its next
 * version (9) comes back from its 50 m evolution grid through every grid twice as fine
 * (cascade_steps 6), so tributary valleys of each smaller size are cut into the larger ones
 * (at 2049^2 the power spectrum's slope goes from -4.10 to -3.69, the San Gabriel SRTM's
 * -3.68), and its droplets no longer follow the drainage (no drainage input) and live 20 steps
 * instead of 30: following the fine steps' one-cell rills they deepened them into an even
 * corduroy 20-25 m apart at 2049^2 and 4097^2. The basin's next version (9) comes back
 * through its grids the same way (1025^2: spectrum slope -4.40 -> -3.46, the hills cut by
 * side valleys down to the shore instead of smooth slopes), and the coastal island's (6) too
 * (1025^2: -3.52 -> -2.96). The mountain range's next version (10) runs its droplets on a
 * 12.5 m grid (the Erosion node's droplet_cell) whatever the output grid: their brush, steps and
 * density were in samples, so at 2049^2 and 4097^2 they cut an even corduroy of rills two to
 * four times closer than at 1025^2 (hillslope_texture's rill peak at 2049^2 20.6 -> 13.1; the
 * gullies per kilometre at 4097^2, averaged to 12.5 m, now those of 1025^2). Output grids of
 * 12.5 m cells or coarser (1025^2 and the default 257^2) are unchanged. The plateau's next
 * version (6) comes back through its grids too (cascade_steps 6): at 1025^2 the lowland's
 * straight side-by-side rills become branching valleys (its default 129^2 grid is as it was).
 * The coastal island's next version (7) evolves the island after it is raised out of the sea
 * floor instead of before: its hills had been evolved as if the land went on and then cut by
 * the outline's blend, so they stopped at the shore as a smooth skirt. Now the sea floor (-20 m,
 * was -180) is the evolution's base level, so ridges and valleys run down to the water and the
 * sea drowns the valley mouths into bays; the outline is 12% smaller and warped further (900 m)
 * so the drowned coast still stays off every border. The coastal island's next version (8) gets
 * a coastal plain and a shelf: its hills had ended at the water along the whole coast and its
 * sea floor was one flat plane. Now a low plain is raised out of a shallow shelf and the hills
 * out of the plain, each through its own warped outline; the evolution uplifts the hills alone
 * (their outline as its uplift mask), holds the sea at its surface and lays down sediment (G 2),
 * so the rivers leave the hills through fans onto a plain graded to the sea, and the bed under
 * the sea is the raised surface itself, which shelves from the beach to some 70 m at the edges.
 * The plateau's next version (7) levels its cap rock toward 250 m with amount 0.92 instead of
 * flat (the cap keeps about 12 m of gently rolling relief and the shallow heads of its canyons,
 * 84% of it had been dead flat at 1025^2) and warps the mesa's outline twice as far (400 m, in
 * wiggles up to 800 m), so no straight side of its polygon shows along the rim. The mountain
 * range's next version (11) creeps slowest in the weakest rock and fastest in the strongest
 * (the node's rock_creep -1): with one creep rate its side valleys kept one spacing of five to
 * six 50 m cells along the long flanks, which every grid finer than the evolution's brought
 * back as the strongest repeat of the curvature (2.09 times a shuffled profile at 1025^2; the
 * seeds 1-5 of the recipe 1.22-3.91); now 1.68, and 1.46-1.69 for seeds 1-5. The
 * mountain range's next version (12) rises at one rate over the whole range (uplift_shape
 * uniform, was input) and lays down half the sediment (deposition 0.5, was 1): its valleys
 * sat on the ridged noise's broad low ground, which rose at a fifth of the crests' rate, so
 * their rivers graded to a fifth of the steepness and the deposition filled those gentle
 * reaches into broad smooth floors. Measured at 30 m cells beside the San Gabriel SRTM
 * (bench/valley_profile.py at 1025^2): the share of the ground within 60 m of the larger
 * channels gentler than 10 degrees 0.63 -> 0.43 (the DEM 0.33), the median slope one cell from
 * a channel 8.6 -> 11.7 degrees (14.7), the valley floor 10 -> 5 cells wide (5). With no
 * deposition at all the floors are as V-shaped, but on the default 50 m grid the side valleys
 * then repeat (periodic curvature 2.35) and the edge stands as a rim; the uniform uplift does
 * the work (G 1 with it: 0.43 too), G 0.5 keeps the side valleys' spacing varied (ladder peak
 * 6.2, 7.4 at G 1). The coastal island's next version (9) warps its coast and hills outlines in
 * wiggles up to 1.1 and 1.0 km (were 1.8 and 1.5): one wiggle on each 2.3 km side of the
 * seven-point outline left the coast and the hills' edge a heptagon of long straight sides at
 * 1025^2; now bays and headlands break every side (the shelf's outline is as it was: warped
 * finer, its sea floor turned rough and the island square). The building site's and the river
 * valley's next versions (5, 8) evolve on an open border (the land runs on past the map's edge
 * and the run is cut back to it): with the border as base level following the land down, the
 * land beside every edge ramped smoothly down to it, a flat band 6-12 samples wide along each
 * edge at 1025^2 (the mean height difference along an edge's outer 2 lines 0.43-0.66 of that
 * along the next 22; now 0.84-1.10). The building site's evolution reads m = 0.45 (was 0.5), which
 * keeps its drainage-area exponent in the range of real networks on the open border (0.60 at 0.5,
 * 0.54 at 0.45). The river valley's River Route lays a 16 m channel 2.5 m deep (was 24 m, 4 m):
 * the wider bed, flat across, cut its walls back into the evolved V-shaped valley's sides, so the
 * river read as a trench with steep walls rather than a stream in the valley's bottom (2 m deep,
 * its water stood above a dry bank sample on the default grid). The plateau's next version (8)
 * raises its mesa through a 640 m falloff (was 384 m): the mask's falloff beyond the outline's
 * western corner is a circle about it, and its toe met the flat lowland there with a sharp bend,
 * so the evolution gathered the water off the escarpment into a valley running round the mesa's
 * foot, with a smooth ridge outside it: a ring drawn in the lowland west of the mesa (along the
 * 1025^2 map's row 460 the valley stood 43 m below that ridge, now 10 m). The mountain range's next
 * version (14) evolves with four times the node's default erodibility against twice its uplift,
 * through rock patches of 1.5 km (were 2): valley spacing goes with creep over incision, so with
 * creep as it was its valleys start within a few hundred metres of every divide, where long
 * smooth faces stood between widely spaced valleys (at 30 m cells beside the San Gabriel SRTM:
 * power spectrum slope -4.51 -> -3.68, the DEM's -3.77 over the same 12.8 km; valley axes per
 * km 2.44 -> 2.90, the DEM's 2.70); its noise stands 1400 m instead of 1550 (1250 m of relief,
 * the low end of the DEM's 12.8 km windows) so its median slope stays near 25 degrees (24.4;
 * 27.5 at 1550 m), and the snow and alpine meadow lines come down with it.
 * The basin's next version (10) evolves on an open border too: with border outlets the land
 * between the outlets drained along the walls, a smooth strip along the edges (the edge texture
 * on its own grid 0.59; now 0.96). Its lake, the sea level of its evolution, is still where its
 * streams end. (The rolling hills keep border outlets: an open border's fine steps do not yet run
 * in tiles, and that preset is the one generated out of core at 16385^2.) */

typedef struct builtin {
    const char *id;
    const char *name;
    const char *description;
    double version;
    const char *text;
} builtin;

static const builtin builtins[] = {
    {"builtin://terrain/flat-building-site", "Flat building site",
     "A level pad of packed earth (an exact 125 x 120 m plot turned 16 degrees, held flat "
     "at 10 m by a polygon mask on a low embankment) in gently undulating ground with 12 m "
     "of relief over a 512 m site, drained by shallow branching swales that run around it: "
     "gravel on the embankment and steep banks, grass around. A site to build on.",
     5,
     "{\"size\": [512, 512], \"resolution\": [64, 64], \"seed\": 101, \"sea_level\": -40, "
     "\"default_landform\": \"level\", \"landforms\": {\"level\": {\"height_variation\": "
     "12, \"feature_size\": 320, \"roughness\": 0.45, \"octaves\": 6}}, \"default_biome\": "
     "\"packed_earth\", \"biomes\": {\"packed_earth\": {\"color\": [0.55, 0.47, 0.36, 1]}, "
     "\"gravel\": {\"color\": [0.6, 0.6, 0.58, 1]}, \"grass\": {\"color\": [0.42, 0.6, "
     "0.3, 1]}}, \"rules\": [{\"id\": \"banks\", \"biome\": \"gravel\", \"priority\": 20, "
     "\"slope\": [12, 90]}, {\"id\": \"swales\", \"biome\": \"grass\", \"priority\": 10, "
     "\"elevation\": [-1000, 9.8]}, {\"id\": \"rises\", \"biome\": \"grass\", "
     "\"priority\": 10, \"elevation\": [10.2, 1000]}], \"graph\": {\"format_version\": 1, "
     "\"output\": \"output\", \"nodes\": [{\"id\": \"about_shape\", \"type\": \"comment\", "
     "\"position\": [0, -200], \"params\": {\"text\": \"Shape: Ground noise (12 m of "
     "gentle relief, 320 m features, 6 octaves) on a 512 m square site. Pad level is a "
     "flat base at 10 m; Pad outline is a polygon mask, the building plot: an exact 125 x "
     "120 m rectangle turned 16 degrees, with a 16 m falloff (the embankment). Level pad "
     "blends the ground toward the pad, then Evolve (Stream Power: incision against creep "
     "over 40 steps, read at a 30 m reference cell on a grid of 2 m cells whatever the "
     "output grid, uplift following the ground so its shape stays, the land running on "
     "past the map's edge as if the site were cut from a larger one) gives the ground "
     "shallow branching swales that run around the raised pad, Soften rounds them with "
     "light droplet erosion, Relevel sets the plot exactly flat again and Drain fills what "
     "is left of the hollows against the embankment (flat, as silt would), so every drop "
     "leaves the site. Move the polygon's points to move the plot; keep it above the "
     "swales beside it.\"}}, {\"id\": \"ground\", \"type\": \"noise_terrain\", "
     "\"position\": [0, 0], \"params\": {\"profile\": \"fbm\", \"height_variation\": 12, "
     "\"feature_size\": 320, \"roughness\": 0.45, \"octaves\": 6}}, {\"id\": "
     "\"pad_level\", \"type\": \"flat_terrain\", \"position\": [0, 200], \"params\": "
     "{\"height\": 10}}, {\"id\": \"pad_outline\", \"type\": \"polygon_mask\", "
     "\"position\": [240, 200], \"params\": {\"points\": [[212.8, 180.9], [332.8, 215.9], "
     "[299.2, 331.1], [179.2, 296.1]], \"falloff\": 16}, \"inputs\": {\"field\": "
     "{\"node\": \"ground\"}}}, {\"id\": \"level_pad\", \"type\": \"height_blend\", "
     "\"position\": [480, 0], \"params\": {\"amount\": 1}, \"inputs\": {\"a\": {\"node\": "
     "\"ground\"}, \"b\": {\"node\": \"pad_level\"}, \"mask\": {\"node\": "
     "\"pad_outline\"}}}, {\"id\": \"evolve\", \"type\": \"stream_power\", \"position\": "
     "[720, 0], \"params\": {\"reference_cell\": 30, \"evolution_cell\": 2, "
     "\"fine_steps\": 2, \"steps\": 40, \"m\": 0.45, \"uplift_shape\": \"input\", "
     "\"relief\": \"input\", \"border\": \"open\"}, \"inputs\": {\"field\": {\"node\": "
     "\"level_pad\"}}}, "
     "{\"id\": \"soften\", \"type\": \"erosion\", \"position\": [960, 0], \"params\": "
     "{\"droplet_density\": 0.2, \"erosion_rate\": 0.15, \"deposition_rate\": 0.3, "
     "\"thermal_strength\": 0.25, \"talus_angle\": 30}, \"inputs\": {\"field\": {\"node\": "
     "\"evolve\", \"pin\": \"field\"}}}, {\"id\": \"relevel\", \"type\": \"height_blend\", "
     "\"position\": [1200, 0], \"params\": {\"amount\": 1}, \"inputs\": {\"a\": {\"node\": "
     "\"soften\", \"pin\": \"field\"}, \"b\": {\"node\": \"pad_level\"}, \"mask\": "
     "{\"node\": \"pad_outline\"}}}, {\"id\": \"drain\", \"type\": \"drain_depressions\", "
     "\"position\": [1440, 0], \"params\": {\"mode\": \"fill\"}, \"inputs\": {\"field\": "
     "{\"node\": \"relevel\"}}}, {\"id\": \"about_appearance\", \"type\": \"comment\", "
     "\"position\": [1680, -200], \"params\": {\"text\": \"Appearance: Biome Rules "
     "classifies the surface with the recipe's rules: packed earth on the pad (the "
     "default, on ground within 0.2 m of the pad's 10 m), gravel on the embankment and "
     "banks steeper than 12 degrees, grass everywhere else.\"}}, {\"id\": \"biomes\", "
     "\"type\": \"biome_rules\", \"position\": [1680, 0], \"inputs\": {\"field\": "
     "{\"node\": \"drain\"}}}, {\"id\": \"about_output\", \"type\": \"comment\", "
     "\"position\": [1920, -200], \"params\": {\"text\": \"Output: Terrain Output "
     "publishes the classified surface. Painted regions, sculpt edits and exclusions are "
     "replayed on top of it when you generate.\"}}, {\"id\": \"output\", \"type\": "
     "\"terrain_output\", \"position\": [1920, 0], \"inputs\": {\"field\": {\"node\": "
     "\"biomes\"}}}]}}"},
    {"builtin://terrain/desert-dunes", "Desert dunes",
     "Barchanoid sand ridges up to 24 m high and 320 m apart over a field 2 km across, "
     "shaped by one wind: gentle windward slopes, slip faces at the angle of repose on the "
     "lee, crests that bend, fork and rejoin, flat interdune floors between them. Pale "
     "crests, fresh sand on the slip faces, firmer sand on the floors.",
     6,
     "{\"size\": [2048, 2048], \"resolution\": [512, 512], \"seed\": 202, \"sea_level\": "
     "-500, \"default_landform\": \"dunes\", \"landforms\": {\"dunes\": "
     "{\"height_variation\": 24, \"feature_size\": 320, \"roughness\": 0.3, \"octaves\": "
     "3, \"stretch\": 3, \"heading\": 110, \"warp_amplitude\": 80, \"warp_feature_size\": "
     "900}}, \"default_biome\": \"sand\", \"biomes\": {\"sand\": {\"color\": [0.86, 0.72, "
     "0.48, 1], \"allow_snow\": false}, \"crest_sand\": {\"color\": [0.93, 0.82, 0.6, 1], "
     "\"allow_snow\": false}, \"slip_sand\": {\"color\": [0.9, 0.74, 0.5, 1], "
     "\"allow_snow\": false}, \"floor_sand\": {\"color\": [0.72, 0.58, 0.42, 1], "
     "\"allow_snow\": false}}, \"rules\": [{\"id\": \"slip_faces\", \"biome\": "
     "\"slip_sand\", \"priority\": 30, \"slope\": [26, 90]}, {\"id\": \"crests\", "
     "\"biome\": \"crest_sand\", \"priority\": 20, \"elevation\": [15, 1000], \"blend\": "
     "4}, {\"id\": \"floors\", \"biome\": \"floor_sand\", \"priority\": 10, "
     "\"elevation\": [-1000, 0.5]}], \"graph\": {\"format_version\": 1, \"output\": "
     "\"output\", \"nodes\": [{\"id\": \"about_shape\", \"type\": \"comment\", "
     "\"position\": [0, -200], \"params\": {\"text\": \"Shape: Dune Field builds "
     "wind-blown sand, not eroded land: barchanoid ridges up to 24 m high, 320 m apart, "
     "over a field 2 km across, the wind carrying the sand toward heading 20 degrees. "
     "Each dune rises gently on its windward (stoss) side, about 8 degrees on average, "
     "and falls on its lee side in a slip face at the angle of repose of dry sand, 32 "
     "degrees; an avalanche pass trims any face still steeper. The crest lines bend "
     "(crest warp 80 m over 900 m), fork and rejoin at Y-junctions about every kilometre, "
     "and where a crest is lower it runs ahead downwind, in lobes and barchan horns. "
     "Between the ridges lie flat interdune floors open to the edges of the field. Sand "
     "is not cut by water here: no rills, no gullies. Turn Wind Heading to turn the "
     "field; lower Sand Supply to break the ridges into barchans on a bare floor; Pattern "
     "linear makes seif dunes along the wind.\"}}, {\"id\": \"dunes\", \"type\": "
     "\"dune_field\", \"position\": [0, 0], \"params\": {\"pattern\": \"transverse\", "
     "\"height\": 24, \"wavelength\": 320, \"wind_heading\": 20, \"stoss_angle\": 8, "
     "\"repose_angle\": 32, \"sand_supply\": 0.8, \"crest_warp\": 80, "
     "\"warp_feature_size\": 900, \"defect_spacing\": 1000, \"horn\": 0.6}}, {\"id\": "
     "\"about_appearance\", \"type\": \"comment\", \"position\": [240, -200], \"params\": "
     "{\"text\": \"Appearance: Biome Rules gives sand by default on the stoss slopes, "
     "pale crest sand above 15 m, fresh sand on the slip faces steeper than 26 degrees "
     "and firmer, darker floor sand on the interdune flats (below 0.5 m). Snow is off for "
     "every sand biome.\"}}, {\"id\": \"biomes\", \"type\": \"biome_rules\", "
     "\"position\": [240, 0], \"inputs\": {\"field\": {\"node\": \"dunes\"}}}, {\"id\": "
     "\"about_output\", \"type\": \"comment\", \"position\": [480, -200], \"params\": "
     "{\"text\": \"Output: Terrain Output publishes the classified dune field. Painted "
     "regions, sculpt edits and exclusions are replayed on top of it when you "
     "generate.\"}}, {\"id\": \"output\", \"type\": \"terrain_output\", \"position\": "
     "[480, 0], \"inputs\": "
     "{\"field\": {\"node\": \"biomes\"}}}]}}"},
    {"builtin://terrain/rolling-hills", "Rolling hills",
     "Soft grassy hills up to about 70 m high over 2 km whose valleys join into a "
     "branching stream network (landscape evolution), lightly eroded: meadows in the damp "
     "hollows and bare earth on the steeper banks.",
     6,
     "{\"size\": [2048, 2048], \"resolution\": [256, 256], \"seed\": 303, \"sea_level\": "
     "-500, \"default_landform\": \"hills\", \"landforms\": {\"hills\": "
     "{\"height_variation\": 80, \"feature_size\": 1440, \"roughness\": 0.4, \"octaves\": "
     "4, \"warp_amplitude\": 128, \"warp_feature_size\": 1024}}, \"default_biome\": "
     "\"grass\", \"biomes\": {\"grass\": {\"color\": [0.38, 0.6, 0.28, 1]}, \"meadow\": "
     "{\"color\": [0.3, 0.52, 0.32, 1]}, \"bare_earth\": {\"color\": [0.5, 0.4, 0.3, 1]}}, "
     "\"rules\": [{\"id\": \"banks\", \"biome\": \"bare_earth\", \"priority\": 20, "
     "\"slope\": [16, 90]}, {\"id\": \"hollows\", \"biome\": \"meadow\", \"priority\": 10, "
     "\"elevation\": [-1000, 24], \"blend\": 8}], \"graph\": {\"format_version\": 1, "
     "\"output\": \"output\", \"nodes\": [{\"id\": \"about_shape\", \"type\": \"comment\", "
     "\"position\": [0, -200], \"params\": {\"text\": \"Shape: Hills is fbm noise, 80 m of "
     "relief over 2 km with 1440 m features and 4 octaves; a domain warp of 128 m bends "
     "the sampling pattern so the hills are not round blobs. Soften is a light erosion (a "
     "third of the default droplets, gentle rates, mild thermal relaxation): it rounds the "
     "tops and fills the hollows a little. Change Height variation for taller hills, "
     "Feature size for broader ones. Evolve is landscape evolution (Stream Power): rock "
     "uplift against river incision and hillslope creep over 100 steps, read at a 30 m "
     "reference cell so the rivers are those of real land, evolved on a grid of 8 m cells "
     "(257 x 257 samples) whatever the output grid (finer grids get the input's detail "
     "back on the ridges, carved into tributaries by two steps on the full grid), then "
     "stretched back to the input's height range: every valley drains to the map edge "
     "through a branching river network; only the low points where valleys meet the edge are "
     "base level (border outlets), so the hills run on to the edge instead of ramping "
     "down.\"}}, {\"id\": \"hills\", \"type\": "
     "\"noise_terrain\", \"position\": [0, 0], \"params\": {\"profile\": \"fbm\", "
     "\"height_variation\": 80, \"feature_size\": 1440, \"roughness\": 0.4, \"octaves\": "
     "4, \"warp_amplitude\": 128, \"warp_feature_size\": 1024}}, {\"id\": \"evolve\", "
     "\"type\": \"stream_power\", \"position\": [240, 0], \"params\": {\"reference_cell\": "
     "30, \"evolution_cell\": 8, \"fine_steps\": 2, \"steps\": 100, \"m\": 0.5, "
     "\"relief\": \"input\", \"border\": \"outlets\"}, \"inputs\": {\"field\": "
     "{\"node\": \"hills\"}}}, {\"id\": "
     "\"soften\", \"type\": \"erosion\", \"position\": [480, 0], \"params\": "
     "{\"droplet_density\": 0.2, \"erosion_rate\": 0.15, \"deposition_rate\": 0.3, "
     "\"thermal_strength\": 0.25, \"talus_angle\": 30}, \"inputs\": {\"field\": {\"node\": "
     "\"evolve\", \"pin\": \"field\"}}}, {\"id\": \"about_appearance\", \"type\": "
     "\"comment\", \"position\": [720, -200], \"params\": {\"text\": \"Appearance: Biome "
     "Rules gives grass by default, meadow in the damp hollows below 24 m (blended over 8 "
     "m) and bare earth on banks steeper than 16 degrees.\"}}, {\"id\": \"biomes\", "
     "\"type\": \"biome_rules\", \"position\": [720, 0], \"inputs\": {\"field\": "
     "{\"node\": \"soften\", \"pin\": \"field\"}}}, {\"id\": \"about_output\", \"type\": "
     "\"comment\", \"position\": [960, -200], \"params\": {\"text\": \"Output: Terrain "
     "Output publishes the softened hills. Preview quality runs fewer, shorter droplets "
     "and no thermal pass; Final (the default) runs them all.\"}}, {\"id\": \"output\", "
     "\"type\": \"terrain_output\", \"position\": [960, 0], \"inputs\": {\"field\": "
     "{\"node\": \"biomes\"}}}]}}"},
    {"builtin://terrain/mountain-range", "Mountain range",
     "A range of sharp peaks 12.8 km across with about 1250 m of relief running at 60 "
     "degrees, shaped by landscape evolution through rock of varied strength into ridges "
     "and steep V-shaped river valleys of varied spacing that branch and drain to the "
     "edges, with tributary valleys of every smaller size cut into their sides, densely "
     "dissected so no long smooth face stands between them, every pit "
     "left breached so water "
     "reaches the edge: forest below, rock on the steep faces, alpine meadow higher "
     "up and snow on the summits.",
     14,
     "{\"size\": [12800, 12800], \"resolution\": [256, 256], \"seed\": 404, \"sea_level\": "
     "-100, \"default_landform\": \"range\", \"landforms\": {\"range\": {\"profile\": "
     "\"ridged\", \"height_variation\": 1400, \"feature_size\": 11000, \"roughness\": 0.5, "
     "\"octaves\": 6, \"stretch\": 1.8, \"heading\": 60, \"warp_amplitude\": 1000, "
     "\"warp_feature_size\": 8000}}, \"default_biome\": \"forest\", \"biomes\": "
     "{\"forest\": {\"color\": [0.2, 0.38, 0.2, 1]}, \"alpine_meadow\": {\"color\": [0.5, "
     "0.6, 0.35, 1]}, \"rock\": {\"color\": [0.45, 0.43, 0.42, 1]}, \"snow\": {\"color\": "
     "[0.95, 0.96, 0.98, 1]}}, \"rules\": [{\"id\": \"summits\", \"biome\": \"snow\", "
     "\"priority\": 40, \"elevation\": [960, 10000], \"blend\": 65}, {\"id\": \"faces\", "
     "\"biome\": \"rock\", \"priority\": 30, \"slope\": [35, 90]}, {\"id\": \"alpine\", "
     "\"biome\": \"alpine_meadow\", \"priority\": 20, \"elevation\": [720, 10000], "
     "\"blend\": 65}], \"graph\": {\"format_version\": 1, \"output\": \"output\", "
     "\"nodes\": [{\"id\": \"about_shape\", \"type\": \"comment\", \"position\": [0, "
     "-200], \"params\": {\"text\": \"Shape: Range is ridged noise (sharp crests), 1400 m "
     "of relief over 12.8 km, 11 km features, 6 octaves, stretched 1.8 times along heading "
     "60 degrees so the ridges line up into a range, with a 1 km domain warp. Evolve is "
     "landscape evolution (Stream Power): rock uplift, the same over the whole range, "
     "against river incision (erodibility four times the node's default against twice its "
     "uplift: rivers cut fast against hillslope creep, so valleys start within a few hundred "
     "metres of every divide and branch densely; area exponent m 0.4: river profiles a little less concave "
     "than at 0.5, so the trunk valleys keep their fall and the peaks stand high over them) "
     "and hillslope creep over 100 steps, "
     "through rock of varied strength (erodibility a quarter to four times the mean in "
     "patches about 1.5 km across, so valleys find the weak rock and their spacing varies "
     "instead of repeating one width; hillslope creep is slowest in the weakest rock and "
     "fastest in the strongest, so the spacing of side valleys varies further, from tight "
     "gullies to broad spurs, at the same relief), "
     "read at a 60 m reference cell on a grid of 50 m cells (257 x 257 samples) whatever "
     "the output grid, so every output size gets the same valleys (finer grids get the "
     "range's own detail back on the ridges, carved into tributaries by two steps on the "
     "full grid; on output grids of 12.5 m cells or finer the way back passes through every grid "
     "twice as fine as the one before, 6 steps on each, so each halving of the cell cuts "
     "tributary valleys of its own size into the larger ones), then stretched back to the "
     "range's height range: valleys branch along "
     "the range and drain to the map edge where valleys meet it (border outlets; the rest of "
     "the edge is land, so nothing ramps down to it); little sediment is laid down "
     "(deposition 0.5), so the rivers keep cutting and the valleys stay V-shaped between "
     "steep walls down to their channels, as in a young range still rising. Erosion runs droplets over "
     "the range (a quarter of a droplet per sample, 12 steps each, so their rills stay "
     "short on the steep sides instead of combing them, gentle rates; on output "
     "grids finer than 12.5 m they run on a 12.5 m grid and their gullies come back smoothly, "
     "so a finer output gets the same gullies instead of a finer comb of rills) that "
     "roughen the slopes "
     "along the paths water takes, then relaxes slopes steeper than 38 degrees. Drain breaches "
     "the pits the droplets leave (a shallow notch through each rim), so every sample drains "
     "to the edge at any output size.\"}}, {\"id\": \"range\", \"type\": \"noise_terrain\", \"position\": [0, 0], "
     "\"params\": {\"profile\": \"ridged\", \"height_variation\": 1400, \"feature_size\": "
     "11000, \"roughness\": 0.5, \"octaves\": 6, \"stretch\": 1.8, \"heading\": 60, "
     "\"warp_amplitude\": 1000, \"warp_feature_size\": 8000}}, {\"id\": \"evolve\", "
     "\"type\": \"stream_power\", \"position\": [240, 0], \"params\": {\"reference_cell\": "
     "60, \"evolution_cell\": 50, \"fine_steps\": 2, \"steps\": 100, \"m\": 0.4, "
     "\"uplift\": 0.002, \"erodibility\": 0.0002, "
     "\"relief\": \"input\", \"border\": \"outlets\", "
     "\"deposition\": 0.5, \"diffusion\": 0.1, \"rock_variation\": 2, "
     "\"rock_feature_size\": 1500, \"rock_creep\": -1, \"cascade_steps\": 6}, \"inputs\": {\"field\": "
     "{\"node\": \"range\"}}}, "
     "{\"id\": \"erosion\", \"type\": \"erosion\", \"position\": [720, 0], "
     "\"params\": {\"iterations\": 1, \"droplet_density\": 0.25, \"lifetime\": 12, "
     "\"erosion_rate\": 0.15, \"talus_angle\": 38, \"droplet_cell\": 12.5}, \"inputs\": {\"field\": {\"node\": \"evolve\", \"pin\": "
     "\"field\"}}}, {\"id\": \"drain\", \"type\": \"drain_depressions\", \"position\": "
     "[840, 200], \"inputs\": {\"field\": {\"node\": \"erosion\", \"pin\": \"field\"}}}, "
     "{\"id\": \"about_appearance\", \"type\": \"comment\", \"position\": [960, -200], "
     "\"params\": {\"text\": \"Appearance: Biome Rules gives forest below, alpine meadow "
     "above 720 m, rock on faces steeper than 35 degrees and snow on the summits above 960 "
     "m (both bands blended over 65 m).\"}}, {\"id\": \"biomes\", \"type\": "
     "\"biome_rules\", \"position\": [960, 0], \"inputs\": {\"field\": {\"node\": "
     "\"drain\"}}}, {\"id\": \"about_output\", \"type\": \"comment\", \"position\": [1200, "
     "-200], \"params\": {\"text\": \"Output: Terrain Output publishes the eroded range. "
     "Evolve and Erosion are the slow nodes: Preview quality runs a quarter of the "
     "evolution's steps and fewer, shorter droplets without the thermal pass, and a result "
     "cache reuses the range when only later nodes change.\"}}, {\"id\": \"output\", \"type\": \"terrain_output\", \"position\": "
     "[1200, 0], \"inputs\": {\"field\": {\"node\": \"biomes\"}}}]}}"},
    {"builtin://terrain/basin", "Basin",
     "A bowl 4 km across around a level lake bed (64 m) blended into the surrounding hills "
     "through a polygon mask, its sides cut by streams that run into it (landscape "
     "evolution), holding a lake at 96 m over a smooth shelving bed: reeds on the shore, "
     "grass on the sides, scrub and rock on the rims.",
     10,
     "{\"size\": [4096, 4096], \"resolution\": [256, 256], \"seed\": 194, \"sea_level\": "
     "96, \"default_landform\": \"hills\", \"landforms\": {\"hills\": {\"base_height\": "
     "112, \"height_variation\": 192, \"feature_size\": 3200, \"roughness\": 0.35, "
     "\"octaves\": 4}}, \"default_biome\": \"grass\", \"biomes\": {\"lake_bed\": "
     "{\"color\": [0.25, 0.35, 0.45, 1]}, \"reeds\": {\"color\": [0.35, 0.5, 0.3, 1]}, "
     "\"grass\": {\"color\": [0.45, 0.6, 0.3, 1]}, \"scrub\": {\"color\": [0.58, 0.55, "
     "0.36, 1]}, \"rock\": {\"color\": [0.5, 0.46, 0.42, 1]}}, \"rules\": [{\"id\": "
     "\"lake\", \"biome\": \"lake_bed\", \"priority\": 40, \"elevation\": [-1000, 96]}, "
     "{\"id\": \"shore\", \"biome\": \"reeds\", \"priority\": 30, \"water_distance\": [0, "
     "30]}, {\"id\": \"rim_rock\", \"biome\": \"rock\", \"priority\": 20, \"slope\": [30, "
     "90]}, {\"id\": \"rims\", \"biome\": \"scrub\", \"priority\": 10, \"elevation\": "
     "[240, 1000], \"blend\": 24}], \"graph\": {\"format_version\": 1, \"output\": "
     "\"output\", \"nodes\": [{\"id\": \"about_shape\", \"type\": \"comment\", "
     "\"position\": [0, -200], \"params\": {\"text\": \"Shape: Surrounding hills is fbm "
     "noise from 112 m up (192 m of relief, 3.2 km features) over a 4 km square. Basin "
     "floor is a flat base at 64 m, below the 96 m lake level. Bowl is a polygon mask (an "
     "octagon about 900 m across around the centre) with a 1.4 km falloff, its outline "
     "warped up to 300 m so no octagon shows; Hollow blends "
     "the hills toward the floor through it with amount 1, so the middle is a level lake "
     "bed and the sides rise smoothly to the rims. Evolve then runs landscape evolution "
     "(Stream Power) over the hollowed ground with the ground at or below the 96 m lake "
     "level as base level, so the bed under the lake stays smooth and the streams end at "
     "its shore: rock uplift against river incision and hillslope creep, "
     "read at a 120 m reference cell, on a grid of 32 m cells (129 x 129 samples) whatever "
     "the output grid (on output grids of 8 m cells or finer it comes back through every grid "
     "twice as fine as the one before, 6 steps on each, so side valleys of each smaller size "
     "cut into the hills down to the shore), stretched back to the input's height range "
     "above the bed; sediment "
     "is laid down where slopes drop (deposition 1), building fans at the lake and "
     "filling valley floors; the border is open (the hills run on past the map's edge and "
     "the run is cut back to it), so they reach the edge as textured as inside, and the "
     "lake stays the streams' end.\"}}, {\"id\": \"surrounding_hills\", \"type\": "
     "\"noise_terrain\", \"position\": [0, 0], \"params\": {\"profile\": \"fbm\", "
     "\"base_height\": 112, \"height_variation\": 192, \"feature_size\": 3200, "
     "\"roughness\": 0.35, \"octaves\": 4}}, {\"id\": \"basin_floor\", \"type\": "
     "\"flat_terrain\", \"position\": [0, 200], \"params\": {\"height\": 64}}, {\"id\": "
     "\"bowl\", \"type\": \"polygon_mask\", \"position\": [240, 200], \"params\": "
     "{\"points\": [[1856, 1600], [2240, 1600], [2496, 1856], [2496, 2240], [2240, 2496], "
     "[1856, 2496], [1600, 2240], [1600, 1856]], \"falloff\": 1408, \"edge_warp\": 300, "
     "\"edge_warp_size\": 1200}, \"inputs\": "
     "{\"field\": {\"node\": \"surrounding_hills\"}}}, {\"id\": \"hollow\", \"type\": "
     "\"height_blend\", \"position\": [480, 0], \"params\": {\"amount\": 1}, \"inputs\": "
     "{\"a\": {\"node\": \"surrounding_hills\"}, \"b\": {\"node\": \"basin_floor\"}, "
     "\"mask\": {\"node\": \"bowl\"}}}, {\"id\": \"evolve\", \"type\": \"stream_power\", "
     "\"position\": [720, 0], \"params\": {\"reference_cell\": 120, \"evolution_cell\": "
     "32, \"fine_steps\": 2, \"cascade_steps\": 6, \"steps\": 100, \"sea_level\": 96, \"relief\": \"input\", "
     "\"border\": \"open\", \"deposition\": 1}, "
     "\"inputs\": {\"field\": {\"node\": \"hollow\"}}}, {\"id\": \"about_water\", \"type\": "
     "\"comment\", \"position\": [1200, -200], \"params\": {\"text\": \"Water: the Lake "
     "water body fills the bowl at 96 m: every sample below that level connected to the "
     "centre, within 1.8 km of it. It carves nothing; its water goes to Biome Rules (the "
     "shore by distance) and to Terrain Output (the published lake surface).\"}}, {\"id\": "
     "\"lake\", \"type\": \"water_body\", \"position\": [1200, 0], \"params\": {\"kind\": "
     "\"lake\", \"level\": 96, \"center\": [2048, 2048], \"radius\": 1792}, \"inputs\": "
     "{\"field\": {\"node\": \"evolve\", \"pin\": \"field\"}}}, {\"id\": "
     "\"about_appearance\", \"type\": \"comment\", \"position\": [1440, -200], \"params\": "
     "{\"text\": \"Appearance: Biome Rules gives a lake bed below the 96 m lake level, "
     "reeds within 30 m of the water, grass on the sides, scrub on the rims above 240 m "
     "and rock where the sides are steeper than 30 degrees.\"}}, {\"id\": \"biomes\", "
     "\"type\": \"biome_rules\", \"position\": [1440, 0], \"inputs\": {\"field\": "
     "{\"node\": \"lake\", \"pin\": \"field\"}, \"water\": {\"node\": \"lake\", \"pin\": "
     "\"water\"}}}, {\"id\": \"about_output\", \"type\": \"comment\", \"position\": [1680, "
     "-200], \"params\": {\"text\": \"Output: Terrain Output publishes the basin with its "
     "lake surface (the lake's level, area and volume show in 'terrane water').\"}}, "
     "{\"id\": \"output\", \"type\": \"terrain_output\", \"position\": [1680, 0], "
     "\"inputs\": {\"field\": {\"node\": \"biomes\"}, \"water\": {\"node\": \"lake\", "
     "\"pin\": \"water\"}}}]}}"},
    {"builtin://terrain/plateau", "Plateau",
     "A mesa about 2.6 km across with its cap rock at about 250 m (an outline warped into "
     "spurs and bays, raised above the lowland) cut by canyons that eat back into it from its "
     "edges, the cap rock a gently rolling surface with the shallow heads of their valleys: "
     "grassland on the cap rock, cliffs and scree on the canyon walls and sides and steppe "
     "on the lowland around it.",
     8,
     "{\"size\": [4096, 4096], \"resolution\": [128, 128], \"seed\": 606, \"sea_level\":"
     " -800, \"default_landform\": \"lowland\", \"landforms\": {\"lowland\": {\"height_v"
     "ariation\": 144, \"feature_size\": 2880, \"roughness\": 0.4, \"octaves\": 4, \"war"
     "p_amplitude\": 320, \"warp_feature_size\": 2560}}, \"default_biome\": \"steppe\", "
     "\"biomes\": {\"steppe\": {\"color\": [0.62, 0.6, 0.38, 1]}, \"tableland_grass\": {"
     "\"color\": [0.48, 0.62, 0.32, 1]}, \"cliff\": {\"color\": [0.6, 0.45, 0.35, 1]}, "
     "\"scree\": {\"color\": [0.55, 0.52, 0.48, 1]}}, \"rules\": [{\"id\": \"cliffs\", "
     "\"biome\": \"cliff\", \"priority\": 30, \"slope\": [35, 90]}, {\"id\": \"scree_slo"
     "pes\", \"biome\": \"scree\", \"priority\": 20, \"slope\": [18, 90]}, {\"id\": \"to"
     "p\", \"biome\": \"tableland_grass\", \"priority\": 10, \"elevation\": [244, 1000],"
     " \"blend\": 4}], \"graph\": {\"format_version\": 1, \"output\": \"output\", \"node"
     "s\": [{\"id\": \"about_shape\", \"type\": \"comment\", \"position\": [0, -200], \""
     "params\": {\"text\": \"Shape: Lowland is fbm noise (144 m of relief, 2.9 km featur"
     "es) for the ground around, over a 4 km square. Table top is gently rolling rock fr"
     "om 300 m up (40 m of relief). Mesa outline is a concave polygon mask about 2.6 km "
     "across with a 640 m falloff (a toe gentle enough that the water off the mesa runs "
     "out across the lowland, not round its foot), its edge warped up to 400 m in wiggles "
     "up to 800 m lo"
     "ng into spurs and bays, so no straight side of the polygon is left; Raise mesa ble"
     "nds the lowland toward the table top through it. Evolve (Stream Power over 40 shor"
     "t steps on a grid of 16 m cells whatever the output grid, read at a 60 m reference"
     " cell, with strong hillslope creep) cuts canyons back into the mesa from its edges"
     " and drains the lowland around it, off the map only where its valleys meet the edg"
     "e (border outlets: no frame of gullies along the edges); on output grids of 4 m ce"
     "lls or finer it comes back through every grid twice as fine as the one before, 6 s"
     "teps on each, so the lowland's valleys branch into side valleys of each smaller si"
     "ze instead of running side by side. Caprock picks the ground left above 235 m and "
     "Level top blends it toward 250 m with amount 0.92: the hard cap rock, levelled to "
     "a gently rolling surface (about 12 m of relief over the mesa, an eleventh of what "
     "the evolution left) that keeps the shallow heads of the canyons' valleys, so its o"
     "utline is the evolved rim and not a flat polygon. Erosion washes the canyon walls "
     "with a few light droplets and thermal relaxation sheds scree below the cliffs and "
     "Drain fills the last hollows flat, so all water leaves the map.\"}}, {\"id\": \"lo"
     "wland\", \"type\": \"noise_terrain\", \"position\": [0, 0], \"params\": {\"profile"
     "\": \"fbm\", \"height_variation\": 144, \"feature_size\": 2880, \"roughness\": 0.4"
     ", \"octaves\": 4, \"warp_amplitude\": 320, \"warp_feature_size\": 2560}}, {\"id\":"
     " \"table_top\", \"type\": \"noise_terrain\", \"position\": [0, 200], \"params\": {"
     "\"profile\": \"fbm\", \"base_height\": 300, \"height_variation\": 40, \"feature_si"
     "ze\": 1600, \"roughness\": 0.45, \"octaves\": 5}}, {\"id\": \"mesa_outline\", \"ty"
     "pe\": \"polygon_mask\", \"position\": [240, 200], \"params\": {\"points\": [[960, "
     "896], [2688, 704], [3328, 1472], [3072, 2304], [2240, 2176], [1984, 3200], [1024, "
     "3072], [768, 1920]], \"falloff\": 640, \"edge_warp\": 400, \"edge_warp_size\": 800"
     "}, \"inputs\": {\"field\": {\"node\": \"lowland\"}}}, {\"id\": \"raise_mesa\", \"t"
     "ype\": \"height_blend\", \"position\": [480, 0], \"params\": {\"amount\": 1}, \"in"
     "puts\": {\"a\": {\"node\": \"lowland\"}, \"b\": {\"node\": \"table_top\"}, \"mask"
     "\": {\"node\": \"mesa_outline\"}}}, {\"id\": \"evolve\", \"type\": \"stream_power"
     "\", \"position\": [720, 0], \"params\": {\"reference_cell\": 60, \"evolution_cell"
     "\": 16, \"fine_steps\": 2, \"steps\": 40, \"dt\": 2500, \"m\": 0.5, \"diffusion\":"
     " 0.2, \"relief\": \"input\", \"border\": \"outlets\", \"cascade_steps\": 6}, \"inp"
     "uts\": {\"field\": {\"node\": \"raise_mesa\"}}}, {\"id\": \"caprock_level\", \"typ"
     "e\": \"flat_terrain\", \"position\": [720, 200], \"params\": {\"height\": 250}}, {"
     "\"id\": \"caprock\", \"type\": \"elevation_mask\", \"position\": [960, 200], \"par"
     "ams\": {\"min\": 235, \"max\": 10000, \"falloff\": 10}, \"inputs\": {\"field\": {"
     "\"node\": \"evolve\", \"pin\": \"field\"}}}, {\"id\": \"level_top\", \"type\": \"h"
     "eight_blend\", \"position\": [1200, 0], \"params\": {\"amount\": 0.92}, \"inputs\""
     ": {\"a\": {\"node\": \"evolve\", \"pin\": \"field\"}, \"b\": {\"node\": \"caprock_"
     "level\"}, \"mask\": {\"node\": \"caprock\"}}}, {\"id\": \"erosion\", \"type\": \"e"
     "rosion\", \"position\": [1440, 0], \"params\": {\"droplet_density\": 0.1, \"erosio"
     "n_rate\": 0.1, \"thermal_strength\": 0.4, \"talus_angle\": 40}, \"inputs\": {\"fie"
     "ld\": {\"node\": \"level_top\"}}}, {\"id\": \"drain\", \"type\": \"drain_depressio"
     "ns\", \"position\": [1680, 0], \"params\": {\"mode\": \"fill\"}, \"inputs\": {\"fi"
     "eld\": {\"node\": \"erosion\", \"pin\": \"field\"}}}, {\"id\": \"about_appearance"
     "\", \"type\": \"comment\", \"position\": [1920, -200], \"params\": {\"text\": \"Ap"
     "pearance: Biome Rules gives steppe on the lowland, tableland grass on the cap rock"
     " above 244 m, scree on slopes steeper than 18 degrees and cliffs steeper than 35 d"
     "egrees.\"}}, {\"id\": \"biomes\", \"type\": \"biome_rules\", \"position\": [1920, "
     "0], \"inputs\": {\"field\": {\"node\": \"drain\"}}}, {\"id\": \"about_output\", \""
     "type\": \"comment\", \"position\": [2160, -200], \"params\": {\"text\": \"Output: "
     "Terrain Output publishes the plateau. For terraces, blend in more flat bases at ot"
     "her heights through their own masks.\"}}, {\"id\": \"output\", \"type\": \"terrain"
     "_output\", \"position\": [2160, 0], \"inputs\": {\"field\": {\"node\": \"biomes\"}"
     "}}]}}"},
    {"builtin://terrain/coastal-island", "Coastal island",
     "An island about 6 km across rising out of the sea (sea level 0 m, hills up to about "
     "300 m) whose ridges and branching valleys (landscape evolution) run down to a coastal "
     "plain: the rivers leaving the hills spread their sediment into fans and a low plain "
     "that meets the sea in gently sloping beaches, and the sea floor shelves off from the "
     "shore to some 70 m deep at the edges, with an Ocean Water body covering the sea on "
     "every border: sandy beaches along the shore, grass and woods inland, rock on the "
     "steep slopes.",
     9,
     "{\"size\": [8192, 8192], \"resolution\": [256, 256], \"seed\": 230, \"sea_level\":"
     " 0, \"default_landform\": \"island\", \"landforms\": {\"island\": {\"base_height\""
     ": -30, \"height_variation\": 450, \"feature_size\": 5120, \"roughness\": 0.45, \"o"
     "ctaves\": 5, \"warp_amplitude\": 768, \"warp_feature_size\": 4480}}, \"default_bio"
     "me\": \"grass\", \"biomes\": {\"sea_floor\": {\"color\": [0.2, 0.4, 0.55, 1]}, \"b"
     "each\": {\"color\": [0.9, 0.82, 0.6, 1], \"allow_snow\": false}, \"grass\": {\"col"
     "or\": [0.4, 0.62, 0.3, 1]}, \"woods\": {\"color\": [0.22, 0.42, 0.22, 1]}, \"rock"
     "\": {\"color\": [0.5, 0.48, 0.45, 1]}}, \"rules\": [{\"id\": \"underwater\", \"bio"
     "me\": \"sea_floor\", \"priority\": 40, \"elevation\": [-1000, 0]}, {\"id\": \"shor"
     "e\", \"biome\": \"beach\", \"priority\": 30, \"water_distance\": [0, 60]}, {\"id\""
     ": \"cliffs\", \"biome\": \"rock\", \"priority\": 20, \"slope\": [25, 90]}, {\"id\""
     ": \"inland\", \"biome\": \"woods\", \"priority\": 10, \"elevation\": [180, 1000], "
     "\"blend\": 45}], \"graph\": {\"format_version\": 1, \"output\": \"output\", \"node"
     "s\": [{\"id\": \"about_shape\", \"type\": \"comment\", \"position\": [0, -200], \""
     "params\": {\"text\": \"Shape: over an 8 km square, three surfaces are raised one i"
     "nto the next through warped polygon masks. Sea floor is fbm noise about 70 m down "
     "(12 m of relief, 4 km features); Shelf floor is a shallow shelf about 4 m down; Sh"
     "elf outline (a 3.2 km falloff around the island) blends the floor up to the shelf "
     "near the coast, so the sea floor shelves off gently to the deep water at the edges"
     ". Coastal plain is low fbm noise about 10 m up (7 m of relief); Coast outline (a 1"
     ".4 km falloff, its edge warped up to 1 km) raises it out of the shelf: the coast i"
     "s where that gentle slope crosses the sea level. Island land is the hills' fbm noi"
     "se (450 m of relief, 5 km features); Hills outline (a smaller polygon, 1 km fallof"
     "f, warped up to 800 m) raises them out of the plain. Evolve is landscape evolution"
     " (Stream Power): rock uplift where the hills are (the Hills outline as its uplift "
     "mask, times the land's height), none under the plain, against river incision and h"
     "illslope creep over 100 steps, read at a 60 m reference cell on a grid of 32 m cel"
     "ls whatever the output grid (on output grids of 8 m cells or finer back through ev"
     "ery grid twice as fine as the one before, 6 steps on each), with the sea surface a"
     "t 0 m as its base level and sediment deposition (G 2): the rivers cut the hills in"
     "to ridges and branching valleys and lay their sediment down where they leave them,"
     " as fans and a coastal plain graded to the sea. Sea bed puts the raised surface ba"
     "ck wherever it was under the sea (Sea mask), so the plain runs out into the shelf "
     "as a gently sloping beach and shoreface.\"}}, {\"id\": \"ocean_floor\", \"type\": "
     "\"noise_terrain\", \"position\": [0, 0], \"params\": {\"profile\": \"fbm\", \"base"
     "_height\": -70, \"height_variation\": 12, \"feature_size\": 4000, \"roughness\": 0"
     ".45, \"octaves\": 3}}, {\"id\": \"shelf_floor\", \"type\": \"noise_terrain\", \"po"
     "sition\": [0, 200], \"params\": {\"profile\": \"fbm\", \"base_height\": -4, \"heig"
     "ht_variation\": 3, \"feature_size\": 2000, \"roughness\": 0.4, \"octaves\": 3}}, {"
     "\"id\": \"coastal_plain\", \"type\": \"noise_terrain\", \"position\": [0, 400], \""
     "params\": {\"profile\": \"fbm\", \"base_height\": 10, \"height_variation\": 7, \"f"
     "eature_size\": 2200, \"roughness\": 0.5, \"octaves\": 5, \"warp_amplitude\": 300, "
     "\"warp_feature_size\": 1500}}, {\"id\": \"island_land\", \"type\": \"noise_terrain"
     "\", \"position\": [0, 600], \"params\": {\"profile\": \"fbm\", \"base_height\": -3"
     "0, \"height_variation\": 450, \"feature_size\": 5120, \"roughness\": 0.45, \"octav"
     "es\": 5, \"warp_amplitude\": 768, \"warp_feature_size\": 4480}}, {\"id\": \"shelf_"
     "outline\", \"type\": \"polygon_mask\", \"position\": [240, 200], \"params\": {\"po"
     "ints\": [[2863, 2020], [5116, 1930], [6287, 3102], [6107, 5174], [4755, 6255], [25"
     "93, 5985], [1963, 4093]], \"falloff\": 3200, \"edge_warp\": 1000, \"edge_warp_size"
     "\": 1800}, \"inputs\": {\"field\": {\"node\": \"island_land\"}}}, {\"id\": \"coast"
     "_outline\", \"type\": \"polygon_mask\", \"position\": [240, 400], \"params\": {\"p"
     "oints\": [[2863, 2020], [5116, 1930], [6287, 3102], [6107, 5174], [4755, 6255], [2"
     "593, 5985], [1963, 4093]], \"falloff\": 1400, \"edge_warp\": 1000, \"edge_warp_siz"
     "e\": 1100}, \"inputs\": {\"field\": {\"node\": \"island_land\"}}}, {\"id\": \"hill"
     "s_outline\", \"type\": \"polygon_mask\", \"position\": [240, 600], \"params\": {\""
     "points\": [[3036, 2277], [5007, 2199], [6032, 3224], [5874, 5038], [4691, 5983], ["
     "2799, 5747], [2247, 4091]], \"falloff\": 1000, \"edge_warp\": 800, \"edge_warp_siz"
     "e\": 1000}, \"inputs\": {\"field\": {\"node\": \"island_land\"}}}, {\"id\": \"shel"
     "f\", \"type\": \"height_blend\", \"position\": [480, 0], \"params\": {\"amount\": "
     "1}, \"inputs\": {\"a\": {\"node\": \"ocean_floor\"}, \"b\": {\"node\": \"shelf_flo"
     "or\"}, \"mask\": {\"node\": \"shelf_outline\"}}}, {\"id\": \"lowland\", \"type\": "
     "\"height_blend\", \"position\": [720, 0], \"params\": {\"amount\": 1}, \"inputs\":"
     " {\"a\": {\"node\": \"shelf\"}, \"b\": {\"node\": \"coastal_plain\"}, \"mask\": {"
     "\"node\": \"coast_outline\"}}}, {\"id\": \"raise_island\", \"type\": \"height_blen"
     "d\", \"position\": [960, 0], \"params\": {\"amount\": 1}, \"inputs\": {\"a\": {\"n"
     "ode\": \"lowland\"}, \"b\": {\"node\": \"island_land\"}, \"mask\": {\"node\": \"hi"
     "lls_outline\"}}}, {\"id\": \"evolve\", \"type\": \"stream_power\", \"position\": ["
     "1200, 0], \"params\": {\"reference_cell\": 60, \"evolution_cell\": 32, \"fine_step"
     "s\": 2, \"cascade_steps\": 6, \"steps\": 100, \"m\": 0.5, \"uplift_shape\": \"inpu"
     "t\", \"relief\": \"input\", \"sea_level\": 0, \"base_level\": \"surface\", \"depos"
     "ition\": 2}, \"inputs\": {\"field\": {\"node\": \"raise_island\"}, \"uplift\": {\""
     "node\": \"hills_outline\"}}}, {\"id\": \"sea_mask\", \"type\": \"elevation_mask\","
     " \"position\": [1200, 200], \"params\": {\"min\": -10000, \"max\": 0, \"falloff\":"
     " 0}, \"inputs\": {\"field\": {\"node\": \"raise_island\"}}}, {\"id\": \"sea_bed\","
     " \"type\": \"height_blend\", \"position\": [1440, 0], \"params\": {\"amount\": 1},"
     " \"inputs\": {\"a\": {\"node\": \"evolve\", \"pin\": \"field\"}, \"b\": {\"node\":"
     " \"raise_island\"}, \"mask\": {\"node\": \"sea_mask\"}}}, {\"id\": \"about_water\""
     ", \"type\": \"comment\", \"position\": [1680, -200], \"params\": {\"text\": \"Wate"
     "r: Ocean Water covers every sample below the 0 m sea level, the shore included; it"
     "s water goes to Biome Rules (shore distances) and to Terrain Output (the published"
     " sea surface).\"}}, {\"id\": \"ocean\", \"type\": \"water_body\", \"position\": [1"
     "680, 0], \"params\": {\"kind\": \"ocean\", \"level\": 0, \"shallow_color\": [0.12,"
     " 0.55, 0.6, 0.4], \"deep_color\": [0.02, 0.12, 0.25, 0.92], \"absorption_distance"
     "\": 15}, \"inputs\": {\"field\": {\"node\": \"sea_bed\"}}}, {\"id\": \"about_appea"
     "rance\", \"type\": \"comment\", \"position\": [1920, -200], \"params\": {\"text\":"
     " \"Appearance: Biome Rules gives sea floor below 0 m, beaches within 60 m of the s"
     "ea, grass inland, woods above 180 m (blended over 45 m) and rock on slopes steeper"
     " than 25 degrees.\"}}, {\"id\": \"biomes\", \"type\": \"biome_rules\", \"position"
     "\": [1920, 0], \"inputs\": {\"field\": {\"node\": \"ocean\", \"pin\": \"field\"}, "
     "\"water\": {\"node\": \"ocean\", \"pin\": \"water\"}}}, {\"id\": \"about_output\","
     " \"type\": \"comment\", \"position\": [2160, -200], \"params\": {\"text\": \"Outpu"
     "t: Terrain Output publishes the island with its sea surface (the ocean's area and "
     "volume show in 'terrane water'; BeamNG and Unity exports carry it as their water p"
     "lane).\"}}, {\"id\": \"output\", \"type\": \"terrain_output\", \"position\": [2160"
     ", 0], \"inputs\": {\"field\": {\"node\": \"biomes\"}, \"water\": {\"node\": \"ocea"
     "n\", \"pin\": \"water\"}}}]}}"},
    {"builtin://terrain/drainage-river", "Drainage river",
     "A valley carved along a bending path across eroded hills 2 km across whose side "
     "streams join it through a branching network (landscape evolution), with a River "
     "Route traced down its drainage from the middle of the valley to the terrain's edge "
     "(a 16 m channel holding 1.2 m of water, in the valley's bottom): river bed under the "
     "water, wet banks beside it, grass above and rock on steep valley sides.",
     8,
     "{\"size\": [2048, 2048], \"resolution\": [128, 128], \"seed\": 539, \"sea_level\": "
     "0, \"default_landform\": \"hills\", \"landforms\": {\"hills\": {\"base_height\": 50, "
     "\"height_variation\": 175, \"feature_size\": 1440, \"roughness\": 0.4, \"octaves\": "
     "5, \"warp_amplitude\": 128, \"warp_feature_size\": 960}}, \"default_biome\": "
     "\"grass\", \"biomes\": {\"river_bed\": {\"color\": [0.22, 0.38, 0.5, 1]}, "
     "\"wet_bank\": {\"color\": [0.32, 0.46, 0.3, 1]}, \"grass\": {\"color\": [0.42, 0.6, "
     "0.3, 1]}, \"rock\": {\"color\": [0.5, 0.47, 0.44, 1]}}, \"rules\": [{\"id\": "
     "\"river\", \"biome\": \"river_bed\", \"priority\": 40, \"water_distance\": [0, "
     "0.5]}, {\"id\": \"banks\", \"biome\": \"wet_bank\", \"priority\": 30, "
     "\"water_distance\": [0, 30]}, {\"id\": \"valley_sides\", \"biome\": \"rock\", "
     "\"priority\": 20, \"slope\": [35, 90]}], \"graph\": {\"format_version\": 1, "
     "\"output\": \"output\", \"nodes\": [{\"id\": \"about_shape\", \"type\": \"comment\", "
     "\"position\": [0, -200], \"params\": {\"text\": \"Shape: Hills is fbm noise from 50 "
     "m up (175 m of relief, 1440 m features) over a 2 km square, worn down by Erosion. "
     "Valley floor is a flat base at 25 m. River course is a path distance mask along a "
     "bending polyline that enters and leaves the terrain (64 m half width, 384 m "
     "falloff); Carve valley blends the eroded hills toward the floor along it with amount "
     "1. Evolve then runs landscape evolution (Stream Power) over the carved ground: rock "
     "uplift against river incision and hillslope creep, read at a 60 m reference cell, on "
     "a grid of 8 m cells (257 x 257 samples) whatever the output grid, stretched back to "
     "the input's height range, with the land running on past the map's edge (an open "
     "border: no gutter or rim frames it), so side streams join the valley through a branching "
     "network, with sediment laid down where slopes drop (deposition 0.5), which grades the "
     "valley floor downstream; pools left on it are filled (lakes fill) so the River "
     "Route runs on to the edge.\"}}, {\"id\": \"hills\", \"type\": \"noise_terrain\", "
     "\"position\": [0, 0], \"params\": {\"profile\": \"fbm\", \"base_height\": 50, "
     "\"height_variation\": 175, \"feature_size\": 1440, \"roughness\": 0.4, \"octaves\": "
     "5, \"warp_amplitude\": 128, \"warp_feature_size\": 960}}, {\"id\": \"erosion\", "
     "\"type\": \"erosion\", \"position\": [240, 0], \"params\": {\"droplet_density\": "
     "0.4, \"erosion_rate\": 0.15, \"deposition_rate\": 0.05}, \"inputs\": {\"field\": "
     "{\"node\": \"hills\"}}}, {\"id\": \"valley_floor\", \"type\": \"flat_terrain\", "
     "\"position\": [0, 200], \"params\": {\"height\": 25}}, {\"id\": \"river_course\", "
     "\"type\": \"path_distance_mask\", \"position\": [240, 200], \"params\": {\"points\": "
     "[[-160, 480], [480, 704], [928, 1184], [1472, 1312], [2208, 1664]], \"width\": 64, "
     "\"falloff\": 384}, \"inputs\": {\"field\": {\"node\": \"hills\"}}}, {\"id\": "
     "\"carve_valley\", \"type\": \"height_blend\", \"position\": [480, 0], \"params\": "
     "{\"amount\": 1}, \"inputs\": {\"a\": {\"node\": \"erosion\", \"pin\": \"field\"}, "
     "\"b\": {\"node\": \"valley_floor\"}, \"mask\": {\"node\": \"river_course\"}}}, "
     "{\"id\": \"evolve\", \"type\": \"stream_power\", \"position\": [720, 0], \"params\": "
     "{\"reference_cell\": 60, \"evolution_cell\": 8, \"fine_steps\": 2, \"steps\": 100, "
     "\"relief\": \"input\", \"lakes\": \"fill\", \"deposition\": 0.5, \"border\": "
     "\"open\"}, \"inputs\": "
     "{\"field\": {\"node\": "
     "\"carve_valley\"}}}, {\"id\": \"drainage\", \"type\": \"drainage\", \"position\": "
     "[960, 200], \"inputs\": {\"field\": {\"node\": \"evolve\", \"pin\": \"field\"}}}, "
     "{\"id\": \"about_water\", \"type\": \"comment\", \"position\": [1200, -200], "
     "\"params\": {\"text\": \"Water: Drainage of the carved valley guides River Route "
     "from its source in the middle of the valley along nonascending ground to the "
     "terrain's edge: a 16 m channel 2.5 m deep holding 1.2 m of water, narrow and shallow "
     "enough to lie in the bottom of the evolved valley (a 24 m bed 4 m deep cut its walls "
     "back into a trench). Its water goes to "
     "Biome Rules (bed and banks by distance) and to Terrain Output (the published "
     "river).\"}}, {\"id\": \"river\", \"type\": \"river_route\", \"position\": [1200, 0], "
     "\"params\": {\"source_x\": 928, \"source_z\": 1184, \"channel_width\": 16, "
     "\"channel_depth\": 2.5, \"water_depth\": 1.2}, \"inputs\": {\"drainage\": {\"node\": "
     "\"drainage\", \"pin\": \"drainage\"}}}, {\"id\": \"about_appearance\", \"type\": "
     "\"comment\", \"position\": [1440, -200], \"params\": {\"text\": \"Appearance: Biome "
     "Rules gives a river bed under the water, wet banks within 30 m of it, grass above "
     "and rock on valley sides steeper than 35 degrees.\"}}, {\"id\": \"biomes\", "
     "\"type\": \"biome_rules\", \"position\": [1440, 0], \"inputs\": {\"field\": "
     "{\"node\": \"river\", \"pin\": \"field\"}, \"water\": {\"node\": \"river\", \"pin\": "
     "\"water\"}}}, {\"id\": \"about_output\", \"type\": \"comment\", \"position\": [1680, "
     "-200], \"params\": {\"text\": \"Output: Terrain Output publishes the valley with its "
     "river (its path, end and wet area show in 'terrane water'; BeamNG exports carry it "
     "as a river object).\"}}, {\"id\": \"output\", \"type\": \"terrain_output\", "
     "\"position\": [1680, 0], \"inputs\": {\"field\": {\"node\": \"biomes\"}, \"water\": "
     "{\"node\": \"river\", \"pin\": \"water\"}}}]}}"},
};

#define BUILTIN_COUNT (sizeof builtins / sizeof builtins[0])

void trn_preset_dispose(trn_preset *p)
{
    if (!p) return;
    free(p->id);
    free(p->name);
    free(p->label);
    free(p->description);
    free(p->fields_json);
    trn_recipe_dispose(&p->recipe);
    memset(p, 0, sizeof *p);
}

void trn_presets_free(trn_preset *presets, uint32_t count)
{
    if (!presets) return;
    for (uint32_t i = 0; i < count; i++)
        trn_preset_dispose(&presets[i]);
    free(presets);
}

uint32_t trn_builtin_preset_count(void)
{
    return (uint32_t)BUILTIN_COUNT;
}

const char *trn_builtin_preset_id(uint32_t index)
{
    return index < BUILTIN_COUNT ? builtins[index].id : NULL;
}

static const builtin *find_builtin(const char *id)
{
    for (size_t i = 0; id && i < BUILTIN_COUNT; i++)
        if (strcmp(builtins[i].id, id) == 0) return &builtins[i];
    return NULL;
}

const char *trn_builtin_preset_text(const char *id)
{
    const builtin *b = find_builtin(id);
    return b ? b->text : NULL;
}

/* The message for an unknown built-in id: the ids there are. */
static trn_status unknown_builtin(const char *id, const char *file, trn_error *err)
{
    char list[600] = "";
    for (size_t i = 0; i < BUILTIN_COUNT; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, builtins[i].id + 18, sizeof list - strlen(list) - 1);
    }
    if (file)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, file, -1,
                             "no such built-in preset; built-in presets are "
                             "builtin://terrain/ followed by one of %s",
                             list);
    return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                         "no built-in preset '%.200s'; built-in presets are "
                         "builtin://terrain/ followed by one of %s",
                         id ? id : "(null)", list);
}

trn_status trn_recipe_read_source(const char *source, trn_recipe *recipe,
                                  trn_document_kind *kind_out, trn_error *err)
{
    if (!source || strncmp(source, "builtin://", 10) != 0)
        return trn_recipe_read(source, recipe, kind_out, err);
    if (kind_out) *kind_out = TRN_DOCUMENT_UNKNOWN;
    if (recipe) memset(recipe, 0, sizeof *recipe);
    if (!recipe)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_recipe_read_source: recipe is required");
    const builtin *b = find_builtin(source);
    if (!b) return unknown_builtin(source, source, err);
    return trn_recipe_parse(b->text, strlen(b->text), b->id, recipe, kind_out, err);
}

static trn_status preset_oom(const char *file, trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, file, -1, "out of memory reading a preset");
}

/* Keys of a built-in recipe that applying it sets. */
static const char *const builtin_keys[] = {
    "size",   "resolution",    "seed",  "sea_level", "landforms", "default_landform",
    "biomes", "default_biome", "rules", "graph",     NULL};

trn_status trn_builtin_preset_load(const char *id, trn_preset *p, trn_error *err)
{
    if (!p)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_builtin_preset_load: preset is required");
    memset(p, 0, sizeof *p);
    const builtin *b = find_builtin(id);
    if (!b) return unknown_builtin(id, NULL, err);
    trn_status st = trn_recipe_parse(b->text, strlen(b->text), b->id, &p->recipe, NULL, err);
    if (st) return st;
    p->version = b->version;
    p->fields = TRN_PRESET_SIZE | TRN_PRESET_CELLS_X | TRN_PRESET_CELLS_Z | TRN_PRESET_SEED |
                TRN_PRESET_DEFAULT_BIOME | TRN_PRESET_BIOMES | TRN_PRESET_RULES |
                TRN_PRESET_LANDFORMS | TRN_PRESET_SEA_LEVEL | TRN_PRESET_GRAPH;
    json_t *full = trn_rcp_recipe_to_json(&p->recipe);
    json_t *fields = json_object();
    bool ok = full && fields;
    for (const char *const *k = builtin_keys; ok && *k; k++) {
        json_t *v = json_object_get(full, *k);
        if (v) ok = json_object_set(fields, *k, v) == 0;
    }
    if (ok) p->fields_json = trn_rcp_canonical_text(fields);
    json_decref(full);
    json_decref(fields);
    p->id = trn_text_dup(b->id);
    p->name = trn_text_dup(b->name);
    p->description = trn_text_dup(b->description);
    if (!p->fields_json || !p->id || !p->name || !p->description) {
        trn_preset_dispose(p);
        return preset_oom(b->id, err);
    }
    return TRN_OK;
}

/* ---- terrain_preset documents ------------------------------------------------------------ */

/* Every key a preset document may hold, in the order suggestions prefer; the recipe parser
 * reads the others. cells_x and cells_z are read here because a preset may set one axis. */
static const trn_doc_field preset_fields[] = {
    TRN_DOC_OTHER_ROW("format_version"),
    TRN_DOC_TEXT_ROW("name", TRN_DOC_NONEMPTY | TRN_DOC_BRIEF, "a non-empty string", trn_preset,
                     name),
    TRN_DOC_TEXT_ROW("label", TRN_DOC_BRIEF, "a string", trn_preset, label),
    TRN_DOC_TEXT_ROW("description", TRN_DOC_BRIEF, "a string", trn_preset, description),
    TRN_DOC_OTHER_ROW("size"),
    TRN_DOC_COUNT_ROW("cells_x", 1, TRN_RCP_MAX_CELLS, TRN_DOC_BRIEF,
                      "a whole number 1..65536 (cells along the axis)", trn_preset,
                      recipe.cells_x),
    TRN_DOC_COUNT_ROW("cells_z", 1, TRN_RCP_MAX_CELLS, TRN_DOC_BRIEF,
                      "a whole number 1..65536 (cells along the axis)", trn_preset,
                      recipe.cells_z),
    TRN_DOC_OTHER_ROW("chunk_cells"),
    TRN_DOC_OTHER_ROW("default_biome"),
    TRN_DOC_OTHER_ROW("biomes"),
    TRN_DOC_OTHER_ROW("layers"),
    TRN_DOC_OTHER_ROW("rules"),
    TRN_DOC_OTHER_ROW("graph"),
    TRN_DOC_OTHER_ROW("seed"),
    TRN_DOC_END_ROW};
_Static_assert(TRN_RCP_MAX_CELLS == 65536, "the cells rows' messages name the limit");
/* Read here rather than by the recipe parser. */
static const char *const own_keys[] = {"format_version", "name",    "label", "description",
                                       "cells_x",        "cells_z", NULL};

/* A version other than TRN_PRESET_FORMAT_VERSION; the path stands at format_version. */
static trn_status check_version(const trn_doc *d, const json_t *v)
{
    if (json_is_integer(v) && json_integer_value(v) > (json_int_t)TRN_PRESET_FORMAT_VERSION)
        return trn_doc_fail(d, TRN_ERR_VERSION, TRN_JSON_VALUE,
                            "format_version %" JSON_INTEGER_FORMAT
                            " is newer than this build reads (%u)",
                            json_integer_value(v), TRN_PRESET_FORMAT_VERSION);
    if (!json_is_integer(v) || json_integer_value(v) != (json_int_t)TRN_PRESET_FORMAT_VERSION)
        return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %u, found %s",
                            TRN_PRESET_FORMAT_VERSION,
                            json_is_integer(v) ? "another number" : trn_doc_kind(v));
    return TRN_OK;
}

static trn_status parse_preset_root(const trn_doc *d, const json_t *root, trn_preset *p)
{
    if (!json_is_object(root))
        return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "expected a terrain_preset object, found %s", trn_doc_kind(root));
    const char *key;
    json_t *v;
    trn_status st = TRN_OK;
    json_object_foreach((json_t *)root, key, v)
    {
        const trn_doc_field *row = trn_doc_field_find(preset_fields, key);
        if (!row) {
            const bool recipe_only = strcmp(key, "landforms") == 0 ||
                                     strcmp(key, "regions") == 0 || strcmp(key, "edits") == 0 ||
                                     strcmp(key, "exclusions") == 0;
            return trn_doc_unknown_field(
                d, key, preset_fields, "the terrain_preset document",
                recipe_only ? " (a preset sets size, cells_x, cells_z, chunk_cells, seed, "
                              "default_biome, biomes, layers, rules and graph; regions, edits "
                              "and exclusions stay the recipe's own)"
                            : NULL);
        }
        trn_json_path_push_key(d->path, key);
        if (strcmp(key, "format_version") == 0)
            st = check_version(d, v);
        else
            st = trn_doc_read_field(d, row, v, p, "preset");
        trn_json_path_pop(d->path);
        if (st) return st;
    }
    const json_t *version = json_object_get(root, "format_version");
    if (!version)
        return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "missing key 'format_version' (expected %u, the version of the "
                            "terrain_preset document)",
                            TRN_PRESET_FORMAT_VERSION);
    if (!p->name) return trn_doc_missing_key(d, "name", "the preset's display name");
    return TRN_OK;
}

/* Rules and the default biome must name a biome the preset defines, when it defines them:
 * the same check a recipe makes, at the rule's position. */
static trn_status check_preset_biomes(const trn_doc *d, const trn_preset *p)
{
    const trn_recipe *r = &p->recipe;
    if (!(p->fields & TRN_PRESET_BIOMES)) return TRN_OK;
    const char *missing = NULL;
    if (r->default_biome && trn_recipe_find_biome(r, r->default_biome) < 0) {
        trn_json_path_push_key(d->path, "default_biome");
        missing = r->default_biome;
    }
    for (uint32_t i = 0; !missing && i < r->rule_count; i++) {
        if (trn_recipe_find_biome(r, r->rules[i].biome) >= 0) continue;
        trn_json_path_push_key(d->path, "rules");
        trn_json_path_push_index(d->path, i);
        trn_json_path_push_key(d->path, "biome");
        missing = r->rules[i].biome;
    }
    if (!missing) return TRN_OK;
    return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE,
                        "unknown biome '%.80s' (the preset's biomes do not define it)", missing);
}

trn_status trn_preset_parse(const char *text, size_t size, const char *path, const char *id,
                            trn_preset *p, trn_error *err)
{
    if (!p || (!text && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "trn_preset_parse: preset and text are required");
    memset(p, 0, sizeof *p);
    if (!text) text = "";
    size_t bom = size >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
                         (unsigned char)text[2] == 0xBF
                     ? 3
                     : 0;
    json_error_t je;
    json_t *root = json_loadb(text + bom, size - bom, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        size_t at = je.position > 0 ? (size_t)je.position - 1 : 0;
        trn_json_pos pos = trn_json_pos_of_offset(text, size, bom + at);
        trn_error_set(err, TRN_ERR_JSON, path, (int64_t)pos.offset, "invalid JSON: %s", je.text);
        trn_error_set_position(err, pos.line, pos.column);
        return TRN_ERR_JSON;
    }
    trn_json_path at = {{{0}}, 0};
    const trn_doc d = {text, size, path, &at, err, NULL, NULL};
    trn_recipe fields;
    trn_status st = parse_preset_root(&d, root, p);
    if (!st) st = trn_rcp_parse_partial(text, size, path, root, own_keys, &fields, err);
    if (!st) {
        uint32_t cx = p->recipe.cells_x, cz = p->recipe.cells_z;
        trn_recipe_dispose(&p->recipe);
        p->recipe = fields;
        p->recipe.cells_x = cx;
        p->recipe.cells_z = cz;
        static const struct {
            const char *key;
            uint32_t bit;
        } bits[] = {{"cells_x", TRN_PRESET_CELLS_X}, {"cells_z", TRN_PRESET_CELLS_Z},
                    {"size", TRN_PRESET_SIZE},     {"chunk_cells", TRN_PRESET_CHUNK_CELLS},
                    {"seed", TRN_PRESET_SEED},     {"default_biome", TRN_PRESET_DEFAULT_BIOME},
                    {"biomes", TRN_PRESET_BIOMES}, {"layers", TRN_PRESET_LAYERS},
                    {"rules", TRN_PRESET_RULES},   {"graph", TRN_PRESET_GRAPH}};
        for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
            if (json_object_get(root, bits[i].key)) p->fields |= bits[i].bit;
        st = check_preset_biomes(&d, p);
    }
    if (!st) {
        json_t *copy = json_deep_copy(root);
        for (const char *const *k = own_keys; copy && *k; k++)
            if (strncmp(*k, "cells_", 6) != 0) json_object_del(copy, *k);
        p->fields_json = copy ? trn_rcp_canonical_text(copy) : NULL;
        json_decref(copy);
        p->version = TRN_PRESET_FORMAT_VERSION;
        p->id = trn_text_dup(id ? id : "");
        if (!p->fields_json || !p->id) st = preset_oom(path, err);
    }
    json_decref(root);
    if (st) trn_preset_dispose(p);
    return st;
}

/* ---- projects ---------------------------------------------------------------------------- */

typedef struct preset_list {
    trn_preset *items;
    uint32_t count, cap;
} preset_list;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Read one manifest; a manifest of another content type is skipped (TRN_OK). */
static trn_status read_manifest(const char *root, const char *path, const char *rel,
                                preset_list *list, trn_error *err)
{
    trn_rcp_manifest m;
    trn_status st = trn_rcp_manifest_read(root, path, rel, TRN_PRESET_ASSET_TYPE, &m, err);
    if (st || !m.matches) return st;
    if (list->count == list->cap) {
        uint32_t cap = list->cap ? list->cap * 2 : 8;
        trn_preset *items = realloc(list->items, cap * sizeof *items);
        if (!items) return preset_oom(path, err);
        list->items = items;
        list->cap = cap;
    }
    char *text = NULL;
    size_t size = 0;
    st = trn_rcp_manifest_source(&m, &text, &size, err);
    if (st) return st;
    st = trn_preset_parse(text, size, m.source_path, m.id, &list->items[list->count], err);
    free(text);
    if (!st) list->count++;
    return st;
}

static trn_status walk(const char *root, const char *dir, const char *rel, int depth,
                       preset_list *list, trn_error *err)
{
    if (depth > 16) return TRN_OK;
    DIR *d = opendir(dir);
    if (!d)
        return trn_error_set(err, depth == 0 ? TRN_ERR_NOT_FOUND : TRN_ERR_IO, dir, -1,
                             "cannot open the project folder");
    trn_status st = TRN_OK;
    struct dirent *e;
    while (!st && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096], sub[4096];
        int n1 = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int n2 = snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        if (n1 < 0 || (size_t)n1 >= sizeof path || n2 < 0 || (size_t)n2 >= sizeof sub) continue;
        struct stat sb, lsb;
        if (stat(path, &sb) != 0 || lstat(path, &lsb) != 0) continue;
        /* A link is followed only while it stays inside the project. */
        if (S_ISLNK(lsb.st_mode) && !trn_path_inside(root, path)) continue;
        if (S_ISDIR(sb.st_mode))
            st = walk(root, path, sub, depth + 1, list, err);
        else if (S_ISREG(sb.st_mode) && ends_with(e->d_name, ".asset.json"))
            st = read_manifest(root, path, sub, list, err);
    }
    closedir(d);
    return st;
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const trn_preset *)a)->id, ((const trn_preset *)b)->id);
}

trn_status trn_project_presets_load(const char *project_dir, trn_preset **presets, uint32_t *count,
                                    trn_error *err)
{
    if (presets) *presets = NULL;
    if (count) *count = 0;
    if (!project_dir || !presets || !count)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_project_presets_load: project_dir, presets and count are "
                             "required");
    struct stat sb;
    if (stat(project_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return trn_error_set(err, TRN_ERR_NOT_FOUND, project_dir, -1,
                             "expected a project folder, found %s",
                             stat(project_dir, &sb) != 0 ? "nothing" : "a file");
    preset_list list = {NULL, 0, 0};
    trn_status st = walk(project_dir, project_dir, "", 0, &list, err);
    if (st) {
        trn_presets_free(list.items, list.count);
        return st;
    }
    if (list.count > 1) qsort(list.items, list.count, sizeof *list.items, by_id);
    for (uint32_t i = 1; i < list.count; i++)
        if (strcmp(list.items[i - 1].id, list.items[i].id) == 0) {
            trn_error_set(err, TRN_ERR_VALIDATION, project_dir, -1,
                          "two manifests give the preset id '%.200s'", list.items[i].id);
            trn_presets_free(list.items, list.count);
            return TRN_ERR_VALIDATION;
        }
    *presets = list.items;
    *count = list.count;
    return TRN_OK;
}

trn_status trn_preset_find(const char *project_dir, const char *id, trn_preset *preset,
                           trn_error *err)
{
    if (!id || !preset)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_preset_find: id and preset are required");
    memset(preset, 0, sizeof *preset);
    if (strncmp(id, "builtin://", 10) == 0) return trn_builtin_preset_load(id, preset, err);
    if (strncmp(id, "asset://", 8) != 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "expected a preset id starting with builtin:// or asset://, found "
                             "'%.200s'",
                             id);
    if (!project_dir)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                             "preset '%.200s' is a project asset; name the project folder", id);
    trn_preset *all = NULL;
    uint32_t n = 0;
    trn_status st = trn_project_presets_load(project_dir, &all, &n, err);
    if (st) return st;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(all[i].id, id) == 0) {
            *preset = all[i];
            memset(&all[i], 0, sizeof all[i]);
            trn_presets_free(all, n);
            return TRN_OK;
        }
    trn_presets_free(all, n);
    return trn_error_set(err, TRN_ERR_NOT_FOUND, project_dir, -1,
                         "no terrain_preset asset '%.200s' in the project (%u found)", id, n);
}

/* ---- applying ------------------------------------------------------------------------------ */

static trn_status recipe_copy(const trn_recipe *src, trn_recipe *dst, trn_error *err)
{
    char *text = NULL;
    size_t size = 0;
    trn_status st = trn_recipe_canonical_json(src, &text, &size, err);
    if (st) return st;
    st = trn_recipe_parse(text, size, NULL, dst, NULL, err);
    free(text);
    if (!st && (st = trn_recipe_set_base_dir(dst, src->base_dir, err))) trn_recipe_dispose(dst);
    return st;
}

trn_status trn_recipe_apply_preset(trn_recipe *recipe, const trn_preset *preset,
                                   trn_edit_policy policy, trn_error *err)
{
    if (!recipe || !preset || !preset->id || !preset->fields_json)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_recipe_apply_preset: recipe and a loaded preset are required");
    trn_status st = trn_recipe_validate(recipe, err);
    if (st) return st;
    trn_recipe work;
    if ((st = recipe_copy(recipe, &work, err))) return st;
    const trn_recipe *pr = &preset->recipe;
    uint32_t f = preset->fields;
    double sx = f & TRN_PRESET_SIZE ? pr->size_x : work.size_x;
    double sz = f & TRN_PRESET_SIZE ? pr->size_z : work.size_z;
    uint32_t cx = f & TRN_PRESET_CELLS_X ? pr->cells_x : work.cells_x;
    uint32_t cz = f & TRN_PRESET_CELLS_Z ? pr->cells_z : work.cells_z;
    if (sx != work.size_x || sz != work.size_z || cx != work.cells_x || cz != work.cells_z) {
        st = trn_recipe_change_grid(&work, sx, sz, cx, cz, policy, err);
        if (st) {
            char msg[sizeof err->message];
            if (err) {
                snprintf(msg, sizeof msg, "%s", err->message);
                trn_error_set(err, st, NULL, -1,
                              "applying preset '%.120s' changes the grid (%gx%g units, %ux%u "
                              "cells to %gx%g, %ux%u): %s",
                              preset->id, recipe->size_x, recipe->size_z, recipe->cells_x,
                              recipe->cells_z, sx, sz, cx, cz, msg);
            }
            trn_recipe_dispose(&work);
            return st;
        }
    }
    json_t *tree = trn_rcp_recipe_to_json(&work);
    json_t *fields = json_loads(preset->fields_json, 0, NULL);
    trn_recipe_dispose(&work);
    bool ok = tree && fields;
    const char *key;
    json_t *v;
    if (ok) {
        json_object_foreach(fields, key, v)
        {
            if (strcmp(key, "cells_x") == 0 || strcmp(key, "cells_z") == 0 ||
                strcmp(key, "size") == 0 || strcmp(key, "resolution") == 0)
                continue; /* done by the grid change */
            if (json_object_set(tree, key, v)) ok = false;
        }
        if (f & TRN_PRESET_SEA_LEVEL && !json_object_get(fields, "sea_level"))
            json_object_del(tree, "sea_level");
        if (f & TRN_PRESET_GRAPH && !json_object_get(fields, "graph"))
            json_object_del(tree, "graph");
        ok = ok && !json_object_set_new(tree, "preset_id", json_string(preset->id)) &&
             !json_object_set_new(tree, "preset_version", json_real(preset->version));
    }
    char *text = ok ? trn_rcp_canonical_text(tree) : NULL;
    json_decref(tree);
    json_decref(fields);
    if (!text)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory applying a preset");
    trn_recipe merged;
    st = trn_recipe_parse(text, strlen(text), NULL, &merged, NULL, err);
    free(text);
    if (st) {
        if (err) {
            char msg[sizeof err->message];
            snprintf(msg, sizeof msg, "%s", err->message);
            trn_error_set(err, st == TRN_ERR_JSON ? TRN_ERR_VALIDATION : st, NULL, -1,
                          "the recipe merged with preset '%.120s' does not validate: %s "
                          "(regions, edits and exclusions stay the recipe's own, so they must "
                          "name the preset's biomes and layers)",
                          preset->id, msg);
        }
        return st == TRN_ERR_JSON ? TRN_ERR_VALIDATION : st;
    }
    /* The folder the recipe's files resolve against stays the recipe's. */
    merged.base_dir = recipe->base_dir;
    recipe->base_dir = NULL;
    trn_recipe_dispose(recipe);
    *recipe = merged;
    return TRN_OK;
}

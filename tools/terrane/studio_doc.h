/* terrane studio's view of the recipe file as text: where the recipe object and its members lie
 * (a small span scanner), and Save's minimal textual edit (only the changed members rewritten). */
#ifndef TRN_STUDIO_DOC_H
#define TRN_STUDIO_DOC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Byte offsets [start, end) of the recipe object ('{' to '}') in a document's text: the root
 * (a bare recipe), its "recipe" member (a Terrain asset document) or, in a scene, the "recipe"
 * of the one entity's Terrain3D component. False when the text has none (or is not JSON). */
bool studio_doc_recipe_span(const char *text, size_t size, size_t *start, size_t *end);

/* The text with only what differs between file_canon (the file's recipe, canonical) and
 * session_canon (the session's) changed: strokes ("layers", "edits", "regions", "exclusions")
 * keep their text when unchanged and new ones are appended in the file's layout; any other
 * member (the graph, seed, landforms, biomes, rules, water) is edited down to the values that
 * changed: a changed parameter in place, a new member or graph node after the last one, a
 * removed one deleted with its comma. The rest of the file stays byte for byte. malloc'd; NULL
 * when the text cannot be edited that way (the caller then writes the whole recipe). */
char *studio_doc_minimal_edit(const char *text, size_t size, const json_t *file_canon,
                              const json_t *session_canon);

/* 64-bit FNV-1a of bytes: the studio's fingerprint of the file's content. */
unsigned long long studio_doc_hash(const void *data, size_t size);

#endif

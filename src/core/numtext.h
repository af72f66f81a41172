/* Numbers as the shortest text that reads back exactly, whatever the C locale (internal). */
#ifndef TRN_CORE_NUMTEXT_H
#define TRN_CORE_NUMTEXT_H

#include <jansson.h>
#include <stddef.h>

/* Integers up to 2^53 without a fraction or exponent, -0 as "0", otherwise the shortest of
 * %.1g .. %.17g that reads back as the same double; "nan", "inf", "-inf" for non-finite values
 * (which JSON cannot hold: writers check first). Always '.', never the locale's comma. */
void trn_double_text(double v, char out[40]);
/* The same for a float read back as (float) of the double. */
void trn_float_text(float v, char out[40]);
/* json_dumps(v, flags) with every real in its shortest round-trip text (trn_double_text; an
 * integral real keeps ".0", so it reads back as a real): 0.2, not jansson's 0.20000000000000001.
 * malloc'd; NULL when out of memory or v cannot be dumped. */
char *trn_json_dumps_shortest(const json_t *v, size_t flags);

/* strtod of a number written with '.', whatever LC_NUMERIC says. */
double trn_text_double(const char *text);

/* "the string \"abc\"" (cut at 40 bytes on a UTF-8 boundary), "-5", "2.5", "an object",
 * "an array", "true", "null" ...: what a JSON value is, for "expected X, found Y" messages.
 * Returns buf or a static string. */
const char *trn_json_describe(const json_t *v, char *buf, size_t size);

#endif

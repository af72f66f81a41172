/* A growable NUL-terminated text buffer (internal): appends never fail loudly, they set failed. */
#ifndef TRN_CORE_TEXTBUF_H
#define TRN_CORE_TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct trn_text_buf {
    char *data; /* NUL-terminated once anything was appended; NULL before */
    size_t len, cap;
    bool failed; /* an append ran out of memory (or size_t); the text stopped growing there */
} trn_text_buf;

/* Append n bytes of s (may hold NULs). */
void trn_text_put(trn_text_buf *b, const char *s, size_t n);
/* Append a NUL-terminated string. */
void trn_text_puts(trn_text_buf *b, const char *s);
/* A malloc'd copy of s; NULL for NULL or when out of memory. */
char *trn_text_dup(const char *s);
/* Free the text and zero the buffer. NULL is a no-op. */
void trn_text_free(trn_text_buf *b);

#endif

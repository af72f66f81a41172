/* Growable text buffers shared by the writers that build files and messages in memory. */
#include "textbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void trn_text_put(trn_text_buf *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (n > SIZE_MAX - b->len - 1) {
        b->failed = true;
        return;
    }
    const size_t need = b->len + n + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void trn_text_puts(trn_text_buf *b, const char *s)
{
    trn_text_put(b, s, strlen(s));
}

void trn_text_free(trn_text_buf *b)
{
    if (!b) return;
    free(b->data);
    memset(b, 0, sizeof *b);
}

char *trn_text_dup(const char *s)
{
    if (!s) return NULL;
    const size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The D8 direction codes of drainage.h as offsets: code d moves (TRN_D8_DI[d], TRN_D8_DJ[d]). */
#ifndef TRN_GEN_D8_H
#define TRN_GEN_D8_H

/* E, SE, S, SW, W, NW, N, NE (j grows with z), the order flow_dir codes use. */
static const int TRN_D8_DI[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int TRN_D8_DJ[8] = {0, 1, 1, 1, 0, -1, -1, -1};

#endif

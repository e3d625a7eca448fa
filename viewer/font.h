/* viewer/font.h: the bitmap font of the legend (viewer/font.c). */
#ifndef DBTR_VIEWER_FONT_H
#define DBTR_VIEWER_FONT_H

enum { DBTR__GLYPH_COLS = 5, DBTR__GLYPH_ROWS = 7 };

/* The 7 rows of character c (bit 4 of a row is its leftmost pixel); '?' for anything
 * outside printable ASCII. */
const unsigned char *dbtr__view_glyph(int c);

#endif

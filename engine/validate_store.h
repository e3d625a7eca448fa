/* engine/validate_store.h (private to engine/validate.c): where the validation engine keeps
 * what it records, the references' states after every iteration and each path's final
 * volume: in memory when they fit, else in a temporary file that has no name, so that
 * nothing is left behind however the process ends. A fixed list of slots, each written and
 * read whole or a byte range at a time. */
#ifndef DBTR_VALIDATE_STORE_H
#define DBTR_VALIDATE_STORE_H

#include <stddef.h>

typedef struct dbtr__vstore {
  size_t n;         /* slots */
  size_t *size;     /* [n] bytes in each */
  void **mem;       /* [n] each slot's memory (allocated when first written); NULL when spilled */
  int fd;           /* the spill file, -1 when the slots are in memory */
  size_t *off;      /* [n] each slot's place in the spill file */
} dbtr__vstore;

/* Opens a store of n slots of the sizes given; spill puts them in an unnamed temporary file
 * in the folder dir, which must have room for all of them (checked here). s->fd = -1 when
 * closed, so closing twice is safe. */
int dbtr__vstore_open(dbtr__vstore *s, const size_t *sizes, size_t n, int spill, const char *dir);
int dbtr__vstore_put(dbtr__vstore *s, size_t slot, const void *src);
int dbtr__vstore_get(const dbtr__vstore *s, size_t slot, void *dst);
/* Bytes [off, off + n) of a slot: written from src; read into *out, which points into the
 * slot's memory where it is in memory, else at buf, which it is read into. */
int dbtr__vstore_write(dbtr__vstore *s, size_t slot, size_t off, size_t n, const void *src);
int dbtr__vstore_read(const dbtr__vstore *s, size_t slot, size_t off, size_t n, void *buf, const void **out);
void dbtr__vstore_close(dbtr__vstore *s);

#endif

/* io/atomic_file.h: outputs appear whole or not at all.
 *
 * dbtr_atomic_begin makes a temporary name beside the target (same folder, so rename is
 * atomic); the writer writes there; dbtr_atomic_commit renames it into place and
 * dbtr_atomic_abort removes it. A failed or killed run leaves any previous file intact. */
#ifndef DBTR_ATOMIC_FILE_H
#define DBTR_ATOMIC_FILE_H

typedef struct {
  char *target; /* final path */
  char *tmp;    /* temporary path in the same folder */
} dbtr_atomic_file;

/* Checks the target's folder is writable and picks an unused temporary name. */
int dbtr_atomic_begin(dbtr_atomic_file *f, const char *target);
/* fsyncs the temporary file and renames it over the target. Frees f. */
int dbtr_atomic_commit(dbtr_atomic_file *f);
/* Removes the temporary file. Frees f; safe after commit or twice. */
void dbtr_atomic_abort(dbtr_atomic_file *f);

#endif

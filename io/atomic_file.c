/* io/atomic_file.c: temporary file beside the target, renamed into place. */
#include "io/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recon/error.h"

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

int dbtr_atomic_begin(dbtr_atomic_file *f, const char *target) {
  f->target = NULL;
  f->tmp = NULL;
  if (!target || !*target) return dbtr_err(DBTR_EINVAL, "output path is empty");
  size_t n = strlen(target);
  if (target[n - 1] == '/') return dbtr_err(DBTR_EINVAL, "%s: output path names a folder, not a file", target);
  char *tmp = malloc(n + 32);
  char *tgt = dup_str(target);
  if (!tmp || !tgt) {
    free(tmp);
    free(tgt);
    return dbtr_err(DBTR_ENOMEM, "%s: out of memory", target);
  }
  /* The temporary sits in the target's folder and starts with '.', so a listing hides it
   * and rename() stays within one file system. O_EXCL picks a name nobody else holds. */
  const char *slash = strrchr(target, '/');
  size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
  int err = EEXIST;
  for (int attempt = 0; attempt < 100 && err == EEXIST; attempt++) {
    snprintf(tmp, n + 32, "%.*s.%s.%ld.%d.tmp", (int)dir_len, target, target + dir_len, (long)getpid(), attempt);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      close(fd);
      f->tmp = tmp;
      f->target = tgt;
      return 0;
    }
    err = errno;
  }
  free(tmp);
  free(tgt);
  if (err == EEXIST) return dbtr_err(DBTR_EIO, "%s: cannot find a free temporary name in the output folder", target);
  return dbtr_err(DBTR_EIO, "%s: cannot create a file in the output folder: %s", target, strerror(err));
}

int dbtr_atomic_commit(dbtr_atomic_file *f) {
  int rc = 0;
  int fd = open(f->tmp, O_RDONLY);
  if (fd < 0 || fsync(fd) != 0) {
    rc = dbtr_err(DBTR_EIO, "%s: cannot flush the written file: %s", f->target, strerror(errno));
  }
  if (fd >= 0) close(fd);
  if (!rc && rename(f->tmp, f->target) != 0)
    rc = dbtr_err(DBTR_EIO, "%s: cannot move the written file into place: %s", f->target, strerror(errno));
  if (rc) {
    dbtr_atomic_abort(f);
    return rc;
  }
  free(f->tmp);
  free(f->target);
  f->tmp = f->target = NULL;
  return 0;
}

void dbtr_atomic_abort(dbtr_atomic_file *f) {
  if (f->tmp) remove(f->tmp);
  free(f->tmp);
  free(f->target);
  f->tmp = f->target = NULL;
}

/* engine/validate_store.c: the validation engine's recorded states, in memory or in an
 * unnamed temporary file (engine/validate_store.h). */
#define _GNU_SOURCE /* O_TMPFILE (Linux 3.11) */
#include "engine/validate_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "recon/error.h"

/* An unnamed file in dir: O_TMPFILE never gives it a name; where the file system lacks it,
 * a name made by mkstemp is removed at once, so only a crash in between could leave it. */
static int open_unnamed(const char *dir) {
  int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  char path[4096];
  if (snprintf(path, sizeof path, "%s/.dbtr-validate-XXXXXX", dir) >= (int)sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  fd = mkstemp(path);
  if (fd >= 0) unlink(path);
  return fd;
}

int dbtr__vstore_open(dbtr__vstore *s, const size_t *sizes, size_t n, int spill, const char *dir) {
  memset(s, 0, sizeof *s);
  s->fd = -1;
  s->n = n;
  int rc;
  if ((rc = dbtr_alloc((void **)&s->size, n, sizeof *s->size, "validate: recorded states")) ||
      (rc = dbtr_alloc((void **)&s->off, n, sizeof *s->off, "validate: recorded states")))
    goto fail;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    s->size[i] = sizes[i];
    s->off[i] = total;
    if (sizes[i] > (size_t)-1 - total) {
      rc = dbtr_err(DBTR_EOVERFLOW, "validate: the recorded states are too large to address");
      goto fail;
    }
    total += sizes[i];
  }
  if (!spill) {
    s->mem = calloc(n ? n : 1, sizeof *s->mem);
    if (!s->mem) rc = dbtr_err(DBTR_ENOMEM, "validate: recorded states: out of memory");
    if (rc) goto fail;
    return 0;
  }
  if ((s->fd = open_unnamed(dir)) < 0) {
    rc = dbtr_err(DBTR_EIO, "validate: cannot make a temporary file in %s for the recorded states: %s", dir,
                  strerror(errno));
    goto fail;
  }
  struct statvfs fs;
  if (fstatvfs(s->fd, &fs) == 0 && (double)fs.f_bavail * (double)fs.f_frsize < (double)total) {
    rc = dbtr_err(DBTR_ENOMEM,
                  "validate: the recorded states need %.1f GiB: more than memory can hold, and %s has %.1f GiB free "
                  "(set TMPDIR to a folder with room, or run fewer --iterations or paths)",
                  (double)total / 1073741824.0, dir, (double)fs.f_bavail * (double)fs.f_frsize / 1073741824.0);
    goto fail;
  }
  return 0;
fail:
  dbtr__vstore_close(s);
  return rc;
}

int dbtr__vstore_write(dbtr__vstore *s, size_t slot, size_t off, size_t n, const void *src) {
  if (off > s->size[slot] || n > s->size[slot] - off)
    return dbtr_err(DBTR_EINTERNAL, "validate: a write beyond a recorded state's end");
  if (s->fd < 0) {
    if (!s->mem[slot]) {
      int rc = dbtr_alloc(&s->mem[slot], s->size[slot] ? s->size[slot] : 1, 1, "validate: recorded state");
      if (rc) return rc;
    }
    memcpy((char *)s->mem[slot] + off, src, n);
    return 0;
  }
  for (size_t done = 0; done < n;) {
    ssize_t w = pwrite(s->fd, (const char *)src + done, n - done, (off_t)(s->off[slot] + off + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      return dbtr_err(DBTR_EIO, "validate: writing the recorded states to their temporary file: %s",
                      w < 0 ? strerror(errno) : "nothing written");
    done += (size_t)w;
  }
  return 0;
}

int dbtr__vstore_read(const dbtr__vstore *s, size_t slot, size_t off, size_t n, void *buf, const void **out) {
  if (off > s->size[slot] || n > s->size[slot] - off)
    return dbtr_err(DBTR_EINTERNAL, "validate: a read beyond a recorded state's end");
  if (s->fd < 0) {
    if (!s->mem[slot]) return dbtr_err(DBTR_EINTERNAL, "validate: a recorded state was read before it was written");
    *out = (const char *)s->mem[slot] + off;
    return 0;
  }
  for (size_t done = 0; done < n;) {
    ssize_t r = pread(s->fd, (char *)buf + done, n - done, (off_t)(s->off[slot] + off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      return dbtr_err(DBTR_EIO, "validate: reading the recorded states back from their temporary file: %s",
                      r < 0 ? strerror(errno) : "the file ends early");
    done += (size_t)r;
  }
  *out = buf;
  return 0;
}

int dbtr__vstore_put(dbtr__vstore *s, size_t slot, const void *src) {
  return dbtr__vstore_write(s, slot, 0, s->size[slot], src);
}

int dbtr__vstore_get(const dbtr__vstore *s, size_t slot, void *dst) {
  const void *at;
  int rc = dbtr__vstore_read(s, slot, 0, s->size[slot], dst, &at);
  if (!rc && at != dst) memcpy(dst, at, s->size[slot]);
  return rc;
}

void dbtr__vstore_close(dbtr__vstore *s) {
  for (size_t i = 0; s->mem && i < s->n; i++) free(s->mem[i]);
  free(s->mem);
  free(s->size);
  free(s->off);
  if (s->fd >= 0) close(s->fd);
  memset(s, 0, sizeof *s);
  s->fd = -1;
}

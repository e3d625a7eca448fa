/* io/atomic_file.c: temporary file beside the target, renamed into place without replacing
 * what appeared meanwhile, and removed when a signal ends the process. */
#define _GNU_SOURCE /* renameat2 and RENAME_NOREPLACE (glibc 2.28, Linux 3.15), sync_file_range */
#include "io/atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recon/error.h"

/* The temporaries being written, for the signal handler. A slot is claimed with a
 * compare-and-swap (FREE -> FILLING), its path copied, then published (LIVE); the handler
 * only reads LIVE slots and calls unlink, which is async-signal-safe. Writers rarely hold
 * more than one temporary at a time; past DBTR__LIVE_MAX a temporary is simply not
 * cleaned up on a signal, never lost track of otherwise. */
enum { DBTR__LIVE_MAX = 16, SLOT_FREE = 0, SLOT_FILLING = 1, SLOT_LIVE = 2 };
static char live_path[DBTR__LIVE_MAX][PATH_MAX];
static atomic_int live_state[DBTR__LIVE_MAX];

static int live_add(const char *path) {
  if (strlen(path) >= PATH_MAX) return -1;
  for (int i = 0; i < DBTR__LIVE_MAX; i++) {
    int expect = SLOT_FREE;
    if (atomic_compare_exchange_strong(&live_state[i], &expect, SLOT_FILLING)) {
      strcpy(live_path[i], path);
      atomic_store(&live_state[i], SLOT_LIVE);
      return i;
    }
  }
  return -1;
}

static void live_remove(int slot) {
  if (slot >= 0) atomic_store(&live_state[slot], SLOT_FREE);
}

/* The line the handler writes: two buffers, so a new line is written into the one the
 * handler is not reading and then published by flipping signal_line (-1: none). */
static char signal_buf[2][1024];
static size_t signal_len[2];
static atomic_int signal_line = -1;

void dbtr_atomic_on_signal_message(const char *line) {
  if (!line) {
    atomic_store(&signal_line, -1);
    return;
  }
  int next = atomic_load(&signal_line) == 0 ? 1 : 0;
  size_t n = strlen(line);
  if (n >= sizeof signal_buf[next]) n = sizeof signal_buf[next] - 1;
  memcpy(signal_buf[next], line, n);
  signal_len[next] = n;
  atomic_store(&signal_line, next);
}

/* The folders a run made for its outputs, removed by the handler where still empty (rmdir
 * takes no other, and is async-signal-safe). Each slot is filled once and then published. */
enum { FOLDERS_MAX = 4 };
static char folder_path[FOLDERS_MAX][1024];
static atomic_int folders_live;

void dbtr_atomic_rmdir_on_signal(const char *dir) {
  int n = atomic_load(&folders_live);
  if (n >= FOLDERS_MAX || strlen(dir) >= sizeof folder_path[n]) return;
  memcpy(folder_path[n], dir, strlen(dir) + 1);
  atomic_store(&folders_live, n + 1);
}

static void on_signal(int sig) {
  for (int i = 0; i < DBTR__LIVE_MAX; i++)
    if (atomic_load(&live_state[i]) == SLOT_LIVE) unlink(live_path[i]);
  for (int i = 0, n = atomic_load(&folders_live); i < n; i++) rmdir(folder_path[i]);
  int line = atomic_load(&signal_line);
  if (line >= 0) {
    /* If stderr is gone there is nothing to do about it: the exit code still tells. */
    ssize_t ignored = write(STDERR_FILENO, signal_buf[line], signal_len[line]);
    (void)ignored;
  }
  _exit(128 + sig);
}

void dbtr_atomic_cleanup_on_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  /* Block the others while one is handled, so two signals do not race over the list. */
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&sa.sa_mask, sigs[i]);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
  signal(SIGXFSZ, SIG_IGN);
}

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* The replacement policy of dbtr_atomic_replace_only_allowed: the targets the user allowed
 * (known by their folder and name, so "./out.tif" and "out.tif" are one target) and the
 * files this process committed (known by device and inode, so that a file another run put
 * at the same name is not taken for ours). */
typedef struct {
  dev_t dev;
  ino_t ino;
  char *name;             /* the target's name in its folder; NULL for a committed file */
  off_t size;             /* a committed file's size and time of last change, so that */
  struct timespec mtime;  /* another file given its freed inode number is not taken for it */
} file_id;
static int strict_replace;
static file_id *allowed, *own;
static size_t n_allowed, n_own, cap_allowed, cap_own;

static int push_id(file_id **list, size_t *n, size_t *cap, file_id id) {
  if (*n == *cap) {
    size_t c = *cap ? 2 * *cap : 8;
    file_id *p = realloc(*list, c * sizeof *p);
    if (!p) return -1;
    *list = p;
    *cap = c;
  }
  (*list)[(*n)++] = id;
  return 0;
}

/* target's folder and last component: 0, or -1 when the folder cannot be looked at. */
static int target_id(const char *target, file_id *id) {
  char dir[4096];
  const char *base;
  struct stat st;
  if (dbtr_path_folder(target, dir, sizeof dir, &base) || stat(dir, &st) != 0) return -1;
  id->dev = st.st_dev;
  id->ino = st.st_ino;
  id->name = (char *)base;
  return 0;
}

void dbtr_atomic_replace_only_allowed(void) { strict_replace = 1; }

int dbtr_atomic_allow_replace(const char *target) {
  file_id id = {0};
  if (target_id(target, &id)) return dbtr_err(DBTR_EIO, "%s: cannot look at the output folder: %s", target, strerror(errno));
  if (!(id.name = dup_str(id.name)) || push_id(&allowed, &n_allowed, &cap_allowed, id)) {
    free(id.name);
    return dbtr_err(DBTR_ENOMEM, "%s: out of memory", target);
  }
  return 0;
}

static int is_allowed(const char *target) {
  file_id id = {0};
  if (target_id(target, &id)) return 0;
  for (size_t i = 0; i < n_allowed; i++)
    if (allowed[i].dev == id.dev && allowed[i].ino == id.ino && !strcmp(allowed[i].name, id.name)) return 1;
  return 0;
}

/* 1 when target is, now, a regular file this process committed. */
static int is_own(const char *target) {
  struct stat st;
  if (lstat(target, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  for (size_t i = 0; i < n_own; i++)
    if (own[i].dev == st.st_dev && own[i].ino == st.st_ino && own[i].size == st.st_size &&
        own[i].mtime.tv_sec == st.st_mtim.tv_sec && own[i].mtime.tv_nsec == st.st_mtim.tv_nsec)
      return 1;
  return 0;
}

static const char *kind_of(mode_t m) {
  if (S_ISLNK(m)) return "a symbolic link (give the path of the file itself)";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

int dbtr_atomic_check_target(const char *target) {
  struct stat st;
  if (!target || !*target) return dbtr_err(DBTR_EINVAL, "output path is empty");
  if (lstat(target, &st) != 0 || S_ISREG(st.st_mode)) return 0;
  return dbtr_err(DBTR_EINVAL, "%s: is %s; dbtr writes and replaces only regular files", target, kind_of(st.st_mode));
}

int dbtr_input_check(const char *path) {
  struct stat st;
  if (!path || !*path) return dbtr_err(DBTR_EINVAL, "input path is empty");
  if (stat(path, &st) != 0) return dbtr_err(DBTR_EIO, "%s: cannot open: %s", path, strerror(errno));
  if (S_ISREG(st.st_mode)) return 0;
  return dbtr_err(DBTR_EINVAL, "%s: is %s; dbtr reads only regular files", path, kind_of(st.st_mode));
}

/* Temporaries of this dbtr end in TMP_SUFFIX and are locked for their whole life; those of
 * dbtr before it ended in LEGACY_SUFFIX and were never locked. */
#define TMP_SUFFIX ".dbtr.tmp"
#define LEGACY_SUFFIX ".tmp"
/* A legacy temporary is taken for dead only when also unchanged this long: a dbtr of that
 * time writing it changes it every few seconds, to the end. */
enum { LEGACY_IDLE_SECONDS = 600 };

/* Locks the whole new temporary (an open file description lock, F_OFD_SETLK: it stays with
 * this descriptor, is not dropped when libhdf5 or libtiff close their own descriptors of the
 * file, conflicts within one process too, and goes when the process dies, however it dies;
 * NFS passes it to the server, so other hosts see it). A lock anyone else can take then
 * proves that the temporary's writer is gone (dbtr_atomic_remove_stale). Where the file
 * system has no locks the temporary is written unlocked, and simply never cleaned up.
 * Returns -1 when a clean-up held the file, or took it away, in the moment between its
 * creation and the lock: the caller takes another name. */
static int still_named(int fd, const char *tmp) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && lstat(tmp, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int hold_lock(int fd, const char *tmp) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET; /* start 0, length 0: the whole file, however long it grows */
  if (fcntl(fd, F_OFD_SETLK, &fl) == 0) return still_named(fd, tmp) ? 0 : -1;
  if (errno != EAGAIN && errno != EACCES) return 0; /* no locks here (EINVAL, ENOLCK) */
  if (still_named(fd, tmp)) unlink(tmp);
  return -1;
}

/* The writer's pid and attempt in a temporary's name: ".NAME.PID.N" followed by suffix. */
static int temp_name_has(const char *name, size_t len, const char *suffix) {
  size_t k = strlen(suffix);
  if (name[0] != '.' || len <= k || strcmp(name + len - k, suffix) != 0) return 0;
  size_t end = len - k;
  for (int field = 0; field < 2; field++) { /* N, then PID: digits after a '.' */
    size_t d = end;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') d--;
    if (d == end || d == 0 || name[d - 1] != '.') return 0;
    end = d - 1;
  }
  return end >= 2; /* ".X": a name of at least one character */
}

int dbtr_atomic_remove_stale(const char *target, void (*removed)(const char *path, void *ctx), void *ctx) {
  char dir[4096];
  if (dbtr_path_folder(target, dir, sizeof dir, NULL)) return 0;
  DIR *d = opendir(dir);
  if (!d) return 0; /* nothing to clean where nothing can be listed; the write finds the cause */
  int dfd = dirfd(d), count = 0;
  time_t now = time(NULL);
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    int current = temp_name_has(e->d_name, len, TMP_SUFFIX);
    if (!current && !temp_name_has(e->d_name, len, LEGACY_SUFFIX)) continue;
    struct stat st, again;
    /* Only this user's regular files: another user's dead run is theirs to clean. */
    if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
      continue;
    if (!current && difftime(now, st.st_mtime) < LEGACY_IDLE_SECONDS) continue;
    int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_RDLCK; /* conflicts with the writer's F_WRLCK, not with another clean-up's */
    fl.l_whence = SEEK_SET;
    /* Held until the file is gone, and the name checked to be still this file: a writer
     * creating a file of that name meanwhile (the same pid again) cannot, as O_EXCL fails
     * while this one exists. */
    if (fcntl(fd, F_OFD_SETLK, &fl) == 0 && fstat(fd, &st) == 0 &&
        fstatat(dfd, e->d_name, &again, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == again.st_dev &&
        st.st_ino == again.st_ino && unlinkat(dfd, e->d_name, 0) == 0) {
      count++;
      if (removed) {
        char path[4096 + 258];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        removed(path, ctx);
      }
    }
    close(fd);
  }
  closedir(d);
  return count;
}

int dbtr_atomic_begin(dbtr_atomic_file *f, const char *target) {
  f->target = NULL;
  f->tmp = NULL;
  f->replace = f->existed = 0;
  f->slot = -1;
  f->fd = -1;
  int rc = dbtr_atomic_check_target(target);
  if (rc) return rc;
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
    /* The temporary's name must fit where the target's does (NAME_MAX bytes): a long NAME
     * is cut to fit (at a character's start, so UTF-8 stays whole); the PID and N still make
     * it unique, and the clean-up of stale temporaries still knows it by its ending. */
    char tail[64];
    int tail_len = snprintf(tail, sizeof tail, ".%ld.%d" TMP_SUFFIX, (long)getpid(), attempt);
    const char *base = target + dir_len;
    size_t keep = strlen(base), room = (size_t)NAME_MAX - 1 - (size_t)tail_len;
    if (keep > room) {
      keep = room;
      while (keep > 0 && ((unsigned char)base[keep] & 0xC0) == 0x80) keep--;
    }
    snprintf(tmp, n + 32, "%.*s.%.*s%s", (int)dir_len, target, (int)keep, base, tail);
    /* Registered before it exists, so no moment passes in which a signal could leave the
     * file behind; unlinking a name not yet created is harmless. */
    int slot = live_add(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 && hold_lock(fd, tmp) != 0) {
      /* A clean-up looked at it in the moment before the lock: take another name. */
      close(fd);
      fd = -1;
      errno = EEXIST;
    }
    if (fd >= 0) {
      struct stat st;
      f->fd = fd;
      f->tmp = tmp;
      f->target = tgt;
      f->slot = slot;
      f->existed = lstat(target, &st) == 0;
      f->replace = f->existed && (!strict_replace || is_allowed(target) || is_own(target));
      return 0;
    }
    err = errno;
    live_remove(slot);
  }
  free(tmp);
  free(tgt);
  if (err == EEXIST) return dbtr_err(DBTR_EIO, "%s: cannot find a free temporary name in the output folder", target);
  return dbtr_err(DBTR_EIO, "%s: cannot create a file in the output folder: %s", target, strerror(err));
}

/* Moves tmp to target only if target does not exist. renameat2 does it in one step; file
 * systems without it (some network ones) get link + unlink, which fails the same way on an
 * existing target. */
static int rename_noreplace(const char *tmp, const char *target) {
  if (renameat2(AT_FDCWD, tmp, AT_FDCWD, target, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (link(tmp, target) != 0) return -1;
  unlink(tmp);
  return 0;
}

void dbtr_atomic_written(const dbtr_atomic_file *f) {
#if defined(SYNC_FILE_RANGE_WRITE)
  /* Offset 0 and length 0: the whole file; pages already on their way are skipped. */
  if (f->fd >= 0) sync_file_range(f->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
  (void)f; /* no such call here: the commit's fsync writes everything */
#endif
}

int dbtr_path_folder(const char *path, char *dir, size_t len, const char **base) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) : 0;
  if (n >= len || len < 2) return -1;
  memcpy(dir, slash ? path : ".", slash ? (n ? n : 1) : 2);
  dir[slash ? (n ? n : 1) : 1] = '\0';
  if (base) *base = slash ? slash + 1 : path;
  return 0;
}

/* Flushes the folder that holds path, so that a rename into it survives a power cut as the
 * file's contents do. File systems that cannot flush a folder (EINVAL: some network and FUSE
 * ones) keep the rename as they keep everything else. */
static int sync_folder(const char *path) {
  char dir[4096];
  if (dbtr_path_folder(path, dir, sizeof dir, NULL)) return 0; /* open() could not have taken such a path either */
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0; /* a folder we may write in but not read: nothing to flush with */
  int rc = fsync(fd) == 0 || errno == EINVAL || errno == ENOTSUP ? 0 : errno;
  close(fd);
  return rc;
}

/* Whether the commit may replace what is at the target now. By default, what existed at
 * begin. Under dbtr_atomic_replace_only_allowed, what existed at begin and the user allowed,
 * or a file of this process's own, looked at again just before the rename: a file another
 * run put there since begin is not ours, and is kept. */
static int may_replace(const dbtr_atomic_file *f) {
  if (!f->replace) return 0;
  return !strict_replace || is_allowed(f->target) || is_own(f->target);
}

int dbtr_atomic_commit(dbtr_atomic_file *f) {
  int rc = 0;
  struct stat st;
  if (fsync(f->fd) != 0)
    rc = dbtr_err(DBTR_EIO, "%s: cannot flush the written file: %s", f->target, strerror(errno));
  /* The temporary's inode becomes the target's: remembered, so that this process may save
   * over its own file again (a checkpoint every K iterations) and over nothing else. */
  file_id mine = {0};
  int have_mine = !rc && fstat(f->fd, &st) == 0;
  if (have_mine) {
    mine.dev = st.st_dev;
    mine.ino = st.st_ino;
    mine.size = st.st_size;
    mine.mtime = st.st_mtim;
  }
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  if (!rc && (may_replace(f) ? rename(f->tmp, f->target) : rename_noreplace(f->tmp, f->target)) != 0) {
    if (errno == EEXIST && f->existed)
      rc = dbtr_err(DBTR_EINVAL, "%s: exists and this run may not replace it (use --force to overwrite it); "
                    "it was left as it is and this run's output discarded",
                    f->target);
    else if (errno == EEXIST)
      rc = dbtr_err(DBTR_EINVAL, "%s: appeared while dbtr was writing it (another run writing the same file?); "
                    "it was left as it is and this run's output discarded",
                    f->target);
    else
      rc = dbtr_err(DBTR_EIO, "%s: cannot move the written file into place: %s", f->target, strerror(errno));
  }
  if (rc) {
    dbtr_atomic_abort(f);
    return rc;
  }
  /* A failed push only means that this file cannot be saved over again without --force. */
  if (have_mine && strict_replace) (void)push_id(&own, &n_own, &cap_own, mine);
  int err = sync_folder(f->target);
  if (err)
    rc = dbtr_err(DBTR_EIO, "%s: written and in place, but its folder could not be flushed to the disk: %s", f->target,
                  strerror(err));
  live_remove(f->slot);
  free(f->tmp);
  free(f->target);
  f->tmp = f->target = NULL;
  f->slot = -1;
  return rc;
}

void dbtr_atomic_abort(dbtr_atomic_file *f) {
  /* A struct that never went through begin (zero-initialised) holds no slot and no file:
   * its fd 0 is not the temporary's. */
  if (f->tmp) {
    if (f->fd >= 0) close(f->fd);
    remove(f->tmp);
    live_remove(f->slot);
  }
  f->fd = -1;
  free(f->tmp);
  free(f->target);
  f->tmp = f->target = NULL;
  f->slot = -1;
}

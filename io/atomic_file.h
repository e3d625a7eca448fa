/* io/atomic_file.h: outputs appear whole or not at all, and never replace what they must not.
 *
 * dbtr_atomic_begin makes a temporary beside the target (same folder, so rename is
 * atomic), .NAME.PID.N.dbtr.tmp, locked while it lives; the writer writes there;
 * dbtr_atomic_commit renames it into place and dbtr_atomic_abort removes it. A failed or killed run leaves any previous file intact.
 *
 * What may be replaced (docs/errors.md, "Outputs"):
 * - Only a regular file. A target that is a device, FIFO, socket or folder is refused, and
 *   so is a symbolic link: replacing the link with a file would cut it from what it points
 *   to, and writing through it would put the output somewhere the command line does not
 *   name. The caller decides about --force before begin; begin refuses what no --force may
 *   replace.
 * - Only a file that existed when the write began. A target that appears while dbtr
 *   writes (another run writing the same -o) is left alone: the commit fails with
 *   DBTR_EINVAL and the temporary is removed, so of two runs the later one loses, loudly.
 * - In a program that called dbtr_atomic_replace_only_allowed (the dbtr command), only a
 *   file the user allowed (--force, through dbtr_atomic_allow_replace) or one this process
 *   wrote itself (a checkpoint saved again). Without that call, a library caller's target
 *   that existed at begin is replaced, as dbtr_scan_write documents. */
#ifndef DBTR_ATOMIC_FILE_H
#define DBTR_ATOMIC_FILE_H

#include <stddef.h>

typedef struct {
  char *target; /* final path */
  char *tmp;    /* temporary path in the same folder */
  int replace;  /* 1: the target existed at begin, and the commit may replace it */
  int existed;  /* 1: the target existed at begin (whether or not it may be replaced) */
  int slot;     /* the temporary's place in the signal clean-up list, or -1 */
  int fd;       /* the temporary, open from begin to commit or abort, for the writeback */
} dbtr_atomic_file;

/* Refuses a target that exists and is not a regular file (a symbolic link included), with
 * a message naming it and what it is; 0 when the target is absent or a regular file. The
 * commands call it before any work, begin calls it again. */
int dbtr_atomic_check_target(const char *target);
/* The same rule for inputs: a path that is missing fails with DBTR_EIO ("cannot open"), one
 * that is a FIFO, socket, device or folder with DBTR_EINVAL ("not a regular file"), before
 * anything opens it, so a FIFO cannot block a read for ever. Symbolic links to regular
 * files are followed: reading through them changes nothing. */
int dbtr_input_check(const char *path);
/* Removes from target's folder the temporaries that runs of dbtr left when they died
 * without cleaning up (SIGKILL, a power cut, a crash): each is named .NAME.PID.N.dbtr.tmp
 * and locked by its writer for its whole life, so a lock that can be taken proves that its
 * writer is gone, on this host or another one sharing the folder, whatever became of its
 * PID. Those of an older dbtr (.NAME.PID.N.tmp, never locked) go when unlocked and
 * unchanged for 10 minutes. Only the user's own regular files are looked at. Calls
 * removed(path, ctx) for each file removed; returns how many. Never fails: what cannot be
 * looked at or removed is left. */
int dbtr_atomic_remove_stale(const char *target, void (*removed)(const char *path, void *ctx), void *ctx);
/* Checks the target, that its folder is writable, and picks an unused temporary name. */
int dbtr_atomic_begin(dbtr_atomic_file *f, const char *target);
/* Starts the disk writing what the writer has written to the temporary so far (by any
 * descriptor: the page cache is the file's), without waiting for it. A writer of a large
 * file calls it after each piece of some megabytes: the disk then works while the writer
 * goes on, and the commit's fsync finds little left to wait for, instead of all of it
 * (docs/performance.md, "Reading and writing"). A hint: a write error shows at the commit. */
void dbtr_atomic_written(const dbtr_atomic_file *f);
/* The folder that holds path into dir (len bytes): its part before the last '/', "/" for a
 * file at the root, "." for a bare name; and, when base is not NULL, the last component.
 * -1 when dir is too small. */
int dbtr_path_folder(const char *path, char *dir, size_t len, const char **base);
/* fsyncs the temporary file, renames it over the target, and fsyncs the folder, so that the
 * new name is on the disk too. Frees f. DBTR_EIO when the folder cannot be flushed: the
 * file is then complete and in place, its name perhaps not yet durable. */
int dbtr_atomic_commit(dbtr_atomic_file *f);
/* Removes the temporary file. Frees f; safe after commit or twice. */
void dbtr_atomic_abort(dbtr_atomic_file *f);

/* For programs that replace a file only when the user says so: from this call on, a commit
 * replaces an existing target only if dbtr_atomic_allow_replace named it (and it existed at
 * begin), or if the target is a file this process committed itself. Anything else is left
 * as it is and the commit fails with DBTR_EINVAL, whenever the file appeared: the decision
 * is the commit's, made by renameat2(RENAME_NOREPLACE) or link(), never by a look at begin.
 * Not thread-safe against itself: call it, and dbtr_atomic_allow_replace, before the
 * writing starts. */
void dbtr_atomic_replace_only_allowed(void);
/* Allows the commits to replace target (the user gave --force). The target is known by its
 * folder (device and inode) and name, so another spelling of the same path is the same
 * target. DBTR_ENOMEM or DBTR_EIO (its folder cannot be looked at) on failure. */
int dbtr_atomic_allow_replace(const char *target);

/* For programs (the dbtr command): on SIGINT, SIGTERM or SIGHUP, remove every temporary
 * still being written and exit with 128 + the signal (130, 143, 129), so an interrupted
 * write leaves nothing behind; and ignore SIGXFSZ, so a file-size limit makes the write
 * fail with EFBIG and a message naming the file instead of killing the process. A library
 * caller that handles signals itself does not call this. */
void dbtr_atomic_cleanup_on_signals(void);
/* A line for that handler to write to stderr before it exits (say, how to resume the
 * interrupted run), or NULL for none. The line is copied (up to 1023 bytes) into a buffer
 * the handler writes with write(2), the one thing it can do safely; a later call replaces
 * it. */
void dbtr_atomic_on_signal_message(const char *line);
/* A folder the program made for its outputs (dbtr validate's --report, --save-diffs), which
 * that handler removes if it is still empty, so an interrupted run leaves no empty folder. A
 * few (4) at most; the program's first call comes before any other thread writes. */
void dbtr_atomic_rmdir_on_signal(const char *dir);

#endif

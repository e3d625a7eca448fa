/* tests/tmpdir.h: a temporary folder per test case, so that cases can run in parallel, the
 * checks that a failed write left nothing behind, and small text files to write and compare. */
#ifndef DBTR_TEST_TMPDIR_H
#define DBTR_TEST_TMPDIR_H

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static inline int tmp_make(char dir[64]) {
  snprintf(dir, 64, "/tmp/dbtr_test_XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

/* A small file of text at path, written whole; 0 or -1. */
static inline int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* 1 when the file at path holds exactly text (at most 63 bytes). */
static inline int file_is(const char *path, const char *text) {
  char buf[64] = {0};
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return n == strlen(text) && memcmp(buf, text, n) == 0;
}

/* Paths here are short: "/tmp/dbtr_test_XXXXXX/" and a name of a few characters. */
static inline int tmp_path(char out[256], const char *dir, const char *name) {
  return snprintf(out, 256, "%s/%s", dir, name);
}

/* Entries in dir other than . and .. (temporaries included: they start with '.'). */
static inline int tmp_count(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return -1;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static inline void tmp_remove(const char *dir) {
  DIR *d = opendir(dir);
  char p[512]; /* a folder name and a d_name of up to 256 */
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    remove(p); /* remove() takes empty folders too */
  }
  closedir(d);
  rmdir(dir);
}

/* Runs write_fn(arg) in a child process whose files may not grow past limit bytes, a
 * stand-in for a full disk: the write fails part way with EFBIG instead of the process
 * being killed. Returns 1 if write_fn returned 1 (it saw the failure it expected). The
 * limit touches no other test case. */
static inline int run_with_file_limit(long limit, int (*write_fn)(void *), void *arg) {
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    struct rlimit lim = {(rlim_t)limit, (rlim_t)limit};
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &lim);
    _exit(write_fn(arg) ? 0 : 1);
  }
  int status = 0;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#endif

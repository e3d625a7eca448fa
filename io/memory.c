/* io/memory.c: the memory budget (io/memory.h), read from the system's files. */
#include "io/memory.h"

#include <stdio.h>
#include <stdlib.h>

#include "recon/error.h"

/* A number from a one-line file (/sys/fs/cgroup/memory.max: a number or "max"), or -1. */
static double read_number(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1.0;
  char line[64] = "";
  char *ok = fgets(line, sizeof line, f);
  fclose(f);
  char *end;
  double v = ok ? strtod(line, &end) : -1.0;
  return ok && end != line ? v : -1.0;
}

/* MemAvailable of /proc/meminfo in bytes, or -1. */
static double meminfo_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return -1.0;
  char line[128];
  double kib = -1.0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
  fclose(f);
  return kib < 0.0 ? -1.0 : kib * 1024.0;
}

double dbtr_mem_available(void) {
  const char *env = getenv("DBTR_MEMORY_LIMIT");
  if (env && *env) {
    char *end;
    double v = strtod(env, &end);
    if (end != env && *end == '\0' && v >= 0.0) return v;
  }
  double avail = meminfo_available();
  double max = read_number("/sys/fs/cgroup/memory.max"), cur = read_number("/sys/fs/cgroup/memory.current");
  if (max >= 0.0 && cur >= 0.0 && (avail < 0.0 || max - cur < avail)) avail = max - cur > 0.0 ? max - cur : 0.0;
  return avail;
}

int dbtr_mem_check(double bytes, const char *what) {
  double avail = dbtr_mem_available();
  if (avail < 0.0 || bytes <= avail) return 0;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  return dbtr_err(DBTR_ENOMEM, "%s needs %.3g GiB of memory; %.3g GiB are available%s", what, bytes / gib,
                  avail / gib, getenv("DBTR_MEMORY_LIMIT") ? " (DBTR_MEMORY_LIMIT)" : "");
}

/* recon/error.c: error codes, messages and checked allocation. */
/* Linux's MADV_HUGEPAGE (dbtr_alloc), beside the POSIX the build asks for. */
#define _DEFAULT_SOURCE
#include "recon/error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static _Thread_local char dbtr__msg[1024];
static _Thread_local int dbtr__msg_code;

const char *dbtr_strerror(int code) {
  switch (code) {
  case DBTR_OK: return "success";
#define DBTR__ERR_TEXT(name, exit_code, text) \
  case DBTR_E##name: return text;
    DBTR_ERRORS(DBTR__ERR_TEXT)
#undef DBTR__ERR_TEXT
  default: return "unknown error";
  }
}

const char *dbtr_err_name(int code) {
  switch (code) {
  case DBTR_OK: return "DBTR_OK";
#define DBTR__ERR_NAME(name, exit_code, text) \
  case DBTR_E##name: return "DBTR_E" #name;
    DBTR_ERRORS(DBTR__ERR_NAME)
#undef DBTR__ERR_NAME
  default: return NULL;
  }
}

int dbtr_exit_code(int code) {
  switch (code) {
  case DBTR_OK: return 0;
#define DBTR__ERR_EXIT(name, exit_code, text) \
  case DBTR_E##name: return exit_code;
    DBTR_ERRORS(DBTR__ERR_EXIT)
#undef DBTR__ERR_EXIT
  default: return 70;
  }
}

/* The length of the valid UTF-8 sequence at s (2 to 4 bytes, no overlong form, no
 * surrogate, at most U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s) {
  size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
  if (n == 0 || s[0] > 0xf4) return 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90) ||
      (s[0] == 0xf4 && s[1] > 0x8f))
    return 0;
  return n;
}

void dbtr_sanitize(char *s) {
  unsigned char *p = (unsigned char *)s;
  while (*p) {
    size_t n = *p < 0x80 ? 1 : utf8_len(p);
    if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
      *p++ = '?';
      continue;
    }
    p += n;
  }
}

int dbtr_err(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dbtr__msg, sizeof dbtr__msg, fmt, ap);
  va_end(ap);
  dbtr_sanitize(dbtr__msg);
  dbtr__msg_code = code;
  return code;
}

const char *dbtr_errmsg(void) {
  if (dbtr__msg[0] == '\0') return dbtr_strerror(dbtr__msg_code);
  return dbtr__msg;
}

void dbtr_err_clear(void) {
  dbtr__msg[0] = '\0';
  dbtr__msg_code = DBTR_OK;
}

int dbtr_size_mul(size_t a, size_t b, size_t *out, const char *what) {
  *out = 0;
  if (a != 0 && b > SIZE_MAX / a)
    return dbtr_err(DBTR_EOVERFLOW, "%s: %zu x %zu overflows the address space", what, a, b);
  *out = a * b;
  return 0;
}

int dbtr_size_mul3(size_t a, size_t b, size_t c, size_t *out, const char *what) {
  size_t ab = 0;
  int rc = dbtr_size_mul(a, b, &ab, what);
  if (rc) return rc;
  if (ab != 0 && c > SIZE_MAX / ab)
    return dbtr_err(DBTR_EOVERFLOW, "%s: %zu x %zu x %zu overflows the address space", what, a, b, c);
  *out = ab * c;
  return 0;
}

int dbtr_alloc(void **out, size_t n, size_t elem, const char *what) {
  size_t bytes = 0;
  int rc = dbtr_size_mul(n, elem, &bytes, what);
  *out = NULL;
  if (rc) return rc;
  if (bytes == 0) bytes = 1;
  void *p = NULL;
  /* A large buffer (a volume, a scan's data) on 2 MiB boundaries, with the kernel asked for
   * huge pages: its first touch then faults a 2 MiB page at a time instead of 4 KiB, which at
   * thesis size (496 MB) is 248 faults, not 121,000. A hint: without transparent huge pages
   * the memory is as malloc's. free() releases it as any other. */
  if (bytes >= ((size_t)64 << 20)) {
    if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0) p = NULL;
#ifdef MADV_HUGEPAGE
    if (p) madvise(p, bytes, MADV_HUGEPAGE);
#endif
  } else {
    p = malloc(bytes);
  }
  if (!p)
    return dbtr_err(DBTR_ENOMEM, "%s: cannot allocate %.3f GiB", what, (double)bytes / (1024.0 * 1024.0 * 1024.0));
  *out = p;
  return 0;
}

/* io/scan_bulk.c: the scan's large datasets read at the speed of the disk (io/scan_h5.h).
 *
 * H5Dread converting float32 to double goes through one thread and a 1 MiB conversion
 * buffer: about 0.2 s for the thesis scan's 165 MB on a machine whose read(2) of the file
 * takes 0.09 s, and twice that on the GPU host (docs/performance.md, "Reading and
 * writing"). A dataset stored contiguously, uncompressed, in one of the scan's numeric
 * types and in the machine's byte order is a plain run of bytes at a known offset of the
 * file; such a dataset is read here with pread(2) on libhdf5's own descriptor, in blocks
 * that threads read and convert to double side by side. Anything else (chunks, filters,
 * another byte order, another type) is left to H5Dread, which handles every case. */
#define _XOPEN_SOURCE 700 /* pread */
#include <errno.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/scan_h5.h"
#include "recon/error.h"

/* Values per block: 1 MiB of doubles, so a thread's staging buffer stays in its cache and
 * the thesis scan's 41 million values make about 300 blocks to share among the threads. */
enum { BLOCK = 1 << 17 };

typedef enum { AS_FLOAT, AS_DOUBLE, AS_U16, AS_U32, AS_NONE } stored_type;

/* Which of the types read here the dataset stores, in this machine's byte order. */
static stored_type stored_as(hid_t d, size_t *elem) {
  hid_t t = H5Dget_type(d);
  stored_type s = AS_NONE;
  if (t >= 0) {
    const hid_t native[4] = {H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, H5T_NATIVE_UINT16, H5T_NATIVE_UINT32};
    for (int i = 0; i < 4 && s == AS_NONE; i++)
      if (H5Tequal(t, native[i]) > 0) s = (stored_type)i;
    *elem = H5Tget_size(t);
    H5Tclose(t);
  }
  return s;
}

/* libhdf5's descriptor of the file, when its driver is the plain POSIX one; -1 otherwise.
 * The file must be the one that holds the dataset (H5Iget_file_id): an offset from
 * H5Dget_offset is an offset in that file, which a link may make another than the scan's. */
static int posix_fd(hid_t file) {
  hid_t fapl = H5Fget_access_plist(file);
  int *fd = NULL;
  int ok = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(file, fapl, (void **)&fd) >= 0 && fd;
  if (fapl >= 0) H5Pclose(fapl);
  return ok ? *fd : -1;
}

/* bytes at offset into buf: 0, an errno, or -1 when the file ends first. */
static int pread_all(int fd, unsigned char *buf, size_t bytes, uint64_t offset) {
  while (bytes > 0) {
    ssize_t got = pread(fd, buf, bytes, (off_t)offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno ? errno : EIO;
    if (got == 0) return -1;
    buf += got;
    bytes -= (size_t)got;
    offset += (uint64_t)got;
  }
  return 0;
}

/* n stored values at src (any alignment) to doubles. The switch sits outside the loops so
 * that each loop is a plain conversion the compiler can vectorise. */
#define DBTR__TO_DOUBLE(type)                       \
  for (size_t i = 0; i < n; i++) {                  \
    type v_;                                        \
    memcpy(&v_, src + i * sizeof(type), sizeof v_); \
    dst[i] = (double)v_;                            \
  }
static void to_double(const unsigned char *src, double *dst, size_t n, stored_type s) {
  if (s == AS_FLOAT)
    DBTR__TO_DOUBLE(float)
  else if (s == AS_U16)
    DBTR__TO_DOUBLE(uint16_t)
  else
    DBTR__TO_DOUBLE(uint32_t)
}
#undef DBTR__TO_DOUBLE

/* Block b of the dataset at offset into out: doubles straight in, other types through
 * stage. 0, an errno, or -1 when the file ends first. */
static int read_block(int fd, uint64_t offset, stored_type s, size_t elem, size_t n, size_t b, unsigned char *stage,
                      double *out) {
  size_t lo = b * BLOCK, m = n - lo < BLOCK ? n - lo : BLOCK;
  uint64_t at = offset + (uint64_t)lo * elem;
  if (s == AS_DOUBLE) return pread_all(fd, (unsigned char *)(out + lo), m * elem, at);
  int st = pread_all(fd, stage, m * elem, at);
  if (!st) to_double(stage, out + lo, m, s);
  return st;
}

int dbtr__h5_read_bulk(hid_t d, size_t n, double *out, const char *path, const char *name) {
  size_t elem = 0;
  stored_type s = stored_as(d, &elem);
  hid_t dcpl = H5Dget_create_plist(d);
  int contiguous = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS;
  if (dcpl >= 0) H5Pclose(dcpl);
  haddr_t offset = contiguous && s != AS_NONE ? H5Dget_offset(d) : HADDR_UNDEF;
  hid_t file = offset != HADDR_UNDEF ? H5Iget_file_id(d) : H5I_INVALID_HID;
  int fd = file >= 0 ? posix_fd(file) : -1;
  /* The descriptor stays libhdf5's, open while the dataset is. */
  if (file >= 0) H5Fclose(file);
  if (fd < 0) return 0;
  size_t blocks = n / BLOCK + (n % BLOCK != 0);
  int *status = NULL;
  int rc = dbtr_alloc((void **)&status, blocks, sizeof *status, name);
  if (rc) return rc;
  /* Each block is read and converted by one thread into its own part of out; the first
   * failing block in file order names the failure, whatever the thread count. */
#pragma omp parallel if (blocks > 1)
  {
    unsigned char *stage = s == AS_DOUBLE ? NULL : malloc((size_t)BLOCK * elem);
#pragma omp for schedule(static)
    for (size_t b = 0; b < blocks; b++)
      status[b] = s != AS_DOUBLE && !stage ? ENOMEM : read_block(fd, (uint64_t)offset, s, elem, n, b, stage, out);
    free(stage);
  }
  size_t b = 0;
  while (b < blocks && status[b] == 0) b++;
  int st = b < blocks ? status[b] : 0;
  free(status);
  if (st == -1)
    return dbtr_err(DBTR_EFORMAT, "%s: %s: the file ends inside the dataset's data (truncated?)", path, name);
  if (st == ENOMEM) return dbtr_err(DBTR_ENOMEM, "%s: %s: out of memory for the read buffers", path, name);
  if (st) return dbtr_err(DBTR_EIO, "%s: %s: cannot read: %s", path, name, strerror(st));
  return 1;
}

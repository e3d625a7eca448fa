/* kernels/gpu_host.cu: the host side of every GPU backend, compiled once for all modes. It
 * plans the device memory (one arena, within the budget), uploads the geometry, batches the
 * ray records, spreads a backend over several GPUs, and serves the backend interface
 * (recon/backend.h: load, subset, get_volume, set_volume, get_projections, destroy; a
 * projector's project). The arithmetic is the mode's: each row of recon/modes.def has an
 * object of kernels/mode_kernels.cu whose launch table (dbtr__gpu_kernels, kernels/gpu_internal.h) this
 * file calls, and the buffers here are bytes of that mode's element sizes.
 *
 * Memory (kernels/gpu.h, dbtr_gpu_memory): one arena, planned within the budget. When the
 * ray records of every view do not fit, the forward projection makes each ray's record where
 * it uses it, in one launch over the views as unbatched, and the records are made again for
 * `batch` views at a time as the separable set-up and the per-pixel gather reach them: a
 * record is computed by one compiled function wherever it is made (kernels/mode_kernels.cu,
 * ray_of), so it has the same bits; and the per-pixel gather carries each voxel's two sums
 * from one batch to the next in the mode's type, the order of their terms unchanged. Results
 * are the unbatched run's, bit for bit (test_gpu).
 *
 * Several GPUs (docs/ARCHITECTURE.md): each part projects its band of detector rows of each
 * subset's views and updates its band of voxel rows, holding only the rows this work reads
 * (separable views; the section "bands" below). The pixel terms a part computes go to the parts
 * whose voxels read them, the block partial sums of the data fit to the first part, into the
 * places one launch would have given them; the voxel rows a part updates go to the parts whose
 * rays read them, each part on streams of its own, and no part waits for the host (the section
 * "several GPUs" below). Every sum keeps its one-GPU order. */
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda_util.h"
#include "kernels/gpu.h"
#include "kernels/gpu_internal.h"
#include "kernels/layout.h"
#include "recon/update.h"

typedef dbtr__gpu_part part;

/* Whether the ray records are made batch by batch (the budget did not hold every view's). */
static int batched(const part *s) { return s->batch < s->n_views; }

/* The elements a part's buffers hold (kernels/gpu_internal.h): a view's rows of y, i0, proj and
 * the ray records; a view's pixels of e (pairs); the voxels of vol. */
static size_t held_pix(const part *s) { return (size_t)(s->phi - s->plo) * (size_t)s->n_cols; }
static size_t held_e(const part *s) { return (size_t)(s->ehi - s->elo) * (size_t)s->n_cols; }
static size_t held_vox(const part *s) { return (size_t)s->nz * (size_t)(s->vhi - s->vlo) * (size_t)s->nx; }

/* The voxel rows of a band are whole groups of the separable gather (DBTR_GROUP rows, whole
 * micro-tiles of the per-pixel one); the rows a part holds beyond what the geometry says it
 * reads (the section "bands" below). */
enum { DBTR__BAND_ROWS = DBTR_GROUP, DBTR__BAND_MARGIN = 2 };
static_assert(DBTR_GROUP % DBTR_MICRO == 0, "a band of voxel rows is whole micro-tiles of the per-pixel gather");

/* Makes part s's device the current one: every entry point starts here, so that backends on
 * different devices can live side by side in one process. */
static int use(const part *s) {
  DBTR_CUDA_TRY(cudaSetDevice(s->dev));
  return 0;
}

static void part_free(part *s) {
  if (!s) return;
  cudaSetDevice(s->dev);
  for (int d = 0; d < DBTR_GPUS_MAX; d++) {
    if (s->send[d]) {
      cudaStreamSynchronize(s->send[d]);
      cudaStreamDestroy(s->send[d]);
    }
    if (s->sent[d]) cudaEventDestroy(s->sent[d]);
  }
  if (s->done) cudaEventDestroy(s->done);
  dbtr__gpu_arena_free(&s->arena);
  free(s->subset_start);
  free(s->sched_host);
  free(s);
}

static void destroy(dbtr_backend *b) {
  part *s = (part *)b->impl;
  if (s)
    for (int d = s->n_parts - 1; d >= 0; d--) part_free(s->parts[d]);
  free(b);
}

/* The gather back projection of views[0 .. n) with the update. The separable gather reads
 * no ray records; the per-pixel one, batched, runs a batch at a time after its records,
 * carrying the sums. */
static int launch_gather(part *s, const int *views, int n) {
  if (s->sep.on) return s->k->gather_sep(s, views, n);
  int step = batched(s) ? (int)s->batch : n, rc;
  for (int b0 = 0; b0 < n; b0 += step) {
    int nb = n - b0 < step ? n - b0 : step;
    if (batched(s) && (rc = s->k->make_rays(s, views + b0, (size_t)nb, 0, s->n_rows))) return rc;
    if ((rc = s->k->gather_pixels(s, views + b0, nb, batched(s), batched(s) ? s->carry : NULL, b0 == 0, b0 + nb >= n)))
      return rc;
  }
  return 0;
}

/* A list of views: the subset schedule from offset off (all 0), or every view (all 1); each
 * part has it on its own device, and the first part on the host. */
static const int *list_of(const part *p, int all, size_t off) { return all ? p->all_views : p->sched + off; }
static int host_view(const part *s, int all, size_t off, int i) { return all ? i : s->sched_host[off + (size_t)i]; }

/* The share [*p0, *p1) of n items that part d of parts takes: contiguous, in order. */
static void share(int n, int d, int parts, int *p0, int *p1) {
  *p0 = (int)((long long)n * d / parts);
  *p1 = (int)((long long)n * (d + 1) / parts);
}

/* ---- several GPUs ----
 * Every part queues its work without the host waiting: its compute on its device's default
 * stream; after it, on its send streams (non-blocking; one to each other part, so that the copies
 * to the parts run at once), its results to the parts that read them. Only halos cross (the
 * section "bands"), a few per cent of a phase's compute, not worth splitting the compute into
 * pieces whose sends overlap the next piece's: on 4 H200s one launch a part was faster than
 * pieces of halving size (docs/performance.md). At the end of a phase every part's default
 * stream waits for every other part's sends, and the next phase starts from there: the forward
 * projection of the next subset reads the voxel rows its rays reach, the gather the pixel terms
 * its voxels' footprints cover. No buffer is written while it is read: a part sends the pixel
 * terms of its own detector rows and the voxels of its own rows, which no other part computes,
 * into buffers the receiver reads only after the phase's end; and a part's sends of a phase
 * follow the end of the phase before, by which every receiver has finished reading what they
 * overwrite (the end of a phase marks every part's compute, phase_end). */

/* Queues on each of part p's send streams (those of a backend of n parts), after its compute so
 * far, the wait for it: through event ev, recorded on p's default stream. */
static int send_after_compute(part *p, int n, cudaEvent_t ev) {
  DBTR_CUDA_TRY(cudaEventRecord(ev, 0));
  for (int d2 = 0; d2 < n; d2++)
    if (p->send[d2]) DBTR_CUDA_TRY(cudaStreamWaitEvent(p->send[d2], ev, 0));
  return 0;
}

/* The 2-D copy of `height` runs of `width` bytes, `spitch` apart from src on device sdev, to
 * `dpitch` apart from dst on device ddev. */
static cudaMemcpy3DPeerParms runs_copy(char *dst, int ddev, size_t dpitch, const char *src, int sdev, size_t spitch,
                                       size_t width, size_t height) {
  cudaMemcpy3DPeerParms c;
  memset(&c, 0, sizeof c);
  c.srcPtr = make_cudaPitchedPtr((void *)src, spitch, width, height);
  c.dstPtr = make_cudaPitchedPtr(dst, dpitch, width, height);
  c.srcDevice = sdev;
  c.dstDevice = ddev;
  c.extent = make_cudaExtent(width, height, 1);
  return c;
}

/* `height` runs of `width` bytes, `spitch` apart from src in part d's memory, to `dpitch` apart
 * from dst in part d2's, on d's stream to d2: one 2-D copy where the pitches allow (both at most
 * cudaDevAttrMaxPitch), else a copy a run. */
static int send_runs(part *s, int d, int d2, char *dst, size_t dpitch, const char *src, size_t spitch, size_t width,
                     size_t height) {
  part *p = s->parts[d], *q = s->parts[d2];
  if (height > 1 && spitch <= s->max_pitch && dpitch <= s->max_pitch) {
    cudaMemcpy3DPeerParms c = runs_copy(dst, q->dev, dpitch, src, p->dev, spitch, width, height);
    DBTR_CUDA_TRY(cudaMemcpy3DPeerAsync(&c, p->send[d2]));
    return 0;
  }
  for (size_t i = 0; i < height; i++)
    DBTR_CUDA_TRY(cudaMemcpyPeerAsync(dst + i * dpitch, q->dev, src + i * spitch, p->dev, width, p->send[d2]));
  return 0;
}

/* Part d's voxel rows (its band) of every slice to every other part that holds some of them. */
static int send_voxels(part *s, int d) {
  part *p = s->parts[d];
  size_t row = (size_t)s->nx * s->k->t_size, ps = (size_t)(p->vhi - p->vlo) * row;
  int rc = 0;
  for (int d2 = 0; d2 < s->n_parts && !rc; d2++) {
    part *q = s->parts[d2];
    int a = p->y0 > q->vlo ? p->y0 : q->vlo, b = p->y1 < q->vhi ? p->y1 : q->vhi;
    if (d2 == d || a >= b) continue;
    size_t qs = (size_t)(q->vhi - q->vlo) * row;
    rc = send_runs(s, d, d2, q->vol + (size_t)(a - q->vlo) * row, qs, p->vol + (size_t)(a - p->vlo) * row, ps,
                   (size_t)(b - a) * row, (size_t)s->nz);
  }
  return rc;
}

/* The end of a phase: each part's sends to each other part recorded after all of its compute
 * (so that they mark it too, even where it sent nothing), and every part's default stream waits
 * for what every other part sent it; the first part's device is left current. */
static int phase_end(part *s) {
  int rc = 0, n = s->n_parts;
  for (int d = 0; d < n && !rc; d++) {
    part *p = s->parts[d];
    if ((rc = use(p)) || (rc = send_after_compute(p, n, p->done))) break;
    for (int d2 = 0; d2 < n; d2++)
      if (d2 != d) DBTR_CUDA_TRY(cudaEventRecord(p->sent[d2], p->send[d2]));
  }
  for (int d = 0; d < n && !rc; d++) {
    if ((rc = use(s->parts[d]))) break;
    for (int d2 = 0; d2 < n; d2++)
      if (d2 != d) DBTR_CUDA_TRY(cudaStreamWaitEvent(0, s->parts[d2]->sent[d], 0));
  }
  return rc ? rc : use(s);
}

/* Part d's pixel terms of detector rows [r0, r1) of a list of n views to every other part that
 * holds some of those rows: where the list's views are evenly spaced (every view, or a subset's)
 * one 2-D copy of n strips, else a copy a view; and, from a part other than the first, the block
 * partial sums of those rows into the first part's, where one launch over every row would have
 * written them (one run). */
static int send_forward(part *s, int d, int all, size_t off, int n, int r0, int r1) {
  part *p = s->parts[d];
  size_t row = (size_t)s->n_cols * 2 * s->k->t_size, pv = (size_t)(p->ehi - p->elo) * row;
  int k0 = host_view(s, all, off, 0), step = n > 1 ? host_view(s, all, off, 1) - k0 : 1, even = step > 0, rc = 0;
  for (int i = 2; i < n && even; i++) even = host_view(s, all, off, i) - host_view(s, all, off, i - 1) == step;
  for (int d2 = 0; d2 < s->n_parts && !rc; d2++) {
    part *q = s->parts[d2];
    int a = r0 > q->elo ? r0 : q->elo, b = r1 < q->ehi ? r1 : q->ehi;
    if (d2 == d || a >= b) continue;
    size_t qv = (size_t)(q->ehi - q->elo) * row, width = (size_t)(b - a) * row;
    char *to = q->e + (size_t)(a - q->elo) * row, *from = p->e + (size_t)(a - p->elo) * row;
    if (even)
      rc = send_runs(s, d, d2, to + (size_t)k0 * qv, (size_t)step * qv, from + (size_t)k0 * pv, (size_t)step * pv,
                     width, (size_t)n);
    for (int i = 0; i < n && !even && !rc; i++) {
      size_t k = (size_t)host_view(s, all, off, i);
      rc = send_runs(s, d, d2, to + k * qv, qv, from + k * pv, pv, width, 1);
    }
  }
  if (rc || d == 0) return rc;
  size_t t0 = (size_t)r0 * (size_t)s->col_tiles * (size_t)n, t1 = (size_t)r1 * (size_t)s->col_tiles * (size_t)n;
  DBTR_CUDA_TRY(cudaMemcpyPeerAsync(s->partial + t0, s->dev, p->partial + t0, p->dev, (t1 - t0) * sizeof(double),
                                    p->send[0]));
  return 0;
}

/* The forward projection of a list of n views with the data fit, into the first part's fit.
 * On several GPUs each part projects its band of detector rows of every view (an equal share,
 * where whole views would leave one part a view more), its pixel terms sent to the other parts
 * whose voxels read them and its partial sums to the first part, into the places one launch over
 * the list would have given them, for the first part to reduce: the same sums in the same order
 * as on one GPU. Batched, each ray's record is made where it is used rather than a batch's
 * records before a launch of their own: one launch keeps the blocks of a detector stretch, whose
 * views read the same slices, side by side in L2 (kernels/layout.h). */
static int forward(part *s, int all, size_t off, int n) {
  int rc = 0;
  if (s->n_parts == 1) {
    rc = s->k->forward(s, list_of(s, all, off), n, 0, s->n_rows, batched(s), 1);
    return rc ? rc : s->k->reduce_fit(s, n);
  }
  for (int d = 0; d < s->n_parts && !rc; d++) {
    part *p = s->parts[d];
    if ((rc = use(p)) || p->r1 == p->r0) continue;
    rc = p->k->forward(p, list_of(p, all, off), n, p->r0, p->r1, batched(p), 1);
    if (!rc) rc = send_after_compute(p, s->n_parts, p->done);
    if (!rc) rc = send_forward(s, d, all, off, n, p->r0, p->r1);
  }
  if (rc || (rc = phase_end(s))) return rc;
  return s->k->reduce_fit(s, n);
}

/* The gather with the update over a list of n views. On several GPUs each part updates its
 * band of voxel rows, sent to the other parts whose rays read them. */
static int gather(part *s, int all, size_t off, int n) {
  int rc = 0;
  if (s->n_parts == 1) return launch_gather(s, list_of(s, all, off), n);
  for (int d = 0; d < s->n_parts && !rc; d++) {
    part *p = s->parts[d];
    if ((rc = use(p)) || p->y1 == p->y0) continue;
    rc = launch_gather(p, list_of(p, all, off), n);
    if (!rc) rc = send_after_compute(p, s->n_parts, p->done);
    if (!rc) rc = send_voxels(s, d);
  }
  return rc ? rc : phase_end(s);
}

static int subset(dbtr_backend *b, size_t sub, double *fit) {
  part *s = (part *)b->impl;
  int n = (int)(s->subset_start[sub + 1] - s->subset_start[sub]), rc = use(s);
  if (!rc) rc = forward(s, 0, s->subset_start[sub], n);
  if (!rc) rc = gather(s, 0, s->subset_start[sub], n);
  if (rc) return rc;
  double f;
  DBTR_CUDA_TRY(cudaMemcpy(&f, s->fit, sizeof f, cudaMemcpyDeviceToHost));
  *fit += f;
  return 0;
}

/* Every part gets the data of its rows and the uniform start volume, filled on the GPU: y and i0
 * (of T) copied from the host, or with y NULL converted from d, data in the memory of the one
 * part's GPU (dbtr_gpu_load_device). */
static int load_parts(part *s, const void *y, const void *i0, const dbtr_device_data *d, dbtr_i0_shape shape,
                      dbtr_data_kind kind, double fill) {
  for (int k = 0; k < s->n_parts; k++) {
    part *p = s->parts[k];
    size_t t = p->k->t_size, band = held_pix(p), first = (size_t)p->plo * (size_t)p->n_cols;
    int rc = use(p);
    if (rc) return rc;
    if (y && band) {
      DBTR_CUDA_TRY(cudaMemcpy2D(p->y, band * t, (const char *)y + first * t, p->npix * t, band * t, p->n_views,
                                 cudaMemcpyHostToDevice));
      if (p->transmission)
        DBTR_CUDA_TRY(cudaMemcpy2D(p->i0, band * t, (const char *)i0 + first * t, p->npix * t, band * t, p->n_views,
                                   cudaMemcpyHostToDevice));
    } else if (!y && band) {
      if ((rc = dbtr__gpu_data_convert(d, shape, kind, p->n_views * band, p->npix, first, band, p->k->precision, p->y,
                                       p->transmission ? p->i0 : NULL)))
        return rc;
    }
    if ((rc = p->k->fill(p->vol, held_vox(p), fill))) return rc;
  }
  for (int k = 0; k < s->n_parts; k++) {
    int rc = use(s->parts[k]);
    if (rc) return rc;
    DBTR_CUDA_TRY(cudaDeviceSynchronize());
  }
  return use(s);
}

static int load(dbtr_backend *b, const void *y, const void *i0, double fill) {
  return load_parts((part *)b->impl, y, i0, NULL, DBTR_I0_FULL, DBTR_DATA_LINES, fill);
}

/* A backend this file made for ML-EM (not a projector's), or DBTR_EINVAL naming what. */
static int ml_backend(const dbtr_backend *b, const char *what, part **out) {
  if (!b || strncmp(b->name, "gpu:", 4) != 0 || ((part *)b->impl)->projector)
    return dbtr_err(DBTR_EINVAL, "%s: not a GPU backend of ML-EM", what);
  *out = (part *)b->impl;
  return 0;
}

extern "C" int dbtr_gpu_load_device(dbtr_backend *b, const dbtr_device_data *d, dbtr_i0_shape shape,
                                    dbtr_data_kind kind, double fill) {
  part *s;
  int rc = ml_backend(b, "device data", &s);
  if (!rc && d->device != s->dev)
    rc = dbtr_err(DBTR_EINVAL, "device data on cuda:%d, the backend on cuda:%d", d->device, s->dev);
  if (!rc && s->n_parts > 1)
    rc = dbtr_err(DBTR_EINVAL, "device data: a backend on %d GPUs; data in a GPU's memory run on that GPU alone",
                  s->n_parts);
  return rc ? rc : load_parts(s, NULL, NULL, d, shape, kind, fill);
}

/* Each part's band of voxel rows of every slice into vol (host or device memory, the whole
 * volume's layout) from its own buffer; the first part's device is left current. */
static int copy_bands_out(part *s, char *vol, int device) {
  size_t row = (size_t)s->nx * s->k->t_size;
  for (int d = 0; d < s->n_parts; d++) {
    const part *p = s->parts[d];
    int rc = use(p);
    if (rc) return rc;
    if (p->y1 == p->y0) continue;
    size_t ps = (size_t)(p->vhi - p->vlo) * row, width = (size_t)(p->y1 - p->y0) * row;
    const char *from = p->vol + (size_t)(p->y0 - p->vlo) * row;
    char *to = vol + (size_t)p->y0 * row;
    if (!device) {
      DBTR_CUDA_TRY(cudaMemcpy2D(to, (size_t)s->ny * row, from, ps, width, (size_t)s->nz, cudaMemcpyDeviceToHost));
      continue;
    }
    cudaMemcpy3DPeerParms c = runs_copy(to, s->dev, (size_t)s->ny * row, from, p->dev, ps, width, (size_t)s->nz);
    DBTR_CUDA_TRY(cudaMemcpy3DPeer(&c));
  }
  return use(s);
}

extern "C" int dbtr_gpu_volume_device(dbtr_backend *b, void *out, const unsigned char *fov) {
  part *s;
  int rc = ml_backend(b, "volume on the device", &s);
  if (!rc) rc = copy_bands_out(s, (char *)out, 1);
  return rc ? rc : dbtr__gpu_fov_zero(out, s->nvox, s->k->t_size, fov);
}

static int get_volume(dbtr_backend *b, void *out) { return copy_bands_out((part *)b->impl, (char *)out, 0); }

/* Each part takes the voxel rows it holds. */
static int set_volume(dbtr_backend *b, const void *in) {
  part *s = (part *)b->impl;
  size_t row = (size_t)s->nx * s->k->t_size;
  for (int d = 0; d < s->n_parts; d++) {
    const part *p = s->parts[d];
    size_t ps = (size_t)(p->vhi - p->vlo) * row;
    int rc = use(p);
    if (rc) return rc;
    if (ps)
      DBTR_CUDA_TRY(cudaMemcpy2D(p->vol, ps, (const char *)in + (size_t)p->vlo * row, (size_t)s->ny * row, ps,
                                 (size_t)s->nz, cudaMemcpyHostToDevice));
  }
  return use(s);
}

/* Each part's band of detector rows of every view, from the part that projects it. */
static int get_projections(dbtr_backend *b, void *out) {
  part *s = (part *)b->impl;
  size_t view = s->npix * s->k->t_size, row = (size_t)s->n_cols * s->k->t_size;
  for (int d = 0; d < s->n_parts; d++) {
    const part *p = s->parts[d];
    int rc = use(p);
    if (rc) return rc;
    if (p->r1 > p->r0)
      DBTR_CUDA_TRY(cudaMemcpy2D((char *)out + (size_t)p->r0 * row, view, p->proj + (size_t)(p->r0 - p->plo) * row,
                                 held_pix(p) * s->k->t_size, (size_t)(p->r1 - p->r0) * row, s->n_views,
                                 cudaMemcpyDeviceToHost));
  }
  return use(s);
}

/* The plain projections of a projector's backend (recon/backend.h, project): the mode's forward
 * projection without its pixel terms, and the back projector's input (g_back_pixel) gathered
 * with the update DBTR_UPDATE_BACK, by the kernels and in the order of ML-EM's steps. Host
 * arrays pass through the part's own vol and proj; device arrays are read and written where
 * they are, by a copy of the part whose vol and proj are the caller's. Batched, the records are
 * made a batch at a time for the input's terms, as the gather makes them. */
static int project(dbtr_backend *b, int back, const void *in, void *out, int device) {
  part *s = (part *)b->impl;
  int rc = use(s), n = (int)s->n_views;
  if (rc) return rc;
  size_t in_bytes = (back ? s->nproj : s->nvox) * s->k->t_size, out_bytes = (back ? s->nvox : s->nproj) * s->k->t_size;
  char *own_in = back ? s->proj : s->vol, *own_out = back ? s->vol : s->proj;
  if (!device) DBTR_CUDA_TRY(cudaMemcpy(own_in, in, in_bytes, cudaMemcpyHostToDevice));
  const char *src = device ? (const char *)in : own_in;
  part t = *s;
  if (!back) {
    t.vol = (char *)src;
    t.proj = device ? (char *)out : own_out;
    rc = s->k->forward(&t, s->all_views, n, 0, s->n_rows, batched(s), 0);
  } else {
    int step = batched(s) ? (int)s->batch : n;
    for (int k0 = 0; k0 < n && !rc; k0 += step) {
      int nb = n - k0 < step ? n - k0 : step;
      if (batched(s)) rc = s->k->make_rays(s, s->all_views + k0, (size_t)nb, 0, s->n_rows);
      if (!rc) rc = s->k->back_terms(s, src, (size_t)k0, (size_t)nb, batched(s));
    }
    t.vol = device ? (char *)out : own_out;
    t.update = DBTR_UPDATE_BACK;
    if (!rc) rc = launch_gather(&t, s->all_views, n);
  }
  if (rc) return rc;
  if (!device) DBTR_CUDA_TRY(cudaMemcpy(out, own_out, out_bytes, cudaMemcpyDeviceToHost));
  DBTR_CUDA_TRY(cudaDeviceSynchronize());
  return 0;
}

/* Whether every view's detector has u along x and v along y exactly (in index units, as
 * the projectors see them): the condition under which ray records can be separable. Only
 * then are the separable tables planned; the device's set-up then checks every pixel and
 * voxel (kernels/separable.h), and any failure leaves the backend on the per-pixel gather. */
static int sep_possible(const dbtr_geom *g, const dbtr_grid *grid) {
  /* The separable gather counts a view's pixel terms in an int (kernels/separable.h). */
  if (2 * (size_t)g->n_rows * (size_t)g->n_cols + 2 * DBTR_SLOTS > (size_t)INT_MAX) return 0;
  for (size_t k = 0; k < g->n_views; k++) {
    dbtr_view_d v;
    dbtr_view_reduce(g, grid, k, &v);
    if (v.du[1] != 0.0 || v.du[2] != 0.0 || v.dv[0] != 0.0 || v.dv[2] != 0.0) return 0;
  }
  return 1;
}

/* Plans the separable tables in arena a (for a geometry that can be separable). */
static void sep_plan(part *s, dbtr__gpu_arena *a) {
  dbtr__gpu_sep *t = &s->sep;
  const dbtr__gpu_kernels *k = s->k;
  memset(t, 0, sizeof *t);
  size_t vz = s->n_views * (size_t)s->nz;
  t->n_groups = DBTR_N_GROUPS(s->ny);
  dbtr__gpu_arena_plan(a, &t->cx, vz * (size_t)s->n_cols, k->cross_size);
  dbtr__gpu_arena_plan(a, &t->cy, vz * (size_t)s->n_rows, k->cross_size);
  dbtr__gpu_arena_plan(a, (void **)&t->xs, vz * (size_t)s->nx, sizeof(dbtr_slots));
  dbtr__gpu_arena_plan(a, &t->xw, vz * (size_t)s->nx, k->slotw_size);
  dbtr__gpu_arena_plan(a, (void **)&t->ys, vz * (size_t)s->ny, sizeof(dbtr_slots));
  dbtr__gpu_arena_plan(a, &t->yw, vz * (size_t)s->ny, k->slotw_size);
  dbtr__gpu_arena_plan(a, (void **)&t->gs, vz * (size_t)t->n_groups, sizeof(dbtr_slots));
  dbtr__gpu_arena_plan(a, &t->gw, vz * (size_t)t->n_groups, k->groupw_size);
  dbtr__gpu_arena_plan(a, (void **)&t->flag, 1, sizeof(int));
}

/* Builds and checks the planned tables once the ray records and footprints are on the
 * device. On success the gather uses them (s->sep.on); where a check fails, the per-pixel
 * gather runs. */
static int sep_build(part *s) {
  dbtr__gpu_sep *t = &s->sep;
  if (!t->cx) return 0;
  int found = 0;
  DBTR_CUDA_TRY(cudaMemset(t->flag, 0, sizeof(int)));
  /* The steps that read ray records need every row of a view: they run a batch of views at a
   * time, each after its records, when the records are made in batches, and a view at a time
   * when the part holds a band of rows (split); the rest read the tables. */
  size_t step = batched(s) ? s->batch : s->split ? 1 : s->n_views;
  for (size_t k0 = 0; k0 < s->n_views; k0 += step) {
    size_t nb = s->n_views - k0 < step ? s->n_views - k0 : step;
    int rc = step < s->n_views ? s->k->make_rays(s, s->all_views + k0, nb, 0, s->n_rows) : 0;
    if (rc || (rc = s->k->sep_views(s, k0, nb))) return rc;
  }
  int rc = s->k->sep_rest(s);
  if (rc) return rc;
  DBTR_CUDA_TRY(cudaMemcpy(&found, t->flag, sizeof found, cudaMemcpyDeviceToHost));
  t->on = !found;
  if (!s->split) return 0;
  if (!t->on)
    return dbtr_err(DBTR_EGPU, "GPU backend on %d GPUs: these views are not separable after all (docs/performance.md), "
                    "and only separable views split over GPUs; run them on one GPU", s->n_parts);
  /* The rows the part holds, from the geometry, against the tables the kernels read. */
  if ((rc = s->k->sep_bands(s))) return rc;
  DBTR_CUDA_TRY(cudaMemcpy(&found, t->flag, sizeof found, cudaMemcpyDeviceToHost));
  if (found)
    return dbtr_err(DBTR_EGPU, "GPU %d: its work reads detector or voxel rows beyond those it holds (detector rows "
                    "[%d, %d), voxel rows [%d, %d)); the margin of %d rows is too small for this geometry: please "
                    "report it", s->dev, s->elo, s->ehi, s->vlo, s->vhi, DBTR__BAND_MARGIN);
  return 0;
}

/* Every buffer, into arena a, with the ray records of `batch` views (n_views: all of them, of
 * the rows the part holds; batched, of every row: the set-up and the per-pixel gather read
 * them); batched, the per-pixel gather's carried sums where the gather may be per-pixel. Every
 * count is at most the whole problem's, which is counted without overflow. */
static void plan_into(part *s, dbtr__gpu_arena *a, size_t batch) {
  const dbtr__gpu_kernels *k = s->k;
  memset(a, 0, sizeof *a);
  size_t nrec = batch < s->n_views ? batch * s->npix : s->n_views * held_pix(s), nproj = s->n_views * held_pix(s);
  if (s->split && nrec < s->npix) nrec = s->npix; /* the set-up makes a whole view's records (sep_build) */
  dbtr__gpu_arena_plan(a, (void **)&s->rays, 4 * nrec, k->r_size);
  dbtr__gpu_arena_plan(a, (void **)&s->lens, nrec, k->t_size);
  if (!s->projector) dbtr__gpu_arena_plan(a, (void **)&s->y, nproj, k->t_size);
  if (s->transmission && !s->projector) dbtr__gpu_arena_plan(a, (void **)&s->i0, nproj, k->t_size);
  dbtr__gpu_arena_plan(a, (void **)&s->proj, nproj, k->t_size);
  /* The separable gather reads DBTR_SLOTS pixels from each column's first (kernels/separable.h). */
  dbtr__gpu_arena_plan(a, (void **)&s->e, 2 * s->n_views * held_e(s) + 2 * DBTR_SLOTS, k->t_size);
  dbtr__gpu_arena_plan(a, (void **)&s->vol, held_vox(s), k->t_size);
  if (batch < s->n_views && !s->sep_possible) dbtr__gpu_arena_plan(a, (void **)&s->carry, 2 * s->nvox, k->t_size);
  dbtr__gpu_arena_plan(a, (void **)&s->views, s->n_views, k->view_size);
  dbtr__gpu_arena_plan(a, (void **)&s->foot, s->n_views * (size_t)s->nz, k->foot_size);
  dbtr__gpu_arena_plan(a, (void **)&s->sched, s->n_views, sizeof(int));
  dbtr__gpu_arena_plan(a, (void **)&s->all_views, s->n_views, sizeof(int));
  if (!s->projector) dbtr__gpu_arena_plan(a, (void **)&s->partial, s->n_partial, sizeof(double));
  if (!s->projector) dbtr__gpu_arena_plan(a, (void **)&s->fit, 1, sizeof(double));
  if (s->sep_possible) sep_plan(s, a);
}

static size_t plan_bytes(part *s, size_t batch) {
  dbtr__gpu_arena a;
  plan_into(s, &a, batch);
  return dbtr__gpu_arena_bytes(&a);
}

/* Sizes every buffer within the budget (kernels/gpu.h): every view's ray records when they
 * fit, else the largest batch of views that fits (at most a subset's views: a subset runs
 * one batch at a time); one allocation, one clear message when not even one view fits. */
static int plan(part *s, const dbtr_problem *prob) {
  dbtr_gpu_memory *m = &s->common.memory;
  int rc = dbtr__gpu_budget(prob->gpu_memory, m);
  if (rc) return rc;
  m->n_views = s->n_views;
  m->need = plan_bytes(s, s->n_views);
  m->need_min = plan_bytes(s, 1);
  size_t batch = s->n_views;
  if (m->need > m->allowed) {
    if (m->need_min > m->allowed) return dbtr__gpu_no_room(m);
    size_t lo = 1, hi = 1; /* plan_bytes grows with the batch: the largest that fits */
    for (size_t i = 0; i < prob->n_subsets; i++) {
      size_t n = prob->subset_start[i + 1] - prob->subset_start[i];
      hi = n > hi ? n : hi;
    }
    hi = hi < s->n_views - 1 ? hi : s->n_views - 1;
    while (lo < hi) {
      size_t mid = lo + (hi - lo + 1) / 2;
      if (plan_bytes(s, mid) <= m->allowed)
        lo = mid;
      else
        hi = mid - 1;
    }
    batch = lo;
  }
  s->batch = m->batch = batch;
  plan_into(s, &s->arena, batch);
  m->used = dbtr__gpu_arena_bytes(&s->arena);
  return dbtr__gpu_arena_alloc(&s->arena);
}

/* Geometry reduced on the host, in double, rounded once by the shared conversion; then the
 * ray records (unless batched) and the separable tables, on the device. Batched, the
 * per-pixel gather needs its carried sums, planned only where the geometry cannot be
 * separable: where it could be but the set-up finds it is not, the budget must hold every
 * view's records. */
static int upload_geometry(part *s, const dbtr_problem *prob) {
  const dbtr_geom *g = prob->geom;
  const dbtr_grid *grid = prob->grid;
  const dbtr__gpu_kernels *kt = s->k;
  int rc = 0;
  char *hv = (char *)malloc(s->n_views * kt->view_size);
  char *hf = (char *)malloc(s->n_views * grid->nz * kt->foot_size);
  int *hs = (int *)malloc(2 * s->n_views * sizeof(int));
  if (!hv || !hf || !hs) rc = dbtr_err(DBTR_ENOMEM, "GPU backend: out of memory");
  for (size_t k = 0; k < s->n_views && !rc; k++) {
    kt->view_of(g, grid, k, hv + k * kt->view_size);
    for (size_t z = 0; z < grid->nz; z++) {
      dbtr_footprint_d fd;
      dbtr_footprint_reduce(g, grid, k, z, &fd);
      kt->foot_of(&fd, hf + (k * grid->nz + z) * kt->foot_size);
    }
    hs[k] = (int)prob->subset_views[k];
    hs[s->n_views + k] = (int)k;
  }
  if (!rc) rc = dbtr__gpu_upload(s->views, hv, s->n_views * kt->view_size);
  if (!rc) rc = dbtr__gpu_upload(s->foot, hf, s->n_views * grid->nz * kt->foot_size);
  if (!rc) rc = dbtr__gpu_upload(s->sched, hs, s->n_views * sizeof(int));
  if (!rc) rc = dbtr__gpu_upload(s->all_views, hs + s->n_views, s->n_views * sizeof(int));
  free(hv);
  free(hf);
  free(hs);
  if (rc) return rc;
  /* Batched, the records are made as they are used; split, the set-up makes whole views' first
   * (sep_build), then the band's stay. */
  if (!batched(s) && !s->split && (rc = kt->make_rays(s, s->all_views, s->n_views, 0, s->n_rows))) return rc;
  cudaError_t e = cudaMemset(s->proj, 0, s->n_views * held_pix(s) * kt->t_size);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return dbtr_err(DBTR_EGPU, "GPU ray set-up: %s", cudaGetErrorString(e));
  if ((rc = sep_build(s))) return rc;
  if (!batched(s) && s->split && (rc = kt->make_rays(s, s->all_views, s->n_views, s->plo, s->phi))) return rc;
  if (batched(s) && !s->sep.on && !s->carry)
    return dbtr_err(DBTR_EGPU, "GPU memory: these views are not separable after all (docs/performance.md), and the "
                    "per-pixel gather in batches needs %.3f GiB more than the %.3f GiB allowed; allow %.3f GiB with "
                    "--gpu-memory", (double)(2 * s->nvox * kt->t_size) / 1073741824.0,
                    (double)s->common.memory.allowed / 1073741824.0, (double)s->common.memory.need / 1073741824.0);
  return 0;
}

/* The launches' grids are one-dimensional: their block counts must fit gridDim.x. The separable
 * gather's are counted for one voxel column a thread, the most blocks of any precision. */
static int check_launch_sizes(const part *s) {
  size_t max = 2147483647u, fwd = s->n_views * (size_t)s->n_rows * (size_t)s->col_tiles;
  size_t tx = DBTR_TILES((size_t)s->nx, DBTR_TILE_X), ty = DBTR_TILES((size_t)s->ny, DBTR_TILE_Y);
  size_t sx = DBTR_TILES((size_t)s->nx, DBTR_GS_X), sy = DBTR_TILES((size_t)s->ny, DBTR_SEP_TILE_Y);
  size_t sz = DBTR_TILES((size_t)s->nz, DBTR_GS_Z);
  if (fwd > max || tx * ty > max / (size_t)s->nz || sx * sy > max / sz)
    return dbtr_err(DBTR_EINVAL, "GPU backend: %zu views of %d x %d pixels, %d x %d x %d voxels need more thread blocks "
                    "than one launch takes (2^31 - 1)", s->n_views, s->n_cols, s->n_rows, s->nx, s->ny, s->nz);
  return 0;
}

/* ---- bands ----
 * On several GPUs part d of np projects forward an equal share [r0, r1) of the detector rows of
 * every view and gathers a share [y0, y1) of the voxel rows of every slice, in whole groups of
 * DBTR__BAND_ROWS rows. Where the views can be separable, the part holds only the rows this work
 * reads (split): y, i0, proj and the ray records of its detector rows; of vol, its voxel rows and
 * those its rays sample; of e, its detector rows and those its voxels' footprints cover. A DBT
 * volume is thin and its rays cross it at bounded angles, so beyond its own rows a part holds a
 * halo of a fraction of a band (docs/performance.md, "Several GPUs"), and only halos cross the
 * link. The rows come from the geometry, in double, widened by DBTR__BAND_MARGIN rows for the
 * rounding of the kernels' own crossings and the footprints' margin; the set-up checks them
 * against the tables the kernels read (k_sep_bands). Elsewhere (the per-pixel gather, whose pixels
 * are not bounded by rows in advance) every part holds every row. */

/* Where the ray of detector row r of separable view v (rows along y) crosses slice z, in voxel
 * rows: the y part of its record, a + z b (recon/proj_impl.h, ray_setup), in double. Linear in
 * r at a given slice, and in z for a given row. */
static double row_crossing(const dbtr_view_d *v, double r, double z) {
  double q1 = v->p0[1] + r * v->dv[1], q2 = v->p0[2];
  double ty = (q1 - v->src[1]) / (q2 - v->src[2]);
  return q1 - q2 * ty + z * ty;
}

static int clamp_int(double x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : (int)x; }

/* The rows [*h0, *h1) of n a part holds: its own [a, b) and the rows [lo, hi) the geometry says
 * its work reads (none where lo > hi), widened by the margin; none where both are empty. */
static void held_rows(int a, int b, double lo, double hi, int n, int *h0, int *h1) {
  *h0 = b > a ? a : n;
  *h1 = b > a ? b : 0;
  if (lo <= hi) {
    int l = clamp_int(lo - DBTR__BAND_MARGIN, 0, n), h = clamp_int(hi + DBTR__BAND_MARGIN, 0, n);
    *h0 = l < *h0 ? l : *h0;
    *h1 = h > *h1 ? h : *h1;
  }
  if (*h0 >= *h1) *h0 = *h1 = 0;
}

/* Part s's bands (d of np) and, split, the rows it holds. */
static void bands(part *s, const dbtr_problem *prob, int d, int np) {
  int u0, u1;
  share(DBTR_TILES(s->ny, DBTR__BAND_ROWS), d, np, &u0, &u1);
  share(s->n_rows, d, np, &s->r0, &s->r1);
  s->y0 = u0 * DBTR__BAND_ROWS < s->ny ? u0 * DBTR__BAND_ROWS : s->ny;
  s->y1 = u1 * DBTR__BAND_ROWS < s->ny ? u1 * DBTR__BAND_ROWS : s->ny;
  s->split = np > 1 && s->sep_possible;
  s->plo = s->elo = s->vlo = 0;
  s->phi = s->ehi = s->n_rows;
  s->vhi = s->ny;
  if (!s->split) return;
  s->plo = s->r0;
  s->phi = s->r1;
  /* The voxel rows the band's rays sample: the two rows about each crossing; and the detector
   * rows whose rays cross a slice within (y0 - 1, y1), the support of voxel rows [y0, y1). Each
   * crossing is linear in the row at a slice, and the row of a crossing monotone in the slice,
   * so the band's ends and the first and last slices bound them. */
  double fmin = 1e300, fmax = -1e300, rmin = 1e300, rmax = -1e300;
  for (size_t k = 0; k < s->n_views; k++) {
    dbtr_view_d v;
    dbtr_view_reduce(prob->geom, prob->grid, k, &v);
    for (int e = 0; e < 2; e++) {
      double z = e ? s->nz - 1 : 0, a = row_crossing(&v, 0, z), b = row_crossing(&v, 1, z) - a;
      for (int i = 0; i < 2 && s->r1 > s->r0; i++) {
        double f = a + b * (i ? s->r1 - 1 : s->r0);
        fmin = f < fmin ? f : fmin;
        fmax = f > fmax ? f : fmax;
      }
      for (int i = 0; i < 2 && s->y1 > s->y0 && b != 0.0; i++) {
        double r = ((i ? s->y1 : s->y0 - 1) - a) / b;
        rmin = r < rmin ? r : rmin;
        rmax = r > rmax ? r : rmax;
      }
    }
  }
  held_rows(s->y0, s->y1, floor(fmin), floor(fmax) + 2, s->ny, &s->vlo, &s->vhi);
  held_rows(s->r0, s->r1, floor(rmin), ceil(rmax) + 1, s->n_rows, &s->elo, &s->ehi);
}

/* Part d of np on device dev, with the buffers of its bands, set up (kernels/gpu.h). */
static int part_new(part **out, const dbtr_problem *prob, int d, int np, int dev, const dbtr__gpu_kernels *k) {
  const dbtr_geom *g = prob->geom;
  const dbtr_grid *grid = prob->grid;
  part *s = (part *)calloc(1, sizeof *s);
  *out = s;
  if (!s) return dbtr_err(DBTR_ENOMEM, "GPU backend: out of memory");
  s->k = k;
  s->dev = dev;
  s->n_parts = 1;
  s->parts[0] = s;
  s->nx = (int)grid->nx;
  s->ny = (int)grid->ny;
  s->nz = (int)grid->nz;
  s->n_rows = (int)g->n_rows;
  s->n_cols = (int)g->n_cols;
  s->col_tiles = DBTR_TILES(s->n_cols, DBTR_BLOCK);
  s->n_views = g->n_views;
  s->npix = g->n_rows * g->n_cols;
  s->projector = prob->projector;
  s->transmission = !s->projector && prob->algo == DBTR_ALGO_TRANSMISSION;
  s->update = s->transmission ? DBTR_UPDATE_TRANSMISSION : DBTR_UPDATE_EMISSION;
  s->n_subsets = prob->n_subsets;
  s->n_partial = s->n_views * (size_t)s->n_rows * (size_t)s->col_tiles;
  s->subset_start = (size_t *)malloc((prob->n_subsets + 1) * sizeof(size_t));
  int rc = s->subset_start ? use(s) : dbtr_err(DBTR_ENOMEM, "GPU backend: out of memory");
  if (!rc) rc = dbtr_geom_proj_count(g, &s->nproj);
  if (!rc) rc = dbtr_grid_count(grid, &s->nvox);
  if (!rc) rc = check_launch_sizes(s);
  if (!rc) {
    memcpy(s->subset_start, prob->subset_start, (prob->n_subsets + 1) * sizeof(size_t));
    s->sep_possible = sep_possible(g, grid);
    bands(s, prob, d, np);
    rc = plan(s, prob);
  }
  if (!rc) rc = upload_geometry(s, prob);
  return rc;
}

/* On several GPUs: each part's stream and events for its sends, what the first part keeps on
 * the host to lead them (the schedule), and its memory line's figures: the largest part's, and
 * what one GPU would need where the parts split the problem. */
static int link_parts(part *s, const dbtr_problem *prob) {
  int np = s->n_parts, rc = 0, pitch = 0;
  dbtr_gpu_memory *m = &s->common.memory;
  for (int d = 1; d < np; d++) {
    const dbtr_gpu_memory *o = &s->parts[d]->common.memory;
    m->need = o->need > m->need ? o->need : m->need;
    m->need_min = o->need_min > m->need_min ? o->need_min : m->need_min;
    m->used = o->used > m->used ? o->used : m->used;
    m->batch = o->batch < m->batch ? o->batch : m->batch;
  }
  if (s->split) {
    part whole = *s;
    bands(&whole, prob, 0, 1);
    m->one_gpu = plan_bytes(&whole, s->n_views);
  }
  for (int d = 0; d < np && !rc; d++) {
    part *p = s->parts[d];
    if ((rc = use(p))) break;
    /* Each made is non-NULL, for part_free to destroy; a failed one stays NULL. */
    const unsigned flags = cudaEventDisableTiming;
    cudaError_t e = cudaEventCreateWithFlags(&p->done, flags);
    for (int d2 = 0; d2 < np && e == cudaSuccess; d2++)
      if (d2 != d && (e = cudaStreamCreateWithFlags(&p->send[d2], cudaStreamNonBlocking)) == cudaSuccess)
        e = cudaEventCreateWithFlags(&p->sent[d2], flags);
    if (e != cudaSuccess)
      rc = dbtr_err(DBTR_EGPU, "GPU %d: the streams and events of its sends: %s", p->dev, cudaGetErrorString(e));
  }
  if (!rc && cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, s->dev) != cudaSuccess)
    rc = dbtr_err(DBTR_EGPU, "GPU %d: its largest copy pitch: %s", s->dev, cudaGetErrorString(cudaGetLastError()));
  s->max_pitch = (size_t)pitch;
  if (!rc) rc = dbtr_alloc((void **)&s->sched_host, s->n_views, sizeof(int), "GPU schedule");
  for (size_t i = 0; i < s->n_views && !rc; i++) s->sched_host[i] = (int)prob->subset_views[i];
  return rc;
}

int dbtr__gpu_host_create(dbtr_backend **out, const dbtr_problem *prob, const dbtr__gpu_kernels *k) {
  *out = NULL;
  /* The geometry and the grid were checked where the session opened (engine/session.h). */
  int rc = 0;
  int np = prob->gpus > 1 ? prob->gpus : 1;
  if (prob->projector && np > 1) return dbtr_err(DBTR_EINVAL, "GPU projector: runs on one GPU, %d asked for", np);
  if (np > DBTR_GPUS_MAX) return dbtr_err(DBTR_EINVAL, "GPU backend: %d GPUs asked for, at most %d", np, DBTR_GPUS_MAX);
  dbtr_backend *b = (dbtr_backend *)calloc(1, sizeof *b);
  part *parts[DBTR_GPUS_MAX] = {NULL};
  if (!b) return dbtr_err(DBTR_ENOMEM, "GPU backend: out of memory");
  for (int d = 0; d < np && !rc; d++)
    rc = part_new(&parts[d], prob, d, np, prob->gpu_first + (prob->gpu_share ? 0 : d), k);
  part *s = parts[0];
  if (s) {
    s->n_parts = 0;
    for (int d = 0; d < np && parts[d]; d++) s->parts[s->n_parts++] = parts[d];
  }
  b->impl = s;
  b->destroy = destroy;
  if (!rc && np > 1) rc = link_parts(s, prob);
  if (!rc) rc = use(s);
  if (rc) {
    destroy(b);
    return rc;
  }
  b->precision = k->precision;
  if (prob->projector) {
    b->project = project;
  } else {
    b->load = load;
    b->subset = subset;
    b->get_volume = get_volume;
    b->set_volume = set_volume;
    b->get_projections = get_projections;
  }
  s->common.memory.gpus = np;
  dbtr__gpu_memory_describe(&s->common.memory, b->memory, sizeof b->memory);
  *out = b;
  return 0;
}

/* The sends of a forward projection and a gather over every view, without their compute: what
 * the exchange between GPUs costs where nothing hides it (bench/ times it). */
static int exchange(part *s) {
  if (s->n_parts == 1) return 0;
  int rc = 0, n = (int)s->n_views;
  for (int d = 0; d < s->n_parts && !rc; d++) {
    part *p = s->parts[d];
    if (!(rc = use(p)) && p->r1 > p->r0) rc = send_forward(s, d, 1, 0, n, p->r0, p->r1);
    if (!rc && p->y1 > p->y0) rc = send_voxels(s, d);
  }
  return rc ? rc : phase_end(s);
}

/* The phases bench/ times (kernels/gpu.h): every view at once, as one subset would be. */
extern "C" int dbtr_gpu_run_phase(dbtr_backend *b, dbtr_gpu_phase phase) {
  if (!b || strncmp(b->name, "gpu:", 4) != 0) return dbtr_err(DBTR_EINVAL, "GPU phase: not a GPU backend");
  part *s = (part *)b->impl;
  int rc = use(s);
  if (rc) return rc;
  if (phase == DBTR_GPU_PHASE_FORWARD) return forward(s, 1, 0, (int)s->n_views);
  if (phase == DBTR_GPU_PHASE_GATHER) return gather(s, 1, 0, (int)s->n_views);
  if (phase == DBTR_GPU_PHASE_EXCHANGE) return exchange(s);
  return dbtr_err(DBTR_EINVAL, "GPU phase: unknown phase %d", (int)phase);
}

extern "C" int dbtr_gpu_separable(const dbtr_backend *b) {
  if (!b || strncmp(b->name, "gpu:", 4) != 0) return dbtr_err(DBTR_EINVAL, "GPU gather: not a GPU backend");
  return ((const part *)b->impl)->sep.on;
}

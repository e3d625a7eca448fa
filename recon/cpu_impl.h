/* recon/cpu_impl.h: the CPU reference, as a template over the element type, included by
 * recon/cpu.c once for float, once for double and once for double-double (the referee). The
 * precision is that of the traits in force (recon/prec_traits.h: its element type, the
 * geometry's, the view and footprint and their conversions, zero, the conversions to and from
 * double); CF(name) names this instance's functions, PF(name) names the shared arithmetic of
 * recon/proj_impl.h and of recon/separable.h in that precision, and CSEP is the separable
 * tables' type.
 *
 * Where every view is separable (every preset; recon/separable.h), the forward projection
 * looks each column's and row's crossing up and the gather each voxel index's pixel slots and
 * axis weights, from tables built once with the shared builder; otherwise (a turned detector)
 * each ray's crossings are computed and each voxel's candidate pixels tested, per pixel. Both
 * give every output the same terms in the same order, so the same bits. */

/* The traits' types, as this file writes them. */
#define CT DBTR_P_T
#define CR DBTR_P_R

typedef struct {
  int nx, ny, nz, n_rows, n_cols;
  size_t n_views, n_pix, n_vox;
  int threads;
  CR *rays;   /* (n_views, n_rows, n_cols, 4) ray records; NULL where the separable tables hold what they give */
  CT *lens;   /* (n_views, n_rows, n_cols) path length per slice, mm */
  DBTR_P_FOOT *foot; /* (n_views, nz) */
  int sep;    /* 1: every view is separable and the projectors use the tables */
  CSEP tabs;  /* the separable tables (recon/separable.h); NULL pointers unless sep */
  const dbtr_subset_watch *watch; /* the subset's progress (recon/backend.h); NULL outside one */
} CF(tables);

static void CF(sep_free)(CSEP *s) {
  free(s->cx);
  free(s->cy);
  free(s->xs);
  free(s->ys);
  free(s->xw);
  free(s->yw);
  memset(s, 0, sizeof *s);
}

static void CF(tables_free)(CF(tables) * t) {
  free(t->rays);
  free(t->lens);
  free(t->foot);
  CF(sep_free)(&t->tabs);
  memset(t, 0, sizeof *t);
}

/* The tables of view k alone, as the builder's steps see them when called for one view, with
 * their own flag. */
static CSEP CF(sep_view)(const CF(tables) * t, size_t k, int *flag) {
  size_t kz = k * (size_t)t->nz;
  CSEP s = {t->tabs.cx + kz * (size_t)t->n_cols, t->tabs.cy + kz * (size_t)t->n_rows,
            t->tabs.xs + kz * (size_t)t->nx,     t->tabs.ys + kz * (size_t)t->ny,
            t->tabs.xw + kz * (size_t)t->nx,     t->tabs.yw + kz * (size_t)t->ny,
            flag};
  return s;
}

/* View k's ray records into rays (n_pix of 4) and its path lengths into t->lens, its rows
 * on every thread. */
static void CF(view_rays)(CF(tables) * t, const dbtr_geom *g, const dbtr_grid *grid, size_t k, CR *rays) {
  DBTR_P_VIEW v;
  DBTR_P_VIEW_OF(g, grid, k, &v);
  CT *lens = t->lens + k * t->n_pix;
  int nr = t->n_rows, nc = t->n_cols;
#pragma omp parallel for schedule(static) num_threads(t->threads)
  for (int r = 0; r < nr; r++)
    for (int c = 0; c < nc; c++) {
      size_t p = (size_t)r * (size_t)nc + (size_t)c;
      lens[p] = PF(ray_setup)(&v, r, c, rays + 4 * p);
    }
}

/* Builds the separable tables with the shared builder (recon/separable.h) and the path
 * lengths, and sets t->sep when every view passes its checks: those of the footprints first
 * (sep_feet, which implies sep_check's: that one costs a candidate span per voxel and view,
 * as much as a third of a per-pixel back projection), so that a geometry that is not
 * separable (a turned detector) allocates nothing; then, a view at a time, those of its ray
 * records (sep_rays) and its slots' sizes (sep_slots). Through the tables nothing reads a ray
 * record again, so only one view's are made at a time, 4 values a pixel that a siemens
 * backend in double would otherwise hold as 8 GB through its set-up. Where a check fails,
 * the tables are freed and the per-pixel forms run (tables_init then makes every record). */
static int CF(sep_init)(CF(tables) * t, const dbtr_geom *g, const dbtr_grid *grid) {
  int *flags, rc;
  long long nv = (long long)t->n_views;
  int nz = t->nz, nr = t->n_rows, nc = t->n_cols, nx = t->nx, ny = t->ny, found = 0;
  if ((rc = dbtr_alloc((void **)&flags, t->n_views, sizeof *flags, "separable checks"))) return rc;
  memset(flags, 0, t->n_views * sizeof *flags);
#pragma omp parallel for schedule(static) num_threads(t->threads)
  for (long long k = 0; k < nv; k++) PF(sep_feet)(t->foot + (size_t)k * (size_t)nz, 1, nz, &flags[k]);
  for (size_t k = 0; k < t->n_views; k++) found |= flags[k];
  size_t vz = t->n_views * (size_t)nz, ncx, ncy, nsx, nsy, n_rec;
  CSEP *s = &t->tabs;
  CR *rays = NULL;
  if (!found && !(rc = dbtr_size_mul(vz, (size_t)nc, &ncx, "separable tables")) &&
      !(rc = dbtr_size_mul(vz, (size_t)nr, &ncy, "separable tables")) &&
      !(rc = dbtr_size_mul(vz, (size_t)nx, &nsx, "separable tables")) &&
      !(rc = dbtr_size_mul(vz, (size_t)ny, &nsy, "separable tables")) &&
      !(rc = dbtr_size_mul(t->n_pix, 4, &n_rec, "ray records")) &&
      !(rc = dbtr_alloc((void **)&rays, n_rec, sizeof *rays, "ray records")) &&
      !(rc = dbtr_alloc((void **)&s->cx, ncx, sizeof *s->cx, "separable tables")) &&
      !(rc = dbtr_alloc((void **)&s->cy, ncy, sizeof *s->cy, "separable tables")) &&
      !(rc = dbtr_alloc((void **)&s->xs, nsx, sizeof *s->xs, "separable tables")) &&
      !(rc = dbtr_alloc((void **)&s->ys, nsy, sizeof *s->ys, "separable tables")) &&
      !(rc = dbtr_alloc((void **)&s->xw, nsx, sizeof *s->xw, "separable tables")) &&
      !(rc = dbtr_alloc((void **)&s->yw, nsy, sizeof *s->yw, "separable tables"))) {
    for (size_t k = 0; k < t->n_views && !found; k++) {
      CF(view_rays)(t, g, grid, k, rays);
      PF(sep_rays)(rays, 1, nr, nc, &flags[k]);
      CSEP v = CF(sep_view)(t, k, &flags[k]);
      if (!flags[k]) PF(sep_cross)(rays, 1, nz, nr, nc, nx, ny, v.cx, v.cy);
      if (!flags[k]) PF(sep_slots)(t->foot + k * (size_t)nz, 1, nz, nr, nc, nx, ny, v);
      found |= flags[k];
    }
    t->sep = !found;
  }
  if (!t->sep) CF(sep_free)(s);
  free(rays);
  free(flags);
  return rc;
}

/* Every view's ray records, for the per-pixel forms, with the path lengths. */
static int CF(rays_init)(CF(tables) * t, const dbtr_geom *g, const dbtr_grid *grid) {
  size_t n_rec;
  int rc = dbtr_size_mul(t->n_views * t->n_pix, 4, &n_rec, "ray records");
  if (!rc) rc = dbtr_alloc((void **)&t->rays, n_rec, sizeof(CR), "ray records");
  for (size_t k = 0; k < t->n_views && !rc; k++) CF(view_rays)(t, g, grid, k, t->rays + 4 * k * t->n_pix);
  return rc;
}

/* The geometry and the grid have passed their checks: where the engine's session opened, or in
 * dbtr_cpu_projector_create for the public projector. */
static int CF(tables_init)(CF(tables) * t, const dbtr_geom *g, const dbtr_grid *grid, int threads) {
  memset(t, 0, sizeof *t);
  int rc;
  t->nx = (int)grid->nx;
  t->ny = (int)grid->ny;
  t->nz = (int)grid->nz;
  t->n_rows = (int)g->n_rows;
  t->n_cols = (int)g->n_cols;
  t->n_views = g->n_views;
  t->n_pix = g->n_rows * g->n_cols;
  t->threads = dbtr_cpu_threads(threads);
  size_t n_proj;
  if ((rc = dbtr_geom_proj_count(g, &n_proj)) || (rc = dbtr_grid_count(grid, &t->n_vox))) return rc;
  if ((rc = dbtr_alloc((void **)&t->lens, n_proj, sizeof(CT), "ray lengths")) ||
      (rc = dbtr_alloc((void **)&t->foot, g->n_views * grid->nz, sizeof(DBTR_P_FOOT), "footprints"))) {
    CF(tables_free)(t);
    return rc;
  }
  for (size_t k = 0; k < g->n_views; k++)
    for (size_t z = 0; z < grid->nz; z++) {
      dbtr_footprint_d fd;
      dbtr_footprint_reduce(g, grid, k, z, &fd);
      DBTR_P_FOOT_OF(&fd, &t->foot[k * grid->nz + z]);
    }
  rc = CF(sep_init)(t, g, grid);
  if (!rc && !t->sep) rc = CF(rays_init)(t, g, grid);
  if (rc) CF(tables_free)(t);
  return rc;
}

/* The forward projections of pixels [c0, c0 + m) of row r of view k through the separable
 * tables: for each slice in forward_ray's order, the row's crossing (cy) and each column's
 * (cx) are the ones forward_ray computes from the pixel's record (sep_rays checked that it is
 * its column's and its row's), so each sum gets forward_ray's terms in its order. */
static void CF(forward_sep)(const CF(tables) * t, size_t k, int r, int c0, int m, const CT *vol, CT *out) {
  CR sum[CPU_CHUNK]; /* the forward sums are R (recon/proj_impl.h, forward_add) */
  for (int j = 0; j < m; j++) sum[j] = DBTR_P_ZERO;
  size_t slice = (size_t)t->nx * (size_t)t->ny;
  for (int z = 0; z < t->nz; z++) {
    size_t kz = k * (size_t)t->nz + (size_t)z;
    DBTR_P_CROSS cy = t->tabs.cy[kz * (size_t)t->n_rows + (size_t)r];
    if (cy.i == DBTR_CROSS_NONE) continue;
    const DBTR_P_CROSS *cx = t->tabs.cx + kz * (size_t)t->n_cols + (size_t)c0;
    const CT *s = vol + (size_t)z * slice;
    for (int j = 0; j < m; j++)
      if (cx[j].i != DBTR_CROSS_NONE) sum[j] = PF(forward_add)(sum[j], s, cx[j].i, cy.i, cx[j].w, cy.w, t->nx, t->ny);
  }
  const CT *lens = t->lens + k * t->n_pix + (size_t)r * (size_t)t->n_cols + (size_t)c0;
  for (int j = 0; j < m; j++) out[j] = PF(forward_end)(sum[j], lens[j]);
}

/* proj[v] = A vol for the views listed (n of them); out arrays are full size. */
static void CF(forward_views)(const CF(tables) * t, const size_t *views, size_t n, const CT *vol, CT *proj) {
  long long rows = (long long)n * t->n_rows;
#pragma omp parallel for schedule(static) num_threads(t->threads)
  for (long long vr = 0; vr < rows; vr++) {
    if (t->watch) CPU_WATCH(t, 0, vr, rows);
    size_t k = views[vr / t->n_rows];
    int r = (int)(vr % t->n_rows);
    size_t base = k * t->n_pix + (size_t)r * (size_t)t->n_cols;
    if (t->sep)
      for (int c0 = 0; c0 < t->n_cols; c0 += CPU_CHUNK)
        CF(forward_sep)(t, k, r, c0, t->n_cols - c0 < CPU_CHUNK ? t->n_cols - c0 : CPU_CHUNK, vol, proj + base + c0);
    else
      for (int c = 0; c < t->n_cols; c++) {
        size_t p = base + (size_t)c;
        proj[p] = PF(forward_ray)(t->rays + 4 * p, t->lens[p], vol, t->nx, t->ny, t->nz, (size_t)t->nx * (size_t)t->ny);
      }
  }
}

/* Gather of voxels [x0, x0 + m) of row y of slice z over the listed views through the
 * separable tables, into acc1 and acc2 (zero on entry; acc2 is left alone without e2). For
 * each view, the rows of the voxel row's slots in order, then each voxel's column slots in
 * order: gather_view's raster order over the voxel's box. A weight is the product of the
 * column's and the row's axis weight, as weight_at forms it; a zero weight is skipped, as
 * there (a zero row weight makes every weight of its row zero). */
static void CF(gather_sep)(const CF(tables) * t, const size_t *views, size_t n, const CT *e1, const CT *e2, int z,
                           int y, int x0, int m, CT *acc1, CT *acc2) {
  for (size_t i = 0; i < n; i++) {
    size_t k = views[i], kz = k * (size_t)t->nz + (size_t)z, yi = kz * (size_t)t->ny + (size_t)y;
    dbtr_slots ys = t->tabs.ys[yi];
    const CT *yw = t->tabs.yw[yi].w;
    const dbtr_slots *xs = t->tabs.xs + kz * (size_t)t->nx + (size_t)x0;
    const DBTR_P_SLOTW *xw = t->tabs.xw + kz * (size_t)t->nx + (size_t)x0;
    for (int u = 0; u < ys.n; u++) {
      if (DBTR_P_IS0(yw[u])) continue;
      size_t row = k * t->n_pix + (size_t)(ys.p0 + u) * (size_t)t->n_cols;
      const CT *r1 = e1 + row, *r2 = e2 ? e2 + row : NULL;
      for (int j = 0; j < m; j++)
        for (int a = 0; a < xs[j].n; a++) {
          CT w = PF(weight_xy)(xw[j].w[a], yw[u]);
          if (DBTR_P_IS0(w)) continue;
          int c = xs[j].p0 + a;
          PF(accumulate)(w, r1[c], r2 ? r2[c] : DBTR_P_ZERO, r2 != NULL, &acc1[j], &acc2[j]);
        }
    }
  }
}

/* Gathers, for each voxel, sum over the listed views of w e1 (and w e2), then applies the
 * update (recon/update.h, dbtr_update) to the voxel and its two sums. */
static void CF(gather_views)(const CF(tables) * t, const size_t *views, size_t n, const CT *e1, const CT *e2, CT *vol,
                              dbtr_update update) {
  long long rows = (long long)t->nz * t->ny;
#pragma omp parallel for schedule(static) num_threads(t->threads)
  for (long long zy = 0; zy < rows; zy++) {
    int z = (int)(zy / t->ny), y = (int)(zy % t->ny);
    if (t->watch) CPU_WATCH(t, 1, zy, rows);
    for (int x0 = 0; x0 < t->nx; x0 += CPU_CHUNK) {
      int m = t->nx - x0 < CPU_CHUNK ? t->nx - x0 : CPU_CHUNK;
      CT acc1[CPU_CHUNK], acc2[CPU_CHUNK];
      for (int j = 0; j < m; j++) acc1[j] = acc2[j] = DBTR_P_ZERO;
      if (t->sep)
        CF(gather_sep)(t, views, n, e1, e2, z, y, x0, m, acc1, acc2);
      else
        for (int j = 0; j < m; j++)
          for (size_t i = 0; i < n; i++) {
            size_t k = views[i];
            const CT *e2k = e2 ? e2 + k * t->n_pix : NULL;
            PF(gather_view)(&t->foot[k * (size_t)t->nz + (size_t)z], t->rays + 4 * k * t->n_pix, e1 + k * t->n_pix, e2k,
                            x0 + j, y, z, t->nx, t->ny, t->n_rows, t->n_cols, &acc1[j], &acc2[j]);
          }
      for (int j = 0; j < m; j++) {
        size_t v = (size_t)zy * (size_t)t->nx + (size_t)(x0 + j);
        if (update == DBTR_UPDATE_BACK)
          vol[v] = acc1[j];
        else if (update == DBTR_UPDATE_TRANSMISSION)
          vol[v] = PF(transmission_voxel)(vol[v], acc1[j], acc2[j]);
        else
          vol[v] = PF(emission_voxel)(vol[v], acc1[j], acc2[j]);
      }
    }
  }
}

/* ---- the plain projector ---- */

static int CF(forward_all)(const CF(tables) * t, const CT *vol, CT *proj) {
  size_t *views;
  int rc = dbtr_alloc((void **)&views, t->n_views, sizeof *views, "view list");
  if (rc) return rc;
  for (size_t k = 0; k < t->n_views; k++) views[k] = k;
  CF(forward_views)(t, views, t->n_views, vol, proj);
  free(views);
  return 0;
}

/* Where every view is separable (t->sep): mask[v] = 1 where some view's gather of ones gives
 * voxel v a term, else 0, without the gather. In gather_sep a term's weight is the product of a
 * column's and a row's axis weight, skipped where it is 0, times back_pixel(1, len) > 0; the sum of
 * such positive terms is 0 only when there is none. A nonzero axis weight is at least an ulp of a
 * voxel coordinate (above 1e-13 for any grid under 2^24 voxels a side), so no product of two
 * underflows: voxel (x, y) of slice z has a term from view k exactly when one of row y's slot
 * weights and one of column x's are nonzero. A slice a thread: per view, which columns and rows
 * have a nonzero slot weight (seen, nx + ny bytes a thread), then each seen row ORs the seen
 * columns in. n_vox bytes written, views x n_vox byte ORs: no floating-point operation. */
static int CF(reached_sep)(const CF(tables) * t, unsigned char *mask) {
  int nt = t->threads, nx = t->nx, ny = t->ny, nz = t->nz;
  unsigned char *seen;
  int rc = dbtr_alloc((void **)&seen, (size_t)nt, (size_t)(nx + ny), "field of view");
  if (rc) return rc;
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int z = 0; z < nz; z++) {
    unsigned char *sx = seen + (size_t)omp_get_thread_num() * (size_t)(nx + ny), *sy = sx + nx;
    unsigned char *mz = mask + (size_t)z * (size_t)ny * (size_t)nx;
    memset(mz, 0, (size_t)ny * (size_t)nx);
    for (size_t k = 0; k < t->n_views; k++) {
      size_t kz = k * (size_t)nz + (size_t)z;
      for (int x = 0; x < nx; x++) {
        dbtr_slots xs = t->tabs.xs[kz * (size_t)nx + (size_t)x];
        const CT *w = t->tabs.xw[kz * (size_t)nx + (size_t)x].w;
        sx[x] = 0;
        for (int a = 0; a < xs.n; a++) sx[x] |= !DBTR_P_IS0(w[a]);
      }
      for (int y = 0; y < ny; y++) {
        dbtr_slots ys = t->tabs.ys[kz * (size_t)ny + (size_t)y];
        const CT *w = t->tabs.yw[kz * (size_t)ny + (size_t)y].w;
        sy[y] = 0;
        for (int u = 0; u < ys.n; u++) sy[y] |= !DBTR_P_IS0(w[u]);
      }
      for (int y = 0; y < ny; y++) {
        if (!sy[y]) continue;
        unsigned char *row = mz + (size_t)y * (size_t)nx;
        for (int x = 0; x < nx; x++) row[x] |= sx[x];
      }
    }
  }
  free(seen);
  return 0;
}

static int CF(back_all)(const CF(tables) * t, const CT *proj, CT *vol) {
  size_t *views;
  CT *e;
  size_t np = t->n_views * t->n_pix;
  int rc = dbtr_alloc((void **)&views, t->n_views, sizeof *views, "view list");
  if (rc) return rc;
  if ((rc = dbtr_alloc((void **)&e, np, sizeof *e, "back projection input"))) {
    free(views);
    return rc;
  }
  for (size_t k = 0; k < t->n_views; k++) views[k] = k;
  for (size_t p = 0; p < np; p++) e[p] = PF(back_pixel)(proj[p], t->lens[p]);
  CF(gather_views)(t, views, t->n_views, e, NULL, vol, DBTR_UPDATE_BACK);
  free(e);
  free(views);
  return 0;
}

/* ---- the backend ---- */

typedef struct {
  CF(tables) t;
  dbtr_problem prob;
  CT *y, *i0, *vol, *proj, *e1, *e2;
  double *row_fit; /* (n_views, n_rows): per-row data-fit partial sums */
} CF(backend);

static void CF(backend_destroy)(dbtr_backend *b) {
  CF(backend) *s = b->impl;
  if (s) {
    CF(tables_free)(&s->t);
    free(s->y);
    free(s->i0);
    free(s->vol);
    free(s->proj);
    free(s->e1);
    free(s->e2);
    free(s->row_fit);
    free(s);
  }
  free(b);
}

static int CF(backend_load)(dbtr_backend *b, const void *y, const void *i0, double fill) {
  CF(backend) *s = b->impl;
  size_t np = s->t.n_views * s->t.n_pix;
  memcpy(s->y, y, np * sizeof(CT));
  if (s->i0 && i0) memcpy(s->i0, i0, np * sizeof(CT));
  CT v = DBTR_P_FROM_D(fill);
  long long nv = (long long)s->t.n_vox;
#pragma omp parallel for schedule(static) num_threads(s->t.threads)
  for (long long i = 0; i < nv; i++) s->vol[i] = v;
  return 0;
}

static int CF(backend_subset)(dbtr_backend *b, size_t sub, double *fit) {
  CF(backend) *s = b->impl;
  s->t.watch = b->watch;
  const CF(tables) *t = &s->t;
  const size_t *views = s->prob.subset_views + s->prob.subset_start[sub];
  size_t n = s->prob.subset_start[sub + 1] - s->prob.subset_start[sub];
  CF(forward_views)(t, views, n, s->vol, s->proj);
  int transmission = s->prob.algo == DBTR_ALGO_TRANSMISSION;
  long long rows = (long long)n * t->n_rows;
#pragma omp parallel for schedule(static) num_threads(t->threads)
  for (long long vr = 0; vr < rows; vr++) {
    size_t k = views[vr / t->n_rows];
    size_t row = k * (size_t)t->n_rows + (size_t)(vr % t->n_rows);
    size_t base = row * (size_t)t->n_cols;
    double acc = 0.0;
    for (int c = 0; c < t->n_cols; c++) {
      size_t p = base + (size_t)c;
      if (transmission) {
        CT yhat = PF(transmission_pixel)(s->proj[p], s->y[p], s->i0[p], t->lens[p], &s->e1[p], &s->e2[p]);
        acc += dbtr_fit_transmission(DBTR_P_TO_D(s->y[p]), DBTR_P_TO_D(s->proj[p]), DBTR_P_TO_D(yhat));
      } else {
        PF(emission_pixel)(s->proj[p], s->y[p], t->lens[p], &s->e1[p], &s->e2[p]);
        acc += dbtr_fit_emission(DBTR_P_TO_D(s->y[p]), DBTR_P_TO_D(s->proj[p]));
      }
    }
    s->row_fit[row] = acc;
  }
  /* Summed in view and row order, so the fit does not depend on the thread count. */
  for (size_t i = 0; i < n; i++)
    for (int r = 0; r < t->n_rows; r++) *fit += s->row_fit[views[i] * (size_t)t->n_rows + (size_t)r];
  CF(gather_views)(t, views, n, s->e1, s->e2, s->vol, transmission ? DBTR_UPDATE_TRANSMISSION : DBTR_UPDATE_EMISSION);
  return 0;
}

static int CF(backend_get_volume)(dbtr_backend *b, void *out) {
  CF(backend) *s = b->impl;
  memcpy(out, s->vol, s->t.n_vox * sizeof(CT));
  return 0;
}

static int CF(backend_set_volume)(dbtr_backend *b, const void *in) {
  CF(backend) *s = b->impl;
  memcpy(s->vol, in, s->t.n_vox * sizeof(CT));
  return 0;
}

static int CF(backend_get_projections)(dbtr_backend *b, void *out) {
  CF(backend) *s = b->impl;
  memcpy(out, s->proj, s->t.n_views * s->t.n_pix * sizeof(CT));
  return 0;
}

static const void *CF(backend_host_state)(dbtr_backend *b, int proj) {
  CF(backend) *s = b->impl;
  return proj ? (const void *)s->proj : (const void *)s->vol;
}

static int CF(backend_project)(dbtr_backend *b, int back, const void *in, void *out, int device) {
  CF(backend) *s = b->impl;
  if (device) return dbtr_err(DBTR_EINVAL, "%s: the CPU reference takes arrays in host memory, not on a GPU", b->name);
  return back ? CF(back_all)(&s->t, in, out) : CF(forward_all)(&s->t, in, out);
}

static int CF(backend_create)(dbtr_backend **out, const dbtr_problem *prob) {
  *out = NULL;
  dbtr_backend *b = calloc(1, sizeof *b);
  CF(backend) *s = calloc(1, sizeof *s);
  if (!b || !s) {
    free(b);
    free(s);
    return dbtr_err(DBTR_ENOMEM, "CPU backend: out of memory");
  }
  b->impl = s;
  b->destroy = CF(backend_destroy);
  s->prob = *prob;
  int rc = CF(tables_init)(&s->t, prob->geom, prob->grid, prob->threads);
  if (prob->projector) {
    /* A projector: the tables alone; the ML-EM entries stay NULL. */
    b->project = CF(backend_project);
    if (rc) CF(backend_destroy)(b);
    *out = rc ? NULL : b;
    return rc;
  }
  size_t np = s->t.n_views * s->t.n_pix;
  if (!rc) rc = dbtr_alloc((void **)&s->y, np, sizeof(CT), "projections");
  if (!rc && prob->algo == DBTR_ALGO_TRANSMISSION) rc = dbtr_alloc((void **)&s->i0, np, sizeof(CT), "i0");
  if (!rc) rc = dbtr_alloc((void **)&s->vol, s->t.n_vox, sizeof(CT), "volume");
  if (!rc) rc = dbtr_alloc((void **)&s->proj, np, sizeof(CT), "forward projections");
  if (!rc) rc = dbtr_alloc((void **)&s->e1, np, sizeof(CT), "pixel terms");
  if (!rc) rc = dbtr_alloc((void **)&s->e2, np, sizeof(CT), "pixel terms");
  if (!rc) rc = dbtr_alloc((void **)&s->row_fit, s->t.n_views * (size_t)s->t.n_rows, sizeof(double), "data fit");
  if (rc) {
    CF(backend_destroy)(b);
    return rc;
  }
  /* The forward projections start at zero, so get_projections before the first step is
   * defined. */
  memset(s->proj, 0, np * sizeof(CT));
  b->load = CF(backend_load);
  b->subset = CF(backend_subset);
  b->get_volume = CF(backend_get_volume);
  b->set_volume = CF(backend_set_volume);
  b->get_projections = CF(backend_get_projections);
  b->host_state = CF(backend_host_state);
  *out = b;
  return 0;
}

#undef CT
#undef CR
#undef CF
#undef PF
#undef CSEP

/* tests/separable_check.h: the separable tables (recon/separable.h) and the GPU's gather
 * over them (kernels/separable.h) against the per-pixel forms, on the CPU, in one precision;
 * and the CPU reference's projector, which uses the same tables, against the same forms. Included by tests/test_separable.c once per
 * precision, with
 *   ST       the type (float or double)
 *   SR       optional: the ray records' type (double for float; ST by default)
 *   SF(name) the shared function `name` of that precision (t_name_f, t_name_d): those of
 *            recon/proj_impl.h, recon/separable.h and kernels/separable.h
 *   SN(name) a name for this instance
 *   STABLES  kernels/separable.h's tables type of that precision
 *   SVIEW, SFOOT                 the view and footprint types
 *   SVIEW_OF, SFOOT_CONVERT      the host's view for that type (dbtr_view_reduce) and its
 *                                rounding of footprints
 *   SPREC    the dbtr_precision of ST
 *
 * It builds, for every view and slice, the tables the GPU builds, with the GPU's builder
 * (run step by step as kernels/mode_kernels.cu runs it), then compares every voxel's gather with
 * the per-pixel reference, bit for bit, with and without the test of each zero weight, on
 * finite pixel terms and on some infinite and NaN ones; and the factored order's gather with
 * that order's sum over each voxel's own slots (factored_voxel). */

#ifndef SR
#define SR ST
#endif

typedef struct {
  size_t nv, nz, nr, nc, nx, ny, ng, npix;
  SR *rays;     /* (nv, nr, nc, 4) */
  ST *lens;     /* (nv, nr, nc) */
  SFOOT *foot;  /* (nv, nz) */
  STABLES sep;  /* the tables, in host memory */
  int flag;     /* sep.flag points here */
  int check_ok; /* sep_check found every voxel's slots its box */
  int feet_ok;  /* sep_feet found the footprints' condition that implies it */
} SN(tables);

static void SN(tables_free)(SN(tables) * t) {
  free(t->rays);
  free(t->lens);
  free(t->foot);
  free(t->sep.cx);
  free(t->sep.cy);
  free(t->sep.xs);
  free(t->sep.ys);
  free(t->sep.gs);
  free(t->sep.xw);
  free(t->sep.yw);
  free(t->sep.gw);
}

/* Ray records and footprints of every view, as the GPU's set-up computes them. */
static void SN(geometry)(SN(tables) * t, const dbtr_geom *g, const dbtr_grid *grid) {
  int nr = (int)t->nr, nc = (int)t->nc;
  for (size_t k = 0; k < t->nv; k++) {
    SVIEW v;
    SVIEW_OF(g, grid, k, &v);
    SR *rays = t->rays + 4 * k * t->npix;
    for (int r = 0; r < nr; r++)
      for (int c = 0; c < nc; c++) t->lens[k * t->npix + (size_t)(r * nc + c)] = SF(ray_setup)(&v, r, c, rays + 4 * (r * nc + c));
    for (size_t z = 0; z < t->nz; z++) {
      dbtr_footprint_d fd;
      dbtr_footprint_reduce(g, grid, k, z, &fd);
      SFOOT_CONVERT(&fd, &t->foot[k * t->nz + z]);
    }
  }
}

/* Ray records, footprints and tables of every view. Returns 1 when every view is separable
 * (ray records, box sizes, group unions and the boxes of every voxel), 0 otherwise. */
static int SN(tables_build)(SN(tables) * t, const dbtr_geom *g, const dbtr_grid *grid) {
  memset(t, 0, sizeof *t);
  t->nv = g->n_views, t->nz = grid->nz, t->nr = g->n_rows, t->nc = g->n_cols, t->nx = grid->nx, t->ny = grid->ny;
  t->ng = DBTR_N_GROUPS(t->ny);
  t->npix = t->nr * t->nc;
  size_t vz = t->nv * t->nz;
  STABLES *s = &t->sep;
  t->rays = malloc(t->nv * t->npix * 4 * sizeof(SR));
  t->lens = malloc(t->nv * t->npix * sizeof(ST));
  t->foot = malloc(vz * sizeof(SFOOT));
  s->cx = malloc(vz * t->nc * sizeof *s->cx);
  s->cy = malloc(vz * t->nr * sizeof *s->cy);
  s->xs = malloc(vz * t->nx * sizeof *s->xs);
  s->ys = malloc(vz * t->ny * sizeof *s->ys);
  s->gs = malloc(vz * t->ng * sizeof *s->gs);
  s->xw = malloc(vz * t->nx * sizeof *s->xw);
  s->yw = malloc(vz * t->ny * sizeof *s->yw);
  s->gw = malloc(vz * t->ng * sizeof *s->gw);
  if (!t->rays || !t->lens || !t->foot || !s->cx || !s->cy || !s->xs || !s->ys || !s->gs || !s->xw || !s->yw || !s->gw) {
    TEST__FAIL("out of memory");
    return 0;
  }
  SN(geometry)(t, g, grid);
  s->n_groups = (int)t->ng;
  s->flag = &t->flag;
  int nz = (int)t->nz, nr = (int)t->nr, nc = (int)t->nc, nx = (int)t->nx, ny = (int)t->ny;
  SF(sep_rays)(t->rays, t->nv, nr, nc, s->flag);
  SF(sep_cross)(t->rays, t->nv, nz, nr, nc, nx, ny, s->cx, s->cy);
  SF(sep_slots)(t->foot, t->nv, nz, nr, nc, nx, ny, *s);
  /* sep_check on a flag of its own, to compare it with sep_feet, the CPU reference's step in
   * its place. */
  STABLES check = *s;
  int check_flag = 0, feet_flag = 0;
  check.flag = &check_flag;
  SF(sep_check)(t->foot, t->nv, nz, nr, nc, nx, ny, check);
  SF(sep_feet)(t->foot, t->nv, nz, &feet_flag);
  t->check_ok = !check_flag;
  t->feet_ok = !feet_flag;
  t->flag |= check_flag;
  SF(sep_groups)(t->nv, nz, ny, *s);
  s->on = !t->flag;
  return s->on;
}

static int SN(same)(ST a, ST b) { return memcmp(&a, &b, sizeof a) == 0; }

/* The sums of the GPU's thread (kernels/mode_kernels.cu, k_gather_sep) that takes the voxel
 * columns x, x + xstep, ... and group gi of slice z, over all views, from 0, with or without
 * gather_sep's skip_zero, in the CPU's order or factored. */
static void SN(gather_views)(const SN(tables) * t, const ST *pairs, size_t z, size_t gi, size_t x, size_t xstep,
                             int skip_zero, int factored, ST a1[SF(gather_cols)][DBTR_GROUP],
                             ST a2[SF(gather_cols)][DBTR_GROUP]) {
  for (size_t a = 0; a < SF(gather_cols); a++)
    for (size_t b = 0; b < DBTR_GROUP; b++) a1[a][b] = a2[a][b] = 0;
  for (size_t k = 0; k < t->nv; k++) {
    size_t kz = k * t->nz + z;
    dbtr_slots xs[SF(gather_cols)];
    ST xw[SF(gather_cols)][DBTR_SLOTS];
    for (size_t a = 0; a < SF(gather_cols); a++) {
      size_t xa = x + a * xstep;
      xs[a] = xa < t->nx ? t->sep.xs[kz * t->nx + xa] : DBTR_NO_SLOTS;
      for (int i = 0; i < DBTR_SLOTS; i++) xw[a][i] = xa < t->nx ? t->sep.xw[kz * t->nx + xa].w[i] : (ST)0;
    }
    if (factored)
      SF(gather_sep_factored)(xs, (const ST(*)[DBTR_SLOTS])xw, t->sep.gs[kz * t->ng + gi], &t->sep.gw[kz * t->ng + gi],
                              pairs + 2 * k * t->npix, (int)t->nc, skip_zero, a1, a2);
    else
      SF(gather_sep)(xs, (const ST(*)[DBTR_SLOTS])xw, t->sep.gs[kz * t->ng + gi], &t->sep.gw[kz * t->ng + gi],
                     pairs + 2 * k * t->npix, (int)t->nc, skip_zero, a1, a2);
  }
}

/* The factored order's sums of voxel (x, y) of slice z over all views, added to *r1 and *r2,
 * from the voxel's own slots (its row's ys, yw and its column's xs, xw), not from its group's
 * union: for each of its rows with a nonzero weight, in order, the sum from 0 of the column
 * terms of nonzero weight, in order, times the row's weight. */
static void SN(factored_voxel)(const SN(tables) * t, const ST *e1, const ST *e2, size_t x, size_t y, size_t z, ST *r1,
                               ST *r2) {
  for (size_t k = 0; k < t->nv; k++) {
    size_t kz = k * t->nz + z;
    dbtr_slots xs = t->sep.xs[kz * t->nx + x], ys = t->sep.ys[kz * t->ny + y];
    const ST *xw = t->sep.xw[kz * t->nx + x].w, *yw = t->sep.yw[kz * t->ny + y].w;
    for (int j = 0; j < ys.n; j++) {
      if (yw[j] == 0) continue;
      size_t row = k * t->npix + (size_t)(ys.p0 + j) * t->nc;
      ST c1 = 0, c2 = 0;
      for (int i = 0; i < xs.n; i++) {
        size_t p = row + (size_t)(xs.p0 + i);
        if (xw[i] != 0) SF(accumulate)(xw[i], e1[p], e2[p], 1, &c1, &c2);
      }
      SF(accumulate)(yw[j], c1, c2, 1, r1, r2);
    }
  }
}

/* Every voxel's gather over all views, through the tables and through the reference of its
 * order (the CPU's: the per-pixel gather_view; factored: factored_voxel), on random pixel
 * terms; with plant, one pixel of every 97 is infinite or NaN. gather_sep with skip_zero must
 * give the reference's bits (NaN and infinite sums included); without it, the bits of
 * skip_zero wherever its thread's sums are all finite (sums_finite), the case in which
 * k_gather_sep keeps them. Returns the number of values that differ in their bits; *redone
 * counts the threads whose sums were not all finite (k_gather_sep makes them again with
 * skip_zero). */
static size_t SN(compare)(const SN(tables) * t, int plant, int factored, size_t *redone) {
  size_t nproj = t->nv * t->npix, ndiff = 0;
  /* The GPU's gather reads every slot of a column, also those of weight 0 (kernels/separable.h,
   * gather_sep): its pairs hold 2 DBTR_SLOTS elements past the last pixel, NaN here, so that a
   * value read from them and used would show; the slots of weight 0 within the pixels hold
   * pixel terms that would change a sum. */
  size_t tail = 2 * DBTR_SLOTS;
  ST *e1 = malloc(nproj * sizeof(ST)), *e2 = malloc(nproj * sizeof(ST));
  ST *pairs = malloc((2 * nproj + tail) * sizeof(ST));
  *redone = 0;
  if (!e1 || !e2 || !pairs) {
    TEST__FAIL("out of memory");
    ndiff = 1;
  }
  for (size_t i = 0; !ndiff && i < tail; i++) pairs[2 * nproj + i] = (ST)NAN;
  test_rng_state = 7;
  /* e1 takes both signs, as (yhat - y) len does. */
  for (size_t i = 0; !ndiff && i < nproj; i++) {
    e1[i] = (ST)(test_rnd() - 0.5);
    e2[i] = (ST)test_rnd();
    /* Planted: e1 infinite in one pixel of 97, e2 NaN in another (97 and 40: no pattern of the
     * detector's rows or of the slots' columns). */
    if (plant && i % 97 == 0) e1[i] = (ST)INFINITY;
    if (plant && i % 97 == 40) e2[i] = (ST)NAN;
    pairs[2 * i] = e1[i];
    pairs[2 * i + 1] = e2[i];
  }
  int nx = (int)t->nx, ny = (int)t->ny, nr = (int)t->nr, nc = (int)t->nc;
  /* Voxel columns x, x + xstep, ... (as many as this precision's gather_sep takes), as the GPU
   * takes them (xstep DBTR_GS_X there, one warp); a column past the grid has no slots. */
  const size_t xstep = 3, xtile = xstep * SF(gather_cols);
  for (size_t z = 0; !ndiff && z < t->nz; z++)
    for (size_t gi = 0; gi < t->ng; gi++)
      for (size_t x0 = 0; x0 < t->nx; x0 += xtile)
        for (size_t lane = 0; lane < xstep && x0 + lane < t->nx; lane++) {
          ST a1[SF(gather_cols)][DBTR_GROUP], a2[SF(gather_cols)][DBTR_GROUP];
          ST b1[SF(gather_cols)][DBTR_GROUP], b2[SF(gather_cols)][DBTR_GROUP];
          SN(gather_views)(t, pairs, z, gi, x0 + lane, xstep, 1, factored, a1, a2);
          SN(gather_views)(t, pairs, z, gi, x0 + lane, xstep, 0, factored, b1, b2);
          int kept = SF(sums_finite)((const ST(*)[DBTR_GROUP])b1, (const ST(*)[DBTR_GROUP])b2);
          *redone += (size_t)!kept;
          for (size_t a = 0; a < SF(gather_cols); a++)
            for (size_t b = 0; b < DBTR_GROUP; b++) {
              size_t x = x0 + lane + a * xstep, y = gi * DBTR_GROUP + b;
              if (x >= t->nx || y >= t->ny) continue;
              ST r1 = 0, r2 = 0;
              if (factored)
                SN(factored_voxel)(t, e1, e2, x, y, z, &r1, &r2);
              else
                for (size_t k = 0; k < t->nv; k++)
                  SF(gather_view)(&t->foot[k * t->nz + z], t->rays + 4 * k * t->npix, e1 + k * t->npix,
                                  e2 + k * t->npix, (int)x, (int)y, (int)z, nx, ny, nr, nc, &r1, &r2);
              ndiff += (size_t)!SN(same)(r1, a1[a][b]) + (size_t)!SN(same)(r2, a2[a][b]);
              if (kept) ndiff += (size_t)!SN(same)(b1[a][b], a1[a][b]) + (size_t)!SN(same)(b2[a][b], a2[a][b]);
            }
        }
  free(e1);
  free(e2);
  free(pairs);
  return ndiff;
}

/* The CPU reference's projector (recon/cpu_impl.h: through the tables where the views are
 * separable, per pixel otherwise) against forward_ray for every pixel and gather_view for every
 * voxel, on a random volume and random projections, run on 2 threads. Returns the number of
 * values that differ in their bits. */
static size_t SN(compare_cpu)(const SN(tables) * t, const dbtr_geom *g, const dbtr_grid *grid) {
  size_t nproj = t->nv * t->npix, nvox = t->nx * t->ny * t->nz, ndiff = 0;
  ST *vol = malloc(nvox * sizeof(ST)), *proj = malloc(nproj * sizeof(ST)), *back = malloc(nvox * sizeof(ST));
  ST *e = malloc(nproj * sizeof(ST));
  dbtr_cpu_projector *cp = NULL;
  if (!vol || !proj || !back || !e || dbtr_cpu_projector_create(&cp, g, grid, SPREC, 2)) {
    TEST__FAIL("out of memory");
    ndiff = 1;
  }
  test_rng_state = 11;
  for (size_t i = 0; !ndiff && i < nvox; i++) vol[i] = (ST)test_rnd();
  if (!ndiff) CHECK_OK(dbtr_cpu_forward(cp, vol, proj));
  int nx = (int)t->nx, ny = (int)t->ny, nz = (int)t->nz, nr = (int)t->nr, nc = (int)t->nc;
  for (size_t p = 0; !ndiff && p < nproj; p++)
    ndiff += (size_t)!SN(same)(proj[p],
                               SF(forward_ray)(t->rays + 4 * p, t->lens[p], vol, nx, ny, nz, (size_t)nx * (size_t)ny));
  /* Both signs, as ML-EM's pixel terms take; the back projection folds len into its input as
   * dbtr_cpu_back does. */
  for (size_t p = 0; !ndiff && p < nproj; p++) {
    proj[p] = (ST)(test_rnd() - 0.5);
    e[p] = proj[p] * t->lens[p];
  }
  if (!ndiff) CHECK_OK(dbtr_cpu_back(cp, proj, back));
  for (size_t z = 0; !ndiff && z < t->nz; z++)
    for (size_t y = 0; y < t->ny; y++)
      for (size_t x = 0; x < t->nx; x++) {
        ST r1 = 0, r2 = 0;
        for (size_t k = 0; k < t->nv; k++)
          SF(gather_view)(&t->foot[k * t->nz + z], t->rays + 4 * k * t->npix, e + k * t->npix, NULL, (int)x, (int)y,
                          (int)z, nx, ny, nr, nc, &r1, &r2);
        ndiff += (size_t)!SN(same)(back[(z * t->ny + y) * t->nx + x], r1);
      }
  dbtr_cpu_projector_destroy(&cp);
  free(vol);
  free(proj);
  free(back);
  free(e);
  return ndiff;
}

#undef ST
#undef SR
#undef SF
#undef SN
#undef STABLES
#undef SVIEW
#undef SFOOT
#undef SVIEW_OF
#undef SFOOT_CONVERT
#undef SPREC

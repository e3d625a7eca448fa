/* tests/separable_check.h: the separable gather of kernels/separable.h against the
 * per-pixel one, on the CPU, in one precision. Included by
 * tests/test_separable.c once per precision, with
 *   ST       the type (float or double)
 *   SF(name) the shared function `name` of that precision (t_name_f, t_name_d)
 *   SN(name) a name for this instance
 *   SCROSS, SSLOTW, SGROUPW, SVIEW, SFOOT  the table, view and footprint types
 *   SVIEW_CONVERT, SFOOT_CONVERT           the host's rounding of views and footprints
 *
 * It builds, for every view and slice, the tables the GPU builds (kernels/sep_setup.cuh)
 * with the same shared functions, then compares every voxel's gather with the per-pixel
 * reference, bit for bit. */

typedef struct {
  size_t nv, nz, nr, nc, nx, ny, ng, npix;
  ST *rays;                   /* (nv, nr, nc, 4) */
  SFOOT *foot;                /* (nv, nz) */
  SCROSS *cx, *cy;            /* (nv, nz, nc), (nv, nz, nr) */
  dbtr_slots *xs, *ys, *gs;   /* (nv, nz, nx), (nv, nz, ny), (nv, nz, ng) */
  SSLOTW *xw, *yw;            /* likewise */
  SGROUPW *gw;                /* (nv, nz, ng) */
} SN(tables);

static void SN(tables_free)(SN(tables) * t) {
  free(t->rays);
  free(t->foot);
  free(t->cx);
  free(t->cy);
  free(t->xs);
  free(t->ys);
  free(t->gs);
  free(t->xw);
  free(t->yw);
  free(t->gw);
}

/* Ray records, footprints and tables of every view. Returns 1 when every view is separable
 * (ray records, box sizes, group unions and the boxes of every voxel), 0 otherwise. */
static int SN(tables_build)(SN(tables) * t, const dbtr_geom *g, const dbtr_grid *grid) {
  memset(t, 0, sizeof *t);
  t->nv = g->n_views, t->nz = grid->nz, t->nr = g->n_rows, t->nc = g->n_cols, t->nx = grid->nx, t->ny = grid->ny;
  t->ng = (t->ny + DBTR_GROUP - 1) / DBTR_GROUP;
  t->npix = t->nr * t->nc;
  size_t vz = t->nv * t->nz;
  t->rays = malloc(t->nv * t->npix * 4 * sizeof(ST));
  t->foot = malloc(vz * sizeof(SFOOT));
  t->cx = malloc(vz * t->nc * sizeof(SCROSS));
  t->cy = malloc(vz * t->nr * sizeof(SCROSS));
  t->xs = malloc(vz * t->nx * sizeof(dbtr_slots));
  t->ys = malloc(vz * t->ny * sizeof(dbtr_slots));
  t->gs = malloc(vz * t->ng * sizeof(dbtr_slots));
  t->xw = malloc(vz * t->nx * sizeof(SSLOTW));
  t->yw = malloc(vz * t->ny * sizeof(SSLOTW));
  t->gw = malloc(vz * t->ng * sizeof(SGROUPW));
  if (!t->rays || !t->foot || !t->cx || !t->cy || !t->xs || !t->ys || !t->gs || !t->xw || !t->yw || !t->gw) {
    TEST__FAIL("out of memory");
    return 0;
  }
  int sep = 1, nr = (int)t->nr, nc = (int)t->nc;
  for (size_t k = 0; k < t->nv; k++) {
    dbtr_view_d vd;
    SVIEW v;
    dbtr_view_reduce(g, grid, k, &vd);
    SVIEW_CONVERT(&vd, &v);
    ST *rays = t->rays + 4 * k * t->npix;
    for (int r = 0; r < nr; r++)
      for (int c = 0; c < nc; c++) SF(ray_setup)(&v, r, c, rays + 4 * (r * nc + c)); /* the length is not needed */
    for (int r = 0; r < nr; r++)
      for (int c = 0; c < nc; c++) sep &= SF(ray_separable)(rays, r, c, nc);
    for (size_t z = 0; z < t->nz; z++) {
      size_t kz = k * t->nz + z;
      dbtr_footprint_d fd;
      dbtr_footprint_reduce(g, grid, k, z, &fd);
      SFOOT_CONVERT(&fd, &t->foot[kz]);
      const SFOOT *f = &t->foot[kz];
      for (int c = 0; c < nc; c++) SF(cross_store)(rays[4 * c], rays[4 * c + 1], (int)z, (int)t->nx, &t->cx[kz * t->nc + (size_t)c]);
      for (int r = 0; r < nr; r++)
        SF(cross_store)(rays[4 * r * nc + 2], rays[4 * r * nc + 3], (int)z, (int)t->ny, &t->cy[kz * t->nr + (size_t)r]);
      for (size_t x = 0; x < t->nx; x++) {
        ST span[4];
        SF(candidate_span)(f, (int)x, 0, nr, nc, span);
        sep &= SF(axis_slots)(t->cx + kz * t->nc, span[0], span[1], nc, (int)x, &t->xs[kz * t->nx + x],
                              t->xw[kz * t->nx + x].w);
      }
      for (size_t y = 0; y < t->ny; y++) {
        ST span[4];
        SF(candidate_span)(f, 0, (int)y, nr, nc, span);
        sep &= SF(axis_slots)(t->cy + kz * t->nr, span[2], span[3], nr, (int)y, &t->ys[kz * t->ny + y],
                              t->yw[kz * t->ny + y].w);
      }
      for (size_t y = 0; y < t->ny; y++)
        for (size_t x = 0; x < t->nx; x++)
          sep &= SF(slots_match)(f, (int)x, (int)y, nr, nc, t->xs[kz * t->nx + x], t->ys[kz * t->ny + y]);
      for (size_t gi = 0; gi < t->ng; gi++) {
        dbtr_slots s[DBTR_GROUP];
        ST w[DBTR_GROUP][DBTR_SLOTW];
        for (size_t b = 0; b < DBTR_GROUP; b++) {
          size_t y = gi * DBTR_GROUP + b;
          s[b] = y < t->ny ? t->ys[kz * t->ny + y] : (dbtr_slots){0, 0};
          for (int j = 0; j < DBTR_SLOTW; j++) w[b][j] = y < t->ny ? t->yw[kz * t->ny + y].w[j] : (ST)0;
        }
        sep &= SF(group_slots)(s, (const ST(*)[DBTR_SLOTW])w, &t->gs[kz * t->ng + gi], &t->gw[kz * t->ng + gi]);
      }
    }
  }
  return sep;
}

static int SN(same)(ST a, ST b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Every voxel's gather over all views, through the tables and through the per-pixel
 * reference, on random pixel terms. Returns the number of values that differ in their bits. */
static size_t SN(compare)(const SN(tables) * t) {
  size_t nproj = t->nv * t->npix, ndiff = 0;
  ST *e1 = malloc(nproj * sizeof(ST)), *e2 = malloc(nproj * sizeof(ST)), *pairs = malloc(2 * nproj * sizeof(ST));
  if (!e1 || !e2 || !pairs) {
    TEST__FAIL("out of memory");
    ndiff = 1;
  }
  test_rng_state = 7;
  /* e1 takes both signs, as (yhat - y) len does. */
  for (size_t i = 0; !ndiff && i < nproj; i++) {
    e1[i] = (ST)(test_rnd() - 0.5);
    e2[i] = (ST)test_rnd();
    pairs[2 * i] = e1[i];
    pairs[2 * i + 1] = e2[i];
  }
  int nx = (int)t->nx, ny = (int)t->ny, nr = (int)t->nr, nc = (int)t->nc;
  /* Voxel columns in pairs x, x + xstep, as the GPU takes them (xstep 32 there, one warp);
   * where x + xstep is past the grid the pair has one column. */
  const size_t xstep = 3, xtile = xstep * DBTR_XPAIR;
  for (size_t z = 0; !ndiff && z < t->nz; z++)
    for (size_t gi = 0; gi < t->ng; gi++)
      for (size_t x0 = 0; x0 < t->nx; x0 += xtile)
        for (size_t lane = 0; lane < xstep && x0 + lane < t->nx; lane++) {
          ST a1[DBTR_XPAIR][DBTR_GROUP] = {{0}}, a2[DBTR_XPAIR][DBTR_GROUP] = {{0}};
          for (size_t k = 0; k < t->nv; k++) {
            size_t kz = k * t->nz + z;
            dbtr_slots xs[DBTR_XPAIR];
            ST xw[DBTR_XPAIR][DBTR_SLOTS];
            for (size_t a = 0; a < DBTR_XPAIR; a++) {
              size_t x = x0 + lane + a * xstep;
              xs[a] = x < t->nx ? t->xs[kz * t->nx + x] : (dbtr_slots){0, 0};
              for (int i = 0; i < DBTR_SLOTS; i++) xw[a][i] = x < t->nx ? t->xw[kz * t->nx + x].w[i] : (ST)0;
            }
            SF(gather_sep)(xs, (const ST(*)[DBTR_SLOTS])xw, t->gs[kz * t->ng + gi], &t->gw[kz * t->ng + gi],
                           pairs + 2 * k * t->npix, nc, a1, a2);
          }
          for (size_t a = 0; a < DBTR_XPAIR; a++)
            for (size_t b = 0; b < DBTR_GROUP; b++) {
              size_t x = x0 + lane + a * xstep, y = gi * DBTR_GROUP + b;
              if (x >= t->nx || y >= t->ny) continue;
              ST r1 = 0, r2 = 0;
              for (size_t k = 0; k < t->nv; k++)
                SF(gather_view)(&t->foot[k * t->nz + z], t->rays + 4 * k * t->npix, e1 + k * t->npix, e2 + k * t->npix,
                                (int)x, (int)y, (int)z, nx, ny, nr, nc, &r1, &r2);
              ndiff += (size_t)!SN(same)(r1, a1[a][b]) + (size_t)!SN(same)(r2, a2[a][b]);
            }
        }
  free(e1);
  free(e2);
  free(pairs);
  return ndiff;
}

#undef ST
#undef SF
#undef SN
#undef SCROSS
#undef SSLOTW
#undef SGROUPW
#undef SVIEW
#undef SFOOT
#undef SVIEW_CONVERT
#undef SFOOT_CONVERT

/* kernels/sep_setup.cuh: the separable tables of one mode's backend (recon/rays.h and
 * recon/proj_impl.h, "Separable views"), planned and built once, at set-up. Included by
 * kernels/backend_mode.cu inside its per-mode namespace, after `state`.
 *
 * The host first asks whether the geometry can be separable at all: every view's detector u
 * along x and v along y, exactly (sep_possible). Only then are the tables planned in the
 * arena. After the ray records exist, the device builds the tables with the shared functions
 * and checks, for every pixel and every voxel of every view and slice, that the tables
 * reproduce what the per-pixel gather computes: the ray records' x and y parts
 * (ray_separable), and each voxel's candidate box (slots_match); every box and group union
 * must also fit its slots. Any failure leaves the backend on the per-pixel gather. Each
 * check writes 1 to one flag; no value but 1 is ever written there, so the threads that
 * race to it agree. */

__global__ void k_sep_rays(const T *rays, size_t n_views, int n_rows, int n_cols, int *flag) {
  size_t npix = (size_t)n_rows * (size_t)n_cols;
  DBTR_SETUP_FOR(i, n_views * npix) {
    size_t k = i / npix, p = i % npix;
    if (!g_ray_separable(rays + 4 * k * npix, (int)(p / (size_t)n_cols), (int)(p % (size_t)n_cols), n_cols)) *flag = 1;
  }
}

/* The crossings of every column (from row 0's records) and every row (from column 0's). */
__global__ void k_sep_cross(const T *rays, size_t n_views, int nz, int n_rows, int n_cols, int nx, int ny, CROSS *cx,
                            CROSS *cy) {
  size_t per = (size_t)n_cols + (size_t)n_rows, npix = (size_t)n_rows * (size_t)n_cols;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * per) {
    size_t kz = i / per, q = i % per, k = kz / (size_t)nz;
    int z = (int)(kz % (size_t)nz);
    const T *rk = rays + 4 * k * npix;
    if (q < (size_t)n_cols)
      g_cross_store(rk[4 * q], rk[4 * q + 1], z, nx, &cx[kz * (size_t)n_cols + q]);
    else {
      size_t r = q - (size_t)n_cols, p = r * (size_t)n_cols;
      g_cross_store(rk[4 * p + 2], rk[4 * p + 3], z, ny, &cy[kz * (size_t)n_rows + r]);
    }
  }
}

/* The column slots of every voxel index x (its span on row 0) and the row slots of every y
 * (its span on column 0); k_sep_check then compares them with every voxel's own box. */
__global__ void k_sep_slots(const FOOT *foot, size_t n_views, int nz, int n_rows, int n_cols, int nx, int ny,
                            sep_tables sep) {
  size_t per = (size_t)nx + (size_t)ny;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * per) {
    size_t kz = i / per, q = i % per;
    T span[4];
    int ok;
    if (q < (size_t)nx) {
      g_candidate_span(&foot[kz], (int)q, 0, n_rows, n_cols, span);
      size_t j = kz * (size_t)nx + q;
      ok = g_axis_slots(sep.cx + kz * (size_t)n_cols, span[0], span[1], n_cols, (int)q, &sep.xs[j], sep.xw[j].w);
    } else {
      size_t y = q - (size_t)nx, j = kz * (size_t)ny + y;
      g_candidate_span(&foot[kz], 0, (int)y, n_rows, n_cols, span);
      ok = g_axis_slots(sep.cy + kz * (size_t)n_rows, span[2], span[3], n_rows, (int)y, &sep.ys[j], sep.yw[j].w);
    }
    if (!ok) *sep.flag = 1;
  }
}

__global__ void k_sep_check(const FOOT *foot, size_t n_views, int nz, int n_rows, int n_cols, int nx, int ny,
                            sep_tables sep) {
  size_t slice = (size_t)nx * (size_t)ny;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * slice) {
    size_t kz = i / slice, q = i % slice, x = q % (size_t)nx, y = q / (size_t)nx;
    if (!g_slots_match(&foot[kz], (int)x, (int)y, n_rows, n_cols, sep.xs[kz * (size_t)nx + x], sep.ys[kz * (size_t)ny + y]))
      *sep.flag = 1;
  }
}

__global__ void k_sep_groups(size_t n_views, int nz, int ny, sep_tables sep) {
  size_t ng = (size_t)sep.n_groups;
  DBTR_SETUP_FOR(i, n_views * (size_t)nz * ng) {
    size_t kz = i / ng, gi = i % ng;
    dbtr_slots s[DBTR_GROUP];
    T w[DBTR_GROUP][DBTR_SLOTW];
    for (int b = 0; b < DBTR_GROUP; b++) {
      size_t y = gi * DBTR_GROUP + (size_t)b, j = kz * (size_t)ny + y;
      s[b] = y < (size_t)ny ? sep.ys[j] : dbtr_slots{0, 0};
      for (int u = 0; u < DBTR_SLOTW; u++) w[b][u] = y < (size_t)ny ? sep.yw[j].w[u] : (T)0;
    }
    if (!g_group_slots(s, w, &sep.gs[i], &sep.gw[i])) *sep.flag = 1;
  }
}

/* Whether every view's detector has u along x and v along y exactly (in index units, as
 * the projectors see them): the condition under which ray records can be separable. */
static int sep_possible(const dbtr_geom *g, const dbtr_grid *grid) {
  for (size_t k = 0; k < g->n_views; k++) {
    dbtr_view_d v;
    dbtr_view_reduce(g, grid, k, &v);
    if (v.du[1] != 0.0 || v.du[2] != 0.0 || v.dv[0] != 0.0 || v.dv[2] != 0.0) return 0;
  }
  return 1;
}

/* Plans the tables in the arena when the geometry can be separable. */
static void sep_plan(state *s, const dbtr_geom *g, const dbtr_grid *grid) {
  sep_tables *t = &s->sep;
  memset(t, 0, sizeof *t);
  if (!sep_possible(g, grid)) return;
  size_t vz = s->n_views * (size_t)s->nz;
  t->n_groups = DBTR_N_GROUPS(s->ny);
  dbtr__gpu_arena *a = &s->arena;
  dbtr__gpu_arena_plan(a, (void **)&t->cx, vz * (size_t)s->n_cols, sizeof(CROSS));
  dbtr__gpu_arena_plan(a, (void **)&t->cy, vz * (size_t)s->n_rows, sizeof(CROSS));
  dbtr__gpu_arena_plan(a, (void **)&t->xs, vz * (size_t)s->nx, sizeof(dbtr_slots));
  dbtr__gpu_arena_plan(a, (void **)&t->xw, vz * (size_t)s->nx, sizeof(SLOTW));
  dbtr__gpu_arena_plan(a, (void **)&t->ys, vz * (size_t)s->ny, sizeof(dbtr_slots));
  dbtr__gpu_arena_plan(a, (void **)&t->yw, vz * (size_t)s->ny, sizeof(SLOTW));
  dbtr__gpu_arena_plan(a, (void **)&t->gs, vz * (size_t)t->n_groups, sizeof(dbtr_slots));
  dbtr__gpu_arena_plan(a, (void **)&t->gw, vz * (size_t)t->n_groups, sizeof(GROUPW));
  dbtr__gpu_arena_plan(a, (void **)&t->flag, 1, sizeof(int));
}

/* Builds and checks the planned tables once the ray records and footprints are on the
 * device. On success the gather uses them (s->sep.on); where a check fails, the per-pixel
 * gather runs. */
static int sep_build(state *s) {
  sep_tables *t = &s->sep;
  if (!t->cx) return 0;
  const unsigned grid = DBTR_SETUP_BLOCKS;
  int found = 0;
  DBTR_CUDA_TRY(cudaMemset(t->flag, 0, sizeof(int)));
  k_sep_rays<<<grid, DBTR_BLOCK>>>(s->rays, s->n_views, s->n_rows, s->n_cols, t->flag);
  DBTR_CUDA_LAUNCHED();
  k_sep_cross<<<grid, DBTR_BLOCK>>>(s->rays, s->n_views, s->nz, s->n_rows, s->n_cols, s->nx, s->ny, t->cx, t->cy);
  DBTR_CUDA_LAUNCHED();
  k_sep_slots<<<grid, DBTR_BLOCK>>>(s->foot, s->n_views, s->nz, s->n_rows, s->n_cols, s->nx, s->ny, *t);
  DBTR_CUDA_LAUNCHED();
  k_sep_check<<<grid, DBTR_BLOCK>>>(s->foot, s->n_views, s->nz, s->n_rows, s->n_cols, s->nx, s->ny, *t);
  DBTR_CUDA_LAUNCHED();
  k_sep_groups<<<grid, DBTR_BLOCK>>>(s->n_views, s->nz, s->ny, *t);
  DBTR_CUDA_LAUNCHED();
  DBTR_CUDA_TRY(cudaMemcpy(&found, t->flag, sizeof found, cudaMemcpyDeviceToHost));
  t->on = !found;
  return 0;
}

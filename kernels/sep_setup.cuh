/* kernels/sep_setup.cuh: the separable tables of one mode's backend (kernels/separable.h),
 * planned and built once, at set-up. Included by kernels/backend_mode.cu inside its per-mode
 * namespace, after `state`.
 *
 * The host first asks whether the geometry can be separable at all: every view's detector u
 * along x and v along y, exactly (sep_possible). Only then are the tables planned in the
 * arena. After the ray records exist, the device runs the builder of kernels/separable.h,
 * which fills the tables with the shared functions and checks, for every pixel and every
 * voxel of every view and slice, that they reproduce what the per-pixel gather computes: the
 * ray records' x and y parts (ray_separable), and each voxel's candidate box (slots_match);
 * every box and group union must also fit its slots. Any failure leaves the backend on the
 * per-pixel gather. */

/* One kernel per step of the builder (kernels/separable.h), each a grid-stride loop over the
 * step's elements (DBTR_SETUP_FOR); launched in the builder's order by sep_build. */
__global__ void k_sep_rays(const R *rays, size_t n_views, int n_rows, int n_cols, int *flag) {
  g_sep_rays(rays, n_views, n_rows, n_cols, flag);
}

__global__ void k_sep_cross(const R *rays, size_t n_views, int nz, int n_rows, int n_cols, int nx, int ny, CROSS *cx,
                            CROSS *cy) {
  g_sep_cross(rays, n_views, nz, n_rows, n_cols, nx, ny, cx, cy);
}

__global__ void k_sep_slots(const FOOT *foot, size_t n_views, int nz, int n_rows, int n_cols, int nx, int ny,
                            sep_tables sep) {
  g_sep_slots(foot, n_views, nz, n_rows, n_cols, nx, ny, sep);
}

__global__ void k_sep_check(const FOOT *foot, size_t n_views, int nz, int n_rows, int n_cols, int nx, int ny,
                            sep_tables sep) {
  g_sep_check(foot, n_views, nz, n_rows, n_cols, nx, ny, sep);
}

__global__ void k_sep_groups(size_t n_views, int nz, int ny, sep_tables sep) { g_sep_groups(n_views, nz, ny, sep); }

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

/* Plans the tables in arena a (for a geometry that can be separable). */
static void sep_plan(state *s, dbtr__gpu_arena *a) {
  sep_tables *t = &s->sep;
  memset(t, 0, sizeof *t);
  size_t vz = s->n_views * (size_t)s->nz;
  t->n_groups = DBTR_N_GROUPS(s->ny);
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
  /* The steps that read ray records run a batch of views at a time, each after its records,
   * when the records are made in batches; the rest read the tables. */
  for (size_t k0 = 0; k0 < s->n_views; k0 += s->batch) {
    size_t nb = s->n_views - k0 < s->batch ? s->n_views - k0 : s->batch, kz = k0 * (size_t)s->nz;
    int rc = batched(s) ? make_rays(s, s->all_views + k0, nb) : 0;
    if (rc) return rc;
    k_sep_rays<<<grid, DBTR_BLOCK>>>(s->rays, nb, s->n_rows, s->n_cols, t->flag);
    DBTR_CUDA_LAUNCHED();
    k_sep_cross<<<grid, DBTR_BLOCK>>>(s->rays, nb, s->nz, s->n_rows, s->n_cols, s->nx, s->ny,
                                      t->cx + kz * (size_t)s->n_cols, t->cy + kz * (size_t)s->n_rows);
    DBTR_CUDA_LAUNCHED();
  }
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

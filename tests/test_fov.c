/* tests/test_fov.c: the field of view (engine/fov.h): which voxels some ray reaches, decided
 * once on the host, and the outputs that write the others as 0 (engine/session.h,
 * dbtr_session_get_volume). Its definition is checked against the forward projector, the other
 * half of the matched pair: a voxel is unseen iff no ray's sum takes anything from it. */
#include <stdlib.h>
#include <string.h>

#include "engine/fov.h"
#include "engine/session.h"
#include "recon/cpu.h"
#include "recon/mlem.h"
#include "recon/error.h"
#include "tests/problems.h"
#include "tests/test.h"

/* The projections of the volume that is 1 on the voxels where pick[i] == want and 0 elsewhere,
 * in double: 1 when any is nonzero, else 0. Sums of weights >= 0, so nonzero exactly where some
 * ray takes a share of one of those voxels. */
static int any_ray_reaches(dbtr_cpu_projector *pr, size_t n_vox, size_t n_proj, const unsigned char *pick,
                           unsigned char want, size_t only, int *out) {
  double *vol = calloc(n_vox, sizeof *vol), *proj = malloc(n_proj * sizeof *proj);
  int rc = vol && proj ? 0 : dbtr_err(DBTR_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < n_vox; i++) vol[i] = (only == (size_t)-1 ? pick[i] == want : i == only) ? 1.0 : 0.0;
  if (!rc) rc = dbtr_cpu_forward(pr, vol, proj);
  *out = 0;
  for (size_t i = 0; !rc && i < n_proj; i++) *out |= proj[i] != 0.0;
  free(vol);
  free(proj);
  return rc;
}

/* On each preset's layout at test size, in float and in double: no ray reaches any voxel the
 * mask calls unseen (their forward projection is exactly 0), and every seen voxel next to an
 * unseen one (the edge of the field of view, where a decision could go wrong) gives some ray a
 * share. The grid is as wide and as deep as the detector at its bottom, so its upper slices
 * reach past the cone (more so toward the far edge and the arc's ends): unseen voxels exist. */
DBTR_TEST(unseen_iff_no_ray_reaches) {
  const char *presets[] = {"hologic", "siemens", "tiny"};
  for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++) {
    dbtr_geom g;
    dbtr_grid grid;
    REQUIRE_OK(test_small_problem(presets[k], &g, &grid));
    size_t n_vox = grid.nx * grid.ny * grid.nz, n_proj = g.n_views * g.n_rows * g.n_cols;
    unsigned char *mask[2] = {malloc(n_vox), malloc(n_vox)};
    size_t unseen[2];
    dbtr_cpu_projector *pr = NULL;
    CHECK_OK(dbtr_cpu_projector_create(&pr, &g, &grid, DBTR_PREC_DOUBLE, 0));
    for (int p = 0; p < 2 && pr; p++) {
      CHECK_OK(dbtr_fov_mask(&g, &grid, p ? DBTR_PREC_DOUBLE : DBTR_PREC_FLOAT, 0, mask[p], &unseen[p]));
      CHECK_GT(unseen[p], (size_t)0);
      CHECK_LT(unseen[p], n_vox);
      int reached;
      CHECK_OK(any_ray_reaches(pr, n_vox, n_proj, mask[p], 0, (size_t)-1, &reached));
      CHECK_EQ_INT(reached, 0);
      size_t edge = 0;
      for (size_t i = 0; i < n_vox; i++) {
        size_t x = i % grid.nx, y = i / grid.nx % grid.ny;
        int next_unseen = (x > 0 && !mask[p][i - 1]) || (x + 1 < grid.nx && !mask[p][i + 1]) ||
                          (y > 0 && !mask[p][i - grid.nx]) || (y + 1 < grid.ny && !mask[p][i + grid.nx]);
        if (!mask[p][i] || !next_unseen) continue;
        edge++;
        CHECK_OK(any_ray_reaches(pr, n_vox, n_proj, mask[p], 1, i, &reached));
        CHECK_EQ_INT(reached, 1);
      }
      CHECK_GT(edge, (size_t)0);
    }
    dbtr_cpu_projector_destroy(&pr);
    free(mask[0]);
    free(mask[1]);
    dbtr_geom_free(&g);
  }
}

/* The mask read off the separable tables (dbtr_cpu_projector_reached) is, byte for byte, the
 * nonzero pattern of the back projection of ones it stands for, in every precision and on each
 * preset's layout; a turned detector, not separable, gets no mask from the tables, and
 * dbtr_fov_mask computes the back projection then. */
DBTR_TEST(tables_give_the_back_projections_mask) {
  const char *presets[] = {"hologic", "siemens", "tiny", "thesis"};
  const dbtr_precision precs[] = {DBTR_PREC_FLOAT, DBTR_PREC_DOUBLE, DBTR_PREC_DD};
  for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++) {
    dbtr_geom g;
    dbtr_grid grid;
    REQUIRE_OK(test_small_problem(presets[k], &g, &grid));
    size_t n_vox = grid.nx * grid.ny * grid.nz, n_proj = g.n_views * g.n_rows * g.n_cols;
    for (int p = 0; p < 3; p++) {
      size_t es = dbtr_precision_size(precs[p]);
      unsigned char *tab = malloc(n_vox), *ones = malloc(n_proj * es), *back = malloc(n_vox * es);
      REQUIRE(tab && ones && back);
      const double one = 1.0;
      dbtr_convert_from_double(precs[p], &one, 1, ones);
      for (size_t i = 1; i < n_proj; i++) memcpy(ones + i * es, ones, es);
      dbtr_cpu_projector *pr = NULL;
      REQUIRE_OK(dbtr_cpu_projector_create(&pr, &g, &grid, precs[p], 0));
      CHECK_EQ_INT(dbtr_cpu_projector_reached(pr, tab), 0);
      CHECK_OK(dbtr_cpu_back(pr, ones, back));
      size_t differ = 0, seen = 0;
      for (size_t i = 0; i < n_vox; i++) {
        double x = precs[p] == DBTR_PREC_FLOAT ? (double)((float *)back)[i] : ((double *)back)[i * (es / 8)];
        differ += tab[i] != (x != 0.0);
        seen += tab[i];
      }
      CHECK_EQ_U64(differ, 0);
      CHECK_GT(seen, (size_t)0);
      CHECK_LT(seen, n_vox);
      dbtr_cpu_projector_destroy(&pr);
      free(tab);
      free(ones);
      free(back);
    }
    dbtr_geom_free(&g);
  }
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("hologic", &g, &grid));
  test_rotate_detector(&g, 7.0);
  dbtr_cpu_projector *pr = NULL;
  unsigned char *tab = malloc(grid.nx * grid.ny * grid.nz);
  REQUIRE(tab);
  REQUIRE_OK(dbtr_cpu_projector_create(&pr, &g, &grid, DBTR_PREC_FLOAT, 0));
  CHECK_EQ_INT(dbtr_cpu_projector_reached(pr, tab), 1);
  /* There dbtr_fov_mask computes A^T 1: its mask is that back projection's nonzero pattern. */
  size_t n_vox = grid.nx * grid.ny * grid.nz, n_proj = g.n_views * g.n_rows * g.n_cols, unseen = 0, differ = 0;
  float *ones = malloc(n_proj * sizeof *ones), *back = malloc(n_vox * sizeof *back);
  REQUIRE(ones && back);
  for (size_t i = 0; i < n_proj; i++) ones[i] = 1.0f;
  CHECK_OK(dbtr_cpu_back(pr, ones, back));
  CHECK_OK(dbtr_fov_mask(&g, &grid, DBTR_PREC_FLOAT, 0, tab, &unseen));
  for (size_t i = 0; i < n_vox; i++) differ += tab[i] != (back[i] != 0.0f);
  CHECK_EQ_U64(differ, 0);
  CHECK_GT(unseen, (size_t)0);
  dbtr_cpu_projector_destroy(&pr);
  free(ones);
  free(back);
  free(tab);
  dbtr_geom_free(&g);
}

/* After iterations, the session's output volume is the backend's, bit for bit, where a ray
 * reaches, and 0 where none does; there the backend still holds the start value, which is why
 * the outputs write 0 (ML-EM cannot move such a voxel). */
DBTR_TEST(outputs_zero_unseen_voxels_only) {
  dbtr_scan s = {0};
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("siemens", &s.geom, &grid));
  double *y = NULL, *i0 = NULL;
  REQUIRE_OK(test_problem_data(&s.geom, &grid, 0, &y, &i0));
  s.quantity = DBTR_QUANTITY_COUNTS;
  s.proj = y;
  s.i0_shape = DBTR_I0_FULL;
  s.i0 = i0;
  /* The start value given, so the unseen voxels' value is known: 0.02 /mm, breast tissue's order. */
  const double init = 0.02;
  dbtr_session_opts o = {.recon = {.subsets = 3, .init = init, .backend = {.backend = "cpu"}}};
  dbtr_session *ses = NULL;
  REQUIRE_OK(dbtr_session_open(&ses, &s, &grid, &o));
  dbtr_session_run_opts r = {.first = 1, .last = 3};
  CHECK_OK(dbtr_session_run(ses, &r));
  size_t n_vox = grid.nx * grid.ny * grid.nz, unseen;
  const unsigned char *fov = dbtr_session_fov(ses, &unseen);
  float *raw = malloc(n_vox * sizeof *raw), *out = malloc(n_vox * sizeof *out);
  dbtr_backend *b = dbtr_session_backend(ses);
  CHECK_OK(b->get_volume(b, raw));
  CHECK_OK(dbtr_session_get_volume(ses, out));
  size_t zeros = 0;
  for (size_t i = 0; i < n_vox; i++) {
    if (fov[i]) {
      CHECK_EQ_INT(memcmp(&raw[i], &out[i], sizeof *raw), 0);
    } else {
      CHECK_EQ_INT(raw[i] == (float)init, 1);
      CHECK_EQ_INT(out[i] == 0.0f, 1);
      zeros++;
    }
  }
  CHECK_EQ_U64(zeros, unseen);
  CHECK_GT(unseen, (size_t)0);
  free(raw);
  free(out);
  dbtr_session_close(&ses);
  free(y);
  free(i0);
  dbtr_geom_free(&s.geom);
}

DBTR_TEST_MAIN(unseen_iff_no_ray_reaches, tables_give_the_back_projections_mask, outputs_zero_unseen_voxels_only)

/* tests/test_doubt.c: the plausibility checks of recon/doubt.h on made-up numbers, each
 * just inside and just outside its threshold. */
#include <string.h>

#include "recon/doubt.h"
#include "tests/problems.h"
#include "tests/test.h"

DBTR_TEST(fit_rising_only_for_plain_mlem) {
  double dev[3] = {100.0, 90.0, 95.0}; /* iteration 3 is worse than 2 */
  dbtr_doubt d;
  unsigned said = 0;
  CHECK_EQ_INT(dbtr_doubt_fit(dev, 2, 10, 1, &said, &d), 0);
  CHECK_EQ_INT(dbtr_doubt_fit(dev, 3, 10, 3, &said, &d), 0); /* ordered subsets may rise */
  CHECK_EQ_INT(dbtr_doubt_fit(dev, 3, 10, 1, &said, &d), 1);
  CHECK_STR_CONTAINS(d.text, "got worse in iteration 3");
  CHECK_EQ_INT(dbtr_doubt_fit(dev, 3, 10, 1, &said, &d), 0); /* said once */
}

DBTR_TEST(fit_stalled_far_above_poisson) {
  /* 1000 pixels: 101 per pixel is above the 100 threshold; 95% of two iterations back is
   * less than the 10% fall that counts as progress. */
  double stalled[5] = {5e5, 2e5, 106e3, 104e3, 101e3}, falling[5] = {5e5, 2e5, 150e3, 120e3, 101e3};
  double low[5] = {5e5, 2e5, 99e3 * 1.02, 99e3 * 1.01, 99e3};
  dbtr_doubt d;
  unsigned said = 0;
  CHECK_EQ_INT(dbtr_doubt_fit(stalled, 4, 1000, 1, &said, &d), 0); /* before iteration 5 */
  CHECK_EQ_INT(dbtr_doubt_fit(falling, 5, 1000, 1, &said, &d), 0);
  CHECK_EQ_INT(dbtr_doubt_fit(low, 5, 1000, 1, &said, &d), 0);     /* 99 per pixel */
  CHECK_EQ_INT(dbtr_doubt_fit(stalled, 5, 1000, 1, &said, &d), 1);
  CHECK_STR_CONTAINS(d.text, "101 per pixel");
}

DBTR_TEST(geometry_units) {
  dbtr_geom g;
  dbtr_grid grid;
  REQUIRE_OK(test_small_problem("hologic", &g, &grid));
  dbtr_doubt d[2];
  CHECK_EQ_INT(dbtr_doubt_geometry(&g, d, 2), 0); /* a preset is plausible */
  for (size_t i = 0; i < 3 * g.n_views; i++) {
    g.source[i] /= 10.0, g.detector_center[i] /= 10.0, g.detector_u[i] /= 10.0, g.detector_v[i] /= 10.0;
  }
  /* In cm: the source 70 mm up (the SID bound is 300), pixels of 0.15 mm (still plausible). */
  CHECK_EQ_INT(dbtr_doubt_geometry(&g, d, 2), 1);
  CHECK_STR_CONTAINS(d[0].text, "not cm or m");
  for (size_t i = 0; i < 3 * g.n_views; i++) g.detector_u[i] /= 10.0, g.detector_v[i] /= 10.0;
  CHECK_EQ_INT(dbtr_doubt_geometry(&g, d, 2), 2); /* and now pixels of 0.015 mm */
  CHECK_STR_CONTAINS(d[1].text, "pixel steps in mm");
  dbtr_geom_free(&g);
}

DBTR_TEST(counts_that_look_like_line_integrals) {
  double li[4] = {0.5, 1.25, 3.0, 19.5}, whole[4] = {1, 2, 3, 4}, big[4] = {0.5, 1.25, 3.0, 20.0};
  dbtr_doubt d;
  CHECK_EQ_INT(dbtr_doubt_counts(li, 4, &d, 1), 1);
  CHECK_EQ_INT(dbtr_doubt_counts(whole, 4, &d, 1), 0); /* low counts, but photon numbers */
  CHECK_EQ_INT(dbtr_doubt_counts(big, 4, &d, 1), 0);   /* 20 is no line integral through a breast */
}

DBTR_TEST_MAIN(fit_rising_only_for_plain_mlem, fit_stalled_far_above_poisson, geometry_units,
               counts_that_look_like_line_integrals)

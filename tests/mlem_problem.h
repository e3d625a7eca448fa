/* tests/mlem_problem.h: a problem ready for ML-EM: a preset at test size
 * (tests/problems.h), its data and the subset schedule, for the tests that run the
 * validation engine (test_validate, test_gpu). */
#ifndef DBTR_TEST_MLEM_PROBLEM_H
#define DBTR_TEST_MLEM_PROBLEM_H

#include <string.h>

#include "recon/mlem.h"
#include "tests/problems.h"

/* The run that uses m must end before the problem is closed: m points into it. */
typedef struct {
  dbtr_geom g;
  dbtr_grid grid;
  double *y, *i0;
  dbtr_data d;
  dbtr_mlem m;
} test_mlem_problem;

/* preset's layout, its detector turned by rotate_deg about z, with transmission counts or
 * (emission) line integrals, in subsets ordered subsets on threads CPU threads (0: all). */
static inline int test_mlem_problem_open(test_mlem_problem *p, const char *preset, double rotate_deg, int emission,
                                         size_t subsets, int threads) {
  memset(p, 0, sizeof *p);
  int rc = test_small_problem(preset, &p->g, &p->grid);
  if (rc) return rc;
  test_rotate_detector(&p->g, rotate_deg);
  if ((rc = test_problem_data(&p->g, &p->grid, emission, &p->y, &p->i0))) return rc;
  p->d = (dbtr_data){.geom = &p->g, .grid = &p->grid, .algo = emission ? DBTR_ALGO_EMISSION : DBTR_ALGO_TRANSMISSION,
                     .y = p->y, .i0 = emission ? NULL : p->i0};
  return dbtr_mlem_init(&p->m, &p->d, subsets, threads);
}

static inline void test_mlem_problem_close(test_mlem_problem *p) {
  dbtr_mlem_free(&p->m);
  free(p->y);
  free(p->i0);
  dbtr_geom_free(&p->g);
}

#endif

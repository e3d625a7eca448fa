/* phantoms/random.c: splitmix64 streams and exact Poisson sampling for simulated scans.
 *
 * Poisson variates come from two exact methods (docs/phantoms.md, "Poisson counts"):
 * - mean < 10: the multiplication method (Knuth, TAOCP vol. 2, 3.4.1 F): multiply
 *   uniforms until the product falls to exp(-mean); costs mean + 1 uniforms on average.
 * - mean >= 10: PTRS, the transformed rejection method with squeeze of W. Hormann, "The
 *   transformed rejection method for generating Poisson random variables", Insurance:
 *   Mathematics and Economics 12 (1993) 39-45, with the constants of that paper. It
 *   accepts about 9 draws in 10 from the squeeze alone and is exact for every mean. */
#include "phantoms/random.h"

#include <math.h>
#include <stddef.h>

#include "phantoms/phantom.h"
#include "recon/error.h"

/* The golden-ratio increment of splitmix64 (odd, so the Weyl sequence has period 2^64). */
#define DBTR__GAMMA UINT64_C(0x9E3779B97F4A7C15)

uint64_t dbtr__mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}

void dbtr__rng_seed(dbtr__rng *r, uint64_t seed, uint64_t stream) {
  /* Mixing twice keeps nearby (seed, stream) pairs, such as (1, 2) and (2, 1), apart. */
  uint64_t key = dbtr__mix64(seed + DBTR__GAMMA);
  r->state = dbtr__mix64(key ^ dbtr__mix64(stream * DBTR__GAMMA + UINT64_C(0x632BE59BD9B4E019)));
}

uint64_t dbtr__rng_next(dbtr__rng *r) {
  r->state += DBTR__GAMMA;
  return dbtr__mix64(r->state);
}

double dbtr__rng_uniform(dbtr__rng *r) { return (double)(dbtr__rng_next(r) >> 11) * 0x1.0p-53; }

double dbtr__rng_uniform_pos(dbtr__rng *r) { return (double)((dbtr__rng_next(r) >> 11) + 1) * 0x1.0p-53; }

double dbtr__rng_range(dbtr__rng *r, double lo, double hi) { return lo + (hi - lo) * dbtr__rng_uniform(r); }

/* Knuth's multiplication method: the number of arrivals of a unit-rate Poisson process
 * in time `mean` is the number of uniforms whose product stays above exp(-mean). */
static double poisson_mult(dbtr__rng *r, double mean) {
  double limit = exp(-mean), prod = dbtr__rng_uniform_pos(r);
  double k = 0.0;
  while (prod > limit) {
    k += 1.0;
    prod *= dbtr__rng_uniform_pos(r);
  }
  return k;
}

/* Hormann's PTRS; the variable names follow the paper. */
static double poisson_ptrs(dbtr__rng *r, double mean) {
  double slam = sqrt(mean), loglam = log(mean);
  double b = 0.931 + 2.53 * slam;
  double a = -0.059 + 0.02483 * b;
  double invalpha = 1.1239 + 1.1328 / (b - 3.4);
  double vr = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    double u = dbtr__rng_uniform(r) - 0.5;
    double v = dbtr__rng_uniform_pos(r);
    double us = 0.5 - fabs(u);
    double k = floor((2.0 * a / us + b) * u + mean + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -mean + k * loglam - lgamma(k + 1.0)) return k;
  }
}

double dbtr__rng_poisson(dbtr__rng *r, double mean) {
  if (!(mean > 0.0)) return 0.0;
  return mean < 10.0 ? poisson_mult(r, mean) : poisson_ptrs(r, mean);
}

/* Means above this are refused: counts past 2^53 are no longer exact in a double, and no
 * detector pixel comes near it. */
#define DBTR__POISSON_MAX_MEAN 1e15

int dbtr_poisson_counts(const double *line, const double *i0, size_t n, uint64_t seed, double *out) {
  if (n == 0) return 0;
  if (!line || !i0 || !out) return dbtr_err(DBTR_EINVAL, "poisson counts: NULL array for %zu elements", n);
  /* The smallest bad index is reported, whatever the thread count. */
  size_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
  for (size_t i = 0; i < n; i++) {
    double mean = i0[i] * exp(-line[i]);
    if (!(i0[i] >= 0.0) || isnan(line[i]) || !(mean <= DBTR__POISSON_MAX_MEAN)) {
      out[i] = 0.0;
      if (i < bad) bad = i;
      continue;
    }
    dbtr__rng r;
    dbtr__rng_seed(&r, seed, (uint64_t)i);
    out[i] = dbtr__rng_poisson(&r, mean);
  }
  if (bad < n)
    return dbtr_err(DBTR_EINVAL,
                    "poisson counts: element %zu: i0 = %g, line integral = %g: the mean i0*exp(-line) must be "
                    "finite, >= 0 and <= %g",
                    bad, i0[bad], line[bad], DBTR__POISSON_MAX_MEAN);
  return 0;
}

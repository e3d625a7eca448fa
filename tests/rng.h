/* tests/rng.h: a fixed, portable sequence of test inputs (splitmix64) and the distributions the
 * arithmetic tests draw from (tests/test_crmath.c, tests/test_dd.c). */
#ifndef DBTR_TESTS_RNG_H
#define DBTR_TESTS_RNG_H

#include <math.h>
#include <stdint.h>

static inline uint64_t mix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}
/* Uniform in [a, b). */
static inline double uniform(uint64_t *state, double a, double b) {
  return a + (b - a) * ((double)(mix(state) >> 11) * 0x1p-53);
}
/* A double with random significand and sign and an exponent uniform in [e0, e1]. */
static inline double log_uniform(uint64_t *state, int e0, int e1) {
  uint64_t r = mix(state);
  double m = 1.0 + (double)(r >> 12) * 0x1p-52;
  int e = e0 + (int)((r & 0x3ff) % (uint64_t)(e1 - e0 + 1));
  return ((r >> 11) & 1u) ? -ldexp(m, e) : ldexp(m, e);
}

#endif

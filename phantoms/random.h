/* phantoms/random.h: the counter-based random numbers of the phantoms module (internal).
 *
 * Every random draw in phantoms/ comes from a stream that is a pure function of
 * (seed, stream index): the Poisson sampler gives element i of a scan its own stream, so
 * the counts do not depend on how elements are shared among threads, and the phantom
 * builders use one stream per phantom kind, so a seed always builds the same phantom.
 *
 * The generator is splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014): a Weyl sequence state += gamma, each output a
 * bijective 64-bit mix of the state. A stream starts at a state obtained by mixing the
 * seed and the stream index, so distinct streams start at unrelated points of the same
 * 2^64 cycle; two streams of n draws overlap with probability about n^2 / 2^64. */
#ifndef DBTR_PHANTOMS_RANDOM_H
#define DBTR_PHANTOMS_RANDOM_H

#include <stdint.h>

typedef struct {
  uint64_t state;
} dbtr__rng;

/* The splitmix64 output function: a bijection of 64-bit words with good avalanche. */
uint64_t dbtr__mix64(uint64_t x);
/* Starts stream number `stream` of generator `seed`. */
void dbtr__rng_seed(dbtr__rng *r, uint64_t seed, uint64_t stream);
uint64_t dbtr__rng_next(dbtr__rng *r);
/* Uniform on [0, 1) with 53 random bits. */
double dbtr__rng_uniform(dbtr__rng *r);
/* Uniform on (0, 1]: safe to take the logarithm of. */
double dbtr__rng_uniform_pos(dbtr__rng *r);
/* Uniform on [lo, hi). */
double dbtr__rng_range(dbtr__rng *r, double lo, double hi);
/* One Poisson variate of the given mean (finite, >= 0), exact up to rounding. */
double dbtr__rng_poisson(dbtr__rng *r, double mean);

#endif

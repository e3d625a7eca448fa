/* recon/fit.h: the data fit reported per iteration, the Poisson deviance
 *   D = 2 sum_i [ y_i log(y_i / yhat_i) - (y_i - yhat_i) ],
 * 0 for a perfect fit and about one per pixel for a right model with Poisson noise.
 * Each backend sums the per-pixel terms below (in double); the constant part is added
 * once by the driver. The deviance is a diagnostic, not part of the bitwise promise:
 * backends may sum in different orders. */
#ifndef DBTR_FIT_H
#define DBTR_FIT_H

#include "recon/crmath.h"
#include "recon/hd.h"

/* Transmission, yhat = i0 exp(-l): y log(y/yhat) = y log(y/i0) + y l. The term
 * y log(y/i0) is constant (dbtr_fit_transmission_const); this is the rest. */
static inline DBTR_HD double dbtr_fit_transmission(double y, double l, double yhat) { return y * l - y + yhat; }

/* Emission, yhat = A f (line integrals or counts g). */
static inline DBTR_HD double dbtr_fit_emission(double g, double af) {
  double t = af - g;
  if (g > 0.0 && af > 0.0) t += g * dbtr_log_sh(g / af);
  return t;
}

#endif

/* quality/change.c: how much a path's volume changes each object's measures against its
 * reference's (quality/quality.h, `dbtr validate --quality`), and the verdict that sums it up:
 * the largest changes, with what could not be measured counted, never taken as 0. */
#include <math.h>
#include <string.h>

#include "quality/quality.h"

/* The measures of o, in the order of dbtr_quality_change.m; NaN for an object not measured. */
static void measures(const dbtr_quality_object *o, double v[DBTR_QMEASURES]) {
  v[DBTR_QCNR] = o->measured ? o->cnr : (double)NAN;
  v[DBTR_QFWHM] = o->measured ? o->fwhm : (double)NAN;
  v[DBTR_QCONTRAST] = o->measured ? o->contrast : (double)NAN;
}

void dbtr_quality_change_ref(dbtr_quality_change *c, const dbtr_quality_object *o) {
  double v[DBTR_QMEASURES];
  measures(o, v);
  memset(c, 0, sizeof *c);
  c->object = o->object;
  c->focus_ref = o->measured ? o->focus_slice : 0;
  for (int k = 0; k < DBTR_QMEASURES; k++) c->m[k] = (dbtr_quality_delta){(double)NAN, v[k], (double)NAN};
}

void dbtr_quality_change_path(dbtr_quality_change *c, const dbtr_quality_object *o) {
  double v[DBTR_QMEASURES];
  measures(o, v);
  c->focus = o->measured ? o->focus_slice : 0;
  for (int k = 0; k < DBTR_QMEASURES; k++) {
    dbtr_quality_delta *x = &c->m[k];
    x->value = v[k];
    double d = x->value - x->ref;
    /* The FWHM's change is absolute (mm); CNR's and contrast's relative to the reference's. */
    if (k != DBTR_QFWHM) d = x->ref != 0.0 ? 100.0 * d / fabs(x->ref) : (double)NAN;
    x->change = isfinite(x->value) && isfinite(x->ref) ? d : (double)NAN;
  }
}

/* Takes measure k of change c (of iteration it, 1-based) into e: the first of the largest
 * magnitude stays. */
static void take(dbtr_quality_extreme *e, const dbtr_quality_change *c, int k, size_t it) {
  const dbtr_quality_delta *x = &c->m[k];
  if (isnan(x->change)) {
    e->not_measurable++;
    e->one_sided += !isfinite(x->value) != !isfinite(x->ref);
    return;
  }
  if (!e->found || fabs(x->change) > fabs(e->change)) {
    e->found = 1;
    e->change = x->change;
    e->object = c->object;
    e->iteration = it;
  }
}

void dbtr_quality_verdict_of(const dbtr_quality_change *c, size_t n_objects, size_t iterations,
                             dbtr_quality_verdict *v) {
  memset(v, 0, sizeof *v);
  v->n_objects = n_objects, v->iterations = iterations;
  for (size_t it = 0; it < iterations; it++)
    for (size_t j = 0; j < n_objects; j++)
      for (int k = 0; k < DBTR_QMEASURES; k++) {
        take(&v->all[k], c + it * n_objects + j, k, it + 1);
        if (it + 1 == iterations) take(&v->last[k], c + it * n_objects + j, k, it + 1);
      }
}

/* quality/regions.c: regions given by hand for the quality measures (quality/quality.h,
 * docs/quality.md "Regions by hand"), for volumes of scans that are not dbtr phantoms. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quality/quality.h"
#include "recon/error.h"

/* A JSON array of 3 finite numbers into v. */
static int triple(const json_t *a, double v[3]) {
  if (!json_is_array(a) || json_array_size(a) != 3) return 0;
  for (size_t j = 0; j < 3; j++) {
    const json_t *x = json_array_get(a, j);
    if (!json_is_number(x) || !isfinite(v[j] = json_number_value(x))) return 0;
  }
  return 1;
}

static int one_region(const char *path, size_t i, const json_t *r, dbtr_shape *s, dbtr_object_info *o) {
  static const char *const shapes[3] = {"ellipsoid", "cylinder", "box"};
  if (!json_is_object(r)) return dbtr_err(DBTR_EFORMAT, "%s: region %zu: not a JSON object", path, i);
  const json_t *name = json_object_get(r, "name"), *shape = json_object_get(r, "shape");
  const json_t *contrast = json_object_get(r, "contrast");
  memset(s, 0, sizeof *s);
  memset(o, 0, sizeof *o);
  int kind = 0;
  if (shape) {
    kind = -1;
    for (int k = 0; k < 3 && json_is_string(shape); k++)
      if (!strcmp(json_string_value(shape), shapes[k])) kind = k;
    if (kind < 0) return dbtr_err(DBTR_EFORMAT, "%s: region %zu: \"shape\" is not ellipsoid, cylinder or box", path, i);
  }
  s->kind = (dbtr_shape_kind)kind;
  if (!triple(json_object_get(r, "center"), s->center))
    return dbtr_err(DBTR_EFORMAT, "%s: region %zu: \"center\" must be 3 finite numbers (mm)", path, i);
  if (!triple(json_object_get(r, "half"), s->half) || !(s->half[0] > 0.0 && s->half[1] > 0.0 && s->half[2] > 0.0))
    return dbtr_err(DBTR_EFORMAT, "%s: region %zu: \"half\" must be 3 positive finite numbers (mm)", path, i);
  for (int j = 0; j < 3; j++) s->axes[j][j] = 1.0;
  if (name && !json_is_string(name)) return dbtr_err(DBTR_EFORMAT, "%s: region %zu: \"name\" must be a string", path, i);
  snprintf(o->kind, sizeof o->kind, "%s", name ? json_string_value(name) : "region");
  dbtr_sanitize(o->kind);
  o->contrast = (double)NAN, o->mu = (double)NAN;
  if (contrast && (!json_is_number(contrast) || !isfinite(o->contrast = json_number_value(contrast))))
    return dbtr_err(DBTR_EFORMAT, "%s: region %zu: \"contrast\" must be a finite number (1/mm)", path, i);
  o->surround = -1;
  o->target = 1;
  return 0;
}

int dbtr_quality_regions_read(dbtr_phantom *p, const char *path) {
  memset(p, 0, sizeof *p);
  json_error_t err;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
  if (!root) return dbtr_err(DBTR_EFORMAT, "%s: line %d: %s", path, err.line, err.text);
  const json_t *list = json_object_get(root, "regions");
  int rc = 0;
  size_t n = json_array_size(list);
  if (!json_is_array(list) || n == 0)
    rc = dbtr_err(DBTR_EFORMAT, "%s: expected {\"regions\": [...]} with at least one region", path);
  if (!rc) rc = dbtr_alloc((void **)&p->shapes, n, sizeof *p->shapes, "regions");
  if (!rc) rc = dbtr_alloc((void **)&p->info, n, sizeof *p->info, "regions");
  for (size_t i = 0; i < n && !rc; i++) {
    rc = one_region(path, i, json_array_get(list, i), p->shapes + i, p->info + i);
    if (!rc) p->n_shapes = i + 1;
  }
  p->name = "regions";
  p->energy_kev = (double)NAN;
  json_decref(root);
  if (rc) dbtr_phantom_free(p);
  return rc;
}

/* quality/quality_json.c: the measures as JSON (docs/quality.md, "Report"), the one form the
 * report's quality.json and Python's dbtr.quality share. Numbers that are not finite (a CNR
 * without noise, an open ASF) are null: JSON has no NaN or infinity. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "quality/quality.h"
#include "recon/error.h"

static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *triple(const double v[3]) { return json_pack("[o,o,o]", num(v[0]), num(v[1]), num(v[2])); }

static json_t *object_json(const dbtr_quality *q, const dbtr_quality_object *o, const dbtr_phantom *p) {
  const dbtr_shape *s = p->shapes + o->object;
  const dbtr_object_info *in = p->info + o->object;
  static const char *const shapes[3] = {"ellipsoid", "cylinder", "box"};
  json_t *j = json_pack("{s:I,s:s,s:s,s:s,s:o,s:o,s:o,s:b}", "index", (json_int_t)o->object, "kind", in->kind,
                        "material", in->material, "shape", shapes[s->kind], "center", triple(s->center), "half",
                        triple(s->half), "expected_contrast", num(o->expected), "measured", o->measured);
  if (!j || !o->measured) return j;
  json_t *asf = json_array(), *cz = json_array();
  for (size_t k = 0; k < q->nz && asf && cz; k++) {
    json_array_append_new(asf, num(o->asf[k]));
    json_array_append_new(cz, num(o->contrast_z[k]));
  }
  json_t *more = json_pack("{s:b,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "partial", o->partial,
                           "center_slice", (json_int_t)o->center_slice, "focus_slice", (json_int_t)o->focus_slice,
                           "object_voxels", (json_int_t)o->n_object, "background_voxels", (json_int_t)o->n_background,
                           "mean_object", num(o->mean_object), "mean_background", num(o->mean_background),
                           "sd_background", num(o->sd_background), "contrast", num(o->contrast), "cnr", num(o->cnr),
                           "asf_fwhm_mm", num(o->fwhm), "contrast_by_slice", cz ? cz : json_null(), "asf",
                           asf ? asf : json_null());
  if (!more || json_object_update(j, more)) {
    json_decref(j);
    j = NULL;
  }
  json_decref(more);
  return j;
}

int dbtr_quality_to_json(const dbtr_quality *q, const dbtr_phantom *p, const dbtr_grid *grid, char **out) {
  *out = NULL;
  json_t *objs = json_array();
  for (size_t i = 0; i < q->n && objs; i++) {
    json_t *o = object_json(q, q->obj + i, p);
    if (!o || json_array_append_new(objs, o)) {
      json_decref(objs);
      objs = NULL;
    }
  }
  double d[3] = {grid->dx, grid->dy, grid->dz};
  json_t *root = objs ? json_pack("{s:s,s:{s:[I,I,I],s:o,s:o},s:{s:i,s:i},s:o}", "objects_from", p->name, "grid",
                                  "dims", (json_int_t)grid->nx, (json_int_t)grid->ny, (json_int_t)grid->nz,
                                  "voxel_size", triple(d), "origin", triple(grid->origin), "background",
                                  "gap_voxels", DBTR_QUALITY_GAP, "min_width_voxels", DBTR_QUALITY_MIN_WIDTH,
                                  "objects", objs)
                    : NULL;
  *out = root ? json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) : NULL;
  json_decref(root);
  return *out ? 0 : dbtr_err(DBTR_ENOMEM, "quality: cannot build the JSON report");
}

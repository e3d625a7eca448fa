/* tests/struct_layout.c: the public structs of include/dbtr.h as the compiler of libdbtr lays
 * them out (size, alignment, each member's name, offset and size, in declaration order) and
 * the constants the Python package mirrors, printed as JSON for
 * python/tests/test_struct_layout.py (tests/python.cmake). ctypes cannot read a header:
 * python/dbtr/_lib.py repeats every struct by hand, and a mirror with a member missing, added
 * or moved reads and writes the wrong bytes without any error. The test compares each mirror
 * with this program, and this program's lists with the header's declarations.
 *
 * A new public struct is a STRUCT line and one FIELD line per member, in the header's order;
 * a new enum the package mirrors is one CONSTANT line per value. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "include/dbtr.h"

typedef struct {
  const char *type;  /* the struct's name */
  const char *field; /* NULL: the struct itself, the first line of its members */
  size_t size, offset, align;
} layout_line;

#define STRUCT(T) {#T, NULL, sizeof(T), 0, _Alignof(T)}
#define FIELD(T, f) {#T, #f, sizeof(((T *)0)->f), offsetof(T, f), 0}

static const layout_line layout[] = {
    STRUCT(dbtr_grid),
    FIELD(dbtr_grid, nx),
    FIELD(dbtr_grid, ny),
    FIELD(dbtr_grid, nz),
    FIELD(dbtr_grid, dx),
    FIELD(dbtr_grid, dy),
    FIELD(dbtr_grid, dz),
    FIELD(dbtr_grid, origin),

    STRUCT(dbtr_geom),
    FIELD(dbtr_geom, n_views),
    FIELD(dbtr_geom, n_rows),
    FIELD(dbtr_geom, n_cols),
    FIELD(dbtr_geom, source),
    FIELD(dbtr_geom, detector_center),
    FIELD(dbtr_geom, detector_u),
    FIELD(dbtr_geom, detector_v),

    STRUCT(dbtr_scan_note),
    FIELD(dbtr_scan_note, key),
    FIELD(dbtr_scan_note, text),

    STRUCT(dbtr_scan),
    FIELD(dbtr_scan, geom),
    FIELD(dbtr_scan, quantity),
    FIELD(dbtr_scan, proj),
    FIELD(dbtr_scan, i0_shape),
    FIELD(dbtr_scan, i0),
    FIELD(dbtr_scan, has_grid),
    FIELD(dbtr_scan, grid),
    FIELD(dbtr_scan, stored_dtype),
    FIELD(dbtr_scan, n_notes),
    FIELD(dbtr_scan, notes),

    STRUCT(dbtr_scan_write_opts),
    FIELD(dbtr_scan_write_opts, dtype),
    FIELD(dbtr_scan_write_opts, gzip_level),

    STRUCT(dbtr_backend_opts),
    FIELD(dbtr_backend_opts, backend),
    FIELD(dbtr_backend_opts, mode),
    FIELD(dbtr_backend_opts, precision),
    FIELD(dbtr_backend_opts, threads),
    FIELD(dbtr_backend_opts, gpu_memory),
    FIELD(dbtr_backend_opts, gpus),

    STRUCT(dbtr_fbp_opts),
    FIELD(dbtr_fbp_opts, cutoff),
    FIELD(dbtr_fbp_opts, slice),

    STRUCT(dbtr_recon_opts),
    FIELD(dbtr_recon_opts, subsets),
    FIELD(dbtr_recon_opts, algorithm),
    FIELD(dbtr_recon_opts, init),
    FIELD(dbtr_recon_opts, backend),
    FIELD(dbtr_recon_opts, start),
    FIELD(dbtr_recon_opts, fbp),

    STRUCT(dbtr_device_data),
    FIELD(dbtr_device_data, proj),
    FIELD(dbtr_device_data, proj_type),
    FIELD(dbtr_device_data, i0),
    FIELD(dbtr_device_data, i0_type),
    FIELD(dbtr_device_data, device),

    STRUCT(dbtr_projector_opts),
    FIELD(dbtr_projector_opts, backend),
    FIELD(dbtr_projector_opts, device),

    STRUCT(dbtr_recon_file_opts),
    FIELD(dbtr_recon_file_opts, recon),
    FIELD(dbtr_recon_file_opts, iterations),
    FIELD(dbtr_recon_file_opts, format),
    FIELD(dbtr_recon_file_opts, u16_scale),
    FIELD(dbtr_recon_file_opts, force),
    FIELD(dbtr_recon_file_opts, log),
    FIELD(dbtr_recon_file_opts, threads),
    FIELD(dbtr_recon_file_opts, dims),
    FIELD(dbtr_recon_file_opts, voxel),
    FIELD(dbtr_recon_file_opts, origin),
    FIELD(dbtr_recon_file_opts, has_dims),
    FIELD(dbtr_recon_file_opts, has_voxel),
    FIELD(dbtr_recon_file_opts, has_origin),

    STRUCT(dbtr_mode_info),
    FIELD(dbtr_mode_info, name),
    FIELD(dbtr_mode_info, precision),
    FIELD(dbtr_mode_info, gpu),
    FIELD(dbtr_mode_info, variant),
    FIELD(dbtr_mode_info, threads),
    FIELD(dbtr_mode_info, bitwise_class),

    STRUCT(dbtr_diff_stats),
    FIELD(dbtr_diff_stats, n),
    FIELD(dbtr_diff_stats, n_differ),
    FIELD(dbtr_diff_stats, max_abs),
    FIELD(dbtr_diff_stats, mean_abs),
    FIELD(dbtr_diff_stats, max_ulp),
    FIELD(dbtr_diff_stats, median_ulp),
    FIELD(dbtr_diff_stats, rel_l2),
    FIELD(dbtr_diff_stats, n_differ_u16),
    FIELD(dbtr_diff_stats, beyond_4ulp),
    FIELD(dbtr_diff_stats, scale_ulp),

    STRUCT(dbtr_referee_stats),
    FIELD(dbtr_referee_stats, n),
    FIELD(dbtr_referee_stats, rel_l2),
    FIELD(dbtr_referee_stats, max_ulp),
    FIELD(dbtr_referee_stats, median_ulp),
    FIELD(dbtr_referee_stats, beyond_4ulp),
    FIELD(dbtr_referee_stats, scale_ulp),
    FIELD(dbtr_referee_stats, best),
    FIELD(dbtr_referee_stats, best_units),

    STRUCT(dbtr_quality_delta),
    FIELD(dbtr_quality_delta, value),
    FIELD(dbtr_quality_delta, ref),
    FIELD(dbtr_quality_delta, change),

    STRUCT(dbtr_quality_change),
    FIELD(dbtr_quality_change, object),
    FIELD(dbtr_quality_change, focus),
    FIELD(dbtr_quality_change, focus_ref),
    FIELD(dbtr_quality_change, m),

    STRUCT(dbtr_quality_extreme),
    FIELD(dbtr_quality_extreme, found),
    FIELD(dbtr_quality_extreme, change),
    FIELD(dbtr_quality_extreme, object),
    FIELD(dbtr_quality_extreme, iteration),
    FIELD(dbtr_quality_extreme, not_measurable),
    FIELD(dbtr_quality_extreme, one_sided),

    STRUCT(dbtr_quality_verdict),
    FIELD(dbtr_quality_verdict, n_objects),
    FIELD(dbtr_quality_verdict, iterations),
    FIELD(dbtr_quality_verdict, last),
    FIELD(dbtr_quality_verdict, all),

    STRUCT(dbtr_validation_opts),
    FIELD(dbtr_validation_opts, paths),
    FIELD(dbtr_validation_opts, n_paths),
    FIELD(dbtr_validation_opts, iterations),
    FIELD(dbtr_validation_opts, subsets),
    FIELD(dbtr_validation_opts, lockstep),
    FIELD(dbtr_validation_opts, explain),
    FIELD(dbtr_validation_opts, threads),
    FIELD(dbtr_validation_opts, gpu_memory),
    FIELD(dbtr_validation_opts, gpus),
    FIELD(dbtr_validation_opts, referee),
    FIELD(dbtr_validation_opts, quality_scan),
    FIELD(dbtr_validation_opts, quality_regions),

    STRUCT(dbtr_validation_row),
    FIELD(dbtr_validation_row, iteration),
    FIELD(dbtr_validation_row, path),
    FIELD(dbtr_validation_row, reference),
    FIELD(dbtr_validation_row, explains),
    FIELD(dbtr_validation_row, is_gpu),
    FIELD(dbtr_validation_row, proj),
    FIELD(dbtr_validation_row, vol),
    FIELD(dbtr_validation_row, deviance),
    FIELD(dbtr_validation_row, has_referee),
    FIELD(dbtr_validation_row, referee),
    FIELD(dbtr_validation_row, vs_proj),
    FIELD(dbtr_validation_row, vs_vol),
    FIELD(dbtr_validation_row, n_quality),
    FIELD(dbtr_validation_row, quality),
};

typedef struct {
  const char *name;
  long long value;
} constant;

#define CONSTANT(c) {#c, (long long)(c)}

static const constant constants[] = {
    CONSTANT(DBTR_SCAN_MAX_NOTES),
    CONSTANT(DBTR_QCNR),
    CONSTANT(DBTR_QFWHM),
    CONSTANT(DBTR_QCONTRAST),
    CONSTANT(DBTR_QMEASURES),
    CONSTANT(DBTR_QUANTITY_COUNTS),
    CONSTANT(DBTR_QUANTITY_LINE_INTEGRAL),
    CONSTANT(DBTR_I0_NONE),
    CONSTANT(DBTR_I0_SCALAR),
    CONSTANT(DBTR_I0_PER_VIEW),
    CONSTANT(DBTR_I0_PER_PIXEL),
    CONSTANT(DBTR_I0_FULL),
    CONSTANT(DBTR_DTYPE_FLOAT32),
    CONSTANT(DBTR_DTYPE_FLOAT64),
    CONSTANT(DBTR_DTYPE_UINT16),
    CONSTANT(DBTR_DTYPE_UINT32),
    CONSTANT(DBTR_PREC_FLOAT),
    CONSTANT(DBTR_PREC_DOUBLE),
    CONSTANT(DBTR_PREC_DD),
    CONSTANT(DBTR_MEMORY_HOST),
    CONSTANT(DBTR_MEMORY_DEVICE),
};

int main(void) {
  const size_t n = sizeof layout / sizeof layout[0], nc = sizeof constants / sizeof constants[0];
  printf("{\n  \"structs\": [");
  for (size_t i = 0; i < n; i++) {
    const layout_line *l = layout + i;
    if (!l->field) {
      printf("%s\n    {\"name\": \"%s\", \"size\": %zu, \"align\": %zu, \"fields\": [", i ? "]}," : "", l->type,
             l->size, l->align);
      continue;
    }
    /* A FIELD line copied from another struct's block would put that member into this
     * struct's list: refused, so the JSON says only what the compiler says. */
    if (i == 0 || strcmp(l->type, layout[i - 1].type) != 0) {
      fprintf(stderr, "struct_layout: FIELD(%s, %s) follows the lines of %s; move it under STRUCT(%s)\n", l->type,
              l->field, i ? layout[i - 1].type : "no struct", l->type);
      return 1;
    }
    printf("%s\n      {\"name\": \"%s\", \"offset\": %zu, \"size\": %zu}", layout[i - 1].field ? "," : "", l->field,
           l->offset, l->size);
  }
  printf("]}\n  ],\n  \"constants\": {");
  for (size_t i = 0; i < nc; i++) printf("%s\n    \"%s\": %lld", i ? "," : "", constants[i].name, constants[i].value);
  printf("\n  }\n}\n");
  return 0;
}

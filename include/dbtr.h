/* dbtr.h: the public C API of libdbtr (docs/library.md), installed as <dbtr.h>.
 *
 * libdbtr reads and writes dbtr-scan files, checks geometries, projects with the CPU
 * reference pair (A and its exact transpose), reconstructs with ML-EM on the CPU or a GPU
 * mode, and runs the validation engine that compares the paths iteration by iteration. The
 * `dbtr` command line and the Python package are its clients and compute the same bits.
 *
 * Conventions (libuv's): names are dbtr_<module>_<verb>; functions return 0 or a negative
 * DBTR_E* code, after recording a one-line message for this thread that names the cause
 * (the file, the dataset, the option), which dbtr_errmsg() returns. The caller owns the
 * structs below and every host buffer; a handle (dbtr_recon, dbtr_cpu_projector) is freed by
 * its _close/_destroy, which nulls the pointer, so that calling it twice is safe.
 *
 * Geometry (docs/ARCHITECTURE.md): lengths in mm; each view is four 3-vectors in ASTRA's
 * cone_vec convention; volumes are C order (nz, ny, nx), x fastest; projections are
 * (n_views, n_rows, n_cols). This header includes no other dbtr header: internal headers
 * include it for the types they share with the API. */
#ifndef DBTR_H
#define DBTR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is compiled with hidden visibility: what this header declares is all that the
 * shared library exports. */
#if defined(__GNUC__)
#define DBTR_EXTERN __attribute__((visibility("default")))
#else
#define DBTR_EXTERN
#endif

/* ---- Errors ---------------------------------------------------------------------------
 * X(name, exit code, generic text): the one table of error codes. The exit code is what the
 * `dbtr` command returns for it. "No GPU" (none found, or a build without CUDA) and "the
 * GPU failed" differ, so that a caller can fall back on the first and must stop on the
 * second. */
#define DBTR_ERRORS(X)                                                   \
  X(INVAL, 2, "invalid argument")                                       \
  X(FORMAT, 2, "bad or unsupported file content")                       \
  X(GEOM, 2, "unsupported or degenerate geometry")                      \
  X(OVERFLOW, 2, "size too large")                                       \
  X(IO, 3, "input/output error")                                         \
  X(NOMEM, 4, "out of memory")                                           \
  X(NOGPU, 7, "no usable GPU")                                           \
  X(GPU, 5, "GPU error")                                                 \
  X(DIFFERS, 6, "results differ where they were expected to be identical") \
  X(INTERNAL, 70, "internal error")

enum {
  DBTR_OK = 0,
#define DBTR__ERR_ENUM(name, exit_code, text) DBTR_E##name,
  DBTR__EBASE = -100,
  DBTR_ERRORS(DBTR__ERR_ENUM)
#undef DBTR__ERR_ENUM
  DBTR__ELAST
};

/* Generic text for a code ("invalid argument"); "unknown error" for anything else. */
DBTR_EXTERN const char *dbtr_strerror(int code);
/* The code's name, "DBTR_EINVAL"; NULL for a number that is no code. */
DBTR_EXTERN const char *dbtr_err_name(int code);
/* The last message recorded on this thread, or the generic text if none. */
DBTR_EXTERN const char *dbtr_errmsg(void);
/* "0.1.0". */
DBTR_EXTERN const char *dbtr_version(void);

/* ---- Geometry --------------------------------------------------------------------------- */

typedef struct {
  size_t nx, ny, nz; /* voxels along x, y, z */
  double dx, dy, dz; /* voxel size, mm */
  double origin[3];  /* centre of voxel (0,0,0), mm */
} dbtr_grid;

/* Each view's source, detector centre, and u (step from column c to c+1) and v (step from
 * row r to r+1). The centre of pixel (r, c) is
 *   detector_center + (c - (n_cols-1)/2) u + (r - (n_rows-1)/2) v. */
typedef struct {
  size_t n_views, n_rows, n_cols;
  double *source;          /* (n_views, 3), mm */
  double *detector_center; /* (n_views, 3), mm */
  double *detector_u;      /* (n_views, 3), mm per column */
  double *detector_v;      /* (n_views, 3), mm per row */
} dbtr_geom;

/* Allocates the four (n_views, 3) arrays, zeroed. Sizes are overflow checked. A geometry
 * may instead point at arrays the caller owns; then it is not given to dbtr_geom_free. */
DBTR_EXTERN int dbtr_geom_init(dbtr_geom *g, size_t n_views, size_t n_rows, size_t n_cols);
/* Frees and zeroes; safe to call twice or on a zeroed struct. */
DBTR_EXTERN void dbtr_geom_free(dbtr_geom *g);
/* Elements in one projection stack, and voxels in a grid, overflow checked. */
DBTR_EXTERN int dbtr_geom_proj_count(const dbtr_geom *g, size_t *out);
DBTR_EXTERN int dbtr_grid_count(const dbtr_grid *grid, size_t *out);
/* Checks a geometry before any projector sees it: sizes, finite vectors, non-zero u and v
 * that are not parallel, the source off the detector plane, and every ray within 45 deg of
 * the slice normal (z). `what` names the geometry's source in the message. */
DBTR_EXTERN int dbtr_geom_check(const dbtr_geom *g, const char *what);
/* Checks a grid against a geometry: positive finite voxel sizes, sizes, every slice below
 * every source, and the grid seen by the detector of at least one view. */
DBTR_EXTERN int dbtr_grid_check(const dbtr_grid *grid, const dbtr_geom *g, const char *what);

/* ---- Scan files (HDF5, format "dbtr-scan" version 1: docs/scan-format.md) ---------------- */

typedef enum { DBTR_QUANTITY_COUNTS = 0, DBTR_QUANTITY_LINE_INTEGRAL = 1 } dbtr_quantity;

/* The shape of i0; its values keep that shape in memory. */
typedef enum {
  DBTR_I0_NONE = 0,  /* line integrals: no i0 */
  DBTR_I0_SCALAR,    /* one value */
  DBTR_I0_PER_VIEW,  /* (n_views) */
  DBTR_I0_PER_PIXEL, /* (n_rows, n_cols), the same for every view */
  DBTR_I0_FULL       /* (n_views, n_rows, n_cols) */
} dbtr_i0_shape;

/* How /projections is stored. */
typedef enum { DBTR_DTYPE_FLOAT32 = 0, DBTR_DTYPE_FLOAT64, DBTR_DTYPE_UINT16, DBTR_DTYPE_UINT32 } dbtr_dtype;

/* Where one quantity of the scan came from, e.g. key "i0", text "10000 from --i0": the
 * optional /provenance attributes (docs/scan-format.md) that `dbtr import` writes. Longer
 * texts are cut; what is read is sanitised for printing. */
#define DBTR_SCAN_MAX_NOTES 8
typedef struct {
  char key[32];
  char text[512];
} dbtr_scan_note;

typedef struct {
  dbtr_geom geom;          /* per-view vectors and detector size */
  dbtr_quantity quantity;
  double *proj;            /* (n_views, n_rows, n_cols): counts or line integrals (unitless) */
  dbtr_i0_shape i0_shape;
  double *i0;              /* as i0_shape says; NULL for DBTR_I0_NONE */
  int has_grid;            /* 1 if the file has a /volume grid */
  dbtr_grid grid;          /* valid when has_grid */
  dbtr_dtype stored_dtype; /* the dtype /projections had in the file (reader) */
  size_t n_notes;          /* provenance notes, in key order when read from a file */
  dbtr_scan_note notes[DBTR_SCAN_MAX_NOTES];
} dbtr_scan;

typedef struct {
  dbtr_dtype dtype; /* how to store /projections; integer types are rounded and saturated */
  int gzip_level;   /* 0 = no compression, 1..9 gzip with chunks of one view */
} dbtr_scan_write_opts;

/* Reads and checks a scan file into s (zeroed first): wrong shapes, non-finite values,
 * negative counts, overflowing sizes and other formats are refused with a message naming
 * the file and the dataset. On error s is left freed. The HDF5 library that libdbtr uses is
 * not thread-safe: read and write scans from one thread at a time. */
DBTR_EXTERN int dbtr_scan_read(dbtr_scan *s, const char *path);
/* Writes s through a temporary file in the same folder, renamed into place. A regular file
 * that existed when the write began is replaced; a file that appeared meanwhile is not
 * (DBTR_EINVAL), nor is a device, FIFO, socket, folder or symbolic link. opts NULL stores
 * float64, uncompressed. */
DBTR_EXTERN int dbtr_scan_write(const dbtr_scan *s, const char *path, const dbtr_scan_write_opts *opts);
/* Frees what dbtr_scan_read allocated, and zeroes; safe to call twice. */
DBTR_EXTERN void dbtr_scan_free(dbtr_scan *s);
/* i0 for view k, pixel p (p = r * n_cols + c), whatever its shape; and how many doubles
 * the i0 array holds for its shape (0 for none). */
DBTR_EXTERN double dbtr_scan_i0(const dbtr_scan *s, size_t k, size_t p);
DBTR_EXTERN size_t dbtr_scan_i0_count(const dbtr_scan *s);

/* ---- Projectors: the CPU reference pair ------------------------------------------------
 * Forward A is ray-driven Joseph along z; back is its exact transpose, computed as a
 * gather, so <Ax, y> = <x, A^T y> to rounding. Every output element is summed by one
 * thread in a fixed order: the result is the same for any thread count. */

/* DBTR_PREC_DD is the double-double referee (docs/accuracy.md): each element is two doubles,
 * hi then lo, whose exact sum is the value (|lo| at most half an ulp of hi, so hi is the value
 * rounded to double). */
typedef enum { DBTR_PREC_FLOAT = 0, DBTR_PREC_DOUBLE = 1, DBTR_PREC_DD = 2 } dbtr_precision;
typedef struct dbtr_cpu_projector dbtr_cpu_projector;

/* Prepares the rays and footprints of every view (checks geometry and grid). threads 0:
 * all the machine has. geom and grid are copied as needed; they may go after the call. */
DBTR_EXTERN int dbtr_cpu_projector_create(dbtr_cpu_projector **out, const dbtr_geom *geom, const dbtr_grid *grid,
                                          dbtr_precision precision, int threads);
DBTR_EXTERN void dbtr_cpu_projector_destroy(dbtr_cpu_projector **p);
/* proj = A vol; vol (nz, ny, nx) and proj (n_views, n_rows, n_cols), of float, double or
 * double-double as the projector's precision says. */
DBTR_EXTERN int dbtr_cpu_forward(dbtr_cpu_projector *p, const void *vol, void *proj);
/* vol = A^T proj. */
DBTR_EXTERN int dbtr_cpu_back(dbtr_cpu_projector *p, const void *proj, void *vol);

/* ---- ML-EM --------------------------------------------------------------------------- */

typedef enum { DBTR_ALGO_TRANSMISSION = 0, DBTR_ALGO_EMISSION = 1 } dbtr_algo;

/* Where a reconstruction runs: the `dbtr recon` flags of the same names. */
typedef struct {
  const char *backend;   /* "cpu", "gpu" (fails without a GPU) or "auto" (the GPU when one can be
                            used, else the CPU); NULL: "auto" */
  const char *mode;      /* GPU floating-point mode (docs/modes.md); NULL: "cpu-match" */
  const char *precision; /* CPU: "float", "double" or "dd" (the referee); NULL: the mode's */
  int threads;           /* CPU threads; 0: all the machine has */
  size_t gpu_memory;     /* bytes the GPU backend may take; 0: what the GPU has free, less a margin.
                            When every view's ray records do not fit, they are made again in
                            batches of views, with the same bits (docs/performance.md) */
  int gpus;              /* GPUs to spread over, with the bits of one: 0 or 1: one; n: the first n; -1: all */
} dbtr_backend_opts;

/* The filter of filtered back projection (docs/fbp.md): ramp x Hann along the tube's motion,
 * and optionally a Hann low-pass across it (the slice-thickness filter). */
typedef struct {
  double cutoff; /* the Hann window's cut-off, a fraction of the Nyquist frequency, (0, 1]; 0: 1 */
  double slice;  /* the slice-thickness low-pass's cut-off, a fraction of Nyquist, (0, 1]; 0: none */
} dbtr_fbp_opts;

typedef struct {
  size_t subsets;        /* ordered subsets of views, 1..n_views; 0 means 1 (plain ML-EM) */
  const char *algorithm; /* "transmission" (needs counts), "emission", or "fbp" (filtered back
                            projection: no iterations; docs/fbp.md); NULL: transmission for
                            counts, emission for line integrals */
  double init;           /* uniform start value in 1/mm; 0: estimated from the data */
  dbtr_backend_opts backend;
  /* ML-EM's start volume: NULL or "uniform" (init above), or "fbp": the FBP volume with values
   * below DBTR_FBP_FLOOR raised to it (ML-EM's multiplicative updates never move a zero). */
  const char *start;
  dbtr_fbp_opts fbp;     /* the filter of algorithm "fbp" and of start "fbp" */
} dbtr_recon_opts;

/* The floor of an FBP start volume, 1/mm: 1e-6 of breast tissue's attenuation (about 0.05/mm),
 * small enough to leave what FBP found as air near 0, large enough to be a normal float. */
#define DBTR_FBP_FLOOR 5e-8

typedef struct dbtr_recon dbtr_recon;

/* Prepares a reconstruction of scan on grid: checks the geometry, the grid and the values
 * (finite; counts >= 0, i0 > 0), chooses the backend and loads the start volume. scan (its
 * arrays included) must outlive the handle; opts NULL means all defaults. */
DBTR_EXTERN int dbtr_recon_open(dbtr_recon **out, const dbtr_scan *scan, const dbtr_grid *grid,
                                const dbtr_recon_opts *opts);
/* The backend that runs: "cpu-float", "cpu-double", "gpu:cpu-match", ... */
DBTR_EXTERN const char *dbtr_recon_backend(const dbtr_recon *r);
/* Why backend "auto" fell back to the CPU ("no GPU can be used", or the GPU's error); "" if
 * it did not. */
DBTR_EXTERN const char *dbtr_recon_fallback(const dbtr_recon *r);
/* The element type of the volume dbtr_recon_volume writes. */
DBTR_EXTERN dbtr_precision dbtr_recon_precision(const dbtr_recon *r);
/* One full iteration (every subset once); *deviance (may be NULL) receives the Poisson
 * deviance of the forward projections made during it. */
DBTR_EXTERN int dbtr_recon_iterate(dbtr_recon *r, double *deviance);
/* The current volume, (nz, ny, nx) elements of dbtr_recon_precision(r), in 1/mm; voxels no ray
 * reaches are 0 (docs/volume-format.md, "The field of view"). */
DBTR_EXTERN int dbtr_recon_volume(dbtr_recon *r, void *out);
DBTR_EXTERN void dbtr_recon_close(dbtr_recon **r);

/* Projections (and i0) that lie in the memory of a GPU: CUDA device pointers, or managed
 * memory, read in place and never copied to the host (docs/python.md, "What is copied when"). */
typedef struct {
  const void *proj;         /* (n_views, n_rows, n_cols), contiguous */
  dbtr_precision proj_type; /* DBTR_PREC_FLOAT or DBTR_PREC_DOUBLE: a float is widened to double
                               exactly, as a host caller's copy in double would hold it */
  const void *i0;           /* laid out as the scan's i0_shape says; NULL for none */
  dbtr_precision i0_type;   /* as proj_type */
  int device;               /* the CUDA device that holds both, on which the reconstruction runs */
} dbtr_device_data;

/* dbtr_recon_open of data in a GPU's memory: scan gives the geometry, the quantity and i0's
 * shape (its proj and i0 NULL), data the arrays. The values are checked, the start value and
 * the deviance's constant computed, and the data converted to the mode's type on that GPU, so
 * that every iteration, the deviance and the volume are those dbtr_recon_open gives of the
 * same values in host memory, bit for bit. It runs on a GPU backend on data->device ("auto"
 * does not fall back to the CPU), on one GPU, ML-EM only (algorithm and start "fbp" read host
 * memory: DBTR_EINVAL). data must outlive dbtr_recon_open_device, not the handle. */
DBTR_EXTERN int dbtr_recon_open_device(dbtr_recon **out, const dbtr_scan *scan, const dbtr_device_data *data,
                                       const dbtr_grid *grid, const dbtr_recon_opts *opts);
/* The current volume, as dbtr_recon_volume, into out in the memory of the GPU it runs on
 * (handles of dbtr_recon_open_device only). Synchronous, on the device's legacy default stream. */
DBTR_EXTERN int dbtr_recon_volume_device(dbtr_recon *r, void *out);

/* One scan file to one volume file, as `dbtr recon SCAN -o OUT` makes it, bit for bit, with
 * its record appended to a log when one is named (docs/scale-out.md): the unit a distributed
 * engine (Dask, a job array) maps over many scans. */
typedef struct {
  dbtr_recon_opts recon;
  size_t iterations;     /* 0: 10, as dbtr recon */
  const char *format;    /* "float32" (NULL), "float64" or "uint16" */
  double u16_scale;      /* uint16: stored = round(value x scale); required for it, and only for it */
  int force;             /* replace an output the log does not record as complete */
  const char *log;       /* the JSON Lines record to append to (and to skip a complete output by); NULL: none */
  int threads;           /* host threads; 0: the machine's */
  /* The grid in place of the scan's /volume, in part or whole; has_* say what is given. */
  double dims[3], voxel[3], origin[3];
  int has_dims, has_voxel, has_origin;
} dbtr_recon_file_opts;

/* Reads scan, reconstructs, writes output (TIFF or NIfTI by its ending) and records it. 0: the
 * volume is written; 1: the log records output as complete already, and nothing was done; a
 * negative DBTR_E* code with the message naming the file otherwise (an existing output is
 * refused without force). The backend is the first GPU the process sees (pin a worker with
 * CUDA_VISIBLE_DEVICES), else the CPU reference, as opts.recon.backend says. */
DBTR_EXTERN int dbtr_recon_file(const char *scan, const char *output, const dbtr_recon_file_opts *opts);

/* 1 if a CUDA device can be used (its name copied into name), else 0 (also in a build
 * without CUDA). */
DBTR_EXTERN int dbtr_gpu_available(char *name, unsigned long name_len);
/* The i-th floating-point mode a user picks ("fast", "ieee", "cpu-match", "double",
 * "double-match"), NULL past the last. */
DBTR_EXTERN const char *dbtr_mode_name(size_t i);

/* A row of the mode table (docs/modes.md): every path dbtr computes on, the GPU modes, their
 * --explain variants and the CPU reference's paths. */
typedef struct {
  const char *name;          /* "fast", "cpu-match+fma", "cpu-float", "cpu-dd", ... */
  dbtr_precision precision;  /* the element type it computes in */
  int gpu;                   /* 1: a GPU mode or variant; 0: the CPU reference */
  int variant;               /* 1: a single-change variant that validate --explain runs, not for production */
  int threads;               /* CPU paths: 1 for cpu-1-thread, else 0 (the problem's threads) */
  /* The path's bitwise class: the CPU path whose bits it gives, bit for bit, in every
   * iteration ("cpu-float" for cpu-match and cpu-1-thread, "cpu-dd" for dd, the path itself
   * for a class's CPU path); NULL where it promises no CPU's bits (fast, ieee, double, the
   * variants). */
  const char *bitwise_class;
} dbtr_mode_info;

/* The i-th row of the mode table, in the table's order (the modes users pick first); NULL past
 * the last. The rows are static: they stay valid for the life of the program. */
DBTR_EXTERN const dbtr_mode_info *dbtr_mode_at(size_t i);

/* ---- Projectors of any path (docs/python.md, "Projector") ----------------------------
 * The projector pair of one path of the mode table, built once (the ray records, the separable
 * tables and, on a GPU, one arena of device memory) and run as often as wanted: on the CPU
 * reference, bitwise dbtr_cpu_forward and dbtr_cpu_back; in a GPU mode, the mode's forward
 * projection and gather as ML-EM runs them (cpu-match and double-match bitwise the CPU
 * reference's, dd the CPU referee's). The back projection is the forward's exact transpose in
 * every path: <A x, y> = <x, A^T y> to the path's rounding. */
typedef struct dbtr_projector dbtr_projector;

typedef struct {
  dbtr_backend_opts backend; /* backend, mode, precision, threads and gpu_memory as dbtr_recon_open
                                takes them; gpus 0 or 1: a projector runs on one GPU */
  int device;                /* the CUDA device a GPU projector runs on (0: the first the process sees) */
} dbtr_projector_opts;

/* Where a projection's two arrays are: host memory, or the memory of the projector's GPU
 * (CUDA device pointers, or managed memory). */
typedef enum { DBTR_MEMORY_HOST = 0, DBTR_MEMORY_DEVICE = 1 } dbtr_memory;

/* Checks the geometry, the grid and the options, the host memory the tables need (on the CPU),
 * and builds the projector; geom and grid are copied. opts NULL: all defaults (backend "auto",
 * mode cpu-match). */
DBTR_EXTERN int dbtr_projector_open(dbtr_projector **out, const dbtr_geom *geom, const dbtr_grid *grid,
                                    const dbtr_projector_opts *opts);
/* The path that runs: "cpu-double", "gpu:fast", ... */
DBTR_EXTERN const char *dbtr_projector_backend(const dbtr_projector *p);
/* Why backend "auto" fell back to the CPU; "" if it did not. */
DBTR_EXTERN const char *dbtr_projector_fallback(const dbtr_projector *p);
/* The element type of both arrays (dd: two doubles each, hi then lo). */
DBTR_EXTERN dbtr_precision dbtr_projector_precision(const dbtr_projector *p);
/* The CUDA device it runs on; -1 on the CPU. */
DBTR_EXTERN int dbtr_projector_device(const dbtr_projector *p);
/* proj = A vol: vol (nz, ny, nx) and proj (n_views, n_rows, n_cols), contiguous, of the
 * projector's element type, both where `where` says (DBTR_MEMORY_DEVICE: on the projector's
 * GPU, read and written in place, never copied; the CPU reference takes host memory only).
 * Synchronous: the result is in proj when the call returns. On the GPU the work runs on the
 * device's legacy default stream, which waits for the work queued before the call on every
 * blocking stream of that device (a caller on a non-blocking stream synchronises it first). */
DBTR_EXTERN int dbtr_projector_forward(dbtr_projector *p, const void *vol, void *proj, dbtr_memory where);
/* vol = A^T proj, as dbtr_projector_forward. */
DBTR_EXTERN int dbtr_projector_back(dbtr_projector *p, const void *proj, void *vol, dbtr_memory where);
DBTR_EXTERN void dbtr_projector_close(dbtr_projector **p);

/* ---- Validation (docs/validation.md) ------------------------------------------------- */

/* How a path's result differs from its reference, element by element. ULP distance counts
 * the representable values between two numbers: 0 is bitwise equal (+0 and -0 count as
 * equal); NaN against anything is UINT64_MAX. */
typedef struct {
  size_t n;            /* elements compared */
  size_t n_differ;     /* elements whose bits differ */
  double max_abs;      /* max |a - b| */
  double mean_abs;     /* mean |a - b| over all n */
  uint64_t max_ulp;    /* max ULP distance, in the precision compared */
  uint64_t median_ulp; /* median ULP distance over all n */
  double rel_l2;       /* ||a - b|| / ||b||, 0 when both are 0 */
  size_t n_differ_u16; /* elements whose 16-bit display values differ */
  size_t beyond_4ulp;  /* elements more than 4 ulp apart */
  /* max |a - b| in ulps of the quantity's scale: divided by ulp(max |b|), the gap above b's
   * largest magnitude in the precision compared (the smallest subnormal when b is all 0).
   * Unlike max_ulp it does not explode where values touch zero: 1e-25 against 1e-20 is a
   * billion ulps of 1e-20 but a tiny fraction of an ulp of the largest value. */
  double scale_ulp;
} dbtr_diff_stats;

/* How a path's result differs from the referee, the same algorithm in double-double
 * (docs/validation.md, "Against the referee"): relative L2 against the referee rounded to
 * double; the ulp measures against the referee correctly rounded to the path's precision. */
typedef struct {
  size_t n;            /* elements compared */
  double rel_l2;       /* ||path - referee|| / ||referee||, in double */
  uint64_t max_ulp;    /* max ULP distance from the referee rounded to the path's precision */
  uint64_t median_ulp; /* median ULP distance from it */
  size_t beyond_4ulp;  /* elements more than 4 ulp from it */
  double scale_ulp;    /* max |path - referee| in ulps of the referee's largest magnitude, in the path's precision */
  double best;         /* the best answer of the path's precision, the referee correctly rounded to it: its
                          relative L2 from the referee (from the double-double values) */
  double best_units;   /* rel_l2 / best: how many times the best answer's distance the path is */
} dbtr_referee_stats;

typedef struct {
  const char *const *paths; /* in the order to run: GPU modes, cpu-1-thread, cpu-float, cpu-double */
  size_t n_paths;           /* >= 1 */
  size_t iterations;        /* >= 1 */
  size_t subsets;           /* 0 means 1 */
  int lockstep;             /* start every path from its reference's state at each iteration */
  int explain;              /* add each mode's single-change variants after it */
  int threads;              /* CPU threads; 0: all */
  size_t gpu_memory;        /* bytes each GPU path may take, as dbtr_backend_opts.gpu_memory */
  int gpus;                 /* GPUs each GPU path spreads over, as dbtr_backend_opts.gpus */
  int referee;              /* 0: none; else also run the double-double referee (on the GPU when one can be
                               used, else the CPU) and measure every path against it; not with lockstep */
  /* Quality (`dbtr validate --quality`): the test objects of this phantom scan's /phantom, or of
   * a regions file (docs/quality.md); at most one; NULL, NULL: none. Each row then carries every
   * object's change. */
  const char *quality_scan, *quality_regions;
} dbtr_validation_opts;

/* What a path changes of each test object's measures against its reference (`dbtr validate
 * --quality`, docs/validation.md "Quality"; the measures: docs/quality.md). A change is NaN,
 * "not measurable", where either value is not finite or, for a relative change, the
 * reference's is 0: never a silent 0. */
enum { DBTR_QCNR = 0, DBTR_QFWHM = 1, DBTR_QCONTRAST = 2, DBTR_QMEASURES = 3 };

/* One measure in the path's volume and the reference's, and the change: for CNR and contrast
 * relative, (value - ref) / |ref| x 100 (%); for the ASF FWHM absolute, value - ref (mm). */
typedef struct {
  double value, ref, change;
} dbtr_quality_delta;

typedef struct {
  size_t object;                 /* its index in the phantom's list */
  size_t focus, focus_ref;       /* in-focus slices, 0-based (0 where the object is not measured) */
  dbtr_quality_delta m[DBTR_QMEASURES]; /* [DBTR_QCNR], [DBTR_QFWHM], [DBTR_QCONTRAST] */
} dbtr_quality_change;

/* The largest |change| of one measure and where it is; object and iteration meaningful only
 * when found. */
typedef struct {
  int found;            /* 0: no object's change of it was measurable */
  double change;        /* the signed change of largest magnitude (% or mm) */
  size_t object;        /* the object's index in the phantom's list */
  size_t iteration;     /* 1-based */
  size_t not_measurable; /* objects (at the last iteration) or object-iterations (over all) whose change is NaN */
  size_t one_sided;     /* of those, where one value is finite and the other not: the path changes whether
                           the measure exists at all */
} dbtr_quality_extreme;

/* What a physicist can quote of a path (docs/validation.md, "Quality"): per measure (CNR %,
 * FWHM mm, contrast %) the largest |change| over the objects at the last iteration, and over
 * every iteration. */
typedef struct {
  size_t n_objects, iterations;
  dbtr_quality_extreme last[DBTR_QMEASURES], all[DBTR_QMEASURES];
} dbtr_quality_verdict;

/* The verdict of c: iterations x n_objects changes, iteration by iteration (what `dbtr
 * validate --quality` reports of a path, and Python's Validation.quality_verdict). */
DBTR_EXTERN void dbtr_quality_verdict_of(const dbtr_quality_change *c, size_t n_objects, size_t iterations,
                                         dbtr_quality_verdict *v);

/* One path after one iteration, against its reference. Valid during the callback only. */
typedef struct {
  size_t iteration;      /* 1-based */
  const char *path;      /* "cpu-float", "cpu-match", "cpu-match+fma", ... */
  const char *reference; /* "cpu-float" or "cpu-double" */
  const char *explains;  /* an explain variant: the path whose difference it explains; else NULL */
  int is_gpu;
  dbtr_diff_stats proj;  /* the forward projections (A mu) */
  dbtr_diff_stats vol;   /* the volume */
  double deviance;       /* the path's own Poisson deviance of the iteration */
  int has_referee;       /* 1: the run has the referee, and the two below hold the path against it */
  const char *referee;   /* its backend, "cpu-dd" or "gpu:dd"; NULL without it */
  dbtr_referee_stats vs_proj, vs_vol;
  size_t n_quality;      /* with quality objects: each object's change after this iteration; else 0, NULL */
  const dbtr_quality_change *quality;
} dbtr_validation_row;

typedef void (*dbtr_validation_fn)(void *user, const dbtr_validation_row *row);

/* Runs the CPU references and every path side by side on scan and grid (the algorithm
 * follows the quantity) and calls on_row after each path's iteration, iteration by
 * iteration, in path order: the rows of `dbtr validate`. */
DBTR_EXTERN int dbtr_validation_run(const dbtr_scan *scan, const dbtr_grid *grid, const dbtr_validation_opts *opts,
                                    dbtr_validation_fn on_row, void *user);

/* ---- Image quality (docs/quality.md) ---------------------------------------------------- */

/* Per object of a phantom scan (its /phantom group, scan) or of regions given by hand (a JSON
 * file, regions; exactly one of the two): the in-focus slice, contrast, CNR and the artifact
 * spread function with its FWHM, measured in vol ((nz, ny, nx) elements of precision, float or
 * double) on grid. *json receives the measures as JSON text (the report's quality.json), which
 * dbtr_quality_json_free frees. */
DBTR_EXTERN int dbtr_quality_json(const void *vol, dbtr_precision precision, const dbtr_grid *grid, const char *scan,
                                  const char *regions, char **json);
DBTR_EXTERN void dbtr_quality_json_free(char **json);

#ifdef __cplusplus
}
#endif

#endif

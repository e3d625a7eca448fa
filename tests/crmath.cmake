# tests/crmath.cmake: recon/crmath.h (correctly rounded expf/logf, faithful exp/log) against
# long double and MPFR. MPFR decides the few inputs whose long double result is too close to a
# rounding boundary; without it every case is skipped (exit 77; tests/CMakeLists.txt,
# dbtr_use_mpfr). The two exhaustive cases run all 2^32 floats on every core, several minutes
# each: label slow.
dbtr_add_test_file(SOURCE test_crmath.c LABELS cpu LIBS OpenMP::OpenMP_C TIMEOUT 3600
                   SLOW expf_exhaustive logf_exhaustive)
dbtr_use_mpfr(test_crmath)

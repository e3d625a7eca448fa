# tests/crmath.cmake: recon/crmath.h (correctly rounded expf/logf, faithful exp/log) against
# long double and MPFR. MPFR (Debian: libmpfr-dev) decides the few inputs whose long double
# result is too close to a rounding boundary; without it every case is skipped (exit 77).
# The two exhaustive cases run all 2^32 floats on every core, several minutes each: label slow.
find_path(DBTR_MPFR_INCLUDE_DIR mpfr.h)
find_library(DBTR_MPFR_LIBRARY mpfr)
find_library(DBTR_GMP_LIBRARY gmp)
set(dbtr_crmath_libs OpenMP::OpenMP_C)
if(DBTR_MPFR_INCLUDE_DIR AND DBTR_MPFR_LIBRARY AND DBTR_GMP_LIBRARY)
  list(APPEND dbtr_crmath_libs ${DBTR_MPFR_LIBRARY} ${DBTR_GMP_LIBRARY})
else()
  message(WARNING "MPFR not found (apt-get install libmpfr-dev): the crmath tests will be skipped")
endif()
dbtr_add_test_file(SOURCE test_crmath.c LABELS cpu LIBS ${dbtr_crmath_libs} TIMEOUT 3600
                   SLOW expf_exhaustive logf_exhaustive)
if(DBTR_MPFR_INCLUDE_DIR AND DBTR_MPFR_LIBRARY AND DBTR_GMP_LIBRARY)
  target_compile_definitions(test_crmath PRIVATE DBTR_HAVE_MPFR)
  target_include_directories(test_crmath PRIVATE ${DBTR_MPFR_INCLUDE_DIR})
endif()

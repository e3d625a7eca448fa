# tests/exact.cmake: the dd referee (CPU --precision dd) against an independent 256-bit MPFR
# computation of the projectors and one ML-EM iteration (Debian: libmpfr-dev); without MPFR every
# case is skipped (exit 77).
find_path(DBTR_MPFR_INCLUDE_DIR mpfr.h)
find_library(DBTR_MPFR_LIBRARY mpfr)
find_library(DBTR_GMP_LIBRARY gmp)
set(dbtr_exact_libs dbtr_core)
if(DBTR_MPFR_INCLUDE_DIR AND DBTR_MPFR_LIBRARY AND DBTR_GMP_LIBRARY)
  list(APPEND dbtr_exact_libs ${DBTR_MPFR_LIBRARY} ${DBTR_GMP_LIBRARY})
endif()
dbtr_add_test_file(SOURCE test_exact.c LABELS cpu LIBS ${dbtr_exact_libs})
if(DBTR_MPFR_INCLUDE_DIR AND DBTR_MPFR_LIBRARY AND DBTR_GMP_LIBRARY)
  target_compile_definitions(test_exact PRIVATE DBTR_HAVE_MPFR)
  target_include_directories(test_exact PRIVATE ${DBTR_MPFR_INCLUDE_DIR})
endif()

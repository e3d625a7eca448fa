# tests/dd.cmake: recon/dd.h (double-double arithmetic) against 256-bit MPFR (Debian:
# libmpfr-dev); without it the MPFR cases are skipped (exit 77), the exact ones still run.
find_path(DBTR_MPFR_INCLUDE_DIR mpfr.h)
find_library(DBTR_MPFR_LIBRARY mpfr)
find_library(DBTR_GMP_LIBRARY gmp)
set(dbtr_dd_libs "")
if(DBTR_MPFR_INCLUDE_DIR AND DBTR_MPFR_LIBRARY AND DBTR_GMP_LIBRARY)
  set(dbtr_dd_libs ${DBTR_MPFR_LIBRARY} ${DBTR_GMP_LIBRARY})
endif()
dbtr_add_test_file(SOURCE test_dd.c LABELS cpu LIBS ${dbtr_dd_libs})
if(DBTR_MPFR_INCLUDE_DIR AND DBTR_MPFR_LIBRARY AND DBTR_GMP_LIBRARY)
  target_compile_definitions(test_dd PRIVATE DBTR_HAVE_MPFR)
  target_include_directories(test_dd PRIVATE ${DBTR_MPFR_INCLUDE_DIR})
endif()

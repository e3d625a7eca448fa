# tests/dd.cmake: recon/dd.h (double-double arithmetic) against 256-bit MPFR; without it the
# MPFR cases are skipped (exit 77), the exact ones still run (tests/CMakeLists.txt,
# dbtr_use_mpfr).
dbtr_add_test_file(SOURCE test_dd.c LABELS cpu)
dbtr_use_mpfr(test_dd)

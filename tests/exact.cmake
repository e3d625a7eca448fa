# tests/exact.cmake: the dd referee (CPU --precision dd) against an independent 256-bit MPFR
# computation of the projectors and one ML-EM iteration; without MPFR every case is skipped
# (exit 77; tests/CMakeLists.txt, dbtr_use_mpfr).
dbtr_add_test_file(SOURCE test_exact.c LABELS cpu LIBS dbtr_core)
dbtr_use_mpfr(test_exact)

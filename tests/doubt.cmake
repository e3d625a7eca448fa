# tests/doubt.cmake: the plausibility checks (recon/doubt.h); the CLI cases are in
# tests/cli_errors.sh (geometry_in_cm, counts_are_line_integrals, transposed).
dbtr_add_test_file(SOURCE test_doubt.c LABELS cpu LIBS dbtr_core)

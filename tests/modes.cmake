# tests/modes.cmake: the floating-point mode table (recon/modes.def) and what recon/backend.c
# derives from it: names, parsing, precision, explain variants. No GPU needed.
dbtr_add_test_file(SOURCE test_modes.c LABELS cpu LIBS dbtr_core)

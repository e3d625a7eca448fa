# tests/modes.cmake: the mode table (recon/modes.def) and what recon/modes.c derives from it:
# names, parsing, precision, explain variants, CPU rows, bitwise classes. No GPU needed. It
# links recon/ alone, as test_compare and test_error do: the reference needs nothing above it.
dbtr_add_test_file(SOURCE test_modes.c LABELS cpu LIBS dbtr_recon)

# tests/error.cmake: messages and their sanitising (recon/error.c).
dbtr_add_test_file(SOURCE test_error.c LABELS cpu LIBS dbtr_recon)

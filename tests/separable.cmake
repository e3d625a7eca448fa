dbtr_add_test_file(SOURCE test_separable.c LABELS cpu LIBS dbtr_core)

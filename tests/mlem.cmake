dbtr_add_test_file(SOURCE test_mlem.c LABELS cpu LIBS dbtr_core)

dbtr_add_test_file(SOURCE test_fbp.c LABELS cpu LIBS dbtr_core)

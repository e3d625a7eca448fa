dbtr_add_test_file(SOURCE test_projector.c LABELS cpu LIBS dbtr_core SLOW floor_int_all_floats)

dbtr_add_test_file(SOURCE test_gpu.c LABELS gpu LIBS dbtr_core TIMEOUT 600)

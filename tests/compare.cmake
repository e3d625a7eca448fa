dbtr_add_test_file(SOURCE test_compare.c LABELS cpu LIBS dbtr_recon)

# tests/atomic.cmake: outputs written whole or not at all (io/atomic_file.c).
dbtr_add_test_file(SOURCE test_atomic.c LABELS cpu LIBS dbtr_core)

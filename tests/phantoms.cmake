# Tests of phantoms/: exact chords, phantoms, voxelization, Poisson counts (test_phantoms.c),
# and the system presets (test_systems.c).
dbtr_add_test_file(SOURCE test_phantoms.c LABELS cpu LIBS dbtr_core)
dbtr_add_test_file(SOURCE test_systems.c LABELS cpu LIBS dbtr_core)

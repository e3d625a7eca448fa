# Tests of phantoms/: exact chords, phantoms, voxelization, Poisson counts (test_phantoms.c),
# the system presets (test_systems.c) and the simulated scans (test_simulate.c).
dbtr_add_test_file(SOURCE test_phantoms.c LABELS cpu LIBS dbtr_core)
dbtr_add_test_file(SOURCE test_systems.c LABELS cpu LIBS dbtr_core)
dbtr_add_test_file(SOURCE test_simulate.c LABELS cpu LIBS dbtr_core)

# Tests of phantoms/: exact chords, phantoms, voxelization, Poisson counts, system presets.
dbtr_add_test_file(SOURCE test_phantoms.c LABELS cpu LIBS dbtr_core)

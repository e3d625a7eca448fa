# tests/fov.cmake: the field of view (engine/fov.h) against the forward projector, and the
# outputs that write unseen voxels as 0 (tests/test_fov.c).
dbtr_add_test_file(SOURCE test_fov.c LABELS cpu LIBS dbtr_core)

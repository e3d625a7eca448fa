# tests/atomic.cmake: outputs written whole or not at all (io/atomic_file.c).
dbtr_add_test_file(SOURCE test_atomic.c LABELS cpu LIBS dbtr_core)
# The same through the command line, for the HDF5 and TIFF writers (tests/full_disk.sh).
add_test(NAME full_disk COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/full_disk.sh $<TARGET_FILE:dbtr>)
set_tests_properties(full_disk PROPERTIES LABELS cpu TIMEOUT 120)

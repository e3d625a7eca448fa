# tests/tiff.cmake: TIFF volumes (io/tiff.c, docs/volume-format.md). test_tiff.c: the writer.
dbtr_add_test_file(SOURCE test_tiff.c LABELS cpu LIBS dbtr_core)
# The reader's refusals and files written by libtiff directly.
dbtr_add_test_file(SOURCE test_tiff_read.c LABELS cpu LIBS dbtr_core)
# Other programs reading the volumes. tifffile_cross_check and docs_python_example run
# python3 with tifffile (DBTR_PYTHON picks the interpreter), imagej_cross_check ImageJ 1.x
# (DBTR_IMAGEJ_JAR picks the jar) under xvfb-run; each is skipped (exit 77) without them.
dbtr_add_test_file(SOURCE test_tiff_readers.c LABELS cpu LIBS dbtr_core)
# docs_python_example runs the Python block of docs/volume-format.md.
target_compile_definitions(test_tiff_readers PRIVATE DBTR_SOURCE_DIR="${CMAKE_SOURCE_DIR}")

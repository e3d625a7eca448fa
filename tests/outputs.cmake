# tests/outputs.cmake: the command line's promises about its outputs (app/cli.c's
# cli_check_output over io/atomic_file.c): no file replaced without --force, whenever it
# appeared (tests/test_outputs.c). It builds app/cli.c into the test, as tests/cli.cmake does.
dbtr_add_test_file(SOURCE test_outputs.c LABELS cpu LIBS dbtr_core)
target_sources(test_outputs PRIVATE ${PROJECT_SOURCE_DIR}/app/cli.c)

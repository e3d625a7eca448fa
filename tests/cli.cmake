# tests/cli.cmake: the option-table parser and --help printer (app/cli.c) on a small table
# with a row of every type (tests/test_cli.c). It builds app/cli.c into the test, as the
# app/ folder is an executable, not a library.
dbtr_add_test_file(SOURCE test_cli.c LABELS cpu LIBS dbtr_core)
target_sources(test_cli PRIVATE ${PROJECT_SOURCE_DIR}/app/cli.c)

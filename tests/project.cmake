# `dbtr project` through the CLI (tests/project.sh): geometry from a preset or a scan file,
# line integrals and counts, and its refusals.
add_test(NAME project.cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/project.sh $<TARGET_FILE:dbtr>)
set_tests_properties(project.cli PROPERTIES LABELS cpu TIMEOUT 120)

# `dbtr project` through the CLI (tests/project.sh): geometry from a preset or a scan file,
# line integrals and counts, and its refusals.
add_test(NAME project.cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/project.sh $<TARGET_FILE:dbtr>)
set_tests_properties(project.cli PROPERTIES LABELS cpu TIMEOUT 120)
# One refusal per case (tests/project_checks.sh).
foreach(case huge_values counts_overflow memory_peak origin_hint)
  add_test(NAME project.${case} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/project_checks.sh $<TARGET_FILE:dbtr> ${case})
  set_tests_properties(project.${case} PROPERTIES LABELS cpu TIMEOUT 60)
endforeach()

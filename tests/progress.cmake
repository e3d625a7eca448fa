# The progress lines and the resume hint of the CLI (app/progress.c, tests/progress.sh).
foreach(case lines interrupt)
  add_test(NAME progress.${case} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/progress.sh $<TARGET_FILE:dbtr> ${case})
  set_tests_properties(progress.${case} PROPERTIES LABELS cpu TIMEOUT 300)
endforeach()

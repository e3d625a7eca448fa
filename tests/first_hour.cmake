# What a new user meets in the first hour (tests/first_hour.sh, issue 24): the README's
# example without a GPU, validate's up-front refusals and folders, what a signal says, dbtr info
# of a volume, the files a command names. One CTest entry per case.
foreach(case readme up_front no_empty_dirs interrupt info_volume wrote)
  add_test(NAME first_hour.${case} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/first_hour.sh $<TARGET_FILE:dbtr> ${case}
                                           ${PROJECT_SOURCE_DIR}/README.md)
  set_tests_properties(first_hour.${case} PROPERTIES LABELS cpu TIMEOUT 300)
endforeach()

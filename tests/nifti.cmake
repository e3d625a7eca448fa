# tests/nifti.cmake: NIfTI volumes and the writer that picks the file type from the name
# (io/nifti.c, io/volume.c, docs/volume-format.md).
# Built only with libnifti (DBTR_HAVE_NIFTI); run.sh configures DBTR_WITH_NIFTI=ON, so CI
# never goes without.
if(NOT DBTR_HAVE_NIFTI)
  return()
endif()
dbtr_add_test_file(SOURCE test_nifti.c LABELS cpu LIBS dbtr_core)
# nibabel opens the .nii and .nii.gz files of `dbtr phantom --truth` and `dbtr recon -o`
# and finds the grid, units and the TIFF's data of the same run. It fails, never skips,
# without python3 and nibabel: run.sh installs them (python3-nibabel) for CI.
add_test(NAME nifti.nibabel
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/nifti_nibabel.sh $<TARGET_FILE:dbtr>
                 ${CMAKE_CURRENT_SOURCE_DIR}/nifti_check.py)
set_tests_properties(nifti.nibabel PROPERTIES LABELS cpu TIMEOUT 300)

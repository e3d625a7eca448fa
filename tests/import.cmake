# tests/import.cmake: `dbtr import` (io/dicom_import.c, io/dicom_geom.c, io/dicom.cc;
# docs/dicom.md) through the CLI. tests/import_dicom.py writes DICOM files with pydicom from
# a known geometry and checks the round trip or the refusal; one CTest entry per case. It
# fails, not skips, without pydicom: run.sh installs python3-pydicom. Built only with GDCM
# (DBTR_HAVE_DICOM); run.sh configures with DBTR_WITH_DICOM=ON, so CI never goes without.
if(NOT DBTR_HAVE_DICOM)
  return()
endif()
# JPEG 2000 test files are written by GDCM (pydicom has no encoder): tests/dicom_j2k.cc.
add_executable(dicom_j2k dicom_j2k.cc)
target_include_directories(dicom_j2k SYSTEM PRIVATE ${DBTR_GDCM_INCLUDE_DIR})
target_link_libraries(dicom_j2k PRIVATE ${DBTR_GDCM_LIBRARIES})
set(dbtr_import_cases multiframe multiframe_mirrored singleframe_shuffled singleframe_rotating recon missing_tag
    multiframe_missing_tag inconsistent_spacing not_dicom mixed_series existing_output truncated_multiframe
    truncated_in_folder short_pixel_data truncated_header fifo zero_rows dicomdir j2k_multiframe j2k_corrupt_frame
    j2k_frame_size j2k_frame_bits absurd_geometry_in_folder)
foreach(c IN LISTS dbtr_import_cases)
  add_test(NAME import.${c} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/import.sh $<TARGET_FILE:dbtr> ${c})
  set_tests_properties(import.${c} PROPERTIES LABELS cpu TIMEOUT 120 ENVIRONMENT "DBTR_DICOM_J2K=$<TARGET_FILE:dicom_j2k>")
endforeach()

dbtr_add_test_file(SOURCE test_gpu.c LABELS gpu LIBS dbtr_core TIMEOUT 600)
# The projector's device path and ML-EM of device data take the test's own device arrays
# (cudaMalloc): CUDA builds only.
if(DBTR_HAVE_CUDA)
  dbtr_add_test_file(SOURCE test_gpu_projector.c LABELS gpu LIBS dbtr_core CUDA::cudart_static TIMEOUT 600)
  dbtr_add_test_file(SOURCE test_gpu_device_data.c LABELS gpu LIBS dbtr_core CUDA::cudart_static TIMEOUT 600)
endif()

# factored_on_gpu runs the GPU's gather (label gpu); the rest runs on the CPU.
dbtr_add_test_file(SOURCE test_separable.c LABELS cpu LIBS dbtr_core GPU factored_on_gpu_tiny factored_on_gpu_hologic)

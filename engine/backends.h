/* engine/backends.h: which backend computes a row of the mode table (recon/modes.def): a table
 * of factories, one for the CPU reference (recon/cpu.h) and one for the GPU (kernels/gpu.h),
 * so that recon/ never names the GPU, and the choice a user makes with --backend, --mode and
 * --precision. */
#ifndef DBTR_ENGINE_BACKENDS_H
#define DBTR_ENGINE_BACKENDS_H

#include <stddef.h>

#include "include/dbtr.h"
#include "recon/backend.h"

/* A backend computing row m for prob, its name ("cpu-float", "gpu:cpu-match") and b->mode set.
 * A CPU row runs on the row's threads (cpu-1-thread: one) where prob's are not fewer. A GPU row
 * without a usable GPU: DBTR_ENOGPU with the reason. */
int dbtr_backend_create(dbtr_backend **out, dbtr_mode m, const dbtr_problem *prob);

/* The row a user's options ask for: the GPU mode (cpu-match when none is given), or for the
 * CPU (backend "cpu", or "auto" without a GPU) the CPU row of the precision asked for, else of
 * the mode's precision, so that mode "double" on a machine without a GPU still computes in
 * double. DBTR_EINVAL naming the option for an unknown backend, mode or precision. *gpu
 * receives whether the GPU is to be tried first (backend "gpu" or "auto"). */
int dbtr_backend_choose(const dbtr_backend_opts *o, dbtr_mode *gpu_mode, dbtr_mode *cpu_mode, int *gpu);

/* Whether o's backend will run on the CPU, as dbtr_backend_open would pick it, without making
 * it: gpu (dbtr_backend_choose's) is 0, or backend "auto" finds no GPU that can be used
 * ("gpu" never falls back: it fails). For the memory checks made before any allocation. */
int dbtr_backend_on_cpu(const dbtr_backend_opts *o, int gpu);

/* Creates the backend o asks for: "gpu" fails without a GPU; "auto" uses the GPU when it can
 * and otherwise the CPU, writing why into fallback (else fallback is ""). */
int dbtr_backend_open(const dbtr_backend_opts *o, const dbtr_problem *prob, dbtr_backend **out, char *fallback,
                      size_t fallback_len);

#endif

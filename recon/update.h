/* recon/update.h: what a gather does with each voxel's two sums (acc1, acc2) once it has summed
 * its views. The CPU reference's gathers (recon/cpu_impl.h) and the kernels'
 * (kernels/mode_kernels.cu) take one, and every instance of recon/proj_impl.h computes the
 * updates it names; the GPU's host backend (kernels/gpu_host.cu) chooses one without an
 * instance. */
#ifndef DBTR_UPDATE_H
#define DBTR_UPDATE_H

typedef enum {
  DBTR_UPDATE_BACK = 0,         /* the voxel becomes acc1: a plain back projection */
  DBTR_UPDATE_TRANSMISSION = 1, /* transmission_voxel(voxel, acc1, acc2) */
  DBTR_UPDATE_EMISSION = 2      /* emission_voxel(voxel, acc1, acc2) */
} dbtr_update;

#endif

/* lib/problem.h: from a scan to the ML-EM driver's data, and the backend a user asked for:
 * what the public API (lib/recon.c, lib/validation.c) and the command line (app/) share, so
 * that `dbtr recon`, a C program and the Python package compute the same bits. */
#ifndef DBTR_LIB_PROBLEM_H
#define DBTR_LIB_PROBLEM_H

#include <stddef.h>

#include "include/dbtr.h"
#include "recon/backend.h"

/* Checks what a caller built by hand before it is reconstructed (the reader checks files
 * the same way): the arrays are there, i0 has a known shape (counts need one), every value
 * is finite, counts are >= 0 and i0 > 0. */
int dbtr__scan_check_values(const dbtr_scan *scan);

/* Full-size double arrays of the data for the driver: *i0 expanded from whatever shape the
 * scan has (transmission), and for emission from counts the line integrals
 * (dbtr_count_to_line_integral). Either is NULL when the scan's own array serves. The
 * caller frees both. */
int dbtr__data_expand(const dbtr_scan *scan, dbtr_algo algo, double **y, double **i0);

/* The precision a backend for o computes in: the GPU mode's (cpu-match when none is given),
 * unless o->precision says otherwise; an unknown mode counts as cpu-match (creating the
 * backend refuses it). */
dbtr_precision dbtr__backend_precision(const dbtr_backend_opts *o);

/* Creates the backend o asks for: "gpu" fails without a GPU; "auto" uses the GPU when it
 * can and otherwise the CPU, writing why into fallback (else fallback is ""). The CPU
 * precision follows the GPU mode unless o->precision says otherwise, so that mode "double"
 * on a machine without a GPU still computes in double. */
int dbtr__backend_create(const dbtr_backend_opts *o, const dbtr_problem *prob, dbtr_backend **out, char *fallback,
                         size_t fallback_len);

#endif

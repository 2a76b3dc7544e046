/* Errors, fault injection and number parsing: what every part of the
 * library uses (the public side is in ballcl/ballcl.h). */
#ifndef BALLCL_UTIL_H
#define BALLCL_UTIL_H

#include "ballcl/ballcl.h"

/* Attaches a copy of text (e.g. a build log) to an error that is already set. */
void bcl_error_set_detail(bcl_error *e, const char *text);

/* Parses a finite float for the option `what`: BCL_OK, or BCL_EXIT_INPUT
 * with a message naming `what`. */
int bcl_parse_float(const char *text, const char *what, float *out, bcl_error *e);

/* Fault injection: BALLCL_FAULT="name:n[:STATUS]" makes the n-th call (from
 * 1) of the OpenCL or I/O function `name` fail with STATUS (default
 * CL_OUT_OF_RESOURCES for OpenCL calls, EIO for I/O). Returns the status
 * to fail with, or 0 to go on. */
int bcl_fault_take(const char *name);
/* "name:n[:STATUS]@D" counts and fails only the calls made for device D
 * (its position, from 0, in a run's device list): a thread working for a
 * device says which with bcl_fault_device (-1, the default: none). */
void bcl_fault_device(int index);

#endif

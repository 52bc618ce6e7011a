/*-------------------------------------------------------------------------
 *
 * ssdkit_guc.h
 *	  Where a core setting's value came from, and the background workers
 *	  the extensions keep for the server's life.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSDKIT_GUC_H
#define SSDKIT_GUC_H

#include "postgres.h"

#include "postmaster/bgworker.h"
#include "utils/guc.h"

#include "ssdkit_uring.h"

extern SSDKIT_INTERNAL GucSource ssdkit_guc_source(const char *name);
extern SSDKIT_INTERNAL void ssdkit_register_server_worker(BackgroundWorker *worker);

#endif							/* SSDKIT_GUC_H */

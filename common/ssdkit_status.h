/*-------------------------------------------------------------------------
 *
 * ssdkit_status.h
 *	  The status record every ssdkit extension reports through SQL.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSDKIT_STATUS_H
#define SSDKIT_STATUS_H

#include "postgres.h"
#include "fmgr.h"

#include "ssdkit_uring.h"

extern SSDKIT_INTERNAL Datum ssdkit_status_record(FunctionCallInfo fcinfo,
												  bool preloaded);

#endif							/* SSDKIT_STATUS_H */

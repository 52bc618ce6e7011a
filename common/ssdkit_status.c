/*-------------------------------------------------------------------------
 *
 * ssdkit_status.c
 *	  Build the (library_version, preloaded, io_uring, io_uring_error)
 *	  record each extension's *_status() function returns.
 *
 * The io_uring probe really creates and closes a ring, because whether the
 * kernel allows io_uring (sysctl, seccomp in containers) is only known by
 * trying, and every asynchronous feature of ssdkit depends on it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "ssdkit_status.h"

Datum
ssdkit_status_record(FunctionCallInfo fcinfo, bool preloaded)
{
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	MemoryContext oldcxt = CurrentMemoryContext;
	bool		uring_ok;
	char	   *detail;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	PG_TRY();
	{
		SsdkitUring *u = ssdkit_uring_create(1);

		ssdkit_uring_destroy(u);
		uring_ok = true;
		detail = NULL;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		uring_ok = false;
		detail = edata->message;
	}
	PG_END_TRY();

	values[0] = CStringGetTextDatum(SSDKIT_VERSION);
	values[1] = BoolGetDatum(preloaded);
	values[2] = BoolGetDatum(uring_ok);
	if (detail)
		values[3] = CStringGetTextDatum(detail);
	else
		nulls[3] = true;

	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

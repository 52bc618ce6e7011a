/*-------------------------------------------------------------------------
 *
 * ssd_sort_trace.c
 *	  Count the runs and merge passes of a tuplesort.
 *
 * EXPLAIN ANALYZE of an SSD Sort reports how many sorted runs the pair sort
 * wrote and how many merge passes it needed, the numbers that explain its
 * advantage over a full-row sort.  tuplesort.c keeps them in its private
 * state; what it does publish, when the trace_sort developer setting is on,
 * is one LOG event per run written and per merge pass started.  So while our
 * node is inside a tuplesort call we switch trace_sort on, count those events
 * in an emit_log_hook, and keep them out of the log (unless the user had
 * trace_sort on already, in which case they pass through as usual).  Events
 * of any other sort, such as one in a subplan of the scan's quals, run with
 * the trace paused and are neither counted nor hidden.
 *
 * If the events cannot be seen (log_min_messages at FATAL or PANIC drops LOG
 * events before any hook), "seen" stays false and EXPLAIN leaves the counts
 * out rather than report zeros.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/elog.h"
#include "utils/guc.h"

#include "ssd_sort.h"

/* The innermost trace in progress in this backend, or NULL. */
static SsdSortTrace *current_trace = NULL;
static emit_log_hook_type prev_emit_log_hook = NULL;

/* Format strings of PostgreSQL 15's trace_sort events we count. */
#define TRACE_RUN_WRITTEN	"worker %d finished writing run %d"
#define TRACE_MERGE_PASS	"starting merge pass of %d input runs"

static bool
is_tuplesort_event(const ErrorData *edata)
{
	return edata->elevel == LOG && edata->filename != NULL &&
		edata->message_id != NULL &&
		strcmp(edata->filename, "tuplesort.c") == 0;
}

/*
 * trace_sort also makes the sort support of text, numeric, uuid, inet and
 * macaddr keys report on their abbreviated keys ("varstr_abbrev: ...",
 * "numeric_abbrev: ..."), from their own source files.
 */
static bool
is_abbreviation_event(const ErrorData *edata)
{
	return edata->elevel == LOG && edata->message_id != NULL &&
		strstr(edata->message_id, "_abbrev: ") != NULL;
}

static void
trace_emit_log_hook(ErrorData *edata)
{
	SsdSortTrace *t = current_trace;

	if (t != NULL && t->active && is_tuplesort_event(edata))
	{
		t->seen = true;
		if (strncmp(edata->message_id, TRACE_RUN_WRITTEN,
					strlen(TRACE_RUN_WRITTEN)) == 0)
			t->runs++;
		else if (strncmp(edata->message_id, TRACE_MERGE_PASS,
						 strlen(TRACE_MERGE_PASS)) == 0)
			t->merge_passes++;
	}
	if (t != NULL && t->active && !t->saved_trace_sort &&
		(is_tuplesort_event(edata) || is_abbreviation_event(edata)))
	{
		/* We asked for this event; nobody else did. */
		edata->output_to_server = false;
		edata->output_to_client = false;
		return;
	}
	if (prev_emit_log_hook)
		(*prev_emit_log_hook) (edata);
}

void
ssd_sort_trace_init(void)
{
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = trace_emit_log_hook;
}

/*
 * Start a trace, paused.  The caller must call ssd_sort_trace_end() on every
 * path out, errors included (PG_FINALLY), so trace_sort is never left on.
 */
void
ssd_sort_trace_begin(SsdSortTrace *trace)
{
	trace->seen = false;
	trace->runs = 0;
	trace->merge_passes = 0;
	trace->active = false;
	trace->saved_trace_sort = trace_sort;
	trace->outer = current_trace;
	if (current_trace != NULL)
		ssd_sort_trace_pause(current_trace);
	current_trace = trace;
}

void
ssd_sort_trace_end(SsdSortTrace *trace)
{
	ssd_sort_trace_pause(trace);
	if (current_trace == trace)
		current_trace = trace->outer;
}

/* Count (and emit) the events of the calls that follow. */
void
ssd_sort_trace_resume(SsdSortTrace *trace)
{
	trace->active = true;
	trace_sort = true;
}

/* Stop counting: what runs now (the scan below us) is not our sort. */
void
ssd_sort_trace_pause(SsdSortTrace *trace)
{
	trace->active = false;
	trace_sort = trace->saved_trace_sort;
}

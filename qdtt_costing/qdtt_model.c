/*-------------------------------------------------------------------------
 *
 * qdtt_model.c
 *	  The QDTT model: loading the calibrated grids from the extension's
 *	  table, caching them per backend, and the thesis's bilinear
 *	  interpolation (linear in band, then linear in queue depth).
 *
 * The planner asks for a tablespace's model for every base relation it
 * plans, so the grids are cached in backend memory.  The cache is dropped
 * on any relcache invalidation of the model table; a statement trigger on
 * the table (qdtt_model_changed) sends one, so a new calibration, or a
 * model edited by hand, is seen by every backend at its next query.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_tablespace_d.h"

#include <math.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_tablespace.h"
#include "commands/extension.h"
#include "commands/tablespace.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "qdtt_costing.h"

PG_FUNCTION_INFO_V1(qdtt_cost);
PG_FUNCTION_INFO_V1(qdtt_model_changed);
PG_FUNCTION_INFO_V1(qdtt_max_beneficial_queue_depth);

/* Column numbers of qdtt_calibration (see the install script). */
#define Anum_qdtt_tablespace	1
#define Anum_qdtt_band_pages	2
#define Anum_qdtt_queue_depth	3
#define Anum_qdtt_cost_us		4

typedef struct QdttModelEntry
{
	QdttModel	model;
	bool		complete;
	char	   *moved;			/* calibrated on another device: why not used */
} QdttModelEntry;

/* Column numbers of qdtt_calibration_run (see the install script). */
#define Anum_qdtt_run_tablespace	1
#define Anum_qdtt_run_device		3

/* Backend-local cache: every tablespace's model, loaded together. */
static MemoryContext model_cxt = NULL;
static List *model_cache = NIL; /* of QdttModelEntry */
static bool model_cache_valid = false;
static Oid	model_table_oid = InvalidOid;

static void
model_cache_reset(void)
{
	if (model_cxt != NULL)
		MemoryContextReset(model_cxt);
	model_cache = NIL;
	model_cache_valid = false;
}

static void
model_relcache_callback(Datum arg, Oid relid)
{
	/*
	 * Before the extension exists, any new relation may be its table, so
	 * look again; afterwards only the table itself matters.
	 */
	if (relid == InvalidOid || !OidIsValid(model_table_oid) ||
		relid == model_table_oid)
		model_cache_reset();
}

/*
 * Models are keyed by tablespace name and mapped to OIDs when they load: a
 * tablespace created, renamed or dropped changes that map.
 */
static void
model_tablespace_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	model_cache_reset();
}

void
qdtt_model_init(void)
{
	CacheRegisterRelcacheCallback(model_relcache_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(TABLESPACEOID, model_tablespace_callback, (Datum) 0);
}

/*
 * The schema qdtt_costing was created in (get_extension_schema() is not
 * exported before PostgreSQL 16), or InvalidOid when it is not installed.
 */
Oid
qdtt_extension_schema(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("qdtt_costing"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

/*
 * The OID of the model table in this database, or InvalidOid when the
 * extension is not installed here (an ERROR unless missing_ok).
 */
Oid
qdtt_model_table(bool missing_ok)
{
	Oid			nsp = qdtt_extension_schema();
	Oid			relid = InvalidOid;

	if (OidIsValid(nsp))
		relid = get_relname_relid("qdtt_calibration", nsp);
	if (!OidIsValid(relid) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"qdtt_costing\" is not installed in this database"),
				 errhint("Run CREATE EXTENSION qdtt_costing.")));
	return relid;
}

/* Device name (e.g. "vda1 (254:1)") of the file system holding "path". */
char *
qdtt_device_name(const char *path)
{
	struct stat st;
	char		link[MAXPGPATH];
	char		target[MAXPGPATH];
	ssize_t		n;

	if (stat(path, &st) != 0)
		return pstrdup("unknown");
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u",
			 major(st.st_dev), minor(st.st_dev));
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return psprintf("%u:%u", major(st.st_dev), minor(st.st_dev));
	target[n] = '\0';
	return psprintf("%s (%u:%u)", strrchr(target, '/') ? strrchr(target, '/') + 1 : target,
					major(st.st_dev), minor(st.st_dev));
}

/*
 * The device a tablespace's calibration file would be on now: the temp
 * directory qdtt_calibrate() writes it in (a pgsql_tmp may be a link to
 * another disk), else the tablespace's own directory.  The backend runs in
 * DataDir.
 */
static char *
tablespace_device(Oid spcoid)
{
	char		dir[MAXPGPATH];
	struct stat st;

	TempTablespacePath(dir, spcoid);
	if (stat(dir, &st) == 0)
		return qdtt_device_name(dir);
	if (spcoid == DEFAULTTABLESPACE_OID)
		strlcpy(dir, "base", sizeof(dir));
	else if (spcoid == GLOBALTABLESPACE_OID)
		strlcpy(dir, "global", sizeof(dir));
	else
		snprintf(dir, sizeof(dir), "pg_tblspc/%u/", spcoid);
	return qdtt_device_name(dir);
}

/*
 * Does a qdtt_device_name() result name a block device?  Not "unknown", and
 * not a file system without one (overlay, tmpfs, NFS: major number 0),
 * whose number the kernel hands out afresh at each mount: a container's
 * overlay gets another one at every start.
 */
static bool
names_a_device(const char *device)
{
	return strcmp(device, "unknown") != 0 && strncmp(device, "0:", 2) != 0 &&
		strstr(device, " (0:") == NULL;
}

/*
 * A model measures one device.  The data directory or a tablespace may
 * have moved since (a restore or a pg_upgrade on other hardware, a copied
 * cluster, a tablespace dropped and created again elsewhere under its old
 * name): the model then prices another device's reads, so it is not used,
 * and the server log says so once per session.  The device each model was
 * measured on is qdtt_calibration_run.device; a model without a run
 * (entered by hand) is used as it is.
 */
static void
calibration_run_row(TupleTableSlot *slot, void *arg)
{
	char	   *name;
	char	   *measured_on;
	Oid			spcoid;
	ListCell   *lc;

	if (slot->tts_isnull[Anum_qdtt_run_tablespace - 1] ||
		slot->tts_isnull[Anum_qdtt_run_device - 1])
		return;
	name = NameStr(*DatumGetName(slot->tts_values[Anum_qdtt_run_tablespace - 1]));
	measured_on = TextDatumGetCString(slot->tts_values[Anum_qdtt_run_device - 1]);
	spcoid = get_tablespace_oid(name, true);
	foreach(lc, model_cache)
	{
		QdttModelEntry *e = (QdttModelEntry *) lfirst(lc);
		char	   *now_on;

		if (!OidIsValid(spcoid) || e->model.spcoid != spcoid)
			continue;
		now_on = tablespace_device(spcoid);
		if (strcmp(now_on, measured_on) == 0 || !names_a_device(now_on) ||
			!names_a_device(measured_on))
			continue;
		e->moved = psprintf("It was measured on device %s; the tablespace is now on %s.",
							measured_on, now_on);
		ereport(LOG,
				(errmsg("qdtt_costing: the QDTT model of tablespace \"%s\" is not used", name),
				 errdetail_internal("%s", e->moved),
				 errhint("Run SELECT * FROM qdtt_calibrate('%s') to measure the device it is on.",
						 name)));
	}
}

/* Tablespace name to OID with a PostgreSQL-style error. */
Oid
qdtt_tablespace_oid(const char *spcname)
{
	Oid			spcoid = get_tablespace_oid(spcname, true);

	if (!OidIsValid(spcoid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("tablespace \"%s\" does not exist", spcname),
				 errhint("SELECT spcname FROM pg_tablespace lists the tablespaces.")));
	return spcoid;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static int
cmp_int(const void *a, const void *b)
{
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	return (x > y) - (x < y);
}

typedef struct RawPoint
{
	double		band;
	int			qd;
	double		cost;
} RawPoint;

/*
 * Turn one tablespace's points into a grid.  A model is complete when it has
 * band 1 and queue depth 1 and a point for every (band, queue depth) pair;
 * the planner uses complete models only.
 */
/* A point's plausible range: a cached page's copy to a stalled disk's read. */
#define QDTT_MIN_POINT_US	1e-3
#define QDTT_MAX_POINT_US	1e8

static void
build_model(QdttModelEntry *e, Oid spcoid, RawPoint *pts, int n)
{
	QdttModel  *m = &e->model;
	int			i,
				found = 0;
	bool	   *seen;

	m->spcoid = spcoid;
	m->bands = palloc(sizeof(double) * n);
	m->qds = palloc(sizeof(int) * n);
	m->nbands = m->nqds = 0;
	for (i = 0; i < n; i++)
	{
		int			j;

		for (j = 0; j < m->nbands && m->bands[j] != pts[i].band; j++)
			;
		if (j == m->nbands)
			m->bands[m->nbands++] = pts[i].band;
		for (j = 0; j < m->nqds && m->qds[j] != pts[i].qd; j++)
			;
		if (j == m->nqds)
			m->qds[m->nqds++] = pts[i].qd;
	}
	qsort(m->bands, m->nbands, sizeof(double), cmp_double);
	qsort(m->qds, m->nqds, sizeof(int), cmp_int);

	m->cost_us = palloc0(sizeof(double) * m->nbands * m->nqds);
	seen = palloc0(sizeof(bool) * m->nbands * m->nqds);
	for (i = 0; i < n; i++)
	{
		int			bi,
					qi;

		for (bi = 0; m->bands[bi] != pts[i].band; bi++)
			;
		for (qi = 0; m->qds[qi] != pts[i].qd; qi++)
			;
		if (!seen[bi * m->nqds + qi])
			found++;
		seen[bi * m->nqds + qi] = true;
		QDTT_POINT(m, bi, qi) = pts[i].cost;
	}
	e->complete = (found == m->nbands * m->nqds &&
				   m->bands[0] == 1.0 && m->qds[0] == 1);

	/*
	 * The table's constraints let any finite positive cost in; a model
	 * whose points span more than any device does (a hand-edited one) would
	 * give the planner overflowing or NaN page costs.  It is not used.
	 */
	for (i = 0; i < m->nbands * m->nqds; i++)
		if (!(m->cost_us[i] >= QDTT_MIN_POINT_US && m->cost_us[i] <= QDTT_MAX_POINT_US))
			e->complete = false;
	m->max_beneficial_qd = e->complete ?
		qdtt_model_beneficial_qd(m, qdtt_stop_threshold) : 1;
}

/* Column numbers of qdtt_memory_cost. */
#define Anum_qdtt_mem_tablespace	1
#define Anum_qdtt_mem_sb_random		2
#define Anum_qdtt_mem_sb_seq		3
#define Anum_qdtt_mem_os_random		4
#define Anum_qdtt_mem_os_seq		5
#define Anum_qdtt_mem_seq_tuple		6
#define Anum_qdtt_mem_bitmap_tuple	7
#define Anum_qdtt_mem_bitmap_page	8
#define Anum_qdtt_mem_index_tuple	9

/*
 * Call row_fn for every row of one of the extension's tables (with all its
 * attributes fetched), read under a fresh snapshot; nothing if the table
 * does not exist (the extension is not installed here, or not updated).
 */
typedef void (*TableRowFn) (TupleTableSlot *slot, void *arg);

static void
scan_extension_table(const char *relname, TableRowFn row_fn, void *arg)
{
	Oid			nsp = qdtt_extension_schema();
	Oid			relid = OidIsValid(nsp) ? get_relname_relid(relname, nsp) : InvalidOid;
	Relation	rel;
	TableScanDesc scan;
	TupleTableSlot *slot;
	Snapshot	snapshot;

	if (!OidIsValid(relid))
		return;
	rel = table_open(relid, AccessShareLock);
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	scan = table_beginscan(rel, snapshot, 0, NULL);
	slot = table_slot_create(rel, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		slot_getallattrs(slot);
		row_fn(slot, arg);
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	UnregisterSnapshot(snapshot);
	table_close(rel, AccessShareLock);
}

/*
 * The memory points of the models (qdtt_memory_cost): what a page costs
 * when found in shared_buffers and when read from the OS page cache.  The
 * table is missing until the extension is updated to 0.2; models then have
 * none, and the planner prices every page as a device read.
 */
static void
memory_cost_row(TupleTableSlot *slot, void *arg)
{
	Oid			spcoid;
	ListCell   *lc;
	int			i;

	for (i = 0; i < Anum_qdtt_mem_index_tuple; i++)
		if (slot->tts_isnull[i])
			return;				/* the table's NOT NULLs prevent this */
	spcoid = get_tablespace_oid(NameStr(*DatumGetName(slot->tts_values[Anum_qdtt_mem_tablespace - 1])),
								true);
	foreach(lc, model_cache)
	{
		QdttModelEntry *e = (QdttModelEntry *) lfirst(lc);

		if (OidIsValid(spcoid) && e->model.spcoid == spcoid)
		{
			/*
			 * As for the device points: memory costs beyond any device's
			 * (hand-entered) would give infinite or NaN page costs.  The
			 * model is not used.
			 */
			for (i = Anum_qdtt_mem_sb_random; i <= Anum_qdtt_mem_index_tuple; i++)
				if (!(DatumGetFloat8(slot->tts_values[i - 1]) <= QDTT_MAX_POINT_US))
					e->complete = false;
			e->model.sb_random_us = DatumGetFloat8(slot->tts_values[Anum_qdtt_mem_sb_random - 1]);
			e->model.sb_seq_us = DatumGetFloat8(slot->tts_values[Anum_qdtt_mem_sb_seq - 1]);
			e->model.os_random_us = DatumGetFloat8(slot->tts_values[Anum_qdtt_mem_os_random - 1]);
			e->model.os_seq_us = DatumGetFloat8(slot->tts_values[Anum_qdtt_mem_os_seq - 1]);
			e->model.seq_tuple_us = DatumGetFloat8(slot->tts_values[Anum_qdtt_mem_seq_tuple - 1]);
			e->model.bitmap_tuple_us = DatumGetFloat8(slot->tts_values[Anum_qdtt_mem_bitmap_tuple - 1]);
			e->model.bitmap_page_us = DatumGetFloat8(slot->tts_values[Anum_qdtt_mem_bitmap_page - 1]);
			e->model.index_tuple_us = DatumGetFloat8(slot->tts_values[Anum_qdtt_mem_index_tuple - 1]);
		}
	}
}

/* The points of qdtt_calibration as load_models() collects them. */
typedef struct PointsRead
{
	List	   *names;			/* distinct tablespace names */
	RawPoint   *pts;
	int		   *owner;			/* index into names of each point */
	int			npts;
	int			maxpts;
} PointsRead;

static void
calibration_row(TupleTableSlot *slot, void *arg)
{
	PointsRead *r = (PointsRead *) arg;
	char	   *name;
	ListCell   *lc;
	int			i = 0;

	if (slot->tts_isnull[Anum_qdtt_tablespace - 1] ||
		slot->tts_isnull[Anum_qdtt_band_pages - 1] ||
		slot->tts_isnull[Anum_qdtt_queue_depth - 1] ||
		slot->tts_isnull[Anum_qdtt_cost_us - 1])
		return;					/* the table's NOT NULLs prevent this */
	name = NameStr(*DatumGetName(slot->tts_values[Anum_qdtt_tablespace - 1]));
	foreach(lc, r->names)
	{
		if (strcmp((char *) lfirst(lc), name) == 0)
			break;
		i++;
	}
	if (lc == NULL)
		r->names = lappend(r->names, pstrdup(name));
	if (r->npts == r->maxpts)
	{
		r->maxpts *= 2;
		r->pts = repalloc(r->pts, sizeof(RawPoint) * r->maxpts);
		r->owner = repalloc(r->owner, sizeof(int) * r->maxpts);
	}
	r->owner[r->npts] = i;
	r->pts[r->npts].band = (double) DatumGetInt64(slot->tts_values[Anum_qdtt_band_pages - 1]);
	r->pts[r->npts].qd = DatumGetInt32(slot->tts_values[Anum_qdtt_queue_depth - 1]);
	r->pts[r->npts].cost = DatumGetFloat8(slot->tts_values[Anum_qdtt_cost_us - 1]);
	r->npts++;
}

/* Read every model in the table into the cache. */
static void
load_models(void)
{
	Oid			relid = qdtt_model_table(true);
	MemoryContext oldcxt;
	PointsRead	r = {NIL, NULL, NULL, 0, 256};
	List	   *names;
	RawPoint   *pts;
	int		   *owner;
	int			npts;
	ListCell   *lc;
	int			i;

	if (model_cxt == NULL)
		model_cxt = AllocSetContextCreate(TopMemoryContext,
										  "qdtt_costing models",
										  ALLOCSET_SMALL_SIZES);
	model_cache_reset();
	model_table_oid = relid;
	if (!OidIsValid(relid))
	{
		model_cache_valid = true;
		return;
	}

	oldcxt = MemoryContextSwitchTo(model_cxt);
	r.pts = palloc(sizeof(RawPoint) * r.maxpts);
	r.owner = palloc(sizeof(int) * r.maxpts);
	scan_extension_table("qdtt_calibration", calibration_row, &r);
	names = r.names;
	pts = r.pts;
	owner = r.owner;
	npts = r.npts;

	i = 0;
	foreach(lc, names)
	{
		Oid			spcoid = get_tablespace_oid((char *) lfirst(lc), true);

		if (OidIsValid(spcoid))
		{
			QdttModelEntry *e = palloc0(sizeof(QdttModelEntry));
			RawPoint   *mine = palloc(sizeof(RawPoint) * npts);
			int			n = 0,
						j;

			for (j = 0; j < npts; j++)
				if (owner[j] == i)
					mine[n++] = pts[j];
			build_model(e, spcoid, mine, n);
			model_cache = lappend(model_cache, e);
		}
		i++;
	}
	scan_extension_table("qdtt_memory_cost", memory_cost_row, NULL);
	scan_extension_table("qdtt_calibration_run", calibration_run_row, NULL);
	MemoryContextSwitchTo(oldcxt);
	model_cache_valid = true;
}

/*
 * The model of a tablespace (0 means the database's default), or NULL when
 * there is none or it is incomplete (then *incomplete says which).
 */
/* The cache's entry of a tablespace (0: the database's default), or NULL. */
static QdttModelEntry *
model_entry(Oid spcoid)
{
	ListCell   *lc;

	if (!OidIsValid(spcoid))
		spcoid = MyDatabaseTableSpace;
	if (!model_cache_valid)
		load_models();
	foreach(lc, model_cache)
	{
		QdttModelEntry *e = (QdttModelEntry *) lfirst(lc);

		if (e->model.spcoid == spcoid)
			return e;
	}
	return NULL;
}

const QdttModel *
qdtt_model_for_tablespace(Oid spcoid, bool *incomplete)
{
	QdttModelEntry *e = model_entry(spcoid);

	if (incomplete)
		*incomplete = e != NULL && e->moved == NULL && !e->complete;
	if (e == NULL || e->moved != NULL || !e->complete)
		return NULL;
	return &e->model;
}

/*
 * Why the tablespace's model is not used although it is complete (it was
 * measured on another device), or NULL.
 */
const char *
qdtt_model_moved(Oid spcoid)
{
	QdttModelEntry *e = model_entry(spcoid);

	return e != NULL ? e->moved : NULL;
}

/* Index i with arr[i] <= x <= arr[i + 1] (x already clamped into range). */
static int
bracket(const double *arr, int n, double x)
{
	int			i;

	for (i = 0; i < n - 2 && arr[i + 1] < x; i++)
		;
	return i;
}

/* QDTT(band, q') at one calibrated queue depth: linear in band. */
static double
cost_at_qd(const QdttModel *m, double band, int qi)
{
	int			bi;
	double		b1,
				b2,
				c1,
				c2;

	if (m->nbands == 1)
		return QDTT_POINT(m, 0, qi);
	bi = bracket(m->bands, m->nbands, band);
	b1 = m->bands[bi];
	b2 = m->bands[bi + 1];
	c1 = QDTT_POINT(m, bi, qi);
	c2 = QDTT_POINT(m, bi + 1, qi);
	if (band == b1)
		return c1;
	if (band == b2)
		return c2;
	return c1 + (c2 - c1) * (band - b1) / (b2 - b1);
}

/*
 * QDTT(band, qd) in microseconds per page: the thesis's bilinear rule,
 * exact at calibrated points, clamped to the calibrated ranges outside.
 */
double
qdtt_model_cost(const QdttModel *m, double band, double qd)
{
	double		q1,
				q2,
				c1,
				c2;
	int			qi;

	band = Max(band, m->bands[0]);
	band = Min(band, m->bands[m->nbands - 1]);
	qd = Max(qd, (double) m->qds[0]);
	qd = Min(qd, (double) m->qds[m->nqds - 1]);

	if (m->nqds == 1)
		return cost_at_qd(m, band, 0);
	for (qi = 0; qi < m->nqds - 2 && m->qds[qi + 1] < qd; qi++)
		;
	q1 = m->qds[qi];
	q2 = m->qds[qi + 1];
	c1 = cost_at_qd(m, band, qi);
	if (qd == q1)
		return c1;
	c2 = cost_at_qd(m, band, qi + 1);
	if (qd == q2)
		return c2;
	return c1 + (c2 - c1) / (q2 - q1) * (qd - q1);
}

/*
 * The maximum beneficial queue depth: the smallest calibrated queue depth
 * whose random-read cost (averaged over the random bands, so that one noisy
 * point cannot decide) is within "threshold" of the best any queue depth
 * achieves.  Going deeper buys less than the early-stop rule counts as a
 * gain.  A device with no queue-depth gain gets 1.
 */
int
qdtt_model_beneficial_qd(const QdttModel *m, double threshold)
{
	double		best = -1;
	double	   *score = palloc0(sizeof(double) * m->nqds);
	int			first_random = (m->nbands > 1) ? 1 : 0;
	int			bi,
				qi,
				result = m->qds[0];

	for (qi = 0; qi < m->nqds; qi++)
	{
		for (bi = first_random; bi < m->nbands; bi++)
			score[qi] += QDTT_POINT(m, bi, qi);
		score[qi] /= (m->nbands - first_random);
		if (best < 0 || score[qi] < best)
			best = score[qi];
	}
	for (qi = 0; qi < m->nqds; qi++)
		if (score[qi] <= best * (1.0 + threshold))
		{
			result = m->qds[qi];
			break;
		}
	pfree(score);
	return result;
}

/*
 * The prefetch depth a model recommends (effective_io_concurrency and
 * maintenance_io_concurrency): its maximum beneficial queue depth, within
 * what the settings accept.
 */
int
qdtt_model_prefetch_depth(const QdttModel *m)
{
	int			depth = qdtt_model_beneficial_qd(m, qdtt_stop_threshold);

	return Max(1, Min(depth, MAX_IO_CONCURRENCY));
}

/* qdtt_max_beneficial_queue_depth(tablespace): for the qdtt_model view. */
Datum
qdtt_max_beneficial_queue_depth(PG_FUNCTION_ARGS)
{
	Oid			spcoid = get_tablespace_oid(NameStr(*PG_GETARG_NAME(0)), true);
	const QdttModel *m;

	if (!OidIsValid(spcoid) || !OidIsValid(qdtt_model_table(true)))
		PG_RETURN_NULL();
	m = qdtt_model_for_tablespace(spcoid, NULL);
	if (m == NULL)
		PG_RETURN_NULL();
	PG_RETURN_INT32(qdtt_model_beneficial_qd(m, qdtt_stop_threshold));
}

/*
 * The complete model of a tablespace named by a SQL caller, or an error
 * saying what is missing (qdtt_cost(), qdtt_apply_prefetch()).
 */
static const QdttModel *
required_model(const char *spcname)
{
	Oid			spcoid = qdtt_tablespace_oid(spcname);
	const QdttModel *m;
	bool		incomplete;

	if (spcoid == GLOBALTABLESPACE_OID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("tablespace \"%s\" has no QDTT model", spcname),
				 errdetail("pg_global holds only shared catalogs; it is not calibrated.")));
	(void) qdtt_model_table(false);
	m = qdtt_model_for_tablespace(spcoid, &incomplete);
	if (m == NULL && incomplete)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("QDTT model of tablespace \"%s\" is incomplete", spcname),
				 errdetail("A model needs band 1, queue depth 1 and a point for every pair of its bands and queue depths, each between %g and %g microseconds, and memory costs (qdtt_memory_cost) of at most %g.",
						   QDTT_MIN_POINT_US, QDTT_MAX_POINT_US, QDTT_MAX_POINT_US),
				 errhint("Run qdtt_calibrate('%s') or complete the rows in qdtt_calibration.", spcname)));
	if (m == NULL && qdtt_model_moved(spcoid) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("QDTT model of tablespace \"%s\" is not used", spcname),
				 errdetail_internal("%s", qdtt_model_moved(spcoid)),
				 errhint("Run SELECT * FROM qdtt_calibrate('%s') to measure the device it is on.",
						 spcname)));
	if (m == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("tablespace \"%s\" has no QDTT model", spcname),
				 errhint("Run SELECT * FROM qdtt_calibrate('%s').", spcname)));
	return m;
}

/*
 * qdtt_apply_prefetch(tablespace): set the tablespace's
 * effective_io_concurrency and maintenance_io_concurrency to its model's
 * maximum beneficial queue depth, with ALTER TABLESPACE (its privilege
 * checks included), so that the executor prefetches as deep as the planner
 * prices bitmap heap scans; returns the depth set.  PostgreSQL's default
 * of 1 left a bitmap heap scan 1.6-2.2x slower on an SSD that gains up to
 * queue depth 32.
 */
PG_FUNCTION_INFO_V1(qdtt_apply_prefetch);
Datum
qdtt_apply_prefetch(PG_FUNCTION_ARGS)
{
	char	   *spcname = NameStr(*PG_GETARG_NAME(0));
	int			depth = qdtt_model_prefetch_depth(required_model(spcname));
	char	   *sql;

	sql = psprintf("ALTER TABLESPACE %s SET (effective_io_concurrency = %d, "
				   "maintenance_io_concurrency = %d)",
				   quote_identifier(spcname), depth, depth);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not run \"%s\"", sql);
	SPI_finish();
	PG_RETURN_INT32(depth);
}

/*
 * qdtt_cost(band, queue_depth, tablespace): the interpolated cost per page
 * in microseconds.
 */
Datum
qdtt_cost(PG_FUNCTION_ARGS)
{
	double		band = PG_GETARG_FLOAT8(0);
	double		qd = PG_GETARG_FLOAT8(1);
	char	   *spcname = NameStr(*PG_GETARG_NAME(2));

	if (isinf(band))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("band must be finite, got %g", band),
				 errhint("Values beyond the model's largest band are priced at the largest.")));
	if (isinf(qd))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue depth must be finite, got %g", qd),
				 errhint("Values beyond the model's largest queue depth are priced at the largest.")));
	if (!(band >= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("band must be at least 1 page, got %g", band),
				 errdetail("The band is the number of contiguous pages random reads fall in; 1 means sequential.")));
	if (!(qd >= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue depth must be at least 1, got %g", qd)));

	PG_RETURN_FLOAT8(qdtt_model_cost(required_model(spcname), band, qd));
}

/*
 * Statement trigger on qdtt_calibration: tell every backend (this one
 * included) to reload the models, by invalidating the table's relcache
 * entry; the invalidation is sent at commit.
 */
Datum
qdtt_model_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Oid			model_table;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("qdtt_model_changed() must be called as a trigger")));
	CacheInvalidateRelcache(trigdata->tg_relation);
	/* qdtt_memory_cost's trigger too: backends watch the model table */
	model_table = qdtt_model_table(true);
	if (OidIsValid(model_table) && RelationGetRelid(trigdata->tg_relation) != model_table)
		CacheInvalidateRelcacheByRelid(model_table);
	model_cache_reset();
	PG_RETURN_POINTER(NULL);
}

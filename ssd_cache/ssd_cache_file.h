/*-------------------------------------------------------------------------
 *
 * ssd_cache_file.h
 *	  The cache file on the SSD: header, persistent directory, page slots.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_FILE_H
#define SSD_CACHE_FILE_H

#include "access/xlogdefs.h"
#include "port/pg_crc32c.h"
#include "storage/lwlock.h"
#include "storage/relfilenode.h"
#include "storage/sync.h"

#define SSD_CACHE_MAGIC			"SSDCACHE"
#define SSD_CACHE_FORMAT		3

/*
 * Directory entries are written a directory page at a time.  4 kB covers
 * the O_DIRECT alignment of 512 B and 4 kB sector devices; entries are 32
 * bytes, so none straddles a 512 B sector and a torn page write leaves each
 * entry either old or new, never half of each.
 */
#define SSD_DIR_PAGE_SIZE		4096
#define SSD_DIR_ENTRY_SIZE		32
#define SSD_DIR_ENTRIES_PER_PAGE (SSD_DIR_PAGE_SIZE / SSD_DIR_ENTRY_SIZE)

/* Directory entry flags. */
#define SSD_DIR_VALID			0x01
#define SSD_DIR_FRESHER			0x02	/* write-back: newer than the disk's copy */

/* One slot's persistent description; an entry is trusted only if its CRC
 * and epoch match. */
typedef struct SsdCacheDirEntry
{
	Oid			spcNode;
	Oid			dbNode;
	Oid			relNode;
	BlockNumber blockNum;
	uint8		forkNum;
	uint8		flags;
	uint16		reserved;
	uint32		epoch;
	uint32		reserved2;
	pg_crc32c	crc;
} SsdCacheDirEntry;

StaticAssertDecl(sizeof(SsdCacheDirEntry) == SSD_DIR_ENTRY_SIZE,
				 "directory entries must be 32 bytes");

/* Header states: whether the server using the file stopped cleanly. */
#define SSD_HEADER_RUNNING		1
#define SSD_HEADER_CLEAN		2

/* Block 0 of the cache file. */
typedef struct SsdCacheHeader
{
	char		magic[8];
	uint32		format;
	uint32		blcksz;
	uint64		system_identifier;
	uint64		nslots;
	uint64		dir_offset;
	uint64		slots_offset;
	uint32		epoch;			/* entries of another epoch are invalid */
	uint32		state;			/* SSD_HEADER_RUNNING or SSD_HEADER_CLEAN */
	uint32		data_checksum_version;	/* pg_control's: offline pg_checksums
										 * rewrites every page */
	uint32		reserved;
	uint64		datadir_dev;	/* the data directory it was used with: a */
	uint64		datadir_ino;	/* copy (pg_basebackup) is another inode */
	uint64		token;			/* equals the data directory's
								 * ssd_cache.token while they belong together */
	TimeLineID	timeline;		/* timeline of the redo pointers below */
	TimeLineID	wal_bound_tli;	/* timeline of wal_bound */
	XLogRecPtr	redo_seen[2];	/* newest checkpoint redo pointers observed
								 * while the cache was active */
	XLogRecPtr	wal_bound;		/* no cached page depends on WAL past this */
	uint64		fresher_id;		/* nonzero while slots may be fresher than the
								 * disk: equals the data directory's marker */
	pg_crc32c	crc;
} SsdCacheHeader;

/* Where things are in the file, computed from the slot count. */
typedef struct SsdCacheLayout
{
	uint64		nslots;
	uint64		dir_offset;
	uint64		dir_pages;
	uint64		slots_offset;
	uint64		file_size;
} SsdCacheLayout;

/* What startup decided about the file's contents. */
typedef enum SsdCacheTrust
{
	SSD_TRUST_OFF,				/* the file cannot be used: run without it */
	SSD_TRUST_EMPTY,			/* usable, contents discarded */
	SSD_TRUST_FULL,				/* clean shutdown of this very data directory */
	SSD_TRUST_AFTER_REPLAY		/* a crash: trusted once the WAL this data
								 * directory replays covers wal_bound */
} SsdCacheTrust;

/* Where verification after a crash stands (ssd_cache_file_verification). */
typedef enum SsdCacheVerification
{
	SSD_VERIFIED,				/* the contents may be served */
	SSD_VERIFY_PENDING,			/* replay has not yet reached wal_bound */
	SSD_VERIFY_REFUTED			/* the WAL ends before wal_bound: discard */
} SsdCacheVerification;

extern void ssd_cache_layout(uint64 nslots, SsdCacheLayout *layout);
extern SsdCacheTrust ssd_cache_file_startup(const char *path, const SsdCacheLayout *layout,
											LWLock *header_lock, bool start_empty,
											uint32 *epoch, char **reason);
extern void ssd_cache_file_refuse_if_fresher(const char *why);
extern bool ssd_cache_data_directory_moved;
extern bool ssd_cache_file_fresher_armed(void);
extern bool ssd_cache_file_resets_unlogged(void);
extern bool ssd_cache_file_arm_fresher(void);
extern bool ssd_cache_file_disarm_fresher(void);
extern bool ssd_cache_file_note_checkpoint(XLogRecPtr redo);
extern void ssd_cache_file_register_marker(void);
extern bool ssd_cache_file_is_marker(const FileTag *ftag);
extern bool ssd_cache_file_shut_down_cleanly(void);
extern void ssd_cache_file_note_shutdown(bool fresher_left);
extern bool ssd_cache_file_cover_wal(void);
extern SsdCacheVerification ssd_cache_file_verification(void);
extern void ssd_cache_file_end_discard(void);
extern bool ssd_cache_file_verifying(void);
extern void ssd_cache_file_disown(void);
extern int64 ssd_cache_file_header_writes(void);

extern int	ssd_cache_file_fd(void);
extern void ssd_cache_file_close(void);
extern Size ssd_cache_file_shmem_size(uint64 nslots);
extern XLogRecPtr ssd_cache_file_slot_lsn(uint64 slot);
extern bool ssd_cache_file_read_slot(uint64 slot, char *aligned_buf);
extern bool ssd_cache_file_write_slot(uint64 slot, const char *aligned_buf);

/* Slot writes the admission worker keeps in flight at once. */
#define SSD_CACHE_WRITE_BATCH	32
extern void ssd_cache_file_write_slots(int n, const int32 *slots, char *const *bufs,
									   bool *ok, int *failed_errno);
extern bool ssd_cache_file_read_dir(uint64 first_page, uint64 npages, char *aligned_buf);
extern bool ssd_cache_file_write_dir_pages(uint64 first_page, uint64 npages,
										   const char *aligned_buf);
extern bool ssd_cache_file_write_dir_page_set(int n, const uint64 *pages, char *const *bufs);
extern void ssd_cache_file_prepare_batches(void);
extern const char *ssd_cache_file_admission_io(void);

extern void ssd_cache_dir_entry_seal(SsdCacheDirEntry *e);
extern bool ssd_cache_dir_entry_sealed(const SsdCacheDirEntry *e);
extern bool ssd_cache_dir_entry_ok(const SsdCacheDirEntry *e, uint32 epoch);

#endif							/* SSD_CACHE_FILE_H */

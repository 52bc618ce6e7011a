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
#include "storage/relfilenode.h"

#define SSD_CACHE_MAGIC			"SSDCACHE"
#define SSD_CACHE_FORMAT		1

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
	TimeLineID	timeline;		/* timeline of the redo pointers below */
	XLogRecPtr	redo_seen[2];	/* newest checkpoint redo pointers observed
								 * while the cache was active */
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

extern void ssd_cache_layout(uint64 nslots, SsdCacheLayout *layout);
extern bool ssd_cache_file_startup(const char *path, const SsdCacheLayout *layout,
								   uint32 *epoch, char **why_empty);
extern void ssd_cache_file_note_checkpoint(XLogRecPtr redo);
extern void ssd_cache_file_note_shutdown(void);
extern void ssd_cache_file_forget(int failed_errno);

extern int	ssd_cache_file_fd(void);
extern bool ssd_cache_file_read_slot(uint64 slot, char *aligned_buf);
extern bool ssd_cache_file_write_slot(uint64 slot, const char *aligned_buf);

/* Slot writes the admission worker keeps in flight at once. */
#define SSD_CACHE_WRITE_BATCH	32
extern void ssd_cache_file_write_slots(int n, const int32 *slots, char *const *bufs,
									   bool *ok, int *failed_errno);
extern bool ssd_cache_file_read_dir(uint64 first_page, uint64 npages, char *aligned_buf);
extern bool ssd_cache_file_write_dir_page(uint64 dirpage, const char *aligned_buf);

extern void ssd_cache_dir_entry_seal(SsdCacheDirEntry *e);
extern bool ssd_cache_dir_entry_ok(const SsdCacheDirEntry *e, uint32 epoch);

#endif							/* SSD_CACHE_FILE_H */

/*-------------------------------------------------------------------------
 *
 * ssdkit_memory.c
 *	  Measure how much the OS page cache can hold for this server.
 *
 * PostgreSQL reads through the OS page cache, so a table, an index or a
 * sort's temp files are served from memory as far as that cache reaches.
 * effective_cache_size is the DBA's statement of its size and defaults to
 * 4 GB whatever the machine; a server in a container or a systemd slice
 * with a memory limit has far less, and what does not fit there goes to
 * the device.  The kernel knows the number: the memory cgroup's limit less
 * what the cgroup holds that the page cache cannot reclaim (anonymous
 * memory, and shared memory, which holds shared_buffers), or, with no
 * limit below the machine's memory, MemAvailable (free memory and the
 * page cache the kernel could reclaim).
 *
 * cgroup v2: the tightest memory.max from the server's cgroup up to the
 * root of the hierarchy it sees, with that cgroup's memory.stat.  cgroup v1:
 * the memory controller's hierarchical_memory_limit and total_* counters.
 * A cgroup path the mount does not show (a cgroup namespace) is looked up
 * at the mount's root, which is then the server's own cgroup.
 *
 * A DBA who set effective_cache_size has said how large the caches are:
 * that is used as it is.  Reading the files costs a few system calls; a
 * backend measures at most once a second.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/timestamp.h"

#include "ssdkit_memory.h"

#define MEASURE_INTERVAL_MS 1000
#define CGROUP_ROOT "/sys/fs/cgroup"

/* Read a small file into buf, NUL-terminated; false if it cannot be read. */
static bool
read_small_file(const char *path, char *buf, size_t len)
{
	int			fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t		n;

	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* The number after "key" at the start of a line of text; false if none. */
static bool
line_value(const char *text, const char *key, double *value)
{
	size_t		keylen = strlen(key);
	const char *p = text;

	while (p != NULL && *p != '\0')
	{
		if (strncmp(p, key, keylen) == 0 && (p[keylen] == ' ' || p[keylen] == ':'))
		{
			char	   *end;
			double		v = strtod(p + keylen + 1, &end);

			if (end == p + keylen + 1)
				return false;
			*value = v;
			return true;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return false;
}

/*
 * This process's memory cgroup: its path (from /proc/self/cgroup) and
 * whether it is cgroup v2.  False when there is none.
 */
static bool
own_cgroup(char *path, size_t len, bool *v2)
{
	char		text[4096];
	char	   *line;
	char	   *saveptr = NULL;
	bool		found = false;

	if (!read_small_file("/proc/self/cgroup", text, sizeof(text)))
		return false;
	for (line = strtok_r(text, "\n", &saveptr); line != NULL;
		 line = strtok_r(NULL, "\n", &saveptr))
	{
		char	   *controllers = strchr(line, ':');
		char	   *cgpath;

		if (controllers == NULL)
			continue;
		controllers++;
		cgpath = strchr(controllers, ':');
		if (cgpath == NULL)
			continue;
		*cgpath++ = '\0';
		/* v1: a line whose controller list names memory */
		if (strcmp(controllers, "memory") == 0 ||
			strncmp(controllers, "memory,", 7) == 0 ||
			strstr(controllers, ",memory") != NULL)
		{
			strlcpy(path, cgpath, len);
			*v2 = false;
			return true;
		}
		/* v2: the unified line, used when no v1 memory line exists */
		if (controllers[0] == '\0' && strncmp(line, "0", 1) == 0)
		{
			strlcpy(path, cgpath, len);
			*v2 = true;
			found = true;
		}
	}
	return found;
}

/* cgroup v1: limit, unreclaimable anonymous and shared memory, in bytes. */
static bool
cgroup_v1(const char *path, double *limit, double *anon, double *shmem)
{
	char		file[MAXPGPATH];
	char		text[8192];

	snprintf(file, sizeof(file), "%s/memory%s/memory.stat", CGROUP_ROOT, path);
	if (!read_small_file(file, text, sizeof(text)) &&
		!read_small_file(CGROUP_ROOT "/memory/memory.stat", text, sizeof(text)))
		return false;
	if (!line_value(text, "hierarchical_memory_limit", limit))
		return false;
	if (!line_value(text, "total_rss", anon) &&
		!line_value(text, "rss", anon))
		*anon = 0;
	if (!line_value(text, "total_shmem", shmem) &&
		!line_value(text, "shmem", shmem))
		*shmem = 0;
	return true;
}

/*
 * cgroup v2: the tightest memory.max from the cgroup up to the root the
 * mount shows, and the anonymous and shared memory of the cgroup that sets
 * it.
 */
static bool
cgroup_v2(const char *path, double *limit, double *anon, double *shmem)
{
	char		dir[MAXPGPATH];
	char		best_dir[MAXPGPATH] = "";
	char		file[MAXPGPATH];
	char		text[8192];
	bool		found = false;

	snprintf(dir, sizeof(dir), "%s%s", CGROUP_ROOT, path);
	for (;;)
	{
		char	   *slash;

		snprintf(file, sizeof(file), "%s/memory.max", dir);
		if (read_small_file(file, text, sizeof(text)) &&
			strncmp(text, "max", 3) != 0)
		{
			double		v = strtod(text, NULL);

			if (v > 0 && (!found || v < *limit))
			{
				*limit = v;
				strlcpy(best_dir, dir, sizeof(best_dir));
				found = true;
			}
		}
		if (strcmp(dir, CGROUP_ROOT) == 0)
			break;
		slash = strrchr(dir, '/');
		if (slash == NULL || slash - dir < (ptrdiff_t) strlen(CGROUP_ROOT))
			break;
		*slash = '\0';
	}
	if (!found)
		return false;
	snprintf(file, sizeof(file), "%s/memory.stat", best_dir);
	if (!read_small_file(file, text, sizeof(text)))
		return false;
	if (!line_value(text, "anon", anon))
		*anon = 0;
	if (!line_value(text, "shmem", shmem))
		*shmem = 0;
	return true;
}

static double
measure(const char **source)
{
	char		text[8192];
	char		path[MAXPGPATH];
	double		mem_total,
				mem_available;
	double		limit = 0,
				anon = 0,
				shmem = 0;
	bool		v2;

	if (!read_small_file("/proc/meminfo", text, sizeof(text)) ||
		!line_value(text, "MemTotal", &mem_total) ||
		!line_value(text, "MemAvailable", &mem_available))
		return -1;
	mem_total *= 1024.0;
	mem_available *= 1024.0;

	if (own_cgroup(path, sizeof(path), &v2) &&
		(v2 ? cgroup_v2(path, &limit, &anon, &shmem) :
		 cgroup_v1(path, &limit, &anon, &shmem)) &&
		limit < mem_total)
	{
		/*
		 * shared_buffers is charged to the cgroup as it is first touched:
		 * count all of it, as it will be.
		 */
		double		shared = Max(shmem, (double) NBuffers * BLCKSZ);

		/* Nor can the cgroup cache more than the machine has to give. */
		*source = "memory cgroup limit";
		return Min(Max(limit - anon - shared, 0.0), mem_available);
	}
	*source = "MemAvailable";
	return mem_available;
}

/* Bytes of the OS page cache, measured at most once a second; -1 unknown. */
static double
os_cache_bytes(const char **source)
{
	static double bytes = -1;
	static const char *bytes_source = NULL;
	static TimestampTz measured_at = 0;
	TimestampTz now = GetCurrentTimestamp();

	if (bytes_source == NULL ||
		TimestampDifferenceExceeds(measured_at, now, MEASURE_INTERVAL_MS))
	{
		const char *src = NULL;

		bytes = measure(&src);
		bytes_source = src != NULL ? src : "";	/* "": failed, not again this second */
		measured_at = now;
	}
	*source = bytes_source;
	return bytes;
}

/* Did anyone set effective_cache_size (configuration file, ALTER, SET)? */
static bool
effective_cache_size_is_set(void)
{
	static struct config_generic *guc = NULL;

	if (guc == NULL)
	{
		struct config_generic **vars = get_guc_variables();
		int			n = GetNumConfigOptions();
		int			i;

		for (i = 0; i < n; i++)
			if (pg_strcasecmp(vars[i]->name, "effective_cache_size") == 0)
			{
				guc = vars[i];
				break;
			}
		if (guc == NULL)
			return true;
	}
	return guc->source != PGC_S_DEFAULT;
}

void
ssdkit_cache_size(SsdkitCacheSize *size)
{
	const char *source = NULL;
	double		os_bytes = -1;
	bool		set = effective_cache_size_is_set();

	if (!set)
		os_bytes = os_cache_bytes(&source);
	if (os_bytes >= 0 && source != NULL && source[0] != '\0')
	{
		size->os_pages = os_bytes / BLCKSZ;
		size->total_pages = NBuffers + size->os_pages;
		size->source = source;
		size->guessed = false;
		return;
	}
	size->total_pages = Max(effective_cache_size, 1);
	size->os_pages = Max(effective_cache_size - NBuffers, 1);
	size->source = "effective_cache_size";
	size->guessed = !set;
}

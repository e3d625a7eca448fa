/* io/memory.h: how much memory this process may still take, as the system tells it
 * (/proc/meminfo, the cgroup's files): the budget every command checks its peak against
 * before its first large allocation (docs/errors.md, exit code 4). */
#ifndef DBTR_IO_MEMORY_H
#define DBTR_IO_MEMORY_H

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes this process may still allocate: the smaller of the machine's MemAvailable
 * (/proc/meminfo) and the cgroup's memory.max less memory.current, or DBTR_MEMORY_LIMIT
 * (bytes) when set, for sharing a machine and for tests. A negative value: unknown. */
double dbtr_mem_available(void);
/* Before a large allocation or a run of them: DBTR_ENOMEM (exit 4) with "what needs X GiB;
 * Y GiB are available" when bytes exceed dbtr_mem_available(), so a run that cannot fit is
 * refused up front instead of being killed part way. 0 when it fits or nothing is known. */
int dbtr_mem_check(double bytes, const char *what);
#ifdef __cplusplus
}
#endif

#endif

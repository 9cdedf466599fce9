/*
 * What the aggregation keeps beside the page table so frames can name
 * memory and code: names (regions, symbols), per-page code sites, cache-
 * line heat and samples per code address.  Collector thread only.
 *
 * The aggregation (aggr.c, aggr_nodes.c, aggr_merge.c) calls these
 * hooks; every hook takes NULL (names off) and then
 * does nothing.  Per sample: four table updates (inline here, so the
 * caller's loop has no calls but on a table's rare path), no system call,
 * no allocation.  Per new page: one region lookup.  System calls (reading
 * /proc/PID/maps, opening ELF files) happen in sides_flush_end, rate-
 * limited, and when a frame is built.
 */
#ifndef MEMTOP_SIDES_H
#define MEMTOP_SIDES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "callers.h"
#include "codetab.h"
#include "levtab.h"
#include "linetab.h"
#include "sample.h"
#include "sitetab.h"

struct names;

/* Pages whose sites, and whose level mix, the side tables hold at most:
 * 1 MiB of records each, the hottest pages (sitetab.h, levtab.h); with
 * a --max-pages below SIDES_SITE_PAGES / SIDES_ROOM, room for
 * SIDES_ROOM times it instead (sides.c). */
#define SIDES_SITE_PAGES (1u << 14)
#define SIDES_ROOM	4
/* Below that, each of the two holds one page's record (64 bytes) for
 * up to every SIDES_TRACKED_A_RECORD pages the page table tracks (the
 * room is a power of two of sets), about a byte a tracked page (issue
 * 15: memory a page, side tables included), never less than
 * SIDES_RECORDS_MIN records (256 KiB), nor with a --max-pages less than
 * SIDES_ROOM times it (rounded up to a power of two), so that up to
 * 1 Ki hot pages keep their records with room to spare (sides_room).  A
 * wider uniform hot set in a run that tracks under 1 Mi pages displaces
 * (counted in sites_evicted, levels_evicted) where the tables used to
 * grow for it. */
#define SIDES_TRACKED_A_RECORD	64
#define SIDES_RECORDS_MIN	(1u << 12)

struct sides {
	struct names *names;		/* NULL: naming off */
	struct sitetab *sites;
	struct linetab *lines;
	struct codetab *code;
	struct levtab *levels;		/* data_src level mix per page */
	struct callers callers;		/* code sites' callers (replay) */
	unsigned page_shift;
	size_t room;			/* sides_room's (pages), 0 before */
	size_t room_floor;		/* a shard's: its collector's room */
	size_t room_asked;		/* with --max-pages: the capacity */
};

/* NULL on ENOMEM. */
struct sides *sides_new(unsigned page_shift, size_t max_pages);
void sides_free(struct sides *s);	/* NULL-safe */
/* Bytes the per-page side tables hold (code sites, line heat, code
 * addresses, levels): their share of memory a tracked page (issue 15).
 * Not the names' caches, which are per process.  0 for NULL. */
size_t sides_bytes(const struct sides *s);

/* The room of the code-site and level tables for a page table tracking
 * `tracked` pages (see SIDES_TRACKED_A_RECORD; with a --max-pages, at
 * least SIDES_ROOM times it rounded up to a power of two, as without the
 * room: a page table that may hold so few pages can never earn room for
 * its whole working set); cheap when it does not change, so the
 * aggregation calls it once a batch, a merge and a change of page size
 * (with the new page table's count, before the fold). */
void sides_room(struct sides *s, size_t tracked);
/* The page table whose keys the code-site and level tables take: a page
 * new to a full set displaces one still sampled in its current interval
 * less readily (src/tables/admit.h).  Again after the page table is
 * replaced (a change of page size, after sides_set_page_shift). */
void sides_set_pages(struct sides *s, const struct pagetab *pages);
/* A shard's tables take at least the room of its collector's (`from`),
 * whose hot pages each shard's samples may hold all of: a shard tracks
 * fewer pages, and after it forgets them none (src/aggr/aggr_merge.c:
 * at the shard's start and at each merge, so the floor follows the
 * collector's room, down too after a reset). */
void sides_share_room(struct sides *shard, const struct sides *from);

/*
 * Turns naming off (regions, symbols, the code view's functions) and
 * keeps code sites and line heat: for replayed recordings, whose pids are
 * not processes of this machine now.
 */
void sides_names_off(struct sides *s);

/* Code-site and level tables of up to this many sets (128 KiB) stay in
 * the cache anyway, as the code addresses' of up to
 * CODETAB_PREFETCH_SLOTS do. */
#define SIDES_PREFETCH_SETS	512

/* Whether sides_prefetch is worth its cost (a mix, a set's place and a
 * few tests a sample) for the batch to come: whether any of the tables
 * it fetches from is past the size that stays in the cache.  Asked once
 * a batch; a table that grows during one is prefetched from the next. */
static inline bool
sides_prefetch_wanted(const struct sides *s)
{
	return s && (s->sites->n_sets > SIDES_PREFETCH_SETS ||
		     s->levels->n_sets > SIDES_PREFETCH_SETS ||
		     s->code->mask >= CODETAB_PREFETCH_SLOTS);
}

/* Fetches what sides_account will touch for the page of page-table key
 * `key` and code address ip into the cache, a few samples ahead of it.
 * This and the tables' prefetch functions are always_inline: otherwise
 * gcc (12, at -O2/-O3) finds them pure (a prefetch has no effect it can
 * see), does not inline them early, and then deletes the calls, so no
 * prefetch instruction reaches aggr_flush. */
static inline __attribute__((always_inline)) void
sides_prefetch(const struct sides *s, uint64_t key, int32_t pid,
	       uint64_t ip, uint32_t total)
{
	uint64_t h = pagetab_key_mix(key);

	if (!s)
		return;
	if (admit_page(&s->sites->admit, total))
		sitetab_prefetch_mixed(s->sites, h);
	if (admit_page(&s->levels->admit, total))
		levtab_prefetch_mixed(s->levels, h);
	codetab_prefetch(s->code, pid, ip);
}

/* A sample accounted to the page of page-table key `key` (the sample's
 * pid and page at the current granularity), whose page-table total (this
 * sample counted) is total: the code-site and level tables take it only
 * past their admission bars (admit.h).  The key's mix, which places the
 * page in the code-site, line-heat and level tables alike, is computed
 * once.  always_inline: past a size gcc makes it a call a sample. */
static inline __attribute__((always_inline)) void
sides_account(struct sides *s, const struct sample *smp, uint64_t key,
	      uint32_t total)
{
	uint64_t h = pagetab_key_mix(key);

	if (!s)
		return;
	if (admit_page(&s->sites->admit, total))
		sitetab_add_key(s->sites, key, h, smp->ip, total);
	linetab_add_key(s->lines, smp->pid, key & PAGETAB_PAGE_MASK,
			smp->addr, h);
	codetab_add(s->code, smp->pid, smp->ip);
	levtab_add_total(s->levels, key, h, smp->data_src, total);
}
/* A page entered the page table. */
void sides_new_page(struct sides *s, int32_t pid, uint64_t addr);
/* The names, or NULL when naming is off (for the record feeds:
 * names_mmap, names_fork, names_exit). */
struct names *sides_names(struct sides *s);
/* pid exec'd at time (0 unknown): the names of its old image go
 * (names_forget). */
void sides_forget_pid(struct sides *s, int32_t pid, uint64_t time);
/* After a batch: reads the regions of processes that need it, those for
 * which want(ctx, pid) is true (names_refresh_due). */
void sides_flush_end(struct sides *s, bool (*want)(void *ctx, int32_t pid),
		     void *ctx);
void sides_next_interval(struct sides *s);
void sides_reset(struct sides *s);
/* Adds src's code sites, line heat, code addresses and levels to dst's,
 * as if dst had taken src's samples (a shard's merge, aggr_merge). */
void sides_merge(struct sides *dst, const struct sides *src);
/* sides_reset keeping the tables' sizes: a shard's, refilled at once. */
void sides_clear(struct sides *s);
/*
 * The page table moved to new_shift: sites fold into the coarser pages
 * (new_shift > page_shift) or start over (finer: counts cannot be split);
 * line heat starts over.  0 or -ENOMEM (sites then start over).
 */
int sides_set_page_shift(struct sides *s, unsigned new_shift,
			 size_t max_pages);

#endif

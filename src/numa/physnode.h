/*
 * Physical address -> memory node, from the memory-block topology in
 * sysfs (no syscall per page):
 *
 *   /sys/devices/system/memory/block_size_bytes   hex, e.g. "8000000"
 *   /sys/devices/system/node/nodeN/memoryM         block M is on node N
 *
 * Block M covers [M * block_size, (M + 1) * block_size).  Honours
 * MEMTOP_SYSFS_ROOT.  Built once (collector thread after that); read-only.
 *
 * A sample's PHYS_ADDR gives the node at sample time (move_pages gives it
 * at query time).  It is 0 when the page was not mapped then, and always
 * 0 for the faults source; 0 never resolves.
 */
#ifndef MEMTOP_PHYSNODE_H
#define MEMTOP_PHYSNODE_H

#include <stddef.h>
#include <stdint.h>

struct physnode;

/*
 * Reads the tables.  0; -ENOENT when the system publishes no memory
 * blocks (no memory hotplug support, no node directories); -EINVAL on a
 * malformed block size; -ENOMEM.
 */
int physnode_new(struct physnode **out);
void physnode_free(struct physnode *p);		/* NULL-safe */

/*
 * An empty map of blocks of block_size bytes (a power of two), filled by
 * physnode_add(): another machine's layout, e.g. a recording's
 * MEM_TOPOLOGY.  0, -EINVAL (block size), -ENOMEM.
 */
int physnode_new_empty(struct physnode **out, uint64_t block_size);
/* Block -> node (node 0..32767), replacing an earlier node of the block.
 * 0, -EINVAL (block past the cap, bad node), -ENOMEM. */
int physnode_add(struct physnode *p, uint64_t block, int node);

/* Node of the block holding phys, or -1 (0, a hole, beyond the table). */
int physnode_lookup(const struct physnode *p, uint64_t phys);

uint64_t physnode_block_size(const struct physnode *p);
/* Blocks with a node. */
size_t physnode_n_blocks(const struct physnode *p);

#endif

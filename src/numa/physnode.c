#include "config.h"

/*
 * Physical address -> node.  See physnode.h.
 *
 * Layout: node_of[M] is the node of memory block M, or -1 for a hole (no
 * node directory lists it: a gap in the physical map, an offline block).
 * The array spans block 0 to the highest listed block; 2 bytes a block,
 * so 1 TiB of 128 MiB blocks is 16 KiB.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physnode.h"
#include "sysfs.h"

/* Far above any real machine (2^20 blocks of 128 MiB = 128 TiB), low
 * enough that a corrupt name cannot make us allocate gigabytes. */
#define PHYSNODE_MAX_BLOCKS (1u << 24)

struct physnode {
	uint64_t block_size;
	unsigned block_shift;	/* block_size == 1 << block_shift */
	int16_t *node_of;
	size_t n_slots;		/* highest listed block + 1 */
	size_t n_blocks;	/* blocks with a node */
};

/* "PREFIX<decimal>" -> the number; -1 when name is not of that form. */
static long
physnode_suffix(const char *name, const char *prefix)
{
	size_t len = strlen(prefix);
	char *end;
	long v;

	if (strncmp(name, prefix, len) != 0 ||
	    !isdigit((unsigned char)name[len]))
		return -1;
	errno = 0;
	v = strtol(name + len, &end, 10);
	if (*end != '\0' || errno || v < 0)
		return -1;
	return v;
}

static int
physnode_read_block_size(struct physnode *p)
{
	char path[PATH_MAX], buf[64];
	unsigned long long v;
	char *end;
	int ret;

	ret = sysfs_path(path, sizeof(path),
			 "devices/system/memory/block_size_bytes");
	if (ret < 0)
		return ret;
	ret = sysfs_read(path, buf, sizeof(buf));
	if (ret < 0)
		return ret == -ENOENT ? -ENOENT : ret;
	/* The kernel writes it in hex without a 0x prefix. */
	errno = 0;
	v = strtoull(buf, &end, 16);
	if (end == buf || *end != '\0' || errno || v == 0 || (v & (v - 1)))
		return -EINVAL;
	p->block_size = v;
	p->block_shift = (unsigned)__builtin_ctzll(v);
	return 0;
}

static int
physnode_set(struct physnode *p, size_t block, int node)
{
	if (block >= p->n_slots) {
		size_t n = p->n_slots ? p->n_slots : 64;
		int16_t *grown;

		while (n <= block)
			n *= 2;
		grown = realloc(p->node_of, n * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		for (size_t i = p->n_slots; i < n; i++)
			grown[i] = -1;
		p->node_of = grown;
		p->n_slots = n;
	}
	if (p->node_of[block] < 0)
		p->n_blocks++;
	p->node_of[block] = (int16_t)node;
	return 0;
}

/* Every memoryM entry of DIR/nodeN. */
static int
physnode_read_node(struct physnode *p, const char *nodes_dir, long node)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/node%ld", nodes_dir,
			     node) >= sizeof(path))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) != NULL) {
		long block = physnode_suffix(de->d_name, "memory");

		if (block < 0)
			continue;
		if (block >= (long)PHYSNODE_MAX_BLOCKS) {
			ret = -EINVAL;
			break;
		}
		ret = physnode_set(p, (size_t)block, (int)node);
		if (ret < 0)
			break;
	}
	closedir(d);
	return ret;
}

static int
physnode_read_nodes(struct physnode *p)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret;

	ret = sysfs_path(dir, sizeof(dir), "devices/system/node");
	if (ret < 0)
		return ret;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? -ENOENT : -errno;
	ret = 0;
	while ((de = readdir(d)) != NULL) {
		long node = physnode_suffix(de->d_name, "node");

		/* Linux node numbers stay below MAX_NUMNODES (1024). */
		if (node < 0 || node > INT16_MAX)
			continue;
		ret = physnode_read_node(p, dir, node);
		if (ret < 0)
			break;
	}
	closedir(d);
	return ret;
}

int
physnode_new(struct physnode **out)
{
	struct physnode *p = calloc(1, sizeof(*p));
	int ret;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	ret = physnode_read_block_size(p);
	if (ret < 0)
		goto out_free;
	ret = physnode_read_nodes(p);
	if (ret < 0)
		goto out_free;
	if (p->n_blocks == 0) {
		ret = -ENOENT;
		goto out_free;
	}
	*out = p;
	return 0;

out_free:
	physnode_free(p);
	return ret;
}

int
physnode_new_empty(struct physnode **out, uint64_t block_size)
{
	struct physnode *p;

	*out = NULL;
	if (block_size == 0 || (block_size & (block_size - 1)))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->block_size = block_size;
	p->block_shift = (unsigned)__builtin_ctzll(block_size);
	*out = p;
	return 0;
}

int
physnode_add(struct physnode *p, uint64_t block, int node)
{
	/* The same cap as sysfs names: a hostile file cannot make the
	 * table gigabytes either. */
	if (block >= PHYSNODE_MAX_BLOCKS || node < 0 || node > INT16_MAX)
		return -EINVAL;
	return physnode_set(p, (size_t)block, node);
}

void
physnode_free(struct physnode *p)
{
	if (!p)
		return;
	free(p->node_of);
	free(p);
}

int
physnode_lookup(const struct physnode *p, uint64_t phys)
{
	uint64_t block;

	if (!p || phys == 0)
		return -1;
	block = phys >> p->block_shift;
	if (block >= p->n_slots)
		return -1;
	return p->node_of[block];
}

uint64_t
physnode_block_size(const struct physnode *p)
{
	return p ? p->block_size : 0;
}

size_t
physnode_n_blocks(const struct physnode *p)
{
	return p ? p->n_blocks : 0;
}

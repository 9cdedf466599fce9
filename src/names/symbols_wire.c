/*
 * The symbols helper's answer on its socket: a header, then the segments,
 * data objects, functions and name pool as they lie in memory (one
 * machine, one build, both ends).  The collector reads it against a
 * deadline and checks it before use: the helper parses untrusted files
 * and may be anyone's by the time it answers.  See symbols_int.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sandbox_int.h"
#include "symbols_int.h"

#define SYMBOLS_WIRE_MAGIC	0x6d656d73796d3032ull	/* "memsym02" */

struct symbols_wire_head {
	uint64_t magic;
	int64_t status;
	uint64_t n_loads, n_objects, n_functions, pool_len;
	uint64_t build_id_size;
	uint8_t build_id[24];		/* SYMBOLS_WIRE_BUILD_ID used */
};

int
symbols_wire_send(int sock, int status, const struct symbols_table *t)
{
	struct symbols_wire_head h = {
		.magic = SYMBOLS_WIRE_MAGIC,
		.status = status,
	};

	if (status == 0) {
		h.n_loads = t->n_loads;
		h.n_objects = t->n_objects;
		h.n_functions = t->n_functions;
		h.pool_len = t->pool_len;
		h.build_id_size = t->build_id_size;
		memcpy(h.build_id, t->build_id, sizeof(t->build_id));
	}
	if (sandbox_write(sock, &h, sizeof(h)) < 0 ||
	    sandbox_write(sock, t->loads, h.n_loads * sizeof(*t->loads)) < 0 ||
	    sandbox_write(sock, t->objects,
			       h.n_objects * sizeof(*t->objects)) < 0 ||
	    sandbox_write(sock, t->functions,
			       h.n_functions * sizeof(*t->functions)) < 0 ||
	    sandbox_write(sock, t->pool, h.pool_len) < 0)
		return -EPIPE;
	return 0;
}

/* Allocates and reads one array of n elements of size sz. */
static int
symbols_wire_array(int sock, uint64_t deadline_ns, void **arr, size_t n,
		   size_t sz)
{
	if (n == 0)
		return 0;
	*arr = malloc(n * sz);
	if (!*arr)
		return -ENOMEM;
	return sandbox_read(sock, deadline_ns, *arr, n * sz);
}

int
symbols_wire_recv(int sock, uint64_t deadline_ns, int *status,
		  struct symbols_table *t)
{
	struct symbols_wire_head h;
	int ret = sandbox_read(sock, deadline_ns, &h, sizeof(h));

	if (ret < 0)
		return ret;
	if (h.magic != SYMBOLS_WIRE_MAGIC || h.status > 0 ||
	    h.status < -4095 || h.n_loads > SYMBOLS_MAX_LOADS ||
	    h.n_objects > SYMBOLS_MAX_SYMS ||
	    h.n_functions > SYMBOLS_MAX_SYMS || h.pool_len > SYMBOLS_MAX_POOL ||
	    h.build_id_size > SYMBOLS_WIRE_BUILD_ID)
		return -EPROTO;
	memcpy(t->build_id, h.build_id, sizeof(t->build_id));
	t->build_id_size = (uint32_t)h.build_id_size;
	t->n_loads = h.n_loads;
	t->n_objects = t->cap_objects = h.n_objects;
	t->n_functions = t->cap_functions = h.n_functions;
	t->pool_len = t->pool_cap = h.pool_len;
	ret = symbols_wire_array(sock, deadline_ns, (void **)&t->loads,
				 t->n_loads, sizeof(*t->loads));
	if (ret == 0)
		ret = symbols_wire_array(sock, deadline_ns,
					 (void **)&t->objects, t->n_objects,
					 sizeof(*t->objects));
	if (ret == 0)
		ret = symbols_wire_array(sock, deadline_ns,
					 (void **)&t->functions,
					 t->n_functions, sizeof(*t->functions));
	if (ret == 0)
		ret = symbols_wire_array(sock, deadline_ns, (void **)&t->pool,
					 t->pool_len, 1);
	if (ret == 0)
		ret = symbols_table_check(t);
	if (ret < 0) {
		symbols_table_free(t);
		return ret == -ENOMEM ? -EPROTO : ret;
	}
	*status = (int)h.status;
	return 0;
}

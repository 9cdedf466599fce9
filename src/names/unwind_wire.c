/*
 * The unwind helper's wire (see unwind_int.h): the checks of a request,
 * the helper's loop, and the collector's read of an answer, which it
 * checks before use (the helper unwinds over untrusted files and may be
 * anyone's by the time it answers).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_int.h"
#include "unwind_int.h"

int
unwind_req_check(const struct unwind_req *h)
{
	if (h->magic != UNWIND_MAGIC)
		return -EPROTO;
	switch (h->kind) {
	case UNWIND_REQ_FILE:
		if (h->file >= UNWIND_FILES ||
		    !memchr(h->path, '\0', sizeof(h->path)))
			return -EPROTO;
		return 0;
	case UNWIND_REQ_WALK:
		if (h->stack_size > UNWIND_MAX_STACK || h->n_pcs)
			return -EPROTO;
		break;
	case UNWIND_REQ_NAMES:
		if (h->stack_size || h->n_pcs == 0 ||
		    h->n_pcs > UNWIND_MAX_PCS)
			return -EPROTO;
		break;
	default:
		return -EPROTO;
	}
	if (h->n_mods > UNWIND_MAX_MODS || h->max == 0 ||
	    h->max > UNWIND_MAX_PCS || h->pid <= 0)
		return -EPROTO;
	return 0;
}

int
unwind_mods_check(const struct unwind_mod *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].file >= UNWIND_FILES || m[i].start >= m[i].end)
			return -EPROTO;
	return 0;
}

/* What follows a checked request's head, in bytes. */
static size_t
unwind_req_data(const struct unwind_req *r)
{
	return r->kind == UNWIND_REQ_WALK ? r->stack_size :
	       (size_t)r->n_pcs * sizeof(uint64_t);
}

/* Reads the rest of a request, blocking: 0 or -1. */
static int
unwind_helper_read(void *buf, size_t len)
{
	int fd;

	if (len == 0)
		return 0;
	if (sandbox_recv(SANDBOX_SOCK, buf, len, &fd) < 0)
		return -1;
	if (fd >= 0)
		close(fd);	/* none belongs here */
	return fd >= 0 ? -1 : 0;
}

static void
unwind_helper_answer(int status, const struct unwind_frame *f, uint32_t n)
{
	struct unwind_ans_head a = { .magic = UNWIND_MAGIC, .status = status,
				     .n = n };

	if (sandbox_write(SANDBOX_SOCK, &a, sizeof(a)) < 0 ||
	    sandbox_write(SANDBOX_SOCK, f, n * sizeof(*f)) < 0)
		_exit(0);
}

/* The helper's loop: a bad request ends it (the collector sees it die). */
void
unwind_helper_main(void)
{
	static struct unwind_mod mods[UNWIND_MAX_MODS];
	static unsigned char data[UNWIND_MAX_STACK];
	static struct unwind_frame out[UNWIND_MAX_PCS];
	struct unwind_helper *h = unwind_helper_new();
	struct unwind_req r;
	int fd, n;

	if (!h)
		_exit(1);
	for (;;) {
		if (sandbox_recv(SANDBOX_SOCK, &r, sizeof(r), &fd) < 0 ||
		    unwind_req_check(&r) < 0)
			_exit(0);
		if (r.kind == UNWIND_REQ_FILE) {
			if (fd < 0)
				_exit(0);
			unwind_helper_file(h, r.file, fd, r.path);
			continue;
		}
		if (fd >= 0 ||
		    unwind_helper_read(mods, r.n_mods * sizeof(*mods)) < 0 ||
		    unwind_mods_check(mods, r.n_mods) < 0 ||
		    unwind_helper_read(data, unwind_req_data(&r)) < 0)
			_exit(0);
		n = unwind_helper_serve(h, &r, mods, data, out);
		unwind_helper_answer(n < 0 ? n : 0, out,
				     n < 0 ? 0 : (uint32_t)n);
	}
}

int
unwind_ans_recv(int sock, uint64_t deadline_ns, struct unwind_frame *out,
		size_t max, int *status)
{
	struct unwind_ans_head a;
	int ret = sandbox_read(sock, deadline_ns, &a, sizeof(a));

	if (ret < 0)
		return ret;
	if (a.magic != UNWIND_MAGIC || a.status > 0 || a.status < -4095 ||
	    a.n > max || (a.status < 0 && a.n))
		return -EPROTO;
	ret = sandbox_read(sock, deadline_ns, out, a.n * sizeof(*out));
	if (ret < 0)
		return ret;
	/* Names terminated, flags 0 or 1: a bool holding anything else is
	 * undefined behaviour to read. */
	for (uint32_t i = 0; i < a.n; i++) {
		unsigned char b;

		memcpy(&b, &out[i].allocator, 1);
		if (!memchr(out[i].name, '\0', sizeof(out[i].name)) || b > 1)
			return -EPROTO;
	}
	*status = a.status;
	return (int)a.n;
}

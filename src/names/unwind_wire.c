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
#include <sys/socket.h>
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

/*
 * The helper's socket, buffered both ways: a burst of requests is read in
 * one call, and their answers go out in one write when the helper is
 * about to wait for more.  Descriptors come with the first byte of their
 * FILE request, in order: a queue pairs them.
 */
#define UNWIND_IN	(1u << 20)	/* > the largest request */
#define UNWIND_OUT	(256u << 10)
#define UNWIND_FDQ	16

struct unwind_io {
	unsigned char in[UNWIND_IN];
	size_t off, len;
	unsigned char out[UNWIND_OUT];
	size_t olen;
	int fds[UNWIND_FDQ];
	size_t nfd;
};

static void
unwind_io_flush(struct unwind_io *io)
{
	if (io->olen && sandbox_write(SANDBOX_SOCK, io->out, io->olen) < 0)
		_exit(0);
	io->olen = 0;
}

static void
unwind_io_put(struct unwind_io *io, const void *buf, size_t len)
{
	if (io->olen + len > sizeof(io->out))
		unwind_io_flush(io);
	memcpy(io->out + io->olen, buf, len);
	io->olen += len;
}

/* Reads what is there (waiting when nothing is): -1 at EOF. */
static int
unwind_io_fill(struct unwind_io *io)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(UNWIND_FDQ * sizeof(int))];
	} u;
	struct iovec iov;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	ssize_t n;

	memmove(io->in, io->in + io->off, io->len - io->off);
	io->len -= io->off;
	io->off = 0;
	unwind_io_flush(io);	/* the answers, before waiting */
	iov.iov_base = io->in + io->len;
	iov.iov_len = sizeof(io->in) - io->len;
	do
		n = recvmsg(SANDBOX_SOCK, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || (msg.msg_flags & MSG_CTRUNC))
		return -1;
	io->len += (size_t)n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
	     c = CMSG_NXTHDR(&msg, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    io->nfd + k > UNWIND_FDQ)
			return -1;
		memcpy(io->fds + io->nfd, CMSG_DATA(c), k * sizeof(int));
		io->nfd += k;
	}
	return 0;
}

/* n bytes buffered at io->in + io->off: 0, or -1 at EOF. */
static int
unwind_io_need(struct unwind_io *io, size_t n)
{
	while (io->len - io->off < n)
		if (unwind_io_fill(io) < 0)
			return -1;
	return 0;
}

/* A FILE request's descriptor: the oldest received. */
static int
unwind_io_fd(struct unwind_io *io)
{
	int fd;

	if (io->nfd == 0)
		return -1;
	fd = io->fds[0];
	memmove(io->fds, io->fds + 1, --io->nfd * sizeof(int));
	return fd;
}

static void
unwind_helper_answer(struct unwind_io *io, int status,
		     const struct unwind_frame *f, uint32_t n)
{
	struct unwind_ans_head a = { .magic = UNWIND_MAGIC, .status = status,
				     .n = n };

	unwind_io_put(io, &a, sizeof(a));
	unwind_io_put(io, f, n * sizeof(*f));
}

/* The helper's loop: a bad request ends it (the collector sees it die). */
void
unwind_helper_main(void)
{
	static struct unwind_io io;
	static struct unwind_mod mods[UNWIND_MAX_MODS];
	static struct unwind_frame out[UNWIND_MAX_PCS];
	struct unwind_helper *h = unwind_helper_new();
	struct unwind_req r;
	size_t need;
	int fd, n;

	if (!h)
		_exit(1);
	for (;;) {
		if (unwind_io_need(&io, sizeof(r)) < 0)
			_exit(0);
		memcpy(&r, io.in + io.off, sizeof(r));
		if (unwind_req_check(&r) < 0)
			_exit(0);
		if (r.kind == UNWIND_REQ_FILE) {
			fd = unwind_io_fd(&io);
			if (fd < 0)
				_exit(0);
			io.off += sizeof(r);
			unwind_helper_file(h, r.file, fd, r.path);
			continue;
		}
		need = sizeof(r) + r.n_mods * sizeof(*mods) +
		       unwind_req_data(&r);
		if (unwind_io_need(&io, need) < 0)
			_exit(0);
		/* Copied out: the buffer keeps no alignment. */
		memcpy(mods, io.in + io.off + sizeof(r),
		       r.n_mods * sizeof(*mods));
		if (unwind_mods_check(mods, r.n_mods) < 0)
			_exit(0);
		n = unwind_helper_serve(h, &r, mods, io.in + io.off + sizeof(r) +
					r.n_mods * sizeof(*mods), out);
		io.off += need;
		unwind_helper_answer(&io, n < 0 ? n : 0, out,
				     n < 0 ? 0 : (uint32_t)n);
	}
}

int
unwind_ans_recv(struct sandbox *sb, uint64_t deadline_ns,
		struct unwind_frame *out, size_t max, int *status)
{
	struct unwind_ans_head a;
	int ret = sandbox_read_buf(sb, deadline_ns, &a, sizeof(a));

	if (ret < 0)
		return ret;
	if (a.magic != UNWIND_MAGIC || a.status > 0 || a.status < -4095 ||
	    a.n > max || (a.status < 0 && a.n))
		return -EPROTO;
	ret = sandbox_read_buf(sb, deadline_ns, out, a.n * sizeof(*out));
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

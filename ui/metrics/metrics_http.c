/*
 * The --listen endpoint: GET and HEAD /metrics through libmicrohttpd
 * (a packaged, fuzzed HTTP parser rather than one of memtop's own).
 *
 * Threads: metrics_http_start and metrics_http_stop run on the main
 * thread; requests are served on libmicrohttpd's one internal thread,
 * which renders each scrape from the latest snapshot (metrics_get) and
 * so never holds the exporter's lock while rendering.  The collector
 * thread never sees any of this.
 *
 * Hostile clients: at most METRICS_HTTP_CONNECTIONS connections, each
 * closed after METRICS_HTTP_TIMEOUT_S seconds without traffic, and a
 * request (line and headers) larger than METRICS_HTTP_MEMORY refused by
 * libmicrohttpd with a 4xx before the handler sees it.  Unknown paths
 * get 404, other methods 405.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "metrics_int.h"

#define METRICS_HTTP_CONNECTIONS	32
#define METRICS_HTTP_TIMEOUT_S		5
#define METRICS_HTTP_MEMORY		(16 * 1024)
#define METRICS_HTTP_BACKLOG		64
#define METRICS_HTTP_PATH		"/metrics"

#define MEDIA_OM	"application/openmetrics-text"
#define MEDIA_TEXT	"text/plain"

/* Skips spaces and tabs. */
static const char *
metrics_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* Whether the parameter [s, end) is name=value; the value, without
 * surrounding blanks, in *v and *vlen. */
static bool
metrics_param(const char *s, const char *end, const char *name,
	      const char **v, size_t *vlen)
{
	size_t n = strlen(name);

	s = metrics_ws(s, end);
	if ((size_t)(end - s) <= n || strncasecmp(s, name, n) != 0 ||
	    s[n] != '=')
		return false;
	*v = s + n + 1;
	*vlen = (size_t)(end - *v);
	while (*vlen && ((*v)[*vlen - 1] == ' ' || (*v)[*vlen - 1] == '\t'))
		(*vlen)--;
	return true;
}

/*
 * One media range of an Accept header, the n bytes at s: sets *q (1
 * unless given) and *ver (NULL when absent).  Returns the media type's
 * length.
 */
static size_t
metrics_media(const char *s, size_t n, double *q, const char **ver,
	      size_t *ver_len)
{
	const char *end = s + n;
	const char *p = memchr(s, ';', n);
	const char *type_end = p ? p : end;

	*q = 1.0;
	*ver = NULL;
	*ver_len = 0;
	while (type_end > s && (type_end[-1] == ' ' || type_end[-1] == '\t'))
		type_end--;
	while (p) {
		const char *start = p + 1;
		const char *next = start < end ?
			memchr(start, ';', (size_t)(end - start)) : NULL;
		const char *pend = next ? next : end;
		const char *v;
		size_t vlen;
		char num[16];

		if (metrics_param(start, pend, "q", &v, &vlen) &&
		    vlen < sizeof(num)) {
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			*q = strtod(num, NULL);
		} else if (metrics_param(start, pend, "version", &v, &vlen)) {
			*ver = v;
			*ver_len = vlen;
		}
		p = next;
	}
	return (size_t)(type_end - s);
}

static bool
metrics_is(const char *s, size_t n, const char *word)
{
	return n == strlen(word) && strncasecmp(s, word, n) == 0;
}

static bool
metrics_version_ok(const char *v, size_t n, const char *const *ok)
{
	if (!v)
		return true;
	for (; *ok; ok++)
		if (metrics_is(v, n, *ok))
			return true;
	return false;
}

enum metrics_format
metrics_negotiate(const char *accept)
{
	static const char *const om_versions[] = { "1.0.0", "0.0.1", NULL };
	static const char *const text_versions[] = { "0.0.4", NULL };
	double q_om = 0, q_text = 0;

	if (!accept)
		return METRICS_TEXT;
	for (const char *s = accept; *s;) {
		size_t n = strcspn(s, ",");
		size_t skip = strspn(s, " \t");
		const char *ver, *type;
		size_t len, vlen;
		double q;

		skip = skip < n ? skip : n;
		type = s + skip;
		len = metrics_media(type, n - skip, &q, &ver, &vlen);
		if (metrics_is(type, len, MEDIA_OM) &&
		    metrics_version_ok(ver, vlen, om_versions))
			q_om = q > q_om ? q : q_om;
		else if ((metrics_is(type, len, MEDIA_TEXT) &&
			  metrics_version_ok(ver, vlen, text_versions)) ||
			 metrics_is(type, len, "text/*") ||
			 metrics_is(type, len, "*/*"))
			q_text = q > q_text ? q : q_text;
		s += n + (s[n] == ',');
	}
	return q_om > 0 && q_om >= q_text ? METRICS_OPENMETRICS : METRICS_TEXT;
}

/* libmicrohttpd's diagnostics go to the log, one line each. */
static void
metrics_http_log(void *cls, const char *fmt, va_list ap)
{
	char buf[256];
	size_t n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_msg("--listen: %s", buf);
}

/* A short plain-text answer (404, 405, 503). */
static enum MHD_Result
metrics_http_status(struct MHD_Connection *c, unsigned status,
		    const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The scrape: the latest snapshot in the format Accept asks for. */
static enum MHD_Result
metrics_http_scrape(struct metrics *m, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		MHD_HTTP_HEADER_ACCEPT);
	enum metrics_format fmt = metrics_negotiate(accept);
	struct metrics_snap *s = metrics_get(m);
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len = 0;
	char *body = metrics_render(s, fmt, &len);

	metrics_put(m, s);
	if (!body)
		return metrics_http_status(c, MHD_HTTP_SERVICE_UNAVAILABLE,
					   "out of memory\n");
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				metrics_content_type(fmt));
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Whether the request announces a body. */
static bool
metrics_http_has_body(struct MHD_Connection *c)
{
	const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (len && strcmp(len, "0") != 0) ||
	       MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		       MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/*
 * Every request, called once when its headers are in and again for its
 * body.  A scrape is answered on the second call: an answer on the first
 * makes libmicrohttpd close the connection (it has not seen the end of
 * the request), which is right for refusals and wasteful for Prometheus,
 * which keeps its connection.  A HEAD gets the GET's headers without the
 * body (libmicrohttpd leaves it out); a request that announces a body is
 * refused before the body is read.
 */
static enum MHD_Result
metrics_http_request(void *cls, struct MHD_Connection *c, const char *url,
		     const char *method, const char *version,
		     const char *upload, size_t *upload_size, void **req)
{
	static int seen;

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return metrics_http_status(c, MHD_HTTP_METHOD_NOT_ALLOWED,
					   "only GET and HEAD\n");
	if (strcmp(url, METRICS_HTTP_PATH) != 0)
		return metrics_http_status(c, MHD_HTTP_NOT_FOUND,
					   "not found: memtop serves "
					   METRICS_HTTP_PATH "\n");
	if (*req)
		return metrics_http_scrape(cls, c);
	/* libmicrohttpd takes an answer only before it reads a body or
	 * once it has read all of it: refuse a body before it is read. */
	if (metrics_http_has_body(c))
		return metrics_http_status(c, MHD_HTTP_BAD_REQUEST,
					   "a request body is not accepted\n");
	*req = &seen;
	return MHD_YES;
}

/* The listening socket, bound here so that a failure names the errno
 * (libmicrohttpd only logs it). */
static int
metrics_http_socket(const struct cli_listen *l, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int fd, one = 1, ret;

	if (l->family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(l->port);
		memcpy(&a->sin6_addr, l->addr, 16);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(l->port);
		memcpy(&a->sin_addr, l->addr, 4);
		sl = sizeof(*a);
	}
	fd = socket(l->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "--listen %s: socket: %s", l->text,
			 strerror(-ret));
		return ret;
	}
	/* SO_REUSEADDR lets memtop restart while old connections linger in
	 * TIME_WAIT; it does not let two listeners share a port. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l->family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 ||
	    listen(fd, METRICS_HTTP_BACKLOG) < 0) {
		ret = -errno;
		snprintf(err, errlen, "--listen %s: %s", l->text,
			 strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

int
metrics_http_start(struct metrics *m, const struct cli_listen *l, char *err,
		   size_t errlen)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
			 MHD_USE_ERROR_LOG;
	int fd = metrics_http_socket(l, err, errlen);

	if (fd < 0)
		return fd;
	if (l->family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m->daemon = MHD_start_daemon(flags, 0, NULL, NULL,
		metrics_http_request, m,
		MHD_OPTION_EXTERNAL_LOGGER, metrics_http_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
		MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)METRICS_HTTP_CONNECTIONS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_HTTP_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)METRICS_HTTP_MEMORY,
		MHD_OPTION_END);
	if (!m->daemon) {
		close(fd);
		snprintf(err, errlen, "--listen %s: the HTTP server did not "
			 "start (see --log)", l->text);
		return -EIO;
	}
	snprintf(m->listen_text, sizeof(m->listen_text), "%s", l->text);
	log_msg("--listen: serving http://%s%s", l->text, METRICS_HTTP_PATH);
	return 0;
}

void
metrics_http_stop(struct metrics *m)
{
	/* Waits for the request in progress; closes every connection and
	 * the listening socket. */
	if (m->daemon)
		MHD_stop_daemon(m->daemon);
	m->daemon = NULL;
}

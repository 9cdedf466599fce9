/* Any thread.  See keysort.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "keysort.h"

static uint64_t
keysort_key(const struct keysort_item *it, bool hi)
{
	return hi ? it->hi : it->lo;
}

/* One stable counting pass on byte b of the hi or lo key, from src to
 * dst; false when every item has the same byte there (nothing moved). */
static bool
keysort_pass(const struct keysort_item *src, struct keysort_item *dst,
	     size_t n, bool hi, unsigned b)
{
	size_t count[256] = { 0 }, at = 0;
	unsigned shift = b * 8;

	for (size_t i = 0; i < n; i++)
		count[keysort_key(&src[i], hi) >> shift & 0xff]++;
	for (unsigned d = 0; d < 256; d++) {
		size_t c = count[d];

		if (c == n)
			return false;
		count[d] = at;
		at += c;
	}
	for (size_t i = 0; i < n; i++)
		dst[count[keysort_key(&src[i], hi) >> shift & 0xff]++] = src[i];
	return true;
}

int
keysort(struct keysort_item *v, size_t n)
{
	struct keysort_item *tmp, *src = v, *dst;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	/* Least significant first: lo's bytes, then hi's. */
	for (int k = 0; k < 16; k++) {
		bool hi = k >= 8;

		if (keysort_pass(src, dst, n, hi, (unsigned)(k % 8))) {
			struct keysort_item *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	return 0;
}

int
keysort_array(void *v, size_t n, size_t size, keysort_key_fn key,
	      const void *ctx)
{
	struct keysort_item *k = malloc((n ? n : 1) * sizeof(*k));
	char *sorted = malloc((n ? n : 1) * size), *in = v;
	int ret = k && sorted ? 0 : -ENOMEM;

	for (size_t i = 0; ret == 0 && i < n; i++) {
		key(in + i * size, ctx, &k[i].hi, &k[i].lo);
		k[i].index = i;
	}
	if (ret == 0)
		ret = keysort(k, n);
	for (size_t i = 0; ret == 0 && i < n; i++)
		memcpy(sorted + i * size, in + k[i].index * size, size);
	if (ret == 0 && n)
		memcpy(v, sorted, n * size);
	free(sorted);
	free(k);
	return ret;
}

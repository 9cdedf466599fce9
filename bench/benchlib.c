/* Benchmark helpers; see benchlib.h.  Single-threaded. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"

uint64_t
benchlib_rand(struct benchlib_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double
benchlib_uniform(struct benchlib_rng *r)
{
	return (double)((benchlib_rand(r) >> 11) + 1) * 0x1.0p-53;
}

/*
 * With density h(x) = x^-s, H is its integral (x^(1-s) - 1) / (1 - s)
 * and Hinv the inverse.  Written for s != 1 (the benchmarks use 0.99).
 */
static double
benchlib_zipf_H(double s, double x)
{
	return (pow(x, 1.0 - s) - 1.0) / (1.0 - s);
}

static double
benchlib_zipf_Hinv(double s, double y)
{
	double base = 1.0 + y * (1.0 - s);

	return pow(base > 0 ? base : 0, 1.0 / (1.0 - s));
}

void
benchlib_zipf_init(struct benchlib_zipf *z, double s, size_t n)
{
	if (s == 1.0)
		s = 0.999999;
	z->s = s;
	z->n = (double)n;
	z->lo = benchlib_zipf_H(s, 1.5) - 1.0;
	z->hi = benchlib_zipf_H(s, z->n + 0.5);
	z->sure = 2.0 - benchlib_zipf_Hinv(s, benchlib_zipf_H(s, 2.5) -
					   pow(2.0, -s));
}

/*
 * Draw u uniformly from the integral's range, map it back to x, and take
 * the nearest rank k unless u fell where the continuous integral over
 * [k - 1/2, k + 1/2] exceeds the rank's true mass h(k).
 */
size_t
benchlib_zipf_draw(const struct benchlib_zipf *z, struct benchlib_rng *r)
{
	for (;;) {
		double u = z->hi + benchlib_uniform(r) * (z->lo - z->hi);
		double x = benchlib_zipf_Hinv(z->s, u);
		double k = floor(x + 0.5);

		if (k < 1.0)
			k = 1.0;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->sure ||
		    u >= benchlib_zipf_H(z->s, k + 0.5) - pow(k, -z->s))
			return (size_t)k - 1;
	}
}

uint32_t *
benchlib_permutation(size_t n, struct benchlib_rng *r)
{
	uint32_t *perm = malloc((n ? n : 1) * sizeof(*perm));

	if (!perm)
		return NULL;
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = n; i > 1; i--) {
		size_t j = benchlib_rand(r) % i;
		uint32_t tmp = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = tmp;
	}
	return perm;
}

double
benchlib_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t
benchlib_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
benchlib_rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

size_t
benchlib_quick_divisor(int argc, char **argv)
{
	size_t divisor = 1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") != 0) {
			fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
			return 0;
		}
		divisor = 100;
	}
	return divisor;
}

void
benchlib_print_machine(void)
{
	char line[256], model[256] = "unknown CPU";
	struct utsname u;
	FILE *f;

	if (uname(&u) != 0) {
		strcpy(u.machine, "?");
		strcpy(u.release, "?");
	}
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) != 0 || !colon)
			continue;
		snprintf(model, sizeof(model), "%s", colon + 2);
		model[strcspn(model, "\n")] = '\0';
		break;
	}
	if (f)
		fclose(f);
	printf("machine: %s, %s, %ld CPUs online, kernel %s\n", u.machine,
	       model, sysconf(_SC_NPROCESSORS_ONLN), u.release);
	printf("build: %s\n", MEMTOP_BUILD);
}

int
benchlib_ring_init(struct benchlib_ring *br, unsigned data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *meta;
	int ret;

	memset(br, 0, sizeof(*br));
	br->map_len = (1 + (size_t)data_pages) * page;
	br->map = mmap(NULL, br->map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (br->map == MAP_FAILED) {
		br->map = NULL;
		return -errno;
	}
	meta = br->map;
	meta->data_offset = page;
	meta->data_size = (uint64_t)data_pages * page;
	ret = ring_init(&br->ring, br->map, br->map_len, page);
	if (ret < 0)
		benchlib_ring_fini(br);
	return ret;
}

void
benchlib_ring_fini(struct benchlib_ring *br)
{
	ring_fini(&br->ring);
	if (br->map)
		munmap(br->map, br->map_len);
	br->map = NULL;
}

uint64_t
benchlib_ring_room(const struct benchlib_ring *br)
{
	uint64_t tail = __atomic_load_n(&br->ring.meta->data_tail,
					__ATOMIC_ACQUIRE);

	return br->ring.data_size - (br->head - tail);
}

void
benchlib_ring_put(struct benchlib_ring *br, const void *rec, size_t size)
{
	uint64_t off = br->head & (br->ring.data_size - 1);
	uint64_t first = br->ring.data_size - off;

	/* A record may straddle the end, as the kernel writes them. */
	if (first >= size) {
		memcpy(br->ring.data + off, rec, size);
	} else {
		memcpy(br->ring.data + off, rec, first);
		memcpy(br->ring.data, (const unsigned char *)rec + first,
		       size - first);
	}
	br->head += size;
}

void
benchlib_ring_publish(struct benchlib_ring *br)
{
	__atomic_store_n(&br->ring.meta->data_head, br->head,
			 __ATOMIC_RELEASE);
}

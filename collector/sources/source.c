/*
 * Source selection, event opening and sample decoding shared by every
 * source.  The per-source event tables live in source_<name>.c.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "cpulist.h"
#include "procfs.h"
#include "source.h"
#include "source_hw.h"
#include "sysfs.h"

static int
source_perf_event_open(struct perf_event_attr *attr, int pid, int cpu,
		       int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			  flags);

	return fd < 0 ? -errno : (int)fd;
}

bool
source_event_on_cpu(const struct event_spec *ev, int cpu)
{
	struct cpulist l;

	if (!ev->cpus[0] || cpulist_parse(ev->cpus, &l) < 0)
		return true;
	return cpulist_has(&l, cpu);
}

int
source_open_event(const struct event_spec *ev, const struct open_params *p)
{
	struct perf_event_attr attr = ev->attr;
	unsigned long flags;
	int fd;

	attr.size = sizeof(attr);
	attr.disabled = 1;
	attr.enable_on_exec = p->enable_on_exec;
	attr.sample_period = p->period;
	attr.freq = 0;
	attr.sample_id_all = 1;
	attr.task = p->want_task;
	attr.comm = p->want_task || p->want_mmap;
	attr.comm_exec = attr.comm;
	/* Every mapping (data too) as MMAP2, with device and inode.  Not
	 * attr.build_id: the kernel then sets PERF_RECORD_MISC_MMAP_BUILD_ID
	 * in the record it shares with every other event of the task, and
	 * a perf record of the same process at the same time gets MMAP2s
	 * flagged so but holding an inode (seen on 6.18: perf report then
	 * fails its build-id assertions).  Files are proven by inode
	 * instead, and --record lists their build ids (recorder.c). */
	attr.mmap = p->want_mmap;
	attr.mmap2 = p->want_mmap;
	attr.mmap_data = p->want_mmap;
	attr.inherit = p->inherit;
	/* One clock for every event: SET_OUTPUT requires it, and FORK times
	 * can then be compared with clock_gettime() to measure birth gaps. */
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	if (p->watermark_bytes) {
		attr.watermark = 1;
		attr.wakeup_watermark = p->watermark_bytes;
	}
	/* The event's own count of records it could not write (Linux 6.0),
	 * read when a channel closes and at every frame: LOST records come
	 * only with the next record that fits, so losses just before a
	 * thread exits would otherwise go unreported (channel.h).  Older
	 * kernels refuse the bit: open without it. */
	attr.read_format |= PERF_FORMAT_LOST;
	flags = PERF_FLAG_FD_CLOEXEC | (p->pid_cgroup ? PERF_FLAG_PID_CGROUP :
						       0);
	fd = source_perf_event_open(&attr, p->pid, p->cpu, p->group_fd, flags);
	if (fd == -EINVAL && !(ev->attr.read_format & PERF_FORMAT_LOST)) {
		attr.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
		fd = source_perf_event_open(&attr, p->pid, p->cpu,
					    p->group_fd, flags);
	}
	return fd;
}

int
source_probe_event(const struct event_spec *ev)
{
	struct open_params p = { .pid = 0, .cpu = -1, .group_fd = -1,
				 .period = 1 };
	int fd = source_open_event(ev, &p);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

void
source_layout(const struct event_spec *ev, struct record_layout *l)
{
	l->sample_type = ev->attr.sample_type;
	l->read_format = ev->attr.read_format;
	l->sample_id_all = true;
	l->branch_sample_type = ev->attr.branch_sample_type;
	l->sample_regs_user = ev->attr.sample_regs_user;
	l->sample_regs_intr = ev->attr.sample_regs_intr;
}

static uint64_t
source_raw_u64(const struct record_sample *rs, int off)
{
	uint64_t v = 0;

	if (off >= 0 && rs->raw && (uint32_t)off + 8 <= rs->raw_size)
		memcpy(&v, (const unsigned char *)rs->raw + off, sizeof(v));
	return v;
}

int
source_decode(const struct source *src, const struct event_spec *ev,
	      const struct record_sample *rs, uint64_t period,
	      struct sample *out)
{
	uint64_t err = 0;

	out->ip = rs->ip;
	out->time = rs->time;
	out->pid = (int32_t)rs->pid;
	out->tid = (int32_t)rs->tid;
	out->cpu = (rs->present & PERF_SAMPLE_CPU) ? (int32_t)rs->cpu : -1;
	out->period = src->period_in_sample && rs->period ? rs->period : period;
	out->weight = rs->weight;
	out->data_src = rs->data_src;
	out->phys_addr = rs->phys_addr;
	out->addr = rs->addr;

	if (ev->role == ROLE_FAULT_TP) {
		out->addr = source_raw_u64(rs, ev->tp_addr_off);
		out->ip = source_raw_u64(rs, ev->tp_ip_off);
		err = source_raw_u64(rs, ev->tp_error_off);
	}
	return source_classify(ev, out, err);
}

/* pebs, ibs or faults alone; why = "<name>: <status>" on failure. */
static int
source_init_one(enum source_choice choice, const struct source_opts *opt,
		struct source *src, char *why, size_t whylen)
{
	char status[384];
	int ret;

	switch (choice) {
	case SOURCE_PEBS:
		ret = source_pebs_init(src, opt->ldlat, status,
				       sizeof(status));
		break;
	case SOURCE_IBS:
		ret = source_ibs_init(src, status, sizeof(status));
		break;
	case SOURCE_DAMON:
		if (opt->cgroups || opt->record) {
			snprintf(status, sizeof(status), "%s", opt->record ?
				 "--record writes perf events and DAMON has "
				 "none (fix: drop --record, or record the "
				 "damon:damon_aggregated tracepoint with perf "
				 "record)" : "-G and -C watch part of the "
				 "machine; DAMON's paddr context sees all "
				 "physical memory (fix: -a alone, or -p PID)");
			ret = -EOPNOTSUPP;
			break;
		}
		ret = source_damon_init(src, opt->system, status,
					sizeof(status));
		break;
	case SOURCE_FAULTS:
	case SOURCE_AUTO:
	default:
		return source_faults_init(src, why, whylen);
	}
	if (ret < 0)
		snprintf(why, whylen, "%s: %s",
			 choice == SOURCE_PEBS ? "pebs" :
			 choice == SOURCE_IBS ? "ibs" : "damon", status);
	return ret;
}

/*
 * -e auto: pebs, ibs, damon, then faults, the first that opens.  The note
 * ends with why the better ones were not taken, for the header.
 */
static int
source_select_auto(const struct source_opts *opt, struct source *src,
		   char *why, size_t whylen)
{
	static const enum source_choice order[] = {
		SOURCE_PEBS, SOURCE_IBS, SOURCE_DAMON, SOURCE_FAULTS,
	};
	char reasons[ARRAY_SIZE(order)][512], spe[200];
	int ret = -ENODEV;

	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		ret = source_init_one(order[i], opt, src, reasons[i],
				      sizeof(reasons[i]));
		if (ret != 0)
			continue;
		if (i == 0)
			return 0;
		source_hw_note(src, " [auto chose %s", src->name);
		for (size_t j = 0; j < i; j++)
			source_hw_note(src, "; %s", reasons[j]);
		if (source_spe_status(spe, sizeof(spe)) == -EOPNOTSUPP)
			source_hw_note(src, "; spe: %s]", spe);
		else
			source_hw_note(src, "]");
		return 0;
	}
	snprintf(why, whylen, "no source opens: %s; %s; %s; %s", reasons[0],
		 reasons[1], reasons[2], reasons[3]);
	return ret;
}

int
source_select_opts(const struct source_opts *opt, struct source *src,
		   char *why, size_t whylen)
{
	uint64_t period;
	int ret;

	memset(src, 0, sizeof(*src));
	if (opt->choice == SOURCE_AUTO)
		ret = source_select_auto(opt, src, why, whylen);
	else
		ret = source_init_one(opt->choice, opt, src, why, whylen);
	if (ret == 0 && opt->objects)
		(void)source_alloc_init(src);
	else if (ret == 0)
		snprintf(src->alloc_note, sizeof(src->alloc_note),
			 "objects: off for whole-machine views (-a, -G)");
	if (ret < 0 || opt->period == 0)
		return ret;
	period = source_period(src, opt->period);
	if (period != opt->period) {
		source_hw_note(src, "; period %llu adjusted to %llu (a "
			       "multiple of %llu, at least %llu)",
			       (unsigned long long)opt->period,
			       (unsigned long long)period,
			       (unsigned long long)src->period_step,
			       (unsigned long long)src->period_min);
	}
	return 0;
}

int
source_select(enum source_choice choice, struct source *src, char *why,
	      size_t whylen)
{
	struct source_opts opt = { .choice = choice };

	return source_select_opts(&opt, src, why, whylen);
}

uint64_t
source_period(const struct source *src, uint64_t want)
{
	uint64_t p = want ? want : src->default_period;

	if (src->period_step > 1)
		p -= p % src->period_step;
	if (p < src->period_min)
		p = src->period_min;
	return p ? p : 1;
}

void
source_explain_error(int err, const char *what, int pid, char *buf,
		     size_t len)
{
	int paranoid = procfs_read_int("/proc/sys/kernel/perf_event_paranoid",
				       99);
	struct rlimit rl;

	switch (err) {
	case EACCES:
	case EPERM:
		if (geteuid() != 0 && paranoid > 2) {
			snprintf(buf, len,
				 "%s, pid %d: %s; kernel.perf_event_paranoid "
				 "is %d, set it to 2 (sysctl -w "
				 "kernel.perf_event_paranoid=2) or grant "
				 "CAP_PERFMON", what, pid, strerror(err),
				 paranoid);
		} else if (geteuid() != 0 && pid > 0 &&
			   procfs_pid_uid(pid) != (int)getuid()) {
			snprintf(buf, len,
				 "%s, pid %d: %s; the process belongs to "
				 "another user: run memtop as that user or "
				 "as root, or grant CAP_PERFMON (and check "
				 "kernel.yama.ptrace_scope)", what, pid,
				 strerror(err));
		} else {
			snprintf(buf, len,
				 "%s, pid %d: %s; kernel.perf_event_paranoid "
				 "is %d: this event needs CAP_PERFMON or a "
				 "lower setting", what, pid, strerror(err),
				 paranoid);
		}
		break;
	case EMFILE:
	case ENFILE:
		getrlimit(RLIMIT_NOFILE, &rl);
		snprintf(buf, len,
			 "%s, pid %d: %s; raise RLIMIT_NOFILE (ulimit -n, "
			 "now %llu)", what, pid, strerror(err),
			 (unsigned long long)rl.rlim_cur);
		break;
	case ESRCH:
		snprintf(buf, len, "%s, pid %d: %s; no such process", what,
			 pid, strerror(err));
		break;
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		snprintf(buf, len,
			 "%s, pid %d: %s; the event is not supported by "
			 "this CPU/kernel", what, pid, strerror(err));
		break;
	case EINVAL:
		snprintf(buf, len,
			 "%s, pid %d: %s; the kernel refused the event's "
			 "attributes (hardware PMUs reject a period below "
			 "their minimum instead of rounding it: try a larger "
			 "-c)", what, pid, strerror(err));
		break;
	default:
		snprintf(buf, len, "%s, pid %d: %s", what, pid, strerror(err));
		break;
	}
}

/* CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in the effective set
 * (include/uapi/linux/capability.h), from /proc/self/status. */
static bool
source_has_perfmon(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return (caps >> 38 & 1) || (caps >> 21 & 1);
}

void
source_explain_cpu_error(int err, const char *what, int cpu, char *buf,
			 size_t len)
{
	int paranoid = procfs_read_int("/proc/sys/kernel/perf_event_paranoid",
				       99);
	const char *hint = "";
	char limit[64] = "";
	struct rlimit rl;

	if ((err == EACCES || err == EPERM) && !source_has_perfmon()) {
		snprintf(buf, len,
			 "%s on CPU %d: %s; watching every process (-a, -G, "
			 "-C) needs CAP_PERFMON (or root) or "
			 "kernel.perf_event_paranoid <= 0 (now %d): run as "
			 "root, grant it (setcap cap_perfmon+ep memtop) or "
			 "sysctl -w kernel.perf_event_paranoid=0", what, cpu,
			 strerror(err), paranoid);
		return;
	}
	switch (err) {
	case ENODEV:
		hint = "; the CPU is offline, or the event is not supported "
		       "by this CPU";
		break;
	case EMFILE:
	case ENFILE:
		getrlimit(RLIMIT_NOFILE, &rl);
		snprintf(limit, sizeof(limit), "; raise RLIMIT_NOFILE (ulimit "
			 "-n, now %llu)", (unsigned long long)rl.rlim_cur);
		hint = limit;
		break;
	case EINVAL:
		hint = "; the kernel refused the event's attributes";
		break;
	default:
		break;
	}
	snprintf(buf, len, "%s on CPU %d: %s%s", what, cpu, strerror(err),
		 hint);
}

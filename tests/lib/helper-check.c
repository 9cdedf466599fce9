/* See helper-check.h. */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper-check.h"
#include "testlib.h"

const char *
helper_status(int32_t pid, const char *key, char *out, size_t cap)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return out;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			const char *v = line + klen + 1;

			v += strspn(v, " \t");
			snprintf(out, cap, "%.*s", (int)strcspn(v, "\n"), v);
			break;
		}
	}
	fclose(f);
	return out;
}

void
helper_check_confined(int32_t pid)
{
	struct passwd *pw = getpwnam("nobody");
	char v[256], want[128];
	unsigned uid = pw ? pw->pw_uid : 65534, gid = pw ? pw->pw_gid : 65534;

	check(pid > 0);
	check_eq_str(helper_status(pid, "Seccomp", v, sizeof(v)), "2");
	check_eq_str(helper_status(pid, "NoNewPrivs", v, sizeof(v)), "1");
	if (getuid() != 0) {
		printf("# not root: the helper keeps uid %u\n",
		       (unsigned)getuid());
		return;
	}
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", uid, uid, uid, uid);
	check_eq_str(helper_status(pid, "Uid", v, sizeof(v)), want);
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", gid, gid, gid, gid);
	check_eq_str(helper_status(pid, "Gid", v, sizeof(v)), want);
	check_eq_str(helper_status(pid, "Groups", v, sizeof(v)), "");
	check_eq_str(helper_status(pid, "CapEff", v, sizeof(v)),
		     "0000000000000000");
}

void
helper_wait_dead(int32_t pid)
{
	char state[64];

	for (int i = 0; i < 200; i++) {
		siginfo_t si;

		/* Our child: waitable (left so, WNOWAIT, for its owner to
		 * reap) only once every thread is gone and with them its
		 * descriptors.  "Z" in /proc comes earlier, when only the
		 * leader has exited: a runtime's own thread (ThreadSanitizer's,
		 * valgrind's) may still hold the helper's socket open. */
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si,
			   WEXITED | WNOHANG | WNOWAIT) == 0) {
			if (si.si_pid == pid)
				return;
		} else if (errno == ECHILD) {
			helper_status(pid, "State", state, sizeof(state));
			if (state[0] == 'Z' || state[0] == '\0')
				return;
		}
		usleep(10000);
	}
}

/*
 * The helper processes of the names room (src/names/sandbox.c) seen from
 * outside, through /proc/PID/status: what the symbols and the unwind
 * helper tests check alike.
 */
#ifndef MEMTOP_HELPER_CHECK_H
#define MEMTOP_HELPER_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* The value after "key:" in /proc/pid/status into out, or "". */
const char *helper_status(int32_t pid, const char *key, char *out,
			  size_t cap);
/* Checks pid runs confined: seccomp filter, no_new_privs, and (when the
 * test is root) as nobody with no groups and no capabilities. */
void helper_check_confined(int32_t pid);
/* Waits until pid has exited with all its threads (our child: waitable,
 * not reaped), or is a zombie or gone (another's): at most 2 s. */
void helper_wait_dead(int32_t pid);

#endif

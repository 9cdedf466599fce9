#!/bin/bash
# exe_wrapper of the valgrind test setup (tests/meson.build): runs a test
# program under memcheck ($MEMTOP_WRAPPER holds the valgrind command).  A
# shell script's interpreter runs as it is: bash's own allocations are not
# memtop's, and the scripts run memtop itself under $MEMTOP_WRAPPER
# (tests/lib/lib.sh).
case "$(basename "$1")" in
bash | sh | dash | python3*)
	exec "$@"
	;;
esac
# shellcheck disable=SC2086
exec $MEMTOP_WRAPPER "$@"

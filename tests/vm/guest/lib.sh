# SPDX-License-Identifier: GPL-2.0
# Helpers for the in-guest tests: each check prints one TAP line.

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

# check DESC CMD...: CMD must succeed.
check() {
	desc=$1
	shift
	if "$@" >/tmp/check.out 2>&1; then
		ok "$desc"
	else
		notok "$desc"
		sed 's/^/#   /' /tmp/check.out
	fi
}

# check_fail DESC CMD...: CMD must fail.
check_fail() {
	desc=$1
	shift
	if "$@" >/tmp/check.out 2>&1; then
		notok "$desc (it succeeded)"
		sed 's/^/#   /' /tmp/check.out
	else
		ok "$desc"
	fi
}

# check_output DESC PATTERN CMD...: CMD's output (stdout+stderr) must match
# the extended regular expression PATTERN; its exit status is not looked at.
check_output() {
	desc=$1
	pattern=$2
	shift 2
	"$@" >/tmp/check.out 2>&1
	if grep -E -q -e "$pattern" /tmp/check.out; then
		ok "$desc"
	else
		notok "$desc (no match for '$pattern')"
		sed 's/^/#   /' /tmp/check.out
	fi
}

# tap DESC CMD...: CMD prints its own TAP lines; a non-zero exit is a
# failure of its own, so a crash that printed nothing still counts.
tap() {
	desc=$1
	shift
	"$@"
	rc=$?
	[ $rc -eq 0 ] || notok "$desc exited with status $rc"
}

# Load the module with the given parameters, unloading it first if loaded.
reload() {
	grep -q '^hotstack ' /proc/modules && rmmod hotstack
	insmod /tests/hotstack.ko "$@"
}

# start_watch FILE: hotstack watch in the background, output in FILE, once
# it has joined the events group (it says so first); sets $watch.
start_watch() {
	hotstack watch >"$1" 2>&1 &
	watch=$!
	i=0
	while ! grep -q "watching the module's events" "$1" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

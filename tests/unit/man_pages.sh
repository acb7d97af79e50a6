#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The man pages (userspace/man/): hotstack(1) and one per command, as
# `hotstack --help` lists the commands. Each renders with man -l and
# groff -ww without a warning, has the sections a page needs, names in
# its OPTIONS every option (long and short) of `hotstack CMD --help` and
# no option that is not there, gives exit statuses 0, 1 and 2, and says
# about HOTSTACK_DEVICE; `make install DESTDIR=...` (relative, from the
# top of the tree) puts the tool and every page in place, and man finds
# them there. TAP lines; exit 1 on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tool=$repo/userspace/hotstack
mandir=$repo/userspace/man
export LC_ALL=C.UTF-8 MANWIDTH=80 MAN_DISABLE_SECCOMP=1
pass=0
fail=0

ok() {
	pass=$((pass + 1))
	echo "ok - man: $1"
}

not_ok() {
	fail=$((fail + 1))
	echo "not ok - man: $1"
	shift
	[ $# -gt 0 ] && printf '%s\n' "$@" | head -20 | sed 's/^/# /'
}

# check NAME CMD...: ok if CMD succeeds.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

scratch=$(mktemp -d /tmp/hs_man_XXXXXX)
trap 'rm -rf "$scratch"' EXIT

if [ ! -x "$tool" ]; then
	not_ok "the tool is built (userspace/hotstack)"
	echo "1..$((pass + fail))"
	exit 1
fi
for t in man groff lexgrog; do
	command -v $t >/dev/null || not_ok "$t is installed (tests/deps.sh: man-db, groff-base)"
done

# The commands, from the tool's own usage.
cmds=$("$tool" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p')
[ -n "$cmds" ] && ok "hotstack --help lists commands: $(echo $cmds)" ||
	not_ok "hotstack --help lists commands"

# split PAGE_TEXT: each section of a rendered page into PAGE_TEXT.NAME
# (one process: forks are what this script's time goes into).
split() {
	awk -v f="$1" '/^[A-Z][A-Z ]*$/ { out = f "." $0; printf "" > out; next }
		out { print > out }' "$1"
}

# section PAGE_TEXT NAME: that section's text, into $sec (no fork).
section() {
	sec=
	[ -f "$1.$2" ] && IFS= read -r -d '' sec <"$1.$2"
}

for page in hotstack $(for c in $cmds; do echo "hotstack-$c"; done); do
	src=$mandir/$page.1
	if [ ! -f "$src" ]; then
		not_ok "$page.1 exists"
		continue
	fi
	ok "$page.1 exists"
	out=$scratch/$page.txt
	err=$scratch/$page.err

	# Rendered without a warning, by man (as a reader sees it) and by groff -ww.
	man --warnings=w -l "$src" >"$out" 2>"$err"
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$err" ] && [ "$(wc -l <"$out")" -gt 20 ]; then
		ok "$page.1 renders with man -l --warnings=w, no warning"
	else
		not_ok "$page.1 renders with man -l --warnings=w, no warning" "exit $rc" "$(cat "$err")"
	fi
	groff -man -Tutf8 -ww -z "$src" >"$err" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$err" ]; then
		ok "$page.1 renders with groff -man -Tutf8 -ww, no warning"
	else
		not_ok "$page.1 renders with groff -man -Tutf8 -ww, no warning" "exit $rc" \
			"$(cat "$err")"
	fi
	# whatis/apropos read the NAME line.
	check "$page.1's NAME line is '$page - ...' (lexgrog)" \
		grep -q "^$src: \"$page - ." <(lexgrog "$src" 2>&1)

	split "$out"
	missing=
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES \
		"SEE ALSO"; do
		[ -f "$out.$s" ] || missing="$missing [$s]"
	done
	[ "$page" = hotstack ] || [ -f "$out.OUTPUT" ] || missing="$missing [OUTPUT]"
	[ -z "$missing" ] && ok "$page.1 has its sections" ||
		not_ok "$page.1 has its sections" "missing:$missing"

	# Exit status: 0, 1 (failure) and 2 (usage), each a tag of its own.
	section "$out" "EXIT STATUS"
	st=
	while IFS= read -r line; do
		[[ $line =~ ^\ {7}([0-9])(\ |$) ]] && st=$st${BASH_REMATCH[1]}
	done <<<"$sec"
	[ "$st" = 012 ] && ok "$page.1 gives exit statuses 0, 1 and 2" ||
		not_ok "$page.1 gives exit statuses 0, 1 and 2" "found: '$st'"
	section "$out" ENVIRONMENT
	[[ $sec == *HOTSTACK_DEVICE* ]] && ok "$page.1's ENVIRONMENT says about HOTSTACK_DEVICE" ||
		not_ok "$page.1's ENVIRONMENT says about HOTSTACK_DEVICE"

	# SEE ALSO: pages that exist (hotstack's own), and hotstack(1) from a command's.
	section "$out" "SEE ALSO"
	see=$sec
	bad=
	rest=$see
	while [[ $rest =~ (hotstack[a-z-]*)\(([0-9])\) ]]; do
		[ -f "$mandir/${BASH_REMATCH[1]}.1" ] || bad="$bad ${BASH_REMATCH[0]}"
		rest=${rest#*"${BASH_REMATCH[0]}"}
	done
	if [ -z "$bad" ] && { [ "$page" = hotstack ] || [[ $see == *"hotstack(1)"* ]]; }; then
		ok "$page.1's SEE ALSO names hotstack(1) and only pages that exist"
	else
		not_ok "$page.1's SEE ALSO names hotstack(1) and only pages that exist" "bad:$bad"
	fi

	# Options: each one --help prints is in OPTIONS, and OPTIONS has no other.
	if [ "$page" = hotstack ]; then
		want="--help --version"
		bad=
		section "$out" COMMANDS
		for c in $cmds; do
			[[ $'\n'$sec == *$'\n'"       hotstack-$c(1)"$'\n'* ]] || bad="$bad $c"
			[[ $see == *"hotstack-$c(1)"* ]] || bad="$bad $c(see also)"
		done
		[ -z "$bad" ] && ok "hotstack.1 lists every command under COMMANDS and SEE ALSO" ||
			not_ok "hotstack.1 lists every command under COMMANDS and SEE ALSO" \
				"missing:$bad"
	else
		# The options, as --help prints them: "  -x, --long ARG  text", "      --long".
		want=
		short=
		while IFS= read -r line; do
			if [[ $line =~ ^\ +(-[a-zA-Z],\ )?(--[a-z][a-z-]*) ]]; then
				want="$want ${BASH_REMATCH[2]}"
				[ -n "${BASH_REMATCH[1]}" ] && short="$short ${BASH_REMATCH[1]%, }"
			fi
		done < <("$tool" "${page#hotstack-}" --help)
		[ -n "$want" ] || not_ok "hotstack ${page#hotstack-} --help prints options"
	fi
	# Tags are the lines of OPTIONS indented 7 (the text under them 14).
	section "$out" OPTIONS
	tags=
	while IFS= read -r line; do
		[[ $line =~ ^\ {7}[^\ ] ]] && tags="$tags$line"$'\n'
	done <<<"$sec"
	missing=
	for o in $want; do
		[[ $tags =~ [\ ,]$o([\ ,=]|$'\n') ]] || missing="$missing $o"
	done
	[ -z "$missing" ] && ok "$page.1 documents every option of its --help ($(echo $want))" ||
		not_ok "$page.1 documents every option of its --help" "missing:$missing"
	if [ "$page" != hotstack ]; then
		missing=
		for o in $short; do
			[[ $'\n'$tags == *$'\n'"       $o, --"* ]] || missing="$missing $o"
		done
		[ -z "$missing" ] && ok "$page.1 gives every short option with its long one" ||
			not_ok "$page.1 gives every short option with its long one" "missing:$missing"
		extra=
		rest=$tags
		while [[ $rest =~ (--[a-z][a-z-]*) ]]; do
			[[ " $want " == *" ${BASH_REMATCH[1]} "* ]] || extra="$extra ${BASH_REMATCH[1]}"
			rest=${rest#*"${BASH_REMATCH[1]}"}
		done
		[ -z "$extra" ] && ok "$page.1 documents no option its --help lacks" ||
			not_ok "$page.1 documents no option its --help lacks" "not in --help:$extra"
	fi
done

# No page that is not a command's.
for src in "$mandir"/*.1; do
	p=$(basename "$src" .1)
	[ "$p" = hotstack ] || [[ $'\n'$cmds$'\n' == *$'\n'"${p#hotstack-}"$'\n'* ]] ||
		not_ok "$p.1 is the page of a command" "no command ${p#hotstack-}"
done

# make install: from the top, a relative DESTDIR, the default PREFIX; then PREFIX=/usr.
pages=$(cd "$mandir" && ls ./*.1 | wc -l)
rel=$(realpath --relative-to="$repo" "$scratch/root")
if make -s -C "$repo" install DESTDIR="$rel" >"$scratch/install.log" 2>&1; then
	ok "make install DESTDIR=RELATIVE (a path from the tree's top)"
else
	not_ok "make install DESTDIR=RELATIVE (a path from the tree's top)" "DESTDIR=$rel" \
		"$(cat "$scratch/install.log")"
fi
bin=$scratch/root/usr/local/bin/hotstack
m1=$scratch/root/usr/local/share/man/man1
[ -x "$bin" ] && [ "$("$bin" --version)" = "$("$tool" --version)" ] &&
	ok "make install put the tool in DESTDIR/usr/local/bin, and it runs" ||
	not_ok "make install put the tool in DESTDIR/usr/local/bin, and it runs" \
		"$(cd "$scratch/root" 2>&1 && find . | head)"
bad=
n=0
for src in "$mandir"/*.1; do
	dst=$m1/$(basename "$src")
	n=$((n + 1))
	{ cmp -s "$src" "$dst" && [ "$(stat -c %a "$dst")" = 644 ]; } || bad="$bad $(basename "$src")"
done
[ -z "$bad" ] && [ "$n" -eq "$pages" ] && [ "$(ls "$m1" | wc -l)" -eq "$pages" ] &&
	ok "make install put the $pages pages in DESTDIR/usr/local/share/man/man1, mode 644" ||
	not_ok "make install put the $pages pages in DESTDIR/usr/local/share/man/man1, mode 644" \
		"wrong or missing:$bad" "$(ls "$m1" 2>&1)"
bad=
for c in "" $cmds; do
	p=hotstack${c:+-$c}
	[ "$(man -M "$scratch/root/usr/local/share/man" -w "$p" 2>/dev/null)" = "$m1/$p.1" ] ||
		bad="$bad $p"
done
[ -z "$bad" ] && ok "man finds every installed page by name (man -M PREFIX/share/man -w)" ||
	not_ok "man finds every installed page by name (man -M PREFIX/share/man -w)" "not:$bad"
if make -s -C "$repo" install DESTDIR="$scratch/usr-root" PREFIX=/usr >"$scratch/install.log" 2>&1 &&
	[ -x "$scratch/usr-root/usr/bin/hotstack" ] &&
	[ "$(ls "$scratch/usr-root/usr/share/man/man1" | wc -l)" -eq "$pages" ]; then
	ok "make install PREFIX=/usr puts them in /usr/bin and /usr/share/man/man1"
else
	not_ok "make install PREFIX=/usr puts them in /usr/bin and /usr/share/man/man1" \
		"$(cat "$scratch/install.log")" "$(cd "$scratch/usr-root" 2>&1 && find .)"
fi

echo "1..$((pass + fail))"
[ "$fail" -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# otlp-layout.sh PROFILES_PROTO: whether opentelemetry-proto's
# profiles/v1development/profiles.proto has the layout fmt_otlp.c writes
# (1.11's: the dictionary's stack and attribute tables, one sample type,
# a sample's values as field 4), field by field: the releases before it
# have a stack table too (1.8, 1.9) but other field numbers, and code
# built against them would compile and write another layout. Exit 0 if
# so; used by the Makefile and tests/deps.sh.
[ -r "$1" ] || exit 1
sed -e 's|//.*||' -e 's/[[:space:]]\{1,\}/ /g' -e 's/^ //' -e 's/ $//' "$1" >"${TMPDIR:-/tmp}/otlp-layout.$$"
rc=0
for decl in \
	'repeated Stack stack_table = 7;' \
	'repeated string string_table = 5;' \
	'repeated KeyValueAndUnit attribute_table = 6;' \
	'repeated ResourceProfiles resource_profiles = 1;' \
	'ProfilesDictionary dictionary = 2;' \
	'ValueType sample_type = 1;' \
	'repeated Sample samples = 2;' \
	'ValueType period_type = 5;' \
	'repeated int32 attribute_indices = 11;' \
	'int32 stack_index = 1;' \
	'repeated int64 values = 4;' \
	'repeated int32 location_indices = 1;' \
	'int32 filename_strindex = 4;' \
	'int32 key_strindex = 1;'; do
	grep -qxF "$decl" "${TMPDIR:-/tmp}/otlp-layout.$$" || { rc=1; break; }
done
rm -f "${TMPDIR:-/tmp}/otlp-layout.$$"
exit $rc

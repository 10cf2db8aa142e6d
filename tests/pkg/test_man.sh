#!/bin/bash
# The man pages (docs/man/) against the programs: each renders with man-db
# without a warning; every long option a program's --help prints (rulec,
# rampartd, rampartctl and `rampartctl COMMAND --help`), and every option
# its source recognises, is in its page; every command has its section;
# the exit statuses the programs give are documented; the version is the
# project's; rampart-policy(5) names every key of docs/policy.schema.json
# and its complete example compiles and answers as the page says.
# Usage: tests/pkg/test_man.sh [BUILD_DIR]    (default build)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
B=$(realpath "${1:-$SRC/build}")
MAN=${RAMPART_MAN_DIR:-$SRC/docs/man}	# another directory: to try the test itself
PASSED=0; FAILED=0
ok() { echo "ok - $*"; PASSED=$((PASSED + 1)); }
not_ok() { echo "not ok - $*"; FAILED=$((FAILED + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
T=$(mktemp -d /tmp/rampart-man.XXXXXX)
trap 'rm -rf "$T"' EXIT

RULEC=$B/rulec/rulec RAMPARTD=$B/daemon/rampartd RAMPARTCTL=$B/daemon/rampartctl
for p in "$RULEC" "$RAMPARTD" "$RAMPARTCTL"; do
	[ -x "$p" ] || { not_ok "$p built"; echo "$PASSED passed, $FAILED failed"; exit 1; }
done

# The page's text as written, with roff's \- and font escapes taken out,
# so that an option reads as on the command line whatever the line breaks.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(dq/"/g' "$1"; }
# Long options in a text.
longopts() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }

version=$(sed -n 's/^project(rampart VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
for page in rulec.1 rampartd.8 rampartctl.8 rampart-policy.5; do
	f=$MAN/$page
	[ -f "$f" ] || { not_ok "$page exists"; continue; }
	w=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
	check "$page renders with man --warnings and says nothing${w:+: $w}" [ -z "$w" ]
	out=$(MANWIDTH=80 man -l "$f" 2>/dev/null | wc -l)
	check "$page renders to text ($out lines)" [ "$out" -gt 40 ]
	name=${page%.*}; sec=${page##*.}
	th=$(plain "$f" | grep -m1 '^\.TH ')
	case $th in
	".TH ${name^^} $sec "*"\"rampart $version\""*) ok "$page: $th" ;;
	*) not_ok "$page: $th, want .TH ${name^^} $sec DATE \"rampart $version\"" ;;
	esac
	for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
		grep -qx "\.SH $s" "$f" || not_ok "$page has no $s section"
	done
done

# opts_in_page PAGE WHAT OPTIONS: every option in OPTIONS is in PAGE.
opts_in_page() {
	local page=$1 what=$2 opts=$3 missing="" o
	plain "$MAN/$page" >"$T/plain"
	for o in $opts; do
		grep -qF -- "$o" "$T/plain" || missing+=" $o"
	done
	check "$page documents every option of $what ($(echo $opts | wc -w))${missing:+, missing:$missing}" \
		[ -z "$missing" ]
}

# rulec
"$RULEC" --help >"$T/h" 2>&1
opts_in_page rulec.1 "rulec --help" "$(longopts <"$T/h") --help -o"
opts_in_page rulec.1 "rulec/main.c" "$(grep -oE '"--?[a-z][a-z0-9-]*"' "$SRC/rulec/main.c" | tr -d '"' | sort -u)"
for c in check compile dump query; do
	grep -qE "^\.BI? $c( |$)" "$MAN/rulec.1" || not_ok "rulec.1 describes command $c"
done

# rampartd
"$RAMPARTD" --help >"$T/h" 2>&1
opts_in_page rampartd.8 "rampartd --help" "$(longopts <"$T/h") --help"
# getopt's table in daemon/options.c: options --help forgot are caught too
src_opts=$(sed -n 's/^[[:space:]]*{ "\([a-z][a-z0-9-]*\)", .*/--\1/p' "$SRC/daemon/options.c" | sort -u)
opts_in_page rampartd.8 "daemon/options.c's table" "$src_opts"
missing=""
for o in $src_opts; do [ "$o" = --help ] || grep -qF -- "$o" "$T/h" || missing+=" $o"; done
check "rampartd --help shows every option of daemon/options.c${missing:+, missing:$missing}" [ -z "$missing" ]

# rampartctl and each command
"$RAMPARTCTL" --help >"$T/h" 2>&1
cmds=$(sed -n 's/^  \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p' "$T/h" | sort -u)
check "rampartctl --help lists commands ($(echo $cmds))" [ -n "$cmds" ]
all=$(longopts <"$T/h")
for c in $cmds; do
	if "$RAMPARTCTL" "$c" --help >"$T/hc" 2>&1; then
		all+=" $(longopts <"$T/hc")"
		grep -qE "^\.SS $c( |$)" "$MAN/rampartctl.8" || not_ok "rampartctl.8 has no section for $c"
	else
		not_ok "rampartctl $c --help exits 0"
	fi
done
opts_in_page rampartctl.8 "rampartctl [COMMAND] --help" "$(echo $all | tr ' ' '\n' | sort -u)"
opts_in_page rampartctl.8 "daemon/rampartctl.c" "$(grep -oE '"--[a-z][a-z0-9-]*"' "$SRC/daemon/rampartctl.c" | tr -d '"' | sort -u)"

# Exit statuses: what the programs do is in EXIT STATUS.
exit_documented() {	# PAGE CODE: ".B CODE" appears after .SH EXIT STATUS
	sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$MAN/$1" | grep -qx "\.B $2"
}
for page_codes in "rulec.1 0 1" "rampartd.8 0 1 2" "rampartctl.8 0 1 2"; do
	set -- $page_codes; page=$1; shift
	for c in "$@"; do
		exit_documented "$page" "$c" || not_ok "$page documents exit status $c"
	done
done
"$RULEC" frobnicate >/dev/null 2>&1; rc1=$?
"$RULEC" --help >/dev/null 2>&1; rc0=$?
check "rulec: usage error exits 1, --help 0 (as rulec.1 says)" [ "$rc1" -eq 1 ] && [ "$rc0" -eq 0 ]
"$RAMPARTD" --frobnicate >/dev/null 2>&1; rc1=$?
"$RAMPARTD" --help >/dev/null 2>&1; rc0=$?
check "rampartd: usage error exits 1, --help 0 (as rampartd.8 says)" [ "$rc1" -eq 1 ] && [ "$rc0" -eq 0 ]
"$RAMPARTCTL" --control "$T/no.sock" status >/dev/null 2>&1; rc2=$?
"$RAMPARTCTL" frobnicate >/dev/null 2>&1; rc1=$?
check "rampartctl: no daemon exits 2, usage error 1 (as rampartctl.8 says)" [ "$rc2" -eq 2 ] && [ "$rc1" -eq 1 ]

# rampart-policy(5): every key the schema knows, and the example works.
keys=$(/usr/bin/python3 - "$SRC/docs/policy.schema.json" <<'PY'
import json, sys
keys = set()
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "properties" and isinstance(v, dict):
                keys.update(v)
            walk(v)
    elif isinstance(o, list):
        for x in o:
            walk(x)
walk(json.load(open(sys.argv[1])))
print("\n".join(sorted(keys)))
PY
)
plain "$MAN/rampart-policy.5" >"$T/plain"
missing=""
for k in $keys; do grep -qE "(^|[^a-z_])$k([^a-z_]|$)" "$T/plain" || missing+=" $k"; done
check "rampart-policy.5 names every key of policy.schema.json ($(echo $keys | wc -w))${missing:+, missing:$missing}" [ -z "$missing" ]
# The complete example: from "version: 1" after .SH EXAMPLES to the .fi.
plain "$MAN/rampart-policy.5" | sed -n '/^\.SH EXAMPLES/,/^\.SH /p' |
	sed -n '/^version: 1$/,/^\.fi$/p' | grep -v '^\.fi$' >"$T/example.yaml"
if "$RULEC" compile "$T/example.yaml" -o "$T/example.rfw" >"$T/out" 2>&1; then
	ok "rampart-policy.5's example compiles"
	q=$(plain "$MAN/rampart-policy.5" | sed -n 's/^rulec query policy.rfw //p')
	a=$("$RULEC" query "$T/example.rfw" $q)
	check "rampart-policy.5's query ($q) answers '2 web accept': $a" [ "$a" = "2 web accept" ]
else
	cat "$T/out"; not_ok "rampart-policy.5's example compiles"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]

#!/bin/bash
# The bash completions (completions/): sourced into bash, each completion
# function is called as bash would call it (COMP_WORDS, COMP_CWORD,
# COMP_LINE, COMP_POINT) and its COMPREPLY checked: commands, options and
# their values, *.rfw / *.yaml file names, interface names for
# --interface, the artifact's interfaces for rulec query --in; and every
# long option of each program's --help is offered (so they cannot drift).
# Runs twice: with bash-completion's helpers (_init_completion, _filedir)
# when installed, and without them (plain bash).
# Usage: tests/pkg/test_completion.sh [BUILD_DIR]    (default build)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
B=$(realpath "${1:-$SRC/build}")
T=$(mktemp -d /tmp/rampart-compl.XXXXXX)
trap 'rm -rf "$T"' EXIT
BC=/usr/share/bash-completion/bash_completion

for p in rulec/rulec daemon/rampartd daemon/rampartctl; do
	[ -x "$B/$p" ] || { echo "not ok - $B/$p built"; echo "0 passed, 1 failed"; exit 1; }
done
# a directory to complete file names in, and an artifact naming eth0, eth1
mkdir -p "$T/w/sub"
cat >"$T/w/pol.yaml" <<'YAML'
version: 1
zones: {outside: [eth0], inside: [eth1]}
rules:
  - {name: in, from: {zone: outside}, action: accept}
  - {name: out, from: {zone: inside}, action: accept}
YAML
"$B/rulec/rulec" compile "$T/w/pol.yaml" -o "$T/w/pol.rfw" >/dev/null || exit 1
: >"$T/w/other.txt"; : >"$T/w/cap.pcap"; : >"$T/w/xdp.o"

checks() {	# runs in a subshell; prints ok / not ok lines
	cd "$T/w" || exit 1
	export PATH=$B/rulec:$B/daemon:$PATH
	for f in rampartd rampartctl rulec; do
		# shellcheck disable=SC1090
		source "$SRC/completions/$f" || echo "not ok - source completions/$f"
	done
	# complete LINE: what the completion function offers at the end of LINE,
	# sorted, one line. Words split as bash does (blanks; '=' apart).
	complete_line() {
		local line=$1 fn
		read -r -a COMP_WORDS <<<"$(sed 's/=/ = /g' <<<"$line")"
		[[ $line == *" " || $line == *"=" ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$line COMP_POINT=${#line}
		COMPREPLY=()
		fn=$(complete -p "${COMP_WORDS[0]}" 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
		[ -n "$fn" ] || { echo "(no completion for ${COMP_WORDS[0]})"; return; }
		"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
		printf '%s\n' "${COMPREPLY[@]}" | sed 's|/$||' | sort -u | tr '\n' ' ' | sed 's/ $//'
	}
	is() {	# is LINE WANT: offers exactly WANT (sorted, space-separated)
		local got; got=$(complete_line "$1")
		if [ "$got" = "$2" ]; then echo "ok - [$MODE] '$1' -> $2"
		else echo "not ok - [$MODE] '$1' -> '$got', want '$2'"; fi
	}
	has() {	# has LINE WORD...: offers at least these
		local got w miss=""; got=" $(complete_line "$1") "
		for w in "${@:2}"; do [[ $got == *" $w "* ]] || miss+=" $w"; done
		if [ -z "$miss" ]; then echo "ok - [$MODE] '$1' offers ${*:2}"
		else echo "not ok - [$MODE] '$1' lacks$miss (got:$got)"; fi
	}

	is 'rampartctl ' 'capture flows reload stats status top'
	is 'rampartctl st' 'stats status'
	is 'rampartctl --control /run/x.sock fl' 'flows'
	is 'rampartctl stats --' '--control --help --interfaces --json --rules --stages --workers'
	is 'rampartctl reload --flows ' 'keep recheck'
	is 'rampartctl reload ' 'pol.rfw sub'
	has 'rampartctl flows --filter ' proto= src= state=
	is 'rampartd --mo' '--mode'
	is 'rampartd --mode ' 'bridge router'
	is 'rampartd --backend ' 'dpdk pcap xsk'
	is 'rampartd --fail ' 'closed open'
	is 'rampartd --reload-flows ' 'keep recheck'
	is 'rampartd --policy ' 'pol.rfw sub'
	is 'rampartd --xdp-object ' 'sub xdp.o'
	has 'rampartd --interface ' lo $(ls /sys/class/net)
	has 'rampartd --pcap-in ' lo=
	is 'rampartd --policy p.rfw -- --vdev ' ''
	# IF=FILE: words split at '=' are put back together by bash-completion
	[ "$MODE" = plain ] || is 'rampartd --pcap-in lo=ca' 'lo=cap.pcap'
	is 'rulec ' '--help check compile dump help query'
	is 'rulec c' 'check compile'
	is 'rulec compile ' 'pol.yaml sub'
	is 'rulec compile pol.yaml -o ' 'pol.rfw sub'
	is 'rulec check --' '--help --strict'
	is 'rulec dump ' 'pol.rfw sub'
	is 'rulec query ' 'pol.rfw sub'
	is 'rulec query pol.rfw --in ' 'eth0 eth1'
	is 'rulec query pol.rfw --out eth' 'eth0 eth1'
	is 'rulec query pol.rfw --state ' 'established invalid new related'
	has 'rulec query pol.rfw ' tcp udp icmp icmpv6
	is 'rulec query pol.rfw tcp ' ''
	has 'rulec query pol.rfw --' --in --out --state --tcp-flags --batch

	# every long option of --help is offered
	has 'rampartd --' $(rampartd --help 2>&1 | grep -oE -- '^  --[a-z][a-z0-9-]*' | sort -u)  # the option table (its text names rampartctl's --flows)
	has 'rulec query pol.rfw --' $(rulec --help | sed -n '/query OPTIONS/,$p' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
	has 'rulec compile --' --strict
	for c in status stats flows reload; do
		has "rampartctl $c --" $(rampartctl "$c" --help | grep -oE -- '--[a-z][a-z0-9-]*' |
			grep -vx -- '--reload-flows' | sort -u)
	done
	has 'rampartctl --' $(rampartctl --help | grep -oE -- '^  --[a-z][a-z0-9-]*' | sort -u)
}

out=""
if [ -f "$BC" ]; then
	out+=$(MODE=bash-completion bash -c "source '$BC'; $(declare -f checks); B='$B' SRC='$SRC' T='$T'; checks")$'\n'
else
	out+="# $BC not installed: plain bash only"$'\n'
fi
out+=$(MODE=plain bash --norc --noprofile -c "$(declare -f checks); B='$B' SRC='$SRC' T='$T'; checks")
echo "$out"
passed=$(grep -c '^ok ' <<<"$out"); failed=$(grep -c '^not ok ' <<<"$out")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

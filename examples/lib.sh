# Shared by the examples' run.sh scripts (source it; each example's test in
# tests/lab/ sources the example's run.sh in turn). It brings in the lab
# helpers of tests/lab/lib.sh (namespaces, veths, clean-up on any exit)
# and adds what every example does: put the lab's interface names into the
# example's policy, compile it strictly, start rampartd, show verdicts and
# counters, and the run.sh command line (--keep, --help).
# Lab rules: 10.x and fd00::/8 only, no default route, every namespace and
# link named with a per-run prefix, everything removed on exit.

EX_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$EX_SRC/tests/lab/lib.sh"
RAMPART_BUILD_DIR=${RAMPART_BUILD_DIR:-$EX_SRC/build}

# ex_policy IN.yaml OUT.yaml NAME=IF...: copy IN with each interface NAME
# (a whole word, e.g. eth0) replaced by the lab's link IF. The policies
# name their ports as on a real machine; the lab's links carry its prefix.
ex_policy() {
	local in=$1 out=$2 kv sub=()
	shift 2
	for kv in "$@"; do
		sub+=(-e "s/\\b${kv%%=*}\\b/${kv#*=}/g")
	done
	sed "${sub[@]}" "$in" >"$out"
}

# ex_compile POLICY.yaml OUT.rfw: rulec compile --strict (warnings are
# errors); sets EX_COMPILE_SECONDS and EX_RFW_BYTES and prints both.
ex_compile() {
	local t0 t1
	t0=$(date +%s.%N)
	"$RULEC" compile --strict "$1" -o "$2" || return 1
	t1=$(date +%s.%N)
	EX_COMPILE_SECONDS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	EX_RFW_BYTES=$(stat -c %s "$2")
	echo "compiled $(basename "$1"): $EX_COMPILE_SECONDS s, artifact $EX_RFW_BYTES bytes"
}

# ex_rampartd bridge|router RFW [ARGS...]: rampartd in fw on its two ports
# ($FW_IF_C, $FW_IF_S), -v, control socket $LAB_CONTROL in $LAB_TMP; waits
# until it runs (RAMPARTD_PID).
ex_rampartd() {
	local mode=$1 rfw=$2 word=bridging
	shift 2
	[ "$mode" = router ] && word=routing
	LAB_CONTROL=${LAB_CONTROL:-$LAB_TMP/rampartd.sock}
	lab_rampartd_run "$word" --policy "$rfw" --interface "$FW_IF_C" --interface "$FW_IF_S" \
		--mode "$mode" --backend xsk --foreground -v --control "$LAB_CONTROL" "$@"
}

# ex_ctl ARGS...: rampartctl on this lab's rampartd.
ex_ctl() { "$RAMPARTCTL" --control "$LAB_CONTROL" "$@"; }

# ex_rule_stat NAME packets|bytes|limited: one number of `rampartctl stats
# --rules` for the rule NAME.
ex_rule_stat() {
	ex_ctl stats --rules | awk -v n="$1" -v f="$2" '
		$1 == "RULE" { for (i = 1; i <= NF; i++) col[tolower($i)] = i; next }
		$2 == n && (f in col) { print $col[f] }'
}

# ex_http NS URL: fetch URL from namespace NS (3 s at most); fails when no
# answer comes.
ex_http() { lab_in "$1" curl -sf --max-time 3 -o /dev/null "$2"; }

# ex_http_seen LOG ADDR: the python http.server that wrote LOG served a
# request from ADDR.
ex_http_seen() { grep -q "^$2 - .*\"GET " "$1"; }

# ex_try WHAT CMD...: run CMD, print whether it got through.
ex_try() {
	local what=$1
	shift
	printf '  %-62s ' "$what"
	if quiet "$@"; then echo "got through"; else echo "blocked"; fi
}

ex_say() { printf '\n== %s\n' "$*"; }

ex_usage() {
	cat <<EOF
usage: sudo $0 [--keep]
Builds the example's lab in network namespaces, runs rampartd with the
example's policy, sends a bounded amount of traffic, shows the verdicts
and counters, stops rampartd and removes the lab.
  --keep   leave the lab and rampartd running until Enter is pressed
Binaries from \$RAMPART_BUILD_DIR (default: $EX_SRC/build; build with
scripts/build.sh release).
EOF
}

# ex_main TAG NAME "$@": what run.sh does when executed. Calls NAME_setup
# (namespaces and servers), NAME_start (policy and rampartd) and NAME_show
# (traffic and counters), then stops rampartd; the lab goes on exit.
ex_main() {
	local tag=$1 name=$2 keep=0
	shift 2
	case "${1:-}" in
	"") ;;
	--keep) keep=1 ;;
	-h|--help) ex_usage; return 0 ;;
	*) ex_usage >&2; return 1 ;;
	esac
	lab_init "$tag"
	lab_rampart_bins || return 1
	ex_say "building the lab (namespaces and links start with $LAB_PREFIX)"
	"${name}_setup" || { echo "lab set-up failed" >&2; return 1; }
	ex_say "compiling the policy and starting rampartd"
	if ! "${name}_start"; then
		echo "rampartd did not start:" >&2
		cat "$LAB_TMP/rampartd.err" >&2 2>/dev/null
		return 1
	fi
	grep '^rampartd:' "$LAB_TMP/rampartd.err"
	"${name}_show"
	ex_say "rampartctl stats --rules"
	ex_ctl stats --rules
	if [ "$keep" = 1 ]; then
		ex_say "left running; try, in another shell:"
		echo "  $RAMPARTCTL --control $LAB_CONTROL stats"
		echo "  $RAMPARTCTL --control $LAB_CONTROL flows"
		echo "  ip netns exec $(lab_nsname cli) bash     # namespaces: ${LAB_NS[*]}"
		read -r -p "press Enter to stop rampartd and remove the lab " _ </dev/tty
	fi
	ex_say "stopping rampartd (SIGTERM) and removing the lab"
	kill -TERM "$RAMPARTD_PID"
	lab_wait_gone "$RAMPARTD_PID" 10
	wait "$RAMPARTD_PID"
	echo "rampartd exited with status $?"
}

# ---- for the examples' tests (tests/lab/test_example_*.sh) ----

# ex_test_begin TAG NAME: lab_init, NAME_setup and NAME_start as checks;
# a failure ends the test with its summary.
ex_test_begin() {
	lab_init "$1"
	lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
	"${2}_setup" || { not_ok "lab set up"; lab_summary; exit 1; }
	if ! "${2}_start"; then
		not_ok "policy compiles (--strict) and rampartd starts"
		cat "$LAB_TMP/rampartd.err" >&2 2>/dev/null
		lab_summary; exit 1
	fi
	ok "policy compiles (--strict) and rampartd starts"
}

# ex_test_end: the SIGUSR1 counters agree with rampartctl's, clean stop
# (lab_rampartd_stop), rampartd's output on any failure, the summary
# line; returns nonzero on failure.
ex_test_end() {
	local ctr=$LAB_TMP/counters.txt
	[ "$LAB_FAILED" -ne 0 ] && { echo "--- rampartctl stats ---" >&2; ex_ctl stats >&2; }
	check "SIGUSR1 prints counters" lab_counters "$ctr"
	check_eq "SIGUSR1 and rampartctl count the same for the default rule" \
		"$(lab_rule_counter "$ctr" default packets)" "$(ex_rule_stat default packets)"
	lab_rampartd_stop
	[ "$LAB_FAILED" -ne 0 ] && { echo "--- rampartd stderr ---" >&2; cat "$LAB_TMP/rampartd.err" >&2; }
	lab_summary
}

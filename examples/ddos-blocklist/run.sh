#!/bin/bash
# Example: a DDoS blocklist of a million prefixes (bridge mode). Builds
#   cli (client 10.10.0.1, attacker 10.10.0.66 / fd00:10::66) -- [fw: rampartd bridges <p>fc <-> <p>fs] -- srv (10.10.0.2)
# generates a list of 1,000,000 prefixes that includes the attacker's
# (gen-blocklist.sh), compiles it (printing the time and the artifact's
# size), runs rampartd, sends traffic from both sources, shows the
# counters, stops and cleans up. README.md says what to look at.
#   sudo examples/ddos-blocklist/run.sh [--keep]
# tests/lab/test_example_ddos.sh sources this file and checks the same.
DDOS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$DDOS_DIR/../lib.sh"

CLIENT=10.10.0.1
ATTACKER=10.10.0.66
ATTACKER6=fd00:10::66
ATTACKER_PREFIXES=(10.10.0.64/27 "$ATTACKER6/128")	# the feed lists the attacker's network

# The project's bridge lab (tests/lab/lib.sh), plus the attacker's
# addresses on the client side.
ddos_setup() {
	lab_bridge_setup && lab_write_udp_tool && lab_start_servers || return 1
	echo "hello from the server" >"$LAB_TMP/index.txt"
	lab_in cli ip addr add "$ATTACKER/24" dev "$CLI_IF" &&
		lab_in cli ip addr add "$ATTACKER6/64" dev "$CLI_IF" nodad
}

# The policy is copied beside the generated list, which takes the place
# of the example's small blocklist.txt.
ddos_start() {
	local t0
	echo "generating 1,000,000 prefixes (${ATTACKER_PREFIXES[*]} among them)"
	cp "$DDOS_DIR/policy.yaml" "$LAB_TMP/policy.yaml" &&
		"$DDOS_DIR/gen-blocklist.sh" "$LAB_TMP/blocklist.txt" "${ATTACKER_PREFIXES[@]}" &&
		ex_compile "$LAB_TMP/policy.yaml" "$LAB_TMP/policy.rfw" || return 1
	t0=$(date +%s.%N)
	ex_rampartd bridge "$LAB_TMP/policy.rfw" || return 1
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "rampartd loaded it and started in %.2f s\n", b - a }'
}

# ddos_http SRC URL: an HTTP GET from source address SRC (3 s at most).
ddos_http() { lab_in cli curl -sf --max-time 3 --interface "$1" -o /dev/null "$2"; }
# ddos_ping SRC ADDR: 2 pings from SRC, all answered.
ddos_ping() { lab_in cli ping -q -n -c 2 -i 0.2 -W 1 -I "$1" "$2" >/dev/null 2>&1; }

ddos_show() {
	ex_say "traffic from a client that is not listed, and from a listed attacker"
	ex_try "client   $CLIENT: HTTP http://10.10.0.2:8080/" ddos_http "$CLIENT" http://10.10.0.2:8080/index.txt
	ex_try "client   $CLIENT: ping 10.10.0.2" ddos_ping "$CLIENT" 10.10.0.2
	ex_try "attacker $ATTACKER: HTTP http://10.10.0.2:8080/" ddos_http "$ATTACKER" http://10.10.0.2:8080/index.txt
	ex_try "attacker $ATTACKER: ping 10.10.0.2" ddos_ping "$ATTACKER" 10.10.0.2
	ex_try "attacker $ATTACKER6: HTTP http://[fd00:10::2]:8080/" ddos_http "$ATTACKER6" "http://[fd00:10::2]:8080/index.txt"
	ex_say "rulec query on the same artifact (the workers' own lookup)"
	"$RULEC" query "$LAB_TMP/policy.rfw" --batch <(printf '%s\n' "tcp $ATTACKER:40000 10.10.0.2:8080" \
		"tcp $CLIENT:40000 10.10.0.2:8080" "udp 10.137.1.1:53 10.10.0.2:53" "udp [fd00:dead:3:7::1]:1 [fd00:10::2]:1")
	ex_say "the address set in the artifact (rulec dump)"
	"$RULEC" dump "$LAB_TMP/policy.rfw" | grep -E 'prefixes|^ *set'
}

[ "${BASH_SOURCE[0]}" = "$0" ] && ex_main rxd ddos "$@"

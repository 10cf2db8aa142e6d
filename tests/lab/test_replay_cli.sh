#!/bin/bash
# rampartd --backend pcap on the command line: what it refuses (exit 1 for
# usage, 2 for files it cannot open, CLI.md), and that a replay through
# two interfaces writes what it forwards. Needs no root or namespaces.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_replay_cli.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
B=${RAMPART_BUILD_DIR:-$SRC/build}
RAMPARTD=$B/daemon/rampartd
RULEC=$B/rulec/rulec
PASSED=0; FAILED=0
ok() { echo "ok - $*"; PASSED=$((PASSED + 1)); }
not_ok() { echo "not ok - $*"; FAILED=$((FAILED + 1)); }
# exits WANT DESCRIPTION ARGS...: rampartd ARGS exits with WANT
exits() {
	local want=$1 what=$2; shift 2
	"$RAMPARTD" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$what: exit $want"
	else not_ok "$what: exit $rc, want $want ($(head -1 "$T/err"))"; fi
}

T=$(mktemp -d /tmp/rampart-replay.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$RAMPARTD" ] && [ -x "$RULEC" ] || { not_ok "rampartd and rulec built in $B"; echo "$PASSED passed, $FAILED failed"; exit 1; }
cat >"$T/p.yaml" <<'YAML'
version: 1
rules:
  - {name: all, action: accept}
defaults: {action: drop, stateful: false}
YAML
"$RULEC" compile "$T/p.yaml" -o "$T/p.rfw" || { not_ok "policy compiles"; echo "$PASSED passed, $FAILED failed"; exit 1; }
# A capture of one ARP frame (pcap header + record + 42 bytes), written
# by hand so this test needs no scapy.
printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x01\x00\x00\x00' >"$T/in.pcap"
printf '\x00\xf1\x53\x65\x00\x00\x00\x00\x2a\x00\x00\x00\x2a\x00\x00\x00' >>"$T/in.pcap"
printf '\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x0a\x08\x06\x00\x01\x08\x00\x06\x04\x00\x01' >>"$T/in.pcap"
printf '\x02\x00\x00\x00\x00\x0a\x0a\x01\x00\x02\x00\x00\x00\x00\x00\x00\x0a\x01\x00\x03' >>"$T/in.pcap"

P=(--policy "$T/p.rfw" --backend pcap)
exits 1 "an interface with neither --pcap-in nor --pcap-out" "${P[@]}" --interface a --interface b --pcap-in "a=$T/in.pcap"
exits 1 "--pcap-in for an interface not named" "${P[@]}" --interface a --interface b --pcap-in "c=$T/in.pcap" --pcap-out "b=$T/o.pcap"
exits 1 "--pcap-in without --backend pcap" --policy "$T/p.rfw" --interface a --interface b --pcap-in "a=$T/in.pcap"
exits 1 "--pcap-in without IF=" "${P[@]}" --interface a --interface b --pcap-in "$T/in.pcap"
exits 1 "router mode, policy without routes" "${P[@]}" --mode router --interface a --pcap-in "a=$T/in.pcap"
exits 1 "bridge mode with three interfaces" "${P[@]}" --mode bridge --interface a --interface b --interface c --pcap-in "a=$T/in.pcap"
exits 1 "--neighbor without a MAC" "${P[@]}" --interface a --interface b --pcap-in "a=$T/in.pcap" --pcap-out "b=$T/o.pcap" --neighbor a=10.0.0.1
exits 1 "--port-addr with a bad MAC" "${P[@]}" --interface a --interface b --pcap-in "a=$T/in.pcap" --pcap-out "b=$T/o.pcap" --port-addr a=zz:00:00:00:00:01
# --backend dpdk: a usage error where rampartd was built without DPDK, else
# EAL starts (no PCI scan, no hugepages) and finds no port named a.
D=(--policy "$T/p.rfw" --backend dpdk --interface a --interface b --control "$T/ctl.sock")
if "$RAMPARTD" --policy none --backend dpdk --interface a 2>&1 | grep -q 'not built in'; then
	exits 1 "--backend dpdk (not built in)" "${D[@]}"
else
	exits 2 "--backend dpdk, a port EAL does not have" "${D[@]}" -- --no-pci --no-huge -m 64 \
		--no-shconf --no-telemetry --log-level=lib.eal:error
fi
exits 2 "an input capture that does not exist" "${P[@]}" --interface a --interface b --pcap-in "a=$T/nosuch.pcap" --pcap-out "b=$T/o.pcap"
exits 2 "an input that is not a capture" "${P[@]}" --interface a --interface b --pcap-in "a=$T/p.yaml" --pcap-out "b=$T/o.pcap"
exits 2 "an output that cannot be created" "${P[@]}" --interface a --interface b --pcap-in "a=$T/in.pcap" --pcap-out "b=$T/no/dir/o.pcap"
exits 0 "a replay" "${P[@]}" --interface a --interface b --pcap-in "a=$T/in.pcap" --pcap-out "b=$T/o.pcap"
if grep -q '^interface a 1 42 0 0 0 1 0$' "$T/out" && grep -q '^interface b 0 0 1 42 0 0 0$' "$T/out" &&
   cmp -s <(tail -c 58 "$T/in.pcap") <(tail -c 58 "$T/o.pcap"); then
	ok "the ARP frame is bridged a -> b and counted as non-IP"
else
	not_ok "the ARP frame is bridged a -> b and counted as non-IP"; cat "$T/out" >&2
fi
grep -q '^end runtime$' "$T/out" && ok "runtime block printed after the counters" ||
	not_ok "runtime block printed after the counters"
# Router mode and a port MTU from --port-addr (the capture backend has
# none of its own): a 1400-byte IPv4 datagram with DF from lan0 to wan0
# goes out when wan0's MTU is 1500 and comes back as fragmentation needed
# (3/4, MTU 1280 in it) when it is 1280. The capture is written by
# python's standard library (no scapy here).
cat >"$T/r.yaml" <<'YAML'
version: 1
zones: {inside: [lan0], outside: [wan0]}
rules:
  - {name: out, from: {zone: inside}, action: accept}
defaults: {action: drop, stateful: false}
routes:
  - {prefix: 10.1.0.0/16, interface: lan0}
  - {prefix: 10.2.0.0/16, interface: wan0}
YAML
"$RULEC" compile "$T/r.yaml" -o "$T/r.rfw" >/dev/null 2>&1 || not_ok "router policy compiles"
python3 - "$T/big.pcap" <<'PY'
import struct, sys
ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 1400, 1, 0x4000, 64, 17, 0,
                           bytes([10, 1, 0, 5]), bytes([10, 2, 0, 9])))
s = sum(struct.unpack("!10H", ip))
s = (s & 0xffff) + (s >> 16)
ip[10:12] = struct.pack("!H", ~((s & 0xffff) + (s >> 16)) & 0xffff)
udp = struct.pack("!HHHH", 1000, 2000, 1380, 0) + bytes(1372)
frame = bytes([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 5]) + b"\x08\x00" + bytes(ip) + udp
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack("<IIII", 1, 0, len(frame), len(frame)) + frame)
PY
R=(--policy "$T/r.rfw" --backend pcap --mode router --interface lan0 --interface wan0
	--neighbor lan0=10.1.0.5=02:00:00:00:00:05 --neighbor wan0=10.2.0.9=02:00:00:00:00:09
	--pcap-in "lan0=$T/big.pcap" --pcap-out "lan0=$T/lan.pcap" --pcap-out "wan0=$T/wan.pcap")
records() {	# FILE: the frames in a capture, one "length type code mtu" line each
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
at = 24
while at + 16 <= len(d):
    n = struct.unpack("<I", d[at + 8:at + 12])[0]
    f = d[at + 16:at + 16 + n]
    at += 16 + n
    icmp = f[34:42] if len(f) >= 42 and f[23] == 1 else b"\0" * 8
    print(len(f), icmp[0], icmp[1], struct.unpack("!H", icmp[6:8])[0])
PY
}
exits 0 "router replay, wan0 mtu=1500" "${R[@]}" --port-addr lan0=02:00:00:00:00:01,10.1.0.1 \
	--port-addr wan0=02:00:00:00:00:02,10.2.0.1,mtu=1500
[ "$(records "$T/wan.pcap")" = "1414 0 0 0" ] && ok "the 1400-byte datagram goes out of wan0" ||
	not_ok "the 1400-byte datagram goes out of wan0 ($(records "$T/wan.pcap"))"
exits 0 "router replay, wan0 mtu=1280" "${R[@]}" --port-addr lan0=02:00:00:00:00:01,10.1.0.1 \
	--port-addr wan0=02:00:00:00:00:02,10.2.0.1,mtu=1280
[ -z "$(records "$T/wan.pcap")" ] && [ "$(records "$T/lan.pcap" | cut -d' ' -f2-)" = "3 4 1280" ] &&
	ok "with mtu=1280 it is answered on lan0: fragmentation needed, MTU 1280" ||
	not_ok "with mtu=1280 it is answered on lan0 ($(records "$T/lan.pcap"); wan0: $(records "$T/wan.pcap"))"
exits 1 "--port-addr mtu=40 (under 68)" "${R[@]}" --port-addr wan0=02:00:00:00:00:02,mtu=40
"$RAMPARTD" --help | grep -q -- '--pcap-in IF=FILE' && ok "--help documents --pcap-in" ||
	not_ok "--help documents --pcap-in"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]

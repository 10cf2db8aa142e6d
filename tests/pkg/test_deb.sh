#!/bin/bash
# The Debian package: builds it (scripts/build-deb.sh) and checks with
# dpkg-deb its file list (every path the package must carry), its control
# fields (Package, Version = the project's, Architecture = dpkg's, Depends
# naming the package of every shared library the binaries link, conffiles),
# that apt resolves it here (apt-get install --simulate), and installs it
# for real into a throw-away root (dpkg --root, --force-depends: the root
# has no libc of its own) where the installed rulec compiles the demo
# policy and the installed rampartd runs it on a replayed ping.
# Usage: tests/pkg/test_deb.sh [DEB_BUILD_DIR]    (default build-deb)
#        RAMPART_DEB=path.deb skips the build.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
PASSED=0; FAILED=0
ok() { echo "ok - $*"; PASSED=$((PASSED + 1)); }
not_ok() { echo "not ok - $*"; FAILED=$((FAILED + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
finish() { echo "$PASSED passed, $FAILED failed"; [ "$FAILED" -eq 0 ]; exit; }

T=$(mktemp -d /tmp/rampart-deb.XXXXXX)
trap 'rm -rf "$T"' EXIT

deb=${RAMPART_DEB:-}
if [ -z "$deb" ]; then
	dir=$(realpath -m "${1:-$SRC/build-deb}")
	if "$SRC/scripts/build-deb.sh" "$dir" >"$T/build.log" 2>&1; then
		deb=$(tail -1 "$T/build.log" | sed 's/^build-deb: //')
		ok "scripts/build-deb.sh builds $(basename "$deb")"
	else
		tail -20 "$T/build.log"; not_ok "scripts/build-deb.sh"; finish
	fi
fi
[ -f "$deb" ] || { not_ok "package $deb exists"; finish; }

version=$(sed -n 's/^project(rampart VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
check "file name rampart_${version}_${arch}.deb" [ "$(basename "$deb")" = "rampart_${version}_${arch}.deb" ]

# --- the file list
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' >"$T/files"
missing=""
for p in /usr/sbin/rampartd /usr/sbin/rampartctl /usr/bin/rulec \
	"/usr/lib/$multiarch/rampart/rampart_xdp.bpf.o" \
	/usr/lib/systemd/system/rampartd.service /etc/rampart/rampartd.conf \
	/usr/share/man/man1/rulec.1.gz /usr/share/man/man5/rampart-policy.5.gz \
	/usr/share/man/man8/rampartd.8.gz /usr/share/man/man8/rampartctl.8.gz \
	/usr/share/bash-completion/completions/rampartd \
	/usr/share/bash-completion/completions/rampartctl \
	/usr/share/bash-completion/completions/rulec \
	/usr/share/rampart/policies/server.yaml /usr/share/rampart/policies/router-masquerade.yaml \
	/usr/share/rampart/policies/blocklist.yaml /usr/share/rampart/policies/lists/bogons.txt \
	/usr/share/rampart/examples/policies/demo.yaml \
	/usr/share/doc/rampart/operations.md /usr/share/doc/rampart/policy.md \
	/usr/share/doc/rampart/policy.schema.json; do
	grep -qxF "$p" "$T/files" || missing+=" $p"
done
check "the package carries every expected path${missing:+ (missing:$missing)}" [ -z "$missing" ]
outside=$(grep -vE '^/$|^/usr(/|$)|^/etc(/|$)' "$T/files")
check "nothing outside /usr and /etc${outside:+ ($outside)}" [ -z "$outside" ]
bad_owner=$(dpkg-deb -c "$deb" | awk '$2 != "root/root"')
check "every file owned by root/root" [ -z "$bad_owner" ]

# --- control fields
field() { dpkg-deb -f "$deb" "$1"; }
check "Package: rampart" [ "$(field Package)" = rampart ]
check "Version: $version (project(VERSION) in CMakeLists.txt)" [ "$(field Version)" = "$version" ]
check "Architecture: $arch" [ "$(field Architecture)" = "$arch" ]
check "Maintainer, Section and Description set" [ -n "$(field Maintainer)" ] && [ -n "$(field Section)" ] && [ -n "$(field Description)" ]
depends=$(field Depends)
echo "# Depends: $depends"
dpkg-deb -x "$deb" "$T/x"
# every shared library the binaries link, by its package, must be depended on
need_pkgs=""
for bin in "$T/x/usr/sbin/rampartd" "$T/x/usr/sbin/rampartctl" "$T/x/usr/bin/rulec"; do
	for lib in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|x86_64|AArch64|aarch64/ {print $NF; exit}')
		[ -n "$path" ] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')
		pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)
		[ -n "$pkg" ] || pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
		need_pkgs+=" ${pkg:-?$lib}"
	done
done
need_pkgs=$(echo $need_pkgs | tr ' ' '\n' | sort -u)
absent=""
for p in $need_pkgs libxdp1 libbpf1; do
	echo ", $depends," | grep -qE "[ ,]$p( \(|,)" || absent+=" $p"
done
check "Depends names every linked library's package ($(echo $need_pkgs | tr '\n' ' '))${absent:+ (absent:$absent)}" [ -z "$absent" ]
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles >"$T/conffiles" 2>/dev/null
check "conffiles: /etc/rampart/rampartd.conf" grep -qxF /etc/rampart/rampartd.conf "$T/conffiles"

# --- what was packaged is what the build meant
grep -q "^EnvironmentFile=/etc/rampart/rampartd.conf$" "$T/x/usr/lib/systemd/system/rampartd.service" &&
grep -q "^ExecStart=/usr/sbin/rampartd " "$T/x/usr/lib/systemd/system/rampartd.service" &&
grep -q "^Environment=RAMPART_XDP_OBJ=/usr/lib/$multiarch/rampart/rampart_xdp.bpf.o$" "$T/x/usr/lib/systemd/system/rampartd.service"
check "the systemd unit names the packaged paths" [ $? -eq 0 ]
check "rampartd's default BPF object is the packaged one" \
	grep -qaF "/usr/lib/$multiarch/rampart/rampart_xdp.bpf.o" "$T/x/usr/sbin/rampartd"
check "no -march=native code: the build was configured RAMPART_NATIVE=OFF" \
	grep -q '^RAMPART_NATIVE:BOOL=OFF$' "$(dirname "$(dirname "$deb")")/CMakeCache.txt"
warn=""
for m in "$T"/x/usr/share/man/man*/*.gz; do
	w=$(MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
	[ -z "$w" ] || warn+=" $(basename "$m"): $w"
done
check "packaged man pages render without warnings${warn:+ ($warn)}" [ -z "$warn" ]

# --- resolves on this machine
if apt-get install --simulate "$deb" >"$T/apt.log" 2>&1 && grep -q '^Inst rampart ' "$T/apt.log"; then
	ok "apt-get install --simulate resolves every dependency here"
else
	cat "$T/apt.log"; not_ok "apt-get install --simulate resolves every dependency here"
fi

# --- a real install into a throw-away root
R=$T/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/tmp"
: >"$R/var/lib/dpkg/status"
force=--force-depends
[ "$(id -u)" -eq 0 ] || force+=,not-root
if dpkg --root="$R" "$force" --log=/dev/null -i "$deb" >"$T/dpkg.log" 2>&1 &&
   dpkg --root="$R" -s rampart 2>/dev/null | grep -q '^Status: install ok installed'; then
	ok "dpkg --root installs it (status: install ok installed)"
else
	cat "$T/dpkg.log"; not_ok "dpkg --root installs it"
fi
check "installed files in place" [ -x "$R/usr/sbin/rampartd" ] && [ -f "$R/etc/rampart/rampartd.conf" ]
# the installed programs, with the installed demo policy (host libraries)
if "$R/usr/bin/rulec" compile "$R/usr/share/rampart/examples/policies/demo.yaml" -o "$T/demo.rfw" &&
   [ "$("$R/usr/bin/rulec" query "$T/demo.rfw" icmp 10.10.0.1 10.10.0.2:echo-request | cut -d' ' -f2)" = ping-web-server ]; then
	ok "installed rulec compiles the demo policy; ping client->server meets ping-web-server"
else
	not_ok "installed rulec compiles the demo policy"
fi
for p in server router-masquerade blocklist; do
	check "installed rulec checks policies/$p.yaml" "$R/usr/bin/rulec" check "$R/usr/share/rampart/policies/$p.yaml"
done
# One ICMP echo 10.10.0.1 -> 10.10.0.2 in a capture, replayed through the
# installed rampartd (bridge a -> b): the demo policy forwards it.
/usr/bin/python3 - "$T/ping.pcap" <<'PY'
import struct, sys
def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
icmp = struct.pack('!BBHHH', 8, 0, 0, 0x1234, 1) + b'rampart-deb-test'
icmp = icmp[:2] + struct.pack('!H', csum(icmp)) + icmp[4:]
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(icmp), 1, 0, 64, 1, 0,
                 bytes([10, 10, 0, 1]), bytes([10, 10, 0, 2]))
ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
frame = bytes.fromhex('020000000002' '020000000001' '0800') + ip + icmp
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack('<IIII', 1700000000, 0, len(frame), len(frame)) + frame)
PY
if "$R/usr/sbin/rampartd" --policy "$T/demo.rfw" --backend pcap --mode bridge \
	--interface a --interface b --pcap-in "a=$T/ping.pcap" --pcap-out "b=$T/out.pcap" >"$T/run.out" 2>&1 &&
   grep -qE '^[0-9]+ ping-web-server accept 1 ' "$T/run.out" &&
   cmp -s <(tail -c +25 "$T/ping.pcap") <(tail -c +25 "$T/out.pcap"); then
	ok "installed rampartd runs the demo policy: the replayed ping is forwarded a -> b"
else
	cat "$T/run.out"; not_ok "installed rampartd runs the demo policy on a replayed ping"
fi
if dpkg --root="$R" "$force" --log=/dev/null -r rampart >"$T/dpkg.log" 2>&1 &&
   [ ! -e "$R/usr/sbin/rampartd" ] && [ -f "$R/etc/rampart/rampartd.conf" ]; then
	ok "dpkg -r removes it and keeps the conffile"
else
	cat "$T/dpkg.log"; not_ok "dpkg -r removes it and keeps the conffile"
fi
if dpkg --root="$R" "$force" --log=/dev/null -P rampart >"$T/dpkg.log" 2>&1 &&
   [ ! -e "$R/etc/rampart/rampartd.conf" ]; then
	ok "dpkg -P purges the conffile"
else
	cat "$T/dpkg.log"; not_ok "dpkg -P purges the conffile"
fi
finish

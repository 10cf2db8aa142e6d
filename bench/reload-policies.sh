#!/usr/bin/env bash
# Policies for bench/reloadbench: for 1k and 10k rules the ClassBench acl1
# sets, for 100k a generated set (random 10.x sources, port ranges); each
# as A and as B = A with one more rule first, so that every rule's number
# moves (the reload must carry everything by name).
#   bench/reload-policies.sh BUILD_DIR OUT_DIR
# then e.g.  BUILD_DIR/bench/reloadbench OUT_DIR/10k-a.rfw OUT_DIR/10k-b.rfw
set -euo pipefail
build=$(realpath "${1:?usage: $0 BUILD_DIR OUT_DIR}")
out=${2:?usage: $0 BUILD_DIR OUT_DIR}
here=$(dirname "$(realpath "$0")")
cb=$here/../../shared/data/classbench
mkdir -p "$out"

python3 "$here/classbench2yaml.py" "$cb/acl1_1k" >"$out/1k-a.yaml"
python3 "$here/classbench2yaml.py" "$cb/acl1_10k" >"$out/10k-a.yaml"
python3 - "$out/100k-a.yaml" <<'PY'
import ipaddress, random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    f.write("version: 1\nrules:\n")
    for i in range(100000):
        plen = random.choice([16, 20, 24, 28, 32])
        net = ipaddress.ip_network((random.getrandbits(24) | 0x0A000000, plen), strict=False)
        lo = random.randrange(1024, 60000)
        f.write("  - {name: r%d, proto: %s, from: {network: %s}, to: {port: %d-%d}, action: %s}\n"
                % (i, random.choice(["tcp", "udp"]), net, lo, lo + random.randrange(100),
                   random.choice(["accept", "drop"])))
    f.write("defaults: {action: drop}\n")
PY
for n in 1k 10k 100k; do
	# B: a rule first; the rest unchanged
	awk 'NR == 2 { print; print "  - {name: reload-bench-extra, proto: tcp, to: {port: 23}, action: drop}"; next } { print }' \
		"$out/$n-a.yaml" >"$out/$n-b.yaml"
	for v in a b; do
		echo "compiling $n-$v" >&2
		"$build/rulec/rulec" compile "$out/$n-$v.yaml" -o "$out/$n-$v.rfw" 2>/dev/null
	done
done
ls -l "$out"/*.rfw

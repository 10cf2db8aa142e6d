#!/usr/bin/python3
# Convert a ClassBench rule file to a rampart policy (as the issue says:
# ranges become `port: a-b`, wildcards are omitted, protocol mask 0xFF
# becomes `proto`; flags are ignored), for timing `rulec compile`.
#   bench/classbench2yaml.py ../shared/data/classbench/acl1_10k > acl1_10k.yaml
import re
import sys

RULE = re.compile(r"@(\S+)/(\d+)\s+(\S+)/(\d+)\s+(\d+) : (\d+)\s+(\d+) : (\d+)\s+0x(\w+)/0x(\w+)")


def prefix(addr, length):
    a = [int(x) for x in addr.split(".")]
    v = a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3]
    v &= (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF if length else 0
    return "%d.%d.%d.%d/%d" % (v >> 24, v >> 16 & 255, v >> 8 & 255, v & 255, length)


def main(path):
    out = ["version: 1", "rules:"]
    n = 0
    for line in open(path):
        m = RULE.match(line)
        if not m:
            continue
        s, sl, d, dl, splo, sphi, dplo, dphi, proto, pmask = m.groups()
        sl, dl = int(sl), int(dl)
        n += 1
        out += ["  - name: r%d" % n, "    action: accept"]
        if int(pmask, 16) == 0xFF:
            out.append("    proto: %d" % int(proto, 16))
        frm, to = [], []
        if sl:
            frm.append("network: %s" % prefix(s, sl))
        if dl:
            to.append("network: %s" % prefix(d, dl))
        if (splo, sphi) != ("0", "65535"):
            frm.append("port: %s-%s" % (splo, sphi))
        if (dplo, dphi) != ("0", "65535"):
            to.append("port: %s-%s" % (dplo, dphi))
        if frm:
            out.append("    from: {%s}" % ", ".join(frm))
        if to:
            out.append("    to: {%s}" % ", ".join(to))
    out.append("defaults: {action: drop}")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/python3
# The kernel contender of bench/e2e: a rampart policy (the subset the
# end-to-end lab uses: zones, rules with proto / from / to networks and
# ports, accept or drop, defaults, masquerade NAT) as an nftables ruleset
# for the firewall namespace's forward path.
#   bench/e2e/yaml2nft.py POLICY.yaml [--form linear|set] > rules.nft
# linear: one nft rule per policy rule, in order, in one chain (what a
#         user converting rule by rule gets);
# set:    the accept rules as concatenated interval sets (saddr . daddr .
#         proto . sport . dport, nft's pipapo); an interval set refuses
#         overlapping elements, so the rules are spread greedily over as
#         few sets as needed, one lookup each;
#         a policy whose drop rules come before accepts it cannot reorder
#         is refused.
# With --form set the output is several nft -f inputs, each after a line
# "# --- batch ---" (the set's elements, 500 at a time).
# Both: conntrack accepts established/related first, the default action
# as the chain policy, masquerade in postrouting for the NAT rules.
import sys

import yaml


def zone_ifaces(zones, z):
    return zones.get(z, [z])


def side(pol, d, dirn):
    """nft match expressions of a from/to block."""
    out = []
    if not d:
        return out
    zones = pol.get("zones", {}) or {}
    if "zone" in d:
        ifs = zone_ifaces(zones, d["zone"])
        kw = "iifname" if dirn == "from" else "oifname"
        out.append("%s { %s }" % (kw, ", ".join('"%s"' % i for i in ifs)))
    addr = "saddr" if dirn == "from" else "daddr"
    port = "sport" if dirn == "from" else "dport"
    if "network" in d:
        out.append("ip %s %s" % (addr, d["network"]))
    if "port" in d:
        out.append("th %s %s" % (port, d["port"]))
    return out


def proto_num(p):
    return {"tcp": 6, "udp": 17, "icmp": 1}.get(p, p)


def linear(pol, rules):
    lines = []
    for r in rules:
        m = []
        if "proto" in r:
            m.append("meta l4proto %s" % proto_num(r["proto"]))
        m += side(pol, r.get("from"), "from") + side(pol, r.get("to"), "to")
        verdict = "accept" if r["action"] == "accept" else "drop"
        lines.append("\t\t%s counter %s comment \"%s\"" % (" ".join(m), verdict, r["name"]))
    return lines


def rng(v, full):
    if v is None:
        return full
    s = str(v)
    return s if "-" in s else "%s-%s" % (s, s)


def ip_range(net):
    a, _, l = net.partition("/")
    l = int(l) if l else 32
    o = [int(x) for x in a.split(".")]
    v = o[0] << 24 | o[1] << 16 | o[2] << 8 | o[3]
    lo = v & ((0xFFFFFFFF << (32 - l)) & 0xFFFFFFFF if l else 0)
    return lo, lo | ((1 << (32 - l)) - 1)


def num_range(s):
    a, _, b = s.partition("-")
    return int(a), int(b or a)


def overlap(x, y):
    return all(a[0] <= b[1] and b[0] <= a[1] for a, b in zip(x, y))


class Partition:
    """Interval sets refuse overlapping elements (EEXIST): spread the
    boxes over as few sets as greedily fits, none overlapping in its set.
    Candidates are found by the source's first octet (a /8 or longer
    source falls in one bucket; shorter ones are checked against all)."""

    def __init__(self):
        self.sets = []		# per set: (buckets {octet: [box]}, wide [box], all [box])

    def add(self, box):
        lo, hi = box[0]
        narrow = (lo >> 24) == (hi >> 24)
        for k, (buckets, wide, every) in enumerate(self.sets):
            cands = (buckets.get(lo >> 24, []) + wide) if narrow else every
            if not any(overlap(box, c) for c in cands):
                break
        else:
            self.sets.append(({}, [], []))
            k = len(self.sets) - 1
        buckets, wide, every = self.sets[k]
        (buckets.setdefault(lo >> 24, []) if narrow else wide).append(box)
        every.append(box)
        return k


def as_set(pol, rules):
    elems, extra = [], []
    part = Partition()
    for r in rules:
        if r["action"] != "accept":
            sys.exit("yaml2nft: --form set takes accept rules only (%s)" % r["name"])
        f, t = r.get("from") or {}, r.get("to") or {}
        if "zone" in f or "zone" in t:	# a rule tied to interfaces: its own rule
            extra += linear(pol, [r])
            continue
        p = proto_num(r["proto"]) if "proto" in r else None
        e = (f.get("network", "0.0.0.0/0"), t.get("network", "0.0.0.0/0"),
             "%d-%d" % (p, p) if p is not None else "0-255",
             rng(f.get("port"), "0-65535"), rng(t.get("port"), "0-65535"))
        box = (ip_range(e[0]), ip_range(e[1]), num_range(e[2]), num_range(e[3]),
               num_range(e[4]))
        elems.append((part.add(box), " . ".join(e)))
    nsets = len(part.sets)
    lines = ["\t\tip saddr . ip daddr . meta l4proto . th sport . th dport @acl%d counter accept" % k
             for k in range(nsets)]
    return lines + extra, elems, nsets


def main():
    path = sys.argv[1]
    form = "linear"
    if "--form" in sys.argv:
        form = sys.argv[sys.argv.index("--form") + 1]
    pol = yaml.safe_load(open(path))
    rules = pol.get("rules", [])
    default = (pol.get("defaults") or {}).get("action", "drop")
    zones = pol.get("zones", {}) or {}
    out = ["table inet rampart_e2e {"]
    if form == "set":
        body, elems, nsets = as_set(pol, rules)
        for k in range(nsets):
            out += ["\tset acl%d {" % k,
                    "\t\ttype ipv4_addr . ipv4_addr . inet_proto . inet_service . inet_service",
                    "\t\tflags interval",
                    "\t}"]
    else:
        body = linear(pol, rules)
    out += ["\tchain forward {",
            "\t\ttype filter hook forward priority filter; policy %s;" %
            ("accept" if default == "accept" else "drop"),
            "\t\tct state established,related counter accept"]
    out += body
    out += ["\t}"]
    nat = [n for n in pol.get("nat", []) or [] if (n.get("snat") or {}).get("to") == "masquerade"]
    if nat:
        out += ["\tchain postrouting {", "\t\ttype nat hook postrouting priority srcnat; policy accept;"]
        for n in nat:
            m = n.get("match", {})
            m = side(pol, m.get("from"), "from") + side(pol, m.get("to"), "to")
            out.append("\t\tmeta nfproto ipv4 %s masquerade" % " ".join(m))
        out += ["\t}"]
    out.append("}")
    # The elements in batches: one netlink message with 10k interval
    # elements fails (ENOBUFS). run.sh feeds each batch to its own nft -f.
    if form == "set":
        for k in range(nsets):
            mine = [e for s, e in elems if s == k]
            for i in range(0, len(mine), 500):
                out.append("# --- batch ---")
                out.append("add element inet rampart_e2e acl%d { %s }" % (k, ", ".join(mine[i:i + 500])))
    print("\n".join(out))


if __name__ == "__main__":
    main()

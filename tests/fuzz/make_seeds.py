#!/usr/bin/python3
# Writes the pipeline fuzzer's seed corpus (corpus/pipeline/): bursts of
# frames in its record format [port][time step][len lo][len hi][frame],
# covering a TCP connection through masquerade, DNAT, ICMP, IPv6,
# fragments (also last first), VLAN, reject and port MTUs, SCTP through both NATs, a DMZ
# forward of packets without ports, IPv4 options and IPv6 routing headers
# (a record's first byte with bit 7: its IPv4 checksum left wrong); and
# fuzz_handoff's own
# (corpus/handoff/: the same records, the first byte also naming the
# worker whose queue a frame arrives on, and reloads). Run once; the
# files are committed.
import os
import struct
from scapy.all import (Dot1Q, Ether, GRE, ICMP, IP, IPOption_LSRR, IPOption_RR, IPv6,
                       IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting,
                       ICMPv6EchoRequest, Raw, SCTP, SCTPChunkData, SCTPChunkInit, TCP, UDP,
                       fragment)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "pipeline")
L, W = 0, 1


def rec(port, frame, step=0):
    b = bytes(frame)
    return struct.pack("<BBH", port, step, len(b)) + b


def eth():
    return Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:01")


SEEDS = {
    "tcp_masquerade": [
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7") / TCP(sport=40000, dport=443, flags="S", seq=1000)),
        rec(W, eth() / IP(src="10.3.7.7", dst="10.2.0.1") / TCP(sport=443, dport=20000, flags="SA", seq=5000, ack=1001), 1),
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7") / TCP(sport=40000, dport=443, flags="A", seq=1001, ack=5001)),
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7") / TCP(sport=40000, dport=443, flags="FA", seq=1001, ack=5001)),
    ],
    "tcp_mss": [  # defaults.tcp_mss: clamp lowers these MSS options (1500 and 1280 MTUs)
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7") / TCP(sport=40001, dport=443, flags="S", seq=1000,
            options=[("MSS", 1460), ("NOP", None), ("WScale", 7), ("SAckOK", b""), ("Timestamp", (1, 0))])),
        rec(W, eth() / IP(src="10.3.7.7", dst="10.2.0.1") / TCP(sport=443, dport=20001, flags="SA", seq=5000, ack=1001,
            options=[("NOP", None), ("MSS", 9000), ("EOL", None)]), 1),
    ],
    "dnat": [
        rec(W, eth() / IP(src="10.3.9.9", dst="10.2.0.1") / TCP(sport=5555, dport=8080, flags="S")),
        rec(L, eth() / IP(src="10.1.0.3", dst="10.3.9.9") / TCP(sport=80, dport=5555, flags="SA", ack=1)),
    ],
    "icmp": [
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7") / ICMP(id=7) / Raw(b"x" * 16)),
        rec(W, eth() / IP(src="10.3.7.7", dst="10.2.0.1") / ICMP(type=0, id=20000) / Raw(b"x" * 16)),
        rec(W, eth() / IP(src="10.3.0.254", dst="10.2.0.1") / ICMP(type=11) /
            bytes(IP(src="10.2.0.1", dst="10.3.7.7", ttl=1) / UDP(sport=20001, dport=33434))[:28]),
    ],
    "ipv6": [
        rec(L, eth() / IPv6(src="fd00:0:0:1::2", dst="fd00:9::1") / ICMPv6EchoRequest()),
        rec(L, eth() / IPv6(src="fd00:0:0:1::2", dst="fd00:9::1", hlim=1) / UDP(dport=53)),
    ],
    "fragments": [rec(L, f) for f in fragment(eth() / IP(src="10.1.0.2", dst="10.3.7.7") /
                                               UDP(sport=7000, dport=53) / Raw(b"y" * 100), fragsize=48)],
    # last first: the others parked until the first comes (park_fragments)
    "fragments_reversed": [rec(L, f) for f in reversed(fragment(
        eth() / IP(src="10.1.0.2", dst="10.3.7.7", id=77) / UDP(sport=7001, dport=53) / Raw(b"r" * 100),
        fragsize=48))],
    "mtu": [  # wan0's MTU is 1280: no DF cut into fragments, DF too big
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7") / UDP(sport=7001, dport=53) / Raw(b"z" * 1400)),
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7", flags="DF") / UDP(sport=7002, dport=53) /
            Raw(b"z" * 1400)),
        rec(L, eth() / IPv6(src="fd00:0:0:1::2", dst="fd00:9::1") / UDP(dport=53) / Raw(b"z" * 1300)),
    ],
    "sctp": [
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7") / SCTP(sport=5000, dport=3868) /
            SCTPChunkInit(init_tag=1, a_rwnd=65535, n_out_streams=1, n_in_streams=1, init_tsn=1)),
        rec(W, eth() / IP(src="10.3.9.9", dst="10.2.0.1") / SCTP(sport=6000, dport=3868) /
            SCTPChunkInit(init_tag=2, a_rwnd=65535, n_out_streams=1, n_in_streams=1, init_tsn=1)),
        rec(L, eth() / IP(src="10.1.0.3", dst="10.3.9.9") / SCTP(sport=13868, dport=6000, tag=2) /
            SCTPChunkData(tsn=1, data=b"a" * 40)),
    ] + [rec(W, f) for f in fragment(eth() / IP(src="10.3.9.9", dst="10.2.0.1") /
                                     SCTP(sport=6001, dport=3868) / SCTPChunkData(data=b"b" * 100),
                                     fragsize=48)],
    "dmz": [
        rec(W, eth() / IP(src="10.3.9.9", dst="10.2.0.2") / ICMP(id=9) / Raw(b"x" * 16)),
        rec(L, eth() / IP(src="10.1.0.3", dst="10.3.9.9") / ICMP(type=0, id=9) / Raw(b"x" * 16)),
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7") / GRE() / Raw(b"g" * 20)),
        rec(W, eth() / IP(src="10.3.7.7", dst="10.2.0.1") / GRE() / Raw(b"g" * 20)),
    ],
    "vlan_reject": [
        rec(L, eth() / Dot1Q(vlan=5) / IP(src="10.1.0.2", dst="10.3.7.7") / TCP(dport=23, flags="S")),
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7", ttl=1) / UDP(dport=9)),
    ],
    "headers": [  # options, routing headers, header order, a wrong IPv4 checksum
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7", options=[IPOption_RR()]) / UDP(dport=53)),
        rec(L, eth() / IP(src="10.1.0.2", dst="10.3.7.7", options=[IPOption_LSRR(routers=["10.3.7.8"])])
            / UDP(dport=53)),
        rec(L, eth() / IPv6(src="fd00:0:0:1::2", dst="fd00:9::1") /
            IPv6ExtHdrRouting(type=0, addresses=["fd00:9::2"]) / UDP(dport=53)),
        rec(L, eth() / IPv6(src="fd00:0:0:1::2", dst="fd00:9::1") /
            IPv6ExtHdrRouting(type=2, addresses=["fd00:9::2"], segleft=0) / UDP(dport=53)),
        rec(L, eth() / IPv6(src="fd00:0:0:1::2", dst="fd00:9::1") / IPv6ExtHdrDestOpt() /
            IPv6ExtHdrHopByHop() / UDP(dport=53)),
        rec(L | 0x80, eth() / IP(src="10.1.0.2", dst="10.3.7.7", chksum=0x1234) / UDP(dport=53)),
    ],
}

RELOAD = 0xff  # fuzz_handoff: reload first; the frame then on worker 0 (3 % 3), wan0


def at(worker, port, reload=False):
    return RELOAD if reload else worker << 1 | port


# fuzz_handoff: masqueraded UDP answers to ports a forward also takes (the
# answers to each of a few ports, on every worker: one is the flow's);
# TCP the same; a forwarded connection moved by a reload and its old
# connection's next segments.
HANDOFF = {
    "udp_answers_on_forwarded_ports":
        [rec(at(0, L), eth() / IP(src="10.1.0.2", dst="10.3.7.7") / UDP(sport=40000 + i, dport=53))
         for i in range(4)] +
        [rec(at(w, W), eth() / IP(src="10.3.7.7", dst="10.2.0.1") / UDP(sport=53, dport=20000 + p), 1)
         for p in range(8) for w in range(3)],
    "tcp_answers_on_forwarded_ports":
        [rec(at(1, L), eth() / IP(src="10.1.0.2", dst="10.3.7.7") / TCP(sport=41000, dport=443, flags="S"))] +
        [rec(at(w, W), eth() / IP(src="10.3.7.7", dst="10.2.0.1") /
             TCP(sport=443, dport=20000 + p, flags="SA", seq=5000, ack=1), 1)
         for p in range(4) for w in range(3)],
    "portless_answers":
        [rec(at(0, L), eth() / IP(src="10.1.0.2", dst="10.3.7.7") / ICMP(id=7 + i) / Raw(b"x" * 8))
         for i in range(3)] +
        [rec(at(w, W), eth() / IP(src="10.3.7.7", dst="10.2.0.1") / ICMP(type=0, id=20000 + i) /
             Raw(b"x" * 8), 1) for i in range(3) for w in range(3)],
    # a forwarded datagram last fragment first, each on another queue:
    # parked on its datagram's worker, then on to the flow's
    "fragments_reversed": [rec(at(w, W), f) for w, f in enumerate(reversed(fragment(
        eth() / IP(src="10.3.9.9", dst="10.2.0.1", id=78) / UDP(sport=5557, dport=8080) / Raw(b"r" * 100),
        fragsize=48)))],
    "dnat_moved": [
        rec(at(2, W), eth() / IP(src="10.3.9.9", dst="10.2.0.1") / TCP(sport=5555, dport=8080, flags="S")),
        rec(at(0, L), eth() / IP(src="10.1.0.3", dst="10.3.9.9") / TCP(sport=80, dport=5555, flags="SA", ack=1)),
        rec(at(0, W, True), eth() / IP(src="10.3.9.9", dst="10.2.0.1") /
            TCP(sport=5555, dport=8080, flags="A", seq=1, ack=1)),
        rec(at(2, W), eth() / IP(src="10.3.9.9", dst="10.2.0.1") / TCP(sport=5556, dport=8080, flags="S")),
        rec(at(0, L), eth() / IP(src="10.1.0.3", dst="10.3.9.9") / TCP(sport=80, dport=5555, flags="A", seq=1, ack=1)),
    ],
}

for out, seeds in ((OUT, SEEDS), (os.path.join(os.path.dirname(OUT), "handoff"), HANDOFF)):
    os.makedirs(out, exist_ok=True)
    for name, recs in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"".join(recs))
    print("wrote %d seeds to %s" % (len(seeds), out))

# Golden cases for rampartd --backend pcap: each is one policy and one
# scapy function returning the frames received on each interface. Adding
# a case = one @case function (+ its policy); then run
#   tests/golden/golden.py --build build --regen CASE
# and check the new expected/CASE/ files before committing them.
from scapy.all import (ARP, Dot1Q, Ether, ICMP, IP, IPv6, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrHopByHop, ICMPv6EchoRequest, Raw, SCTP, SCTPChunkData,
                       SCTPChunkInit, SCTPChunkInitAck, TCP, UDP)

CASES = {}

CLI_MAC = "02:00:00:00:00:0a"
SRV_MAC = "02:00:00:00:00:0b"
GW_MAC = "02:00:00:00:00:0c"
LAN_MAC = "02:00:00:00:01:01"
WAN_MAC = "02:00:00:00:02:01"


def case(name, policy, ifaces=("lan0", "wan0"), mode="bridge", options=()):
    """Register fn() -> {ifname: [frames]} as golden case `name`."""
    def reg(fn):
        CASES[name] = dict(name=name, policy=policy, ifaces=list(ifaces),
                           mode=mode, options=list(options), frames=fn)
        return fn
    return reg


def c2s():
    return Ether(src=CLI_MAC, dst=SRV_MAC)


def s2c():
    return Ether(src=SRV_MAC, dst=CLI_MAC)


PAYLOAD = Raw(b"rampart golden payload")

# ---- bridge mode -------------------------------------------------------

BRIDGE_POLICY = """\
version: 1
networks:
  clients: [10.1.0.0/24, "fd00:1::/64"]
rules:
  - name: web-in
    proto: tcp
    from: {network: clients}
    to: {port: 80}
    action: accept
  - name: web-out
    proto: tcp
    from: {port: 80}
    to: {network: clients}
    action: accept
  - name: no-udp-9000
    proto: udp
    to: {port: 9000}
    action: drop
  - name: no-telnet
    proto: tcp
    to: {port: 23}
    action: reject
  - name: no-discard
    proto: udp
    to: {port: 9}
    action: reject
  - name: no-ping6
    proto: icmpv6
    action: reject
defaults: {action: drop, stateful: false}
"""


@case("bridge_rules", BRIDGE_POLICY)
def bridge_rules():
    c, s = "10.1.0.2", "10.1.0.3"
    return {
        "lan0": [
            c2s() / IP(src=c, dst=s) / TCP(sport=40000, dport=80, flags="S", seq=1000),
            c2s() / IP(src=c, dst=s) / UDP(sport=40001, dport=9000) / PAYLOAD,
            c2s() / IP(src=c, dst=s) / ICMP(id=7, seq=1) / PAYLOAD,      # default drop
            Ether(src=CLI_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc=c, pdst=s, hwsrc=CLI_MAC),
            c2s() / IPv6(src="fd00:1::2", dst="fd00:1::3") / TCP(sport=40002, dport=80, flags="S"),
        ],
        "wan0": [
            s2c() / IP(src=s, dst=c) / TCP(sport=80, dport=40000, flags="SA", seq=5000, ack=1001),
            s2c() / IP(src=s, dst=c) / TCP(sport=8080, dport=40000, flags="SA"),  # default drop
        ],
    }


@case("bridge_reject", BRIDGE_POLICY)
def bridge_reject():
    c, s = "10.1.0.2", "10.1.0.3"
    return {
        "lan0": [
            # SYN to telnet: RST|ACK from the server's address
            c2s() / IP(src=c, dst=s) / TCP(sport=40010, dport=23, flags="S", seq=77),
            # ACK segment to telnet: RST with seq = its ack
            c2s() / IP(src=c, dst=s) / TCP(sport=40011, dport=23, flags="A", seq=5, ack=99),
            # a RST is never answered
            c2s() / IP(src=c, dst=s) / TCP(sport=40012, dport=23, flags="R", seq=5),
            # UDP to discard: ICMP 3/13 quoting the datagram
            c2s() / IP(src=c, dst=s) / UDP(sport=40013, dport=9) / PAYLOAD,
            # ICMPv6 echo: ICMPv6 1/1
            c2s() / IPv6(src="fd00:1::2", dst="fd00:1::3") / ICMPv6EchoRequest(id=1, seq=1) / PAYLOAD,
            # IPv6 TCP to telnet: RST
            c2s() / IPv6(src="fd00:1::2", dst="fd00:1::3") / TCP(sport=40014, dport=23, flags="S", seq=9),
        ],
        "wan0": [],
    }


@case("bridge_ipv6_ext", BRIDGE_POLICY)
def bridge_ipv6_ext():
    c, s = "fd00:1::2", "fd00:1::3"
    return {
        "lan0": [
            # extension headers before TCP: the ports are still found
            c2s() / IPv6(src=c, dst=s) / IPv6ExtHdrHopByHop() / TCP(sport=40020, dport=80, flags="S"),
            c2s() / IPv6(src=c, dst=s) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt()
            / TCP(sport=40021, dport=80, flags="S"),
            c2s() / IPv6(src=c, dst=s) / IPv6ExtHdrDestOpt() / UDP(sport=40022, dport=9000) / PAYLOAD,
        ],
        "wan0": [
            s2c() / IPv6(src=s, dst=c) / TCP(sport=80, dport=40020, flags="SA") / PAYLOAD,
        ],
    }


@case("bridge_fragments", BRIDGE_POLICY)
def bridge_fragments():
    c, s = "10.1.0.2", "10.1.0.3"
    whole = IP(src=c, dst=s, id=4242) / TCP(sport=40030, dport=80, flags="PA") / Raw(b"x" * 64)
    raw = bytes(whole)
    first = IP(src=c, dst=s, id=4242, flags="MF", frag=0, proto=6) / Raw(raw[20:20 + 40])
    rest = IP(src=c, dst=s, id=4242, flags=0, frag=5, proto=6) / Raw(raw[20 + 40:])
    return {
        # the first fragment carries the ports; a non-first one does not
        # and (stateless) meets only rules without ports
        "lan0": [c2s() / first, c2s() / rest],
        "wan0": [],
    }


@case("bridge_vlan", BRIDGE_POLICY)
def bridge_vlan():
    c, s = "10.1.0.2", "10.1.0.3"
    return {
        "lan0": [
            c2s() / Dot1Q(vlan=100) / IP(src=c, dst=s) / TCP(sport=40040, dport=80, flags="S"),
            Ether(src=CLI_MAC, dst=SRV_MAC, type=0x88A8) / Dot1Q(vlan=10) / Dot1Q(vlan=20)
            / IP(src=c, dst=s) / TCP(sport=40041, dport=80, flags="S"),
            c2s() / Dot1Q(vlan=100) / IP(src=c, dst=s) / UDP(sport=40042, dport=9000) / PAYLOAD,
            c2s() / Dot1Q(vlan=100) / IP(src=c, dst=s) / TCP(sport=40043, dport=23, flags="S"),
        ],
        "wan0": [],
    }


def _bytes_frame(b):
    return Ether(b)


@case("bridge_malformed", BRIDGE_POLICY)
def bridge_malformed():
    c, s = "10.1.0.2", "10.1.0.3"
    good = bytes(c2s() / IP(src=c, dst=s) / TCP(sport=40050, dport=80, flags="S"))
    bad_ihl = bytearray(good)
    bad_ihl[14] = 0x43                     # IHL 3: shorter than an IPv4 header
    v6 = bytes(c2s() / IPv6(src="fd00:1::2", dst="fd00:1::3", nh=0)
               / IPv6ExtHdrHopByHop(nh=60) / IPv6ExtHdrDestOpt(nh=6))
    bad_ext = v6[:14 + 40 + 8 + 4]         # chain cut inside the second header
    return {
        "lan0": [
            _bytes_frame(good[:14 + 12]),   # truncated IPv4 header
            _bytes_frame(bytes(bad_ihl)),
            _bytes_frame(bad_ext),
            _bytes_frame(good[:14 + 20 + 6]),  # TCP header cut short
            _bytes_frame(good),             # and one good frame after them
        ],
        "wan0": [],
    }


# ---- router mode -------------------------------------------------------

ROUTER_POLICY = """\
version: 1
zones:
  inside: [lan0]
  outside: [wan0]
rules:
  - name: no-telnet
    proto: tcp
    to: {port: 23}
    action: reject
  - name: out
    from: {zone: inside}
    to: {zone: outside}
    action: accept
  - name: web-replies
    proto: tcp
    from: {zone: outside, port: 80}
    to: {zone: inside}
    action: accept
defaults: {action: drop, stateful: false}
routes:
  - {prefix: 10.1.0.0/24, interface: lan0}
  - {prefix: 10.2.0.0/24, interface: wan0}
  - {prefix: 10.3.0.0/16, via: 10.2.0.254, interface: wan0}
  - {prefix: "fd00:1::/64", interface: lan0}
  - {prefix: "fd00:2::/64", interface: wan0}
"""

ROUTER_OPTIONS = [
    "--port-addr", "lan0=%s,10.1.0.1,fd00:1::1" % LAN_MAC,
    "--port-addr", "wan0=%s,10.2.0.1,fd00:2::1" % WAN_MAC,
    "--neighbor", "lan0=10.1.0.2=%s" % CLI_MAC,
    "--neighbor", "lan0=fd00:1::2=%s" % CLI_MAC,
    "--neighbor", "wan0=10.2.0.2=%s" % SRV_MAC,
    "--neighbor", "wan0=fd00:2::2=%s" % SRV_MAC,
    "--neighbor", "wan0=10.2.0.254=%s" % GW_MAC,
]


def to_lan():
    return Ether(src=CLI_MAC, dst=LAN_MAC)


def to_wan():
    return Ether(src=SRV_MAC, dst=WAN_MAC)


@case("router_forward", ROUTER_POLICY, mode="router", options=ROUTER_OPTIONS)
def router_forward():
    c, s = "10.1.0.2", "10.2.0.2"
    return {
        "lan0": [
            to_lan() / IP(src=c, dst=s, ttl=64) / TCP(sport=40100, dport=80, flags="S"),
            to_lan() / IP(src=c, dst="10.3.7.7", ttl=10) / UDP(sport=40101, dport=4000) / PAYLOAD,
            to_lan() / IPv6(src="fd00:1::2", dst="fd00:2::2", hlim=64) / TCP(sport=40102, dport=80, flags="S"),
            to_lan() / IP(src=c, dst="10.2.0.9") / ICMP(id=1, seq=1),   # no neighbour
            to_lan() / IP(src=c, dst="10.9.9.9") / ICMP(id=1, seq=2),   # no route
            Ether(src=CLI_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc=c, pdst="10.1.0.1"),  # the kernel's
            to_lan() / IP(src=c, dst=s) / TCP(sport=40103, dport=23, flags="S", seq=3),  # reject
        ],
        "wan0": [
            to_wan() / IP(src=s, dst=c, ttl=64) / TCP(sport=80, dport=40100, flags="SA"),
            to_wan() / IP(src=s, dst=c) / TCP(sport=22, dport=40100, flags="SA"),  # default drop
        ],
    }


@case("router_ttl", ROUTER_POLICY, mode="router", options=ROUTER_OPTIONS)
def router_ttl():
    c, s = "10.1.0.2", "10.2.0.2"
    return {
        "lan0": [
            # expired here: time-exceeded from lan0's address
            to_lan() / IP(src=c, dst=s, ttl=1) / UDP(sport=40110, dport=33434) / PAYLOAD,
            to_lan() / IPv6(src="fd00:1::2", dst="fd00:2::2", hlim=1) / UDP(sport=40111, dport=33434) / PAYLOAD,
            # TTL 2 leaves with 1
            to_lan() / IP(src=c, dst=s, ttl=2) / UDP(sport=40112, dport=33434) / PAYLOAD,
        ],
        "wan0": [],
    }


# ---- stateful router with NAT --------------------------------------------

JUMBO_OPTIONS = [o.replace("fd00:1::1", "fd00:1::1,mtu=9200").replace("fd00:2::1", "fd00:2::1,mtu=9000")
                 for o in ROUTER_OPTIONS]


@case("router_jumbo", ROUTER_POLICY, mode="router", options=JUMBO_OPTIONS)
def router_jumbo():
    """Jumbo frames (lan0 MTU 9200, wan0 9000, --port-addr mtu=): an
    8,000-byte datagram goes through whole, IPv4 and IPv6; one of 9,150
    bytes without DF leaves wan0 as two fragments of at most 9,000; with
    DF it is answered fragmentation needed, MTU 9000. With --backend
    dpdk the ports get those MTUs and mbufs that hold such frames whole."""
    c, s = "10.1.0.2", "10.2.0.2"
    udp = lambda n: UDP(sport=40200, dport=5000) / Raw(bytes(range(256)) * (n // 256) + b"j" * (n % 256))
    return {
        "lan0": [
            to_lan() / IP(src=c, dst=s, id=0x6a01) / udp(8000 - 28),
            to_lan() / IPv6(src="fd00:1::2", dst="fd00:2::2") / udp(8000 - 48),
            to_lan() / IP(src=c, dst=s, id=0x6a02) / udp(9150 - 28),
            to_lan() / IP(src=c, dst=s, id=0x6a03, flags="DF") / udp(9150 - 28),
        ],
        "wan0": [],
    }


NAT_POLICY = """\
version: 1
zones:
  inside: [lan0]
  outside: [wan0]
rules:
  - name: lan-out
    from: {zone: inside}
    to: {zone: outside}
    action: accept
  - name: web-server
    proto: tcp
    to: {network: 10.1.0.3, port: 80}
    action: accept
defaults: {action: drop}
nat:
  - name: web-forward
    match: {from: {zone: outside}, to: {network: 10.2.0.1, service: tcp/8080}}
    dnat: {to: 10.1.0.3, port: 80}
  - name: masq
    match: {from: {network: 10.1.0.0/24}, to: {zone: outside}}
    snat: {to: masquerade, ports: 20000-20099}
routes:
  - {prefix: 10.1.0.0/24, interface: lan0}
  - {prefix: 10.2.0.0/24, interface: wan0}
  - {prefix: 10.3.0.0/16, via: 10.2.0.254, interface: wan0}
"""

SRV_IN_MAC = "02:00:00:00:00:0d"
NAT_OPTIONS = ROUTER_OPTIONS + ["--neighbor", "lan0=10.1.0.3=%s" % SRV_IN_MAC]
PUB = "10.2.0.1"        # wan0's address: the masquerade address
FIRST_PORT = 20000      # the first port the pool hands out


@case("nat_tcp_masquerade", NAT_POLICY, mode="router", options=NAT_OPTIONS)
def nat_tcp_masquerade():
    """A whole TCP connection from the LAN through masquerade: every
    lan0 segment leaves from 10.2.0.1:20000, every reply comes back to
    10.1.0.2:40000; then a stray segment to another public port."""
    c, r = "10.1.0.2", "10.3.7.7"
    out = lambda **kw: to_lan() / IP(src=c, dst=r) / TCP(sport=40000, dport=443, **kw)
    back = lambda **kw: Ether(src=GW_MAC, dst=WAN_MAC) / IP(src=r, dst=PUB) / \
        TCP(sport=443, dport=FIRST_PORT, **kw)
    return {
        "lan0": [
            out(flags="S", seq=1000),
            out(flags="A", seq=1001, ack=5001),
            out(flags="PA", seq=1001, ack=5023) / PAYLOAD,
            out(flags="FA", seq=1023, ack=5024),
        ],
        "wan0": [
            back(flags="SA", seq=5000, ack=1001),
            back(flags="PA", seq=5001, ack=1001) / PAYLOAD,
            back(flags="FA", seq=5023, ack=1023),
            back(flags="A", seq=5024, ack=1024),
            Ether(src=GW_MAC, dst=WAN_MAC) / IP(src=r, dst=PUB) /
            TCP(sport=443, dport=FIRST_PORT + 1, flags="A", seq=1, ack=1),  # no flow
        ],
    }


@case("nat_dnat_port_forward", NAT_POLICY, ifaces=("wan0", "lan0"), mode="router",
      options=NAT_OPTIONS)
def nat_dnat_port_forward():
    """10.3.9.9 connects to 10.2.0.1:8080; the server 10.1.0.3:80 gets it
    and its answers leave as 10.2.0.1:8080."""
    x, srv = "10.3.9.9", "10.1.0.3"
    inb = lambda dport=8080, **kw: Ether(src=GW_MAC, dst=WAN_MAC) / IP(src=x, dst=PUB) / \
        TCP(sport=5555, dport=dport, **kw)
    ans = lambda **kw: Ether(src=SRV_IN_MAC, dst=LAN_MAC) / IP(src=srv, dst=x) / \
        TCP(sport=80, dport=5555, **kw)
    return {
        "wan0": [
            inb(flags="S", seq=70),
            inb(flags="A", seq=71, ack=901),
            inb(flags="S", seq=70, dport=8081),     # no DNAT, no rule: dropped
        ],
        "lan0": [
            ans(flags="SA", seq=900, ack=71),
            ans(flags="PA", seq=901, ack=71) / PAYLOAD,
        ],
    }


@case("nat_icmp", NAT_POLICY, mode="router", options=NAT_OPTIONS)
def nat_icmp():
    """Ping through masquerade (the echo id is the translated "port"), and
    a time-exceeded from a router on the way about a masqueraded UDP
    packet: the client gets it with the quoted packet translated back."""
    c, r, hop = "10.1.0.2", "10.3.7.7", "10.3.0.254"
    udp_out = IP(src=PUB, dst=r, ttl=1) / UDP(sport=FIRST_PORT + 1, dport=33434) / PAYLOAD
    return {
        "lan0": [
            to_lan() / IP(src=c, dst=r) / ICMP(id=0x4242, seq=1) / PAYLOAD,
            to_lan() / IP(src=c, dst=r, ttl=9) / UDP(sport=41000, dport=33434) / PAYLOAD,
        ],
        "wan0": [
            Ether(src=GW_MAC, dst=WAN_MAC) / IP(src=r, dst=PUB) /
            ICMP(type=0, id=FIRST_PORT, seq=1) / PAYLOAD,
            Ether(src=GW_MAC, dst=WAN_MAC) / IP(src=hop, dst=PUB) /
            ICMP(type=11, code=0) / bytes(udp_out)[:28],
        ],
    }


UDP_FORWARD_POLICY = NAT_POLICY.replace("""defaults: {action: drop}
nat:
""", """  - name: udp-server
    proto: udp
    to: {network: 10.1.0.3, port: 30053}
    action: accept
defaults: {action: drop}
nat:
  - name: udp-forward
    match: {from: {zone: outside}, to: {network: 10.2.0.1, service: udp/5353}}
    dnat: {to: 10.1.0.3, port: 30053}
""")


@case("nat_fragments_reordered", UDP_FORWARD_POLICY, ifaces=("wan0", "lan0"), mode="router",
      options=NAT_OPTIONS)
def nat_fragments_reordered():
    """A UDP datagram to a port forward (10.2.0.1:5353 to 10.1.0.3:30053) in
    three fragments that arrive last first: the two without ports wait
    for the first (parked, not dropped as frag-orphan) and leave behind
    it with its translation (to 10.1.0.3); the UDP checksum, updated in
    the first for the new address and port, holds for the datagram they
    make. Then an orphan whose first never comes: nothing leaves for it."""
    x, srv = "10.3.9.9", "10.1.0.3"
    whole = IP(src=x, dst=PUB, id=0x5151) / UDP(sport=41500, dport=5353) / Raw(b"f" * 56)
    l4 = bytes(whole)[20:]
    part = lambda off, data, more: Ether(src=GW_MAC, dst=WAN_MAC) / IP(
        src=x, dst=PUB, id=0x5151, proto=17, flags="MF" if more else 0, frag=off // 8) / Raw(data)
    return {
        "wan0": [
            part(48, l4[48:], False),
            part(24, l4[24:48], True),
            part(0, l4[:24], True),
            Ether(src=GW_MAC, dst=WAN_MAC) / IP(src=x, dst=PUB, id=0x5252, proto=17, frag=3)
            / Raw(b"o" * 16),
        ],
        "lan0": [],
    }


SCTP_NAT_POLICY = NAT_POLICY.replace("""defaults: {action: drop}
nat:
""", """  - name: diameter-server
    proto: sctp
    to: {network: 10.1.0.3, port: 3868}
    action: accept
defaults: {action: drop}
nat:
  - name: diameter-forward
    match: {from: {zone: outside}, to: {network: 10.2.0.1, service: sctp/13868}}
    dnat: {to: 10.1.0.3, port: 3868}
""")


@case("nat_sctp", SCTP_NAT_POLICY, mode="router", options=NAT_OPTIONS)
def nat_sctp():
    """SCTP through masquerade (the client's port becomes one of the
    pool's) and through a forward that rewrites the port (13868 to the
    server's 3868): every packet leaves with its CRC32c recomputed, which
    tshark checks (golden.py's sctp.checksum option)."""
    c, r, x, srv = "10.1.0.2", "10.3.7.7", "10.3.9.9", "10.1.0.3"
    wan = lambda src: Ether(src=GW_MAC, dst=WAN_MAC) / IP(src=src, dst=PUB)
    return {
        "lan0": [
            to_lan() / IP(src=c, dst=r) / SCTP(sport=5000, dport=3868, tag=0) /
            SCTPChunkInit(init_tag=0x1111, a_rwnd=65535, n_out_streams=1, n_in_streams=1,
                          init_tsn=100),
            to_lan() / IP(src=c, dst=r) / SCTP(sport=5000, dport=3868, tag=0x2222) /
            SCTPChunkData(tsn=100, stream_id=0, stream_seq=0, data=b"CER"),
            Ether(src=SRV_IN_MAC, dst=LAN_MAC) / IP(src=srv, dst=x) /
            SCTP(sport=3868, dport=6000, tag=0x3333) /
            SCTPChunkInitAck(init_tag=0x4444, a_rwnd=65535, n_out_streams=1,
                             n_in_streams=1, init_tsn=900),
        ],
        "wan0": [
            wan(r) / SCTP(sport=3868, dport=FIRST_PORT, tag=0x1111) /
            SCTPChunkInitAck(init_tag=0x2222, a_rwnd=65535, n_out_streams=1, n_in_streams=1,
                             init_tsn=500),
            wan(x) / SCTP(sport=6000, dport=13868, tag=0) /
            SCTPChunkInit(init_tag=0x3333, a_rwnd=65535, n_out_streams=1, n_in_streams=1,
                          init_tsn=700),
        ],
    }

#!/usr/bin/env python3
"""UDP request/reply round trips to an echo server: 8 sockets (flows) x 25
exchanges, 20 ms apart; prints the count, median, p90 and max RTT in us.
Usage: udp_rtt.py ADDR [PORT] (default 9000). Used for the handoff
latency figures in docs/PERFORMANCE.md, run in the client namespace of
tests/lab/test_multiqueue.sh's lab. A measurement, not a test."""
import socket
import sys
import time

addr = sys.argv[1]
port = int(sys.argv[2]) if len(sys.argv) > 2 else 9000
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
rtt = []
for _ in range(8):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(1)
    for _ in range(25):
        t = time.perf_counter()
        s.sendto(b"x" * 64, (addr, port))
        try:
            s.recvfrom(2048)
            rtt.append((time.perf_counter() - t) * 1e6)
        except socket.timeout:
            pass
        time.sleep(0.02)
rtt.sort()
if not rtt:
    print("n 0")
    sys.exit(1)
print("n %d median %.0f us p90 %.0f us max %.0f us"
      % (len(rtt), rtt[len(rtt) // 2], rtt[len(rtt) * 9 // 10], rtt[-1]))

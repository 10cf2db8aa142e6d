#!/usr/bin/python3
# The golden cases (cases.py) through rampartd --backend dpdk with the
# net_pcap PMD: each case's input captures are each port's rx_pcap, its
# tx_pcap must hold the very frames of expected/CASE/IF.pcap (the pcap
# backend's output; timestamps aside: net_pcap stamps the send time), and
# the counters block must be expected/CASE/counters.txt.
#
# net_pcap reads every port's file on its own, so the order in which two
# ports' frames meet the pipeline is not the capture's: with input on more
# than one port, a stateless case is compared as the same frames in any
# order, and a stateful one (its verdicts depend on that order) is
# skipped on a "# skip" line. Ports are EAL devices, so a case's interface IF becomes
# net_pcap_IF in the policy, the options and the counters (mapped back).
#   tests/golden/golden_dpdk.py --build build [--eal "ARGS"] [--keep DIR] [CASE ...]
import argparse
import os
import re
import shlex
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import golden  # noqa: E402

EAL_DEFAULT = "-l 0,1 --no-huge -m 256 --no-pci --no-shconf --no-telemetry --log-level=lib.eal:warning"
PREFIX = "net_pcap_"
WAIT_S = 20


def read_frames(path):
    """The frames of a pcap file (bytes each), timestamps dropped."""
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    frames, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + "I", data[off + 8:off + 12])[0]
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


def empty_pcap(path):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))


def rename(text, ifaces):
    for i in ifaces:
        text = re.sub(r"\b%s\b" % re.escape(i), PREFIX + i, text)
    return text


def last_counters(path):
    text = open(path).read()
    blocks = re.findall(r"^rampart counters\n.*?^end counters\n", text, re.S | re.M)
    return blocks[-1] if blocks else ""


def rx_total(block):
    return sum(int(l.split()[2]) for l in block.splitlines()
               if l.startswith("interface ") and not l.startswith("interface name"))


def stateful(case):
    return "stateful: true" in case["policy"] or re.search(r"^nat:", case["policy"], re.M)


def busy_ports(case, frames):
    return [i for i in case["ifaces"] if frames.get(i)]


def run_case(case, build, d, eal, any_order):
    rulec = os.path.join(build, "rulec", "rulec")
    rampartd = os.path.join(build, "daemon", "rampartd")
    ifaces = case["ifaces"]
    policy, rfw = os.path.join(d, "policy.yaml"), os.path.join(d, "policy.rfw")
    with open(policy, "w") as f:
        f.write(rename(case["policy"], ifaces))
    r = subprocess.run([rulec, "compile", policy, "-o", rfw], capture_output=True, text=True)
    if r.returncode:
        return ["rulec: " + r.stderr.strip()]
    inputs = golden.write_inputs(case, d)
    nin = sum(len(read_frames(p)) for p in inputs.values())
    cmd = [rampartd, "--policy", rfw, "--backend", "dpdk", "--mode", case["mode"],
           "--control", os.path.join(d, "ctl.sock")]
    vdevs, outs = [], {}
    for i in ifaces:
        cmd += ["--interface", PREFIX + i]
        rx = inputs.get(i) or os.path.join(d, "empty-%s.pcap" % i)
        if i not in inputs:
            empty_pcap(rx)
        outs[i] = os.path.join(d, "out-%s.pcap" % i)
        vdevs += ["--vdev", "%s%s,rx_pcap=%s,tx_pcap=%s" % (PREFIX, i, rx, outs[i])]
    cmd += [rename(o, ifaces) for o in case["options"]]
    if case["mode"] == "router":
        # --backend pcap answers no ARP/ND and asks for no next hop: the
        # same frames only with DPDK's own neighbour discovery off
        cmd += ["--dpdk-static-neighbors"]
    cmd += ["--"] + shlex.split(eal) + vdevs
    out_path, err_path = os.path.join(d, "rampartd.out"), os.path.join(d, "rampartd.err")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    problems = []
    # Bounded: SIGUSR1 until every input frame has been received.
    deadline = time.time() + WAIT_S
    started = False
    while time.time() < deadline and p.poll() is None:
        started = started or "rampartd: " in open(err_path).read()
        if started:
            p.send_signal(signal.SIGUSR1)
            time.sleep(0.2)
            if rx_total(last_counters(out_path)) >= nin:
                break
        else:
            time.sleep(0.1)
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
    else:
        rc = p.returncode
    if rc:
        return ["rampartd exit %d: %s" % (rc, open(err_path).read().strip()[-2000:])]
    block = last_counters(out_path).replace(PREFIX, "")
    exp_dir = os.path.join(golden.EXPECTED, case["name"])
    if block != open(os.path.join(exp_dir, "counters.txt")).read():
        problems.append("counters differ from expected/%s/counters.txt (kept in %s)"
                        % (case["name"], d))
    for i in ifaces:
        want = read_frames(os.path.join(exp_dir, "%s.pcap" % i))
        got = read_frames(outs[i]) if os.path.exists(outs[i]) else None
        if got is not None and any_order:
            got, want = sorted(got), sorted(want)
        if got != want:
            problems.append("%s: %s frames, expected/%s/%s.pcap has %d%s (kept in %s)"
                            % (i, "no" if got is None else len(got), case["name"], i,
                               len(want), "" if got is None or len(got) != len(want)
                               else ", bytes differ", d))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("RAMPART_BUILD_DIR", "build"))
    ap.add_argument("--eal", default=EAL_DEFAULT)
    ap.add_argument("--keep")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    from cases import CASES
    passed = failed = 0
    top = a.keep or tempfile.mkdtemp(prefix="rampart-golden-dpdk.")
    for name in a.cases or list(CASES):
        case = CASES[name]
        busy = busy_ports(case, case["frames"]())
        any_order = len(busy) > 1
        if any_order and stateful(case):
            print("# skip %s: input on %s of a stateful policy (net_pcap does not "
                  "interleave ports as the capture merge does)" % (name, " and ".join(busy)))
            continue
        d = os.path.join(top, name)
        os.makedirs(d, exist_ok=True)
        ok = golden.report("dpdk net_pcap golden " + name,
                           ": frames%s and counters as --backend pcap"
                           % (" (in any order across ports)" if any_order else ""),
                           run_case(case, os.path.abspath(a.build), d, a.eal, any_order))
        passed += ok
        failed += not ok
    return golden.finish(top, a.keep, passed, failed)

if __name__ == "__main__":
    sys.exit(main())

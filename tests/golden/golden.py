#!/usr/bin/python3
# Golden tests of the data path: for every case in cases.py, write its
# input captures (scapy), run rampartd --backend pcap over them, and
# compare each output capture and the counters block with expected/CASE/;
# tshark must read every output without a malformed packet or a bad
# checksum. --regen rewrites expected/ (only when a change is intended).
#   tests/golden/golden.py --build build [--regen] [--keep DIR] [CASE ...]
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected")
T0 = 1700000000          # capture timestamps: fixed, so outputs are too
TSHARK_OPTS = ["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
               "-o", "udp.check_checksum:TRUE", "-o", "sctp.checksum:CRC 32c"]


def write_inputs(case, d):
    from scapy.all import wrpcap
    frames = case["frames"]()
    paths = {}
    # Every frame its own millisecond, the interfaces taking turns (the
    # first frame of each, then the second of each, ...), so that the
    # replay has to merge the inputs.
    longest = max([len(v) for v in frames.values()] + [0])
    t = 0
    for i in range(longest):
        for ifname in case["ifaces"]:
            pkts = frames.get(ifname, [])
            if i < len(pkts):
                t += 1
                pkts[i].time = T0 + t / 1000
    for ifname in case["ifaces"]:
        pkts = frames.get(ifname, [])
        if pkts:
            paths[ifname] = os.path.join(d, "in-%s.pcap" % ifname)
            wrpcap(paths[ifname], pkts)
    return paths


def counters_block(text):
    out, on = [], False
    for line in text.splitlines():
        on = on or line == "rampart counters"
        if on:
            out.append(line)
        if line == "end counters":
            break
    return "\n".join(out) + "\n"


def tshark_problems(path):
    r = subprocess.run(["tshark", "-r", path, "-V"] + TSHARK_OPTS,
                       capture_output=True, text=True)
    bad = [l.strip() for l in r.stdout.splitlines()
           if "Malformed" in l or "Expert Info (Error" in l]
    if r.returncode != 0:
        bad.append("tshark exit %d: %s" % (r.returncode, r.stderr.strip()))
    return bad


def run_case(case, build, d, regen):
    """Returns a list of problems (empty = pass)."""
    rulec = os.path.join(build, "rulec", "rulec")
    rampartd = os.path.join(build, "daemon", "rampartd")
    policy = os.path.join(d, "policy.yaml")
    rfw = os.path.join(d, "policy.rfw")
    with open(policy, "w") as f:
        f.write(case["policy"])
    r = subprocess.run([rulec, "compile", policy, "-o", rfw], capture_output=True, text=True)
    if r.returncode:
        return ["rulec: " + r.stderr.strip()]
    inputs = write_inputs(case, d)
    cmd = [rampartd, "--policy", rfw, "--backend", "pcap", "--mode", case["mode"]]
    outs = {}
    for ifname in case["ifaces"]:
        cmd += ["--interface", ifname]
        outs[ifname] = os.path.join(d, "out-%s.pcap" % ifname)
        cmd += ["--pcap-out", "%s=%s" % (ifname, outs[ifname])]
    for ifname, path in inputs.items():
        cmd += ["--pcap-in", "%s=%s" % (ifname, path)]
    cmd += case["options"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(d, "rampartd.out"), "w") as f:
        f.write(r.stdout)
    if r.returncode:
        return ["rampartd exit %d: %s" % (r.returncode, r.stderr.strip())]
    got = {"%s.pcap" % i: open(p, "rb").read() for i, p in outs.items()}
    got["counters.txt"] = counters_block(r.stdout).encode()

    problems = []
    for ifname, path in outs.items():
        problems += ["tshark %s.pcap: %s" % (ifname, b) for b in tshark_problems(path)]
    exp_dir = os.path.join(EXPECTED, case["name"])
    if regen:
        if os.path.isdir(exp_dir):
            shutil.rmtree(exp_dir)
        os.makedirs(exp_dir)
        for name, data in got.items():
            with open(os.path.join(exp_dir, name), "wb") as f:
                f.write(data)
        return problems
    if not os.path.isdir(exp_dir):
        return problems + ["no expected/%s (run with --regen and review it)" % case["name"]]
    want_names = sorted(os.listdir(exp_dir))
    if want_names != sorted(got):
        problems.append("outputs %s, expected %s" % (sorted(got), want_names))
    for name in want_names:
        want = open(os.path.join(exp_dir, name), "rb").read()
        if got.get(name) != want:
            problems.append("%s differs from expected/%s/%s (kept in %s)"
                            % (name, case["name"], name, d))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("RAMPART_BUILD_DIR", "build"))
    ap.add_argument("--regen", action="store_true")
    ap.add_argument("--keep", help="leave each case's files under this directory")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    try:
        import scapy.all  # noqa: F401
    except ImportError:
        print("not ok - python3-scapy missing (apt-get install python3-scapy)")
        print("0 passed, 1 failed")
        return 1
    if not shutil.which("tshark"):
        print("not ok - tshark missing (apt-get install tshark)")
        print("0 passed, 1 failed")
        return 1
    sys.path.insert(0, HERE)
    from cases import CASES
    names = a.cases or list(CASES)
    passed = failed = 0
    top = a.keep or tempfile.mkdtemp(prefix="rampart-golden.")
    for name in names:
        if name not in CASES:
            print("not ok - %s: no such case" % name)
            failed += 1
            continue
        d = os.path.join(top, name)
        os.makedirs(d, exist_ok=True)
        ok = report(name, " (expected rewritten)" if a.regen else "",
                    run_case(CASES[name], a.build, d, a.regen))
        passed += ok
        failed += not ok
    return finish(top, a.keep, passed, failed)


def report(name, note, problems):
    """Print one case's ok / not ok lines; True when it passed."""
    if problems:
        print("not ok - %s" % name)
        for p in problems:
            print("#   " + p)
        return False
    print("ok - %s%s" % (name, note))
    return True


def finish(top, keep, passed, failed):
    """Remove the work directory unless asked to keep it (or a case
    failed), print the summary line, return the exit status."""
    if not keep and not failed:
        shutil.rmtree(top)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

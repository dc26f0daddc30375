#!/usr/bin/env python3
"""How often a pure CPU spin loses wall time that is neither the thread's CPU time nor its
run-queue delay: the split perfshape makes of every served poll (wall − CPU − run queue =
waiting) would read that time as waiting. On a virtual machine whose kernel accounts
hypervisor steal (CONFIG_PARAVIRT_TIME_ACCOUNTING), stolen time is exactly that.

    python3 scripts/steal.py [--seconds 20] [--spin-ms 3]

Spins for --spin-ms at a time, for --seconds in all, and counts the spins with more than
0.5 ms unexplained, and how many of those saw the machine's steal counter (/proc/stat, in
10 ms ticks) move. Run it quiet and with a core kept busy (`yes > /dev/null &`).
"""

import argparse
import threading
import time


def run_delay(tid):
    with open(f"/proc/self/task/{tid}/schedstat") as f:
        return int(f.read().split()[1])


def steal_ticks():
    with open("/proc/stat") as f:
        return int(f.readline().split()[8])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--spin-ms", type=float, default=3.0)
    args = parser.parse_args()
    tid = threading.get_native_id()
    spin = int(args.spin_ms * 1e6)
    spins = unexplained_spins = with_steal = 0
    worst = 0
    total = 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        s0, d0, c0 = steal_ticks(), run_delay(tid), time.thread_time_ns()
        w0 = time.perf_counter_ns()
        while time.perf_counter_ns() - w0 < spin:
            pass
        w1 = time.perf_counter_ns()
        c1, d1, s1 = time.thread_time_ns(), run_delay(tid), steal_ticks()
        unexplained = (w1 - w0) - (c1 - c0) - (d1 - d0)
        spins += 1
        total += max(unexplained, 0)
        if unexplained > 500_000:
            unexplained_spins += 1
            worst = max(worst, unexplained)
            if s1 > s0:
                with_steal += 1
    print(
        f"{spins} spins of {args.spin_ms:g} ms: {unexplained_spins} with more than 0.5 ms "
        f"neither CPU nor run queue (worst {worst / 1e6:.2f} ms), {with_steal} of them while "
        f"the steal counter moved; on average {total / spins / 1e3:.1f} µs a spin "
        f"({100 * total / (spins * spin):.2f} % of its time)"
    )


if __name__ == "__main__":
    main()

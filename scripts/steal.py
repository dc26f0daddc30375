#!/usr/bin/env python3
"""How often a pure CPU spin loses wall time that is neither the thread's CPU time nor its
run-queue delay: the split perfshape makes of every served poll (wall − CPU − run queue =
waiting) would read that time as waiting. On a virtual machine whose kernel accounts
hypervisor steal (CONFIG_PARAVIRT_TIME_ACCOUNTING), stolen time is exactly that.

    python3 scripts/steal.py [--seconds 20] [--spin-ms 3]
    python3 scripts/steal.py --wakeups [--seconds 10]

Spins for --spin-ms at a time, for --seconds in all, and counts the spins with more than
0.5 ms unexplained, and how many of those saw the machine's steal counter (/proc/stat, in
10 ms ticks) move. Run it quiet and with a core kept busy (`yes > /dev/null &`).

With --wakeups it reads the steal counter over --seconds each of: the machine idle, eight
threads each sleeping 1 ms in a loop (a wake-up every 125 µs), and both cores spinning (in
processes of their own), twice over, with how long the sleepers' 1 ms sleeps took. On a
virtual machine an idle CPU that wakes waits for the host to run it again, and that wait
is counted as steal: a workload that sleeps and wakes often is delayed by the host where
a spin is not.
"""

import argparse
import multiprocessing
import threading
import time


def run_delay(tid):
    with open(f"/proc/self/task/{tid}/schedstat") as f:
        return int(f.read().split()[1])


def steal_ticks():
    with open("/proc/stat") as f:
        return int(f.readline().split()[8])


def sleep_in_a_loop(stop, took):
    while not stop.is_set():
        t = time.perf_counter()
        time.sleep(0.001)
        took.append(time.perf_counter() - t)


def spin_until(end):
    while time.monotonic() < end:
        pass


def wakeups(seconds):
    """Steal over `seconds` idle, with eight 1 ms sleepers and with both cores spinning."""
    for _ in range(2):
        for mode in ("idle", "eight 1 ms sleepers", "both cores spinning"):
            stop, took, workers = threading.Event(), [], []
            if mode == "eight 1 ms sleepers":
                workers = [
                    threading.Thread(target=sleep_in_a_loop, args=(stop, took))
                    for _ in range(8)
                ]
            elif mode == "both cores spinning":
                end = time.monotonic() + seconds
                workers = [
                    multiprocessing.Process(target=spin_until, args=(end,))
                    for _ in range(2)
                ]
            for worker in workers:
                worker.start()
            before = steal_ticks()
            time.sleep(seconds)
            stolen = steal_ticks() - before
            stop.set()
            for worker in workers:
                worker.join()
            line = f"{mode}: steal {stolen} ticks in {seconds:g} s"
            if took:
                took.sort()
                line += (
                    f"; a 1 ms sleep took {took[len(took) // 2] * 1e3:.2f} ms "
                    f"(nine in ten at most {took[len(took) * 9 // 10] * 1e3:.2f}, "
                    f"99 in 100 {took[len(took) * 99 // 100] * 1e3:.2f})"
                )
            print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--spin-ms", type=float, default=3.0)
    parser.add_argument("--wakeups", action="store_true")
    args = parser.parse_args()
    if args.wakeups:
        wakeups(args.seconds or 10.0)
        return
    args.seconds = args.seconds or 20.0
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

#!/usr/bin/env python3
"""Wall Inclusive (issue 12, section 4): tests/e2e/wall.c runs `crunch` in
4 threads at once (it waits for the others, then sleeps to a shared
deadline).  Its Elapsed Inclusive (summed over the threads) must be about 4
times its Wall Inclusive (ratio between 3.5 and 4: the threads enter it as
they are created, which may take some milliseconds under load), its Wall
Inclusive at
most the run's duration, and the JSON and the threads view must carry
it."""
import json, subprocess, sys, tempfile

from e2e_check import check, failures, parse_args, run_recorded



def main():
    args = parse_args()
    with tempfile.TemporaryDirectory() as work:
        proc, dumps = run_recorded(args.exe, work)
        dump = dumps[0]
        rep = json.loads(subprocess.run([args.report, "--format", "json", dump], capture_output=True,
                                        text=True).stdout)
        text = subprocess.run([args.report, "--verbose", "-F", "+wall", dump], capture_output=True,
                              text=True).stdout
        threads = subprocess.run([args.report, "--view", "threads", dump], capture_output=True, text=True).stdout
    s = rep["session"]
    f = [x for x in rep["functions"] if x["name"] == "crunch"][0]
    ei, wall = f["elapsed_inclusive_ns"], f["wall_inclusive_ns"]
    check(f["calls"] == 4, f"crunch called 4 times ({f['calls']})")
    ratio = ei / wall
    check(3.5 <= ratio <= 4.001, f"crunch: Elapsed Inclusive {ei/1e6:.2f} ms about 4 x Wall Inclusive "
                                f"{wall/1e6:.2f} ms (ratio {ratio:.3f}; concurrency {f['concurrency']})")
    check(abs(f["concurrency"] - ratio) < 0.001, "JSON concurrency is EI / Wall Inclusive")
    # main runs in one thread: its Wall Inclusive is its Elapsed Inclusive,
    # hook costs subtracted from both (compensation on by default).
    m = [x for x in rep["functions"] if x["name"] == "main"][0]
    check(abs(m["wall_inclusive_ticks"] - m["elapsed_inclusive_ticks"]) <= 1,
          f"main (one thread): Wall Inclusive {m['wall_inclusive_ticks']} ticks = Elapsed Inclusive "
          f"{m['elapsed_inclusive_ticks']}")
    check(wall <= s["duration_ns"], f"Wall Inclusive {wall/1e6:.2f} ms <= run duration {s['duration_ns']/1e6:.2f} ms")
    check(ei > s["duration_ns"], f"while the summed Elapsed Inclusive {ei/1e6:.2f} ms exceeds it")
    tw = s["totals"]["wall_inclusive_ns"]
    check(wall <= tw <= s["duration_ns"], f"session Wall Inclusive {tw/1e6:.2f} ms between crunch's and the run's")
    check(s["concurrency"] > 2.5, f"session concurrency {s['concurrency']} (4 threads busy most of the run)")
    check("Wall Incl" in text and "\nWall:  " in text, "the text report shows Wall Inclusive and the header line")
    shares = [t["alive_pct"] for t in rep["threads"]]
    check(all(0 <= p <= 100 for p in shares) and sum(1 for p in shares if p > 50) >= 4,
          f"the threads' share of the run ({', '.join('%.1f' % p for p in shares)} %)")
    check("Alive%" in threads, "the threads view shows each thread's share of the run")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Scale benchmark: LongMemEval-S-sized haystacks imported and stored into `verbatim`, in one
process and in 2 shards at once, with the projected wall time of the M variant on N machines.

  bench/scale/bench_scale.py [--memfail BIN] [--instances 500] [--tokens 115000] [--work DIR] [--keep]

Steps, each timed with its peak resident memory (os.wait4 on the child):
  1. longmemeval_synth.py writes a LongMemEval-shaped file (instances x tokens per haystack).
  2. memfail datasets import --from longmemeval (streamed).
  3. memfail run --system verbatim --k 10 in one process.
  4. the same as --shard 1/2 and --shard 2/2 side by side, then memfail merge; the merged success
     table must equal the single process's.
Prints tokens per second (cl100k_base tokens of the stored haystacks, from `datasets stats`), the
2-shard speedup over one process measured in the same run, and the M variant's projected wall time
(500 x ~1.5M tokens) on 1, 4, 16 and 64 machines like this one, each running 2 shards.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def spawn(cmd):
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_all(procs):
    """Waits for every process; returns {pid: (seconds since start, peak RSS MiB)}."""
    start = time.monotonic()
    left = {p.pid: p for p in procs}
    result = {}
    while left:
        pid, status, usage = os.wait4(-1, 0)
        if pid not in left:
            continue
        p = left.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        p.returncode = code
        if code != 0:
            sys.exit(f"bench_scale: {' '.join(p.args)} exited {code}:\n{p.stderr.read().decode()[-2000:]}")
        result[pid] = (time.monotonic() - start, usage.ru_maxrss / 1024)
    return result


def measure(cmd):
    start = time.monotonic()
    p = spawn(cmd)
    r = wait_all([p])[p.pid]
    return time.monotonic() - start, r[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memfail", default=os.path.join(ROOT, "build", "release", "bin", "memfail"))
    ap.add_argument("--instances", type=int, default=500)
    ap.add_argument("--tokens", type=int, default=115000)
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    m = os.path.abspath(a.memfail)
    if not os.access(m, os.X_OK):
        sys.exit(f"bench_scale: no memfail binary at {m}")
    work = a.work or tempfile.mkdtemp(prefix="memfail-scale-")
    os.makedirs(work, exist_ok=True)
    try:
        src = os.path.join(work, "longmemeval_s_synth.json")
        t_gen, rss_gen = measure([sys.executable, os.path.join(HERE, "longmemeval_synth.py"), src,
                                  "--instances", str(a.instances), "--tokens", str(a.tokens)])
        size_mb = os.path.getsize(src) / 1e6
        data = os.path.join(work, "data")
        t_imp, rss_imp = measure([m, "datasets", "import", "--from", "longmemeval", src, "-o", data])
        files = [os.path.join(data, f) for f in sorted(os.listdir(data)) if f.endswith(".jsonl")]
        stats = json.loads(subprocess.run([m, "datasets", "stats", "-f", "json", *files], capture_output=True,
                                          text=True, check=True).stdout)
        tokens = 0
        for r in stats:  # one element per scenario: mean tokens per entry (session) x entries
            entries = r.get("entries", {})
            tokens += int(round(entries.get("mean_tokens", 0) * entries.get("sessions", 0)))
        if tokens <= 0:
            sys.exit("bench_scale: datasets stats gave no token figures (are the tokenizer's rank files installed?)")
        single = os.path.join(work, "single.db")
        run = [m, "run", "--system", "verbatim", "--datasets", *files, "--k", "10", "--quiet"]
        t_one, rss_one = measure(run + ["--out", single])
        parts = [os.path.join(work, f"part{i}.db") for i in (1, 2)]
        start = time.monotonic()
        procs = [spawn(run + ["--shard", f"{i}/2", "--out", parts[i - 1]]) for i in (1, 2)]
        done = wait_all(procs)
        t_two = time.monotonic() - start
        rss_two = max(r[1] for r in done.values())
        merged = os.path.join(work, "merged.db")
        t_merge, _ = measure([m, "merge", merged, *parts])
        table = lambda db: subprocess.run([m, "report", db, "-f", "csv", "--table", "success"],
                                          capture_output=True, text=True, check=True).stdout
        same = table(single) == table(merged)
    finally:
        if not a.keep and not a.work:
            shutil.rmtree(work, ignore_errors=True)

    print(f"haystacks: {a.instances} x ~{a.tokens} tokens; file {size_mb:.0f} MB; stored {tokens:,} tokens "
          f"(cl100k_base)")
    print(f"{'step':<28} {'wall s':>8} {'peak MiB':>9} {'tokens/s':>12}")
    print(f"{'generate (python)':<28} {t_gen:8.1f} {rss_gen:9.0f} {'':>12}")
    print(f"{'import --from longmemeval':<28} {t_imp:8.1f} {rss_imp:9.0f} {tokens / t_imp:12,.0f}")
    print(f"{'run verbatim, 1 process':<28} {t_one:8.1f} {rss_one:9.0f} {tokens / t_one:12,.0f}")
    print(f"{'run verbatim, 2 shards':<28} {t_two:8.1f} {rss_two:9.0f} {tokens / t_two:12,.0f}")
    print(f"{'merge':<28} {t_merge:8.1f} {'':>9} {'':>12}")
    print(f"2 shards / 1 process speedup: {t_one / t_two:.2f}x; merged results equal the single run: "
          f"{'yes' if same else 'NO'}")
    m_tokens = 500 * 1.5e6
    per_machine = tokens / (t_imp + t_two)  # import once per shard file is the same work; run in 2 shards
    print(f"M variant (500 x ~1.5M = {m_tokens / 1e6:.0f}M tokens), import + 2-shard run per machine at "
          f"{per_machine:,.0f} tokens/s:")
    for n in (1, 4, 16, 64):
        seconds = m_tokens / (per_machine * n)
        print(f"  {n:>3} machine(s): {seconds / 60:8.1f} min")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()

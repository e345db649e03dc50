# SPDX-License-Identifier: GPL-3.0-or-later
"""Solver benchmark: the scalar solve in pure CPython and the numpy batch solve.

Prints, and writes to bench/results/solver.json:

- scalar: microseconds per ``solve_two_bone_ik`` call, median over many timed passes of a loop
  over 1000 different chains (the loop's own cost included);
- batch: nanoseconds per chain of one ``solve_two_bone_ik_batch`` call for N = 1e3 .. 1e6
  (median over repeated calls, inputs already float64 arrays);
- memory: peak memory allocated during one batch call (tracemalloc, which numpy reports to;
  outputs and each chunk's temporaries included), per chain and as a multiple of the
  input arrays' size;
- the machine: CPU model, cores, Python and numpy versions.

Chains: roots in a 4 m box, bones 0.1 to 2 m, targets in a random direction at 0 to 1.1 x the
chain's reach (about 1 in 10 too far, 3 in 10 too close), pole hints around the root.

Run: ``.venv/bin/python bench/solver.py`` (after ``bash tools/test.sh`` made the venv).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pathlib
import platform
import random
import statistics
import sys
import time
import tracemalloc

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
# This script is itself named solver.py: import the package by name from the repo root, which
# also keeps type checkers (that see this folder first) from taking the script for the package.
solver = importlib.import_module("solver")
batch_module = importlib.import_module("solver.batch")
solve_two_bone_ik = solver.solve_two_bone_ik
solve_two_bone_ik_batch = solver.solve_two_bone_ik_batch

SIZES = (1_000, 10_000, 100_000, 1_000_000)
TARGETS = {"scalar_us_per_solve": 1.5, "batch_ns_per_chain_at_1e6": 60.0, "peak_memory_over_inputs": 3.0}


def chains(count: int, seed: int = 0):
    """(roots, targets, pole_hints, upper_lengths, lower_lengths) as float64 arrays."""
    rng = np.random.default_rng(seed)
    roots = rng.uniform(-2.0, 2.0, (count, 3))
    upper = rng.uniform(0.1, 2.0, count)
    lower = rng.uniform(0.1, 2.0, count)
    direction = rng.normal(size=(count, 3))
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    targets = roots + direction * (rng.uniform(0.0, 1.1, count) * (upper + lower))[:, None]
    poles = roots + rng.normal(size=(count, 3))
    return roots, targets, poles, upper, lower


def time_scalar(passes: int) -> dict:
    roots, targets, poles, upper, lower = chains(1_000, seed=1)
    rigs = list(
        zip(
            map(tuple, roots.tolist()),
            map(tuple, targets.tolist()),
            map(tuple, poles.tolist()),
            upper.tolist(),
            lower.tolist(),
            strict=True,
        )
    )
    random.Random(2).shuffle(rigs)
    solve = solve_two_bone_ik
    samples: list[float] = []
    for _ in range(passes):
        start = time.perf_counter()
        for root, target, pole_hint, a, b in rigs:
            solve(root, target, pole_hint, a, b)
        samples.append((time.perf_counter() - start) / len(rigs) * 1e6)
    return {
        "median_us_per_solve": statistics.median(samples),
        "min_us_per_solve": min(samples),
        "passes": passes,
        "solves_per_pass": len(rigs),
    }


def time_batch(count: int, budget_seconds: float) -> dict:
    arrays = chains(count, seed=3)
    solve_two_bone_ik_batch(*arrays)  # warm up: imports
    samples: list[float] = []
    deadline = time.perf_counter() + budget_seconds
    while len(samples) < 5 or (time.perf_counter() < deadline and len(samples) < 2_000):
        start = time.perf_counter()
        solve_two_bone_ik_batch(*arrays)
        samples.append((time.perf_counter() - start) / count * 1e9)
    return {
        "chains": count,
        "median_ns_per_chain": statistics.median(samples),
        "min_ns_per_chain": min(samples),
        "calls": len(samples),
    }


def measure_memory(count: int) -> dict:
    arrays = chains(count, seed=4)
    input_bytes = sum(array.nbytes for array in arrays)
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = solve_two_bone_ik_batch(*arrays)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    output_bytes = sum(array.nbytes for array in result)
    return {
        "chains": count,
        "input_bytes": input_bytes,
        "peak_bytes": peak,
        "output_bytes": output_bytes,
        "peak_bytes_per_chain": peak / count,
        "peak_over_inputs": peak / input_bytes,
    }


def machine() -> dict:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "")
    except OSError:
        cpu = platform.processor()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=300, help="timed passes of the scalar loop")
    parser.add_argument("--seconds", type=float, default=3.0, help="time budget per batch size")
    parser.add_argument("--output", type=pathlib.Path, default=REPO / "bench" / "results" / "solver.json")
    args = parser.parse_args()

    scalar = time_scalar(args.passes)
    print(
        f"scalar: {scalar['median_us_per_solve']:.3f} us/solve median (min {scalar['min_us_per_solve']:.3f}),"
        f" target <= {TARGETS['scalar_us_per_solve']}"
    )
    batches = []
    print(f"{'chains':>9} {'ns/chain':>9} {'min':>7} {'peak B/chain':>13} {'peak/inputs':>12}")
    for count in SIZES:
        timing = time_batch(count, args.seconds)
        memory = measure_memory(count)
        batches.append({**timing, **{k: v for k, v in memory.items() if k != "chains"}})
        print(
            f"{count:>9} {timing['median_ns_per_chain']:>9.1f} {timing['min_ns_per_chain']:>7.1f}"
            f" {memory['peak_bytes_per_chain']:>13.1f} {memory['peak_over_inputs']:>12.2f}"
        )
    at_1e6 = batches[-1]
    verdict = {
        "scalar_us_per_solve": scalar["median_us_per_solve"] <= TARGETS["scalar_us_per_solve"],
        "batch_ns_per_chain_at_1e6": at_1e6["median_ns_per_chain"] <= TARGETS["batch_ns_per_chain_at_1e6"],
        "peak_memory_over_inputs": at_1e6["peak_over_inputs"] <= TARGETS["peak_memory_over_inputs"],
    }
    print("targets met:", ", ".join(f"{name} {'yes' if ok else 'NO'}" for name, ok in verdict.items()))
    result = {
        "what": "solve_two_bone_ik (CPython) and solve_two_bone_ik_batch (numpy): time, batch peak memory",
        "machine": machine(),
        "scalar": scalar,
        "batch": batches,
        "targets": TARGETS,
        "targets_met": verdict,
        "batch_chunk_rows": batch_module.CHUNK_ROWS,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.output.relative_to(REPO) if args.output.is_relative_to(REPO) else args.output}")


if __name__ == "__main__":
    main()

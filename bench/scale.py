"""``make bench-scale`` (issue 17, item 5): a kernel library proved cold and warm, one core and two;
interp at E = 2x10^6 through dask on one machine.  Not part of ``make test``.

1. **Library.**  ``--kernels N`` (default 1,000) random kernels are generated from a fixed
   seed into ``build/bench-scale/lib``: half random well-typed Core-TeIL programs (drawn
   type-directed, every operator applied only where its typing rule's premises hold, then
   checked by ``ct.check``), half einsum expressions (``ct.from_einsum`` with symbolic
   extents), plus the examples.
2. **Proving.**  ``core-teil prove LIB --json`` as a user runs it (a fresh process each time),
   cold (an empty cache) with ``--jobs 1`` and ``--jobs 2``, then warm (the cache the cold
   run left), ``--repeat`` times each; the median wall time is reported (this machine is
   shared, so single timings are noise).
3. **Blockwise interp.**  In a fresh process (so that its peak RSS is its own): interp with
   n = 7 and E = 2x10^6 (5.5 GB of input, as much output) through ``kernel.blockwise``; the
   input generated lazily by ``dask.array.random`` block by block, the output written into a
   ``.npy`` file with ``os.pwrite`` (a memory map would count the written pages in the
   process's RSS).  Peak RSS (``getrusage``) and time, then sampled elements compared with the
   in-memory run of the same kernel and with ``numpy.einsum`` on those elements; and the
   in-memory kernel's throughput at E = 2x10^5 for comparison.

``python -m bench.scale [--kernels N] [--repeat R] [--E E] [--chunk C] [--skip-prove] [--skip-dask]``;
the numbers go to stdout and ``build/bench-scale/results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "bench-scale"
CLI = [sys.executable, "-m", "core_teil.cli"]


# --------------------------------------------------------------------------
# A library of random well-typed programs and einsum expressions
# --------------------------------------------------------------------------


class Gen:
    """Type-directed random Core-TeIL expressions (SPEC.md section 3's rules, read forwards)."""

    DIMS = ("n", "m", 2, 3)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.inputs: dict[str, tuple] = {}

    def dim(self) -> Any:
        return self.rng.choice(self.DIMS)

    def leaf(self, shape: tuple) -> str:
        for name, s in self.inputs.items():
            if s == shape and self.rng.random() < 0.6:
                return name
        name = f"x{len(self.inputs)}"
        self.inputs[name] = shape
        return name

    def expr(self, shape: tuple, depth: int) -> str:
        r = self.rng
        if depth <= 0 or r.random() < 0.1:
            return self.leaf(shape)
        options = ["elem", "red", "contr", "smul", "prod"]
        if len(shape) >= 2:
            options.append("transp")
        if shape:
            options += ["expa", "diag"]
        if len(shape) < 3:
            options.append("proj")
        op = r.choice(options)
        sub = lambda s: self.expr(s, depth - 1)  # noqa: E731
        if op == "elem":
            return f"{r.choice(('add', 'sub', 'mul', 'div'))} ({sub(shape)}) ({sub(shape)})"
        if op == "smul":
            return f"mul ({sub(())}) ({sub(shape)})"
        if op == "red" and len(shape) < 3:
            return f"red ({sub((self.dim(), *shape))})"
        if op == "contr" and len(shape) < 2:
            d = self.dim()
            return f"contr ({sub((d, d, *shape))})"
        if op == "prod" and shape:
            cut = r.randint(0, len(shape))
            return f"prod ({sub(shape[:cut])}) ({sub(shape[cut:])})"
        if op == "transp":
            i = r.randint(1, len(shape) - 1)
            s = list(shape)
            s[i - 1], s[i] = s[i], s[i - 1]
            return f"transp {i} ({sub(tuple(s))})"
        if op == "expa":
            return f"expa {shape[0]} ({sub(shape[1:])})"
        if op == "diag" and len(shape) < 3:
            return f"diag ({sub((shape[0], shape[0], *shape[1:]))})"
        if op == "proj":
            return f"proj 1 ({sub((self.dim(), *shape))})"  # 1 <= every extent
        return self.leaf(shape)


def random_program(rng: random.Random) -> str:
    g = Gen(rng)
    stmts, outs = [], {}
    for i in range(rng.randint(1, 3)):
        shape = tuple(g.dim() for _ in range(rng.randint(0, 3)))
        target = f"y{i}"
        outs[target] = shape
        stmts.append(f"{target} = {g.expr(shape, rng.randint(1, 4))}")
        g.inputs[target] = shape  # later statements may read it (St-Seq)
    allocs = []
    for name, shape in g.inputs.items():
        qual = "output" if name in outs else "input"
        allocs.append(f"{qual} alloc {name} : [{', '.join(map(str, shape))}]")
    return "param n, m\n" + "\n".join(allocs) + "\n" + "\n".join(stmts) + "\n"


def random_einsum(rng: random.Random) -> str:
    import core_teil as ct

    letters = "ijklp"
    ops = []
    for _ in range(rng.randint(1, 3)):
        ops.append("".join(rng.sample(letters, rng.randint(1, 3))))
    used = sorted(set("".join(ops)))
    out = "".join(rng.sample(used, rng.randint(0, min(3, len(used)))))
    shapes = [tuple(c for c in op) for op in ops]
    return ct.format(ct.from_einsum(",".join(ops) + "->" + out, *shapes))


def make_library(directory: Path, count: int, seed: int = 17) -> list[Path]:
    """``count`` kernels, every one well typed (a draw that is not is drawn again)."""
    import core_teil as ct

    rng = random.Random(seed)
    if directory.exists():
        shutil.rmtree(directory)
    (directory / "programs").mkdir(parents=True)
    (directory / "einsum").mkdir()
    paths = []
    seen: set[str] = set()
    while len(paths) < count:
        kind = "programs" if len(paths) % 2 == 0 else "einsum"
        text = random_program(rng) if kind == "programs" else random_einsum(rng)
        try:
            program = ct.parse(text)
            ct.check(program)
        except ct.TeilError:
            continue
        if text in seen:
            continue
        seen.add(text)
        p = directory / kind / f"k{len(paths):05d}.teil"
        p.write_text(text)
        paths.append(p)
    for f in sorted((ROOT / "examples").glob("*.teil")):
        shutil.copy(f, directory / f.name)
    return paths


# --------------------------------------------------------------------------
# Proving: cold and warm, one job and two
# --------------------------------------------------------------------------


def prove_run(lib: Path, cache: Path, jobs: int) -> dict[str, Any]:
    env = {**os.environ, "CORE_TEIL_CACHE_KEY": "bench-scale-" + "0" * 32,
           # with bytecode, as an installed package has it (pip compiles it): where
           # PYTHONDONTWRITEBYTECODE is set, every run compiled core_teil's modules from source
           # again, a tenth of a warm run; the first (cold) run writes it under build/
           "PYTHONPYCACHEPREFIX": str(OUT / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run([*CLI, "prove", str(lib), "--jobs", str(jobs), "--cache", str(cache), "--json"],
                       capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the CPU time of the run and of its workers: wall / CPU says how much of the cores it got
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode not in (0, 1, 3):
        raise SystemExit(f"prove failed ({p.returncode}): {p.stderr[-2000:]}")
    summary = json.loads(p.stdout)["summary"]
    return {"wall_s": wall, "cpu_s": cpu, "exit_code": p.returncode, **{k: summary[k] for k in (
        "kernels", "proved", "refuted", "unknown", "error", "obligations", "solver_decided", "from_cache",
        "kernels_from_cache")}, "kernel_cpu_s": summary["cpu_s"]}


def bench_prove(count: int, repeat: int) -> dict[str, Any]:
    lib = OUT / "lib"
    t = time.perf_counter()
    make_library(lib, count)
    print(f"library: {count} generated kernels + the examples in {lib} ({time.perf_counter() - t:.1f} s)")
    runs: dict[str, list[dict[str, Any]]] = {"cold_jobs1": [], "cold_jobs2": [], "warm_jobs1": [], "warm_jobs2": []}
    for r in range(repeat):
        for jobs in (1, 2):
            cache = OUT / f"cache-{jobs}-{r}"
            shutil.rmtree(cache, ignore_errors=True)
            runs[f"cold_jobs{jobs}"].append(prove_run(lib, cache, jobs))
            runs[f"warm_jobs{jobs}"].append(prove_run(lib, cache, jobs))
            cold, warm = runs[f"cold_jobs{jobs}"][-1], runs[f"warm_jobs{jobs}"][-1]
            print(f"  repeat {r + 1}, --jobs {jobs}: cold {cold['wall_s']:.1f} s (CPU of the kernels "
                  f"{cold['kernel_cpu_s']:.1f} s), warm {warm['wall_s']:.2f} s (CPU of the process "
                  f"{warm['cpu_s']:.2f} s); load {os.getloadavg()[0]:.1f}",
                  flush=True)
    med = {k: statistics.median(x["wall_s"] for x in v) for k, v in runs.items()}
    out = {"kernels": runs["cold_jobs1"][0]["kernels"], "repeat": repeat, "median_wall_s": med,
           "cold_speedup_jobs2": med["cold_jobs1"] / med["cold_jobs2"],
           "warm_over_cold_jobs2": med["cold_jobs2"] / med["warm_jobs2"],
           "warm_over_cold_jobs1": med["cold_jobs1"] / med["warm_jobs1"],
           "runs": runs}
    first = runs["cold_jobs1"][0]
    print(f"prove: {first['kernels']} kernels ({first['proved']} proved, {first['refuted']} refuted, "
          f"{first['unknown']} unknown, {first['error']} errors), {first['obligations']} obligations; "
          f"median of {repeat}:")
    print(f"  cold --jobs 1 {med['cold_jobs1']:.1f} s, --jobs 2 {med['cold_jobs2']:.1f} s "
          f"(x{out['cold_speedup_jobs2']:.2f})")
    print(f"  warm --jobs 1 {med['warm_jobs1']:.2f} s, --jobs 2 {med['warm_jobs2']:.2f} s "
          f"(cold/warm x{out['warm_over_cold_jobs1']:.1f} and x{out['warm_over_cold_jobs2']:.1f}); "
          f"warm runs decided {runs['warm_jobs2'][0]['solver_decided']} obligations")
    return out


# --------------------------------------------------------------------------
# interp at E = 2x10^6 through dask
# --------------------------------------------------------------------------


class NpyWriter:
    """A ``.npy`` file written block by block with ``os.pwrite`` (a ``dask.array.store`` target).

    Only the leading axis may be sliced: a block is then one contiguous run of bytes."""

    def __init__(self, path: Path, shape: tuple[int, ...]) -> None:
        import numpy as np

        self.shape, self.path = shape, path
        with open(path, "wb") as fh:
            np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": shape})
            self.offset = fh.tell()
            fh.truncate(self.offset + 8 * int(np.prod(shape)))
        self.fd = os.open(path, os.O_WRONLY)
        self.row = 8 * int(np.prod(shape[1:]))

    def __setitem__(self, key: Any, value: Any) -> None:
        import numpy as np

        first = key[0] if isinstance(key, tuple) else key
        assert all(k == slice(None) or (k.start in (0, None) and k.stop in (None, n))
                   for k, n in zip(key[1:] if isinstance(key, tuple) else (), self.shape[1:], strict=False))
        data = np.ascontiguousarray(value, dtype="<f8")
        os.pwrite(self.fd, memoryview(data).cast("B"), self.offset + (first.start or 0) * self.row)

    def close(self) -> None:
        os.close(self.fd)


def dask_child(E: int, n: int, chunk: int, workers: int, path: Path) -> dict[str, Any]:
    """Runs in its own process: the blockwise run, its peak RSS, and the checks on sampled elements."""
    import dask
    import dask.array as da
    import numpy as np

    import core_teil as ct

    program = ct.load(str(ROOT / "examples" / "interp.teil"))
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n))
    u = da.random.default_rng(1).standard_normal((E, n, n, n), chunks=(chunk, n, n, n))
    kernel = ct.compile(program, {"n": n, "m": n})

    class Discard:
        def __setitem__(self, key: Any, value: Any) -> None:
            pass

    # what generating the input alone costs (it is part of the dask run, not of the in-memory one)
    t0 = time.perf_counter()
    with dask.config.set(scheduler="threads", num_workers=workers):
        da.store(u, Discard(), lock=False)
    generate_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    v = kernel.blockwise(chunk, A=A, u=u)["v"]
    target = NpyWriter(path, v.shape)
    with dask.config.set(scheduler="threads", num_workers=workers):
        da.store(v, target, lock=False)
    target.close()
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    # sampled elements: the in-memory kernel and numpy.einsum on exactly those elements
    sample = np.sort(np.random.default_rng(2).choice(E, 64, replace=False))
    u_s = u[sample].compute()
    got = np.load(path, mmap_mode="r")[sample]
    mine = kernel(A=A, u=u_s)["v"]
    ref = np.einsum("il,jm,kn,elmn->eijk", A, A, A, u_s, optimize=True)
    # the in-memory run's throughput, on as much as fits comfortably
    e_mem = min(E, 200_000)
    u_mem = u[:e_mem].compute()
    kernel(A=A, u=u_mem[:1000])
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        kernel(A=A, u=u_mem)
        ts.append(time.perf_counter() - t)
    return {"E": E, "n": n, "chunk": chunk, "dask_threads": workers, "seconds": seconds, "generate_s": generate_s,
            "elements_per_s": E / seconds, "peak_rss_bytes": peak,
            "input_bytes": E * n**3 * 8, "output_bytes": E * n**3 * 8,
            "sampled": len(sample), "max_abs_diff_in_memory": float(np.abs(got - mine).max()),
            "max_abs_diff_einsum": float(np.abs(got - ref).max()),
            "in_memory_E": e_mem, "in_memory_median_s": statistics.median(ts),
            "in_memory_elements_per_s": e_mem / statistics.median(ts)}


def bench_dask(E: int, chunk: int, workers: int) -> dict[str, Any]:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "interp_v.npy"
    p = subprocess.run([sys.executable, "-m", "bench.scale", "--child", str(E), str(chunk), str(workers), str(path)],
                       capture_output=True, text=True, check=False, cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(f"the dask run failed: {p.stderr[-3000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    path.unlink(missing_ok=True)  # 5.5 GB
    gib = 2**30
    print(f"interp n=7, E={E:,} through dask ({chunk:,} elements per block, {workers} threads): "
          f"{res['seconds']:.1f} s ({res['generate_s']:.1f} s of it generating the input), "
          f"{res['elements_per_s']:,.0f} elements/s; peak RSS "
          f"{res['peak_rss_bytes'] / gib:.2f} GiB for {res['input_bytes'] / gib:.1f} GiB in and "
          f"{res['output_bytes'] / gib:.1f} GiB out")
    print(f"  in memory (E={res['in_memory_E']:,}, median of 3): {res['in_memory_elements_per_s']:,.0f} elements/s; "
          f"{res['sampled']} sampled elements: max |dask - in memory| = {res['max_abs_diff_in_memory']:.2e}, "
          f"max |dask - numpy.einsum| = {res['max_abs_diff_einsum']:.2e}")
    return res


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        E, chunk, workers, path = int(argv[1]), int(argv[2]), int(argv[3]), Path(argv[4])
        print(json.dumps(dask_child(E, 7, chunk, workers, path)))
        return 0
    ap = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--E", type=int, default=2_000_000)
    ap.add_argument("--chunk", type=int, default=50_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-prove", action="store_true")
    ap.add_argument("--skip-dask", action="store_true")
    args = ap.parse_args(argv)
    results: dict[str, Any] = {"cores": os.cpu_count(), "load_before": os.getloadavg()}
    if not args.skip_prove:
        results["prove"] = bench_prove(args.kernels, args.repeat)
    if not args.skip_dask:
        results["dask"] = bench_dask(args.E, args.chunk, args.threads)
    results["load_after"] = os.getloadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"load average before/after: {results['load_before'][0]:.1f} / {results['load_after'][0]:.1f}; "
          f"results in {OUT / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""python -m bench --traffic: global-memory traffic measured by Nsight Compute beside the bytes model.

This process does no GPU work. It builds the jobs (implementation x shape x dtype), and for
each (dtype, shape) starts one profiled child, bench/traffic_child.py, under

    ncu --csv --page raw --metrics ... --cache-control all --clock-control base --nvtx ...

so every kernel is replayed with flushed caches at base clocks, and only the kernels inside
the child's NVTX range are profiled (not its warm-up, compiles or reference products). One
child per shape profiles all of that shape's implementations: starting Python, torch and the
profiler is most of the cost of a process. ncu's raw CSV output and the child's manifest are
kept under OUT/ncu/, so a recorded CSV can be replayed by the parser with no GPU.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from . import impls, report, traffic
from .progress import Steps

# fp32 (IEEE) at 4096^3 for every implementation; the write-ups' claim-1 setup (N = 1024) for
# the rungs it is about; one 16-bit shape for the tensor-core kernels.
PLAN = [("fp32", (4096, 4096, 4096), None),
        ("fp32", (1024, 1024, 1024), ("cuda naive", "cuda coalesced", "cuda tiled")),
        ("bf16", (4096, 4096, 4096), None)]
TILES = [(32, 32, 4), (64, 64, 4), (128, 128, 8), (128, 256, 8)]  # BM, BN, num_warps of the pinned tritonmm tiles
PATHS = ("pointer", "tma")
TIMEOUT_S = 600
PERMISSION = "ERR_NVGPUCTRPERM"


def find_ncu() -> str | None:
    for candidate in (shutil.which("ncu"), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ncu"),
                      "/usr/local/cuda/bin/ncu"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def jobs_for(dtype: str, shape: tuple, only=None) -> list:
    """The implementations profiled at one (dtype, shape): the registry's CUDA rungs, Gluon schedules and torch.mm,
    then tritonmm at each pinned tile on each kernel path. only: names must contain one of these."""
    M, N, K = shape
    bk = 32 if dtype == "fp32" else 64
    jobs = [dict(kind="registry", impl=i.name, level=i.level, tile=i.tile, config=None, path=None)
            for i in impls.registry(dtype) if i.level in ("thread", "gluon", "library")]
    for bm, bn, warps in TILES:
        cfg = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=3)
        jobs += [dict(kind="tritonmm", impl=f"tritonmm {bm}x{bn}x{bk} {path}", level="block", tile=(bm, bn),
                      config=cfg, path=path) for path in PATHS]
    return [dict(j, dtype=dtype, M=M, N=N, K=K) for j in jobs if not only or any(o in j["impl"] for o in only)]


def plan_jobs(shapes, dtypes, only) -> list:
    """[(dtype, shape, jobs)]: PLAN unless shapes are given, then every shape for each dtype (fp32 and bf16
    by default)."""
    groups = [(d, s, None) for d in dtypes or ("fp32", "bf16") for s in shapes] if shapes else \
        [(d, s, o) for d, s, o in PLAN if not dtypes or d in dtypes]
    out = []
    for dtype, shape, preset in groups:
        jobs = jobs_for(dtype, shape, only)
        if preset:
            jobs = [j for j in jobs if any(p in j["impl"] for p in preset)]
        if jobs:
            out.append((dtype, tuple(shape), jobs))
    return out


class ProfileError(RuntimeError):
    pass


def command(ncu: str, metrics: list, spec_path: Path) -> list:
    return [ncu, "--csv", "--page", "raw", "--print-units", "base", "--metrics", ",".join(metrics),
            "--cache-control", "all", "--clock-control", "base",
            "--target-processes", "application-only",  # not nvcc, ptxas or the compiler Triton starts
            "--nvtx", "--nvtx-include", f"{traffic.RANGE}/",
            sys.executable, "-m", "bench.traffic_child", str(spec_path)]


def _run(cmd: list) -> subprocess.CompletedProcess:
    """cmd in the repository root, in a session of its own: on timeout the whole group goes, so the profiled
    child cannot outlive ncu and keep the GPU (and ncu's locked clocks)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            cwd=Path(__file__).resolve().parent.parent)
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def profile(ncu: str, dtype: str, shape: tuple, jobs: list, raw_dir: Path) -> list:
    """Runs one profiled child for a (dtype, shape); returns collect()'s rows. Raw output stays in raw_dir."""
    tag = f"{dtype}_{'x'.join(map(str, shape))}"
    spec_path, manifest_path = raw_dir / f"{tag}.spec.json", raw_dir / f"{tag}.manifest.json"
    spec_path.write_text(json.dumps(dict(dtype=dtype, shape=shape, manifest=str(manifest_path), jobs=jobs), indent=1))
    metrics = list(traffic.METRICS.values())
    for attempt in range(2):
        proc = _run(command(ncu, metrics, spec_path))
        (raw_dir / f"{tag}.csv").write_text(proc.stdout)
        (raw_dir / f"{tag}.log").write_text(proc.stderr)
        said = proc.stdout + proc.stderr
        if PERMISSION in said:
            raise PermissionError(PERMISSION)
        errors = [line for line in said.splitlines() if line.startswith("==ERROR==")]
        missing = [m for key, m in traffic.METRICS.items()
                   if key not in traffic.REQUIRED and m in metrics and any(m.split(".")[0] in e for e in errors)]
        if not missing or attempt:
            break
        metrics = [m for m in metrics if m not in missing]  # an ncu without these counters: go on without them
    if proc.returncode != 0 or not manifest_path.exists():
        tail = "\n".join(said.strip().splitlines()[-15:])
        raise ProfileError(f"ncu exited {proc.returncode} for {tag} (raw output in {raw_dir}):\n{tail}")
    return collect(json.loads(manifest_path.read_text()), proc.stdout)


def collect(manifest: list, csv_text: str) -> list:
    """The child's manifest and ncu's raw CSV -> traffic.traffic_row rows, one per manifest entry, in order.
    Pure: tests replay recorded output through it."""
    groups = traffic.split_at_markers(traffic.parse_ncu_csv(csv_text), traffic.MARKER)
    profiled = [e for e in manifest if e.get("marker") is not None]
    if len(groups) != len(profiled):
        raise ProfileError(f"{len(groups)} marker kernels in ncu's table for {len(profiled)} implementations")
    rows = []
    for entry in manifest:
        kernels = groups[entry["marker"]] if entry.get("marker") is not None else []
        job = {k: entry[k] for k in ("dtype", "M", "N", "K", "impl", "level", "tile", "path", "rel_err")}
        job.update(shape=f"{entry['M']}x{entry['N']}x{entry['K']}", kernels=len(kernels),
                   kernel_names=sorted({k["kernel"] for k in kernels}),
                   note=entry.get("error") or (None if kernels else "no kernel profiled"))
        if entry.get("asked_path") and entry["path"] and entry["asked_path"] != entry["path"]:
            job["note"] = f"asked for the {entry['asked_path']} kernel, ran {entry['path']}"  # no TMA off Hopper
        esize = 4 if entry["dtype"] == "fp32" else 2
        rows.append(traffic.traffic_row(job, traffic.sums(kernels), esize))
    return rows


def run(args, meta: dict) -> int:
    """The --traffic run: profile, print one table per (dtype, shape), write traffic.json/csv and plots. Exits 3
    where nothing could be measured (no ncu, no access to the counters), 1 where a shape failed."""
    ncu = find_ncu()
    if ncu is None:
        print("Nsight Compute (ncu) not found on PATH or in $CUDA_HOME/bin, /usr/local/cuda/bin: nothing measured.",
              file=sys.stderr)
        return 3
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="tritonmm-traffic-"))
    raw_dir = out_dir / "ncu"
    raw_dir.mkdir(parents=True, exist_ok=True)
    groups = plan_jobs(args.shape, args.dtype, args.impl)
    rows, failed = [], []
    progress = Steps(sum(len(j) for *_, j in groups), "ncu")
    for dtype, shape, jobs in groups:
        progress.step(f"{dtype} {'x'.join(map(str, shape))}: {len(jobs)} implementations in one profiled child",
                      len(jobs))
        try:
            rows += profile(ncu, dtype, shape, jobs, raw_dir)
        except PermissionError:
            print(f"ncu may not read the GPU's performance counters here ({PERMISSION}): run it as root, or "
                  f"load the driver with NVreg_RestrictProfilingToAdminUsers=0. Nothing measured.", file=sys.stderr)
            return 3
        except (ProfileError, subprocess.TimeoutExpired, ValueError) as e:
            failed.append(str(e))
    meta = dict(meta, ncu=ncu, metrics=traffic.METRICS, raw_dir=str(raw_dir))
    print(f"\n{meta['gpu']}, {meta['date']}; Nsight Compute {ncu}: caches flushed before every replay, base clocks. "
          f"GB = 1e9 bytes, reads only; model: bench/traffic.py for the tile; min: A and B read once; "
          f"L2: sectors the SMs read from L2 x 32 B; ms: under ncu, at base clocks")
    for key in dict.fromkeys((r["dtype"], r["shape"]) for r in rows):
        print(f"\n## {key[0]} {key[1]}")
        print(report.traffic_table([r for r in rows if (r["dtype"], r["shape"]) == key]))
    for message in failed:
        print("\nFAILED:", message)
    if rows:
        for path in report.write_traffic(rows, meta, out_dir):
            print("wrote", path)
    print(f"raw ncu output (CSV), specs and manifests: {raw_dir}")
    return 1 if failed else 0

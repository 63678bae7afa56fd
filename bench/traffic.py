"""The bytes model, and the traffic Nsight Compute measures, side by side.

A block that owns a BM x BN tile of C reads a BM x K strip of A and a K x BN strip of B,
so A is read once per column of tiles and B once per row of tiles:

    words read = M*K*ceil(N/BN) + K*N*ceil(M/BM)   (about 2MNK/T for T x T tiles)
    words written = M*N

An implementation with no on-chip reuse (the naive kernels) is the BM = BN = 1 case:
2MNK words. Caches are left out on purpose: this is what tiling itself guarantees.

The measured side (bench/ncu.py runs the profiler) is parsed here, with no GPU: ncu's
``--csv --page raw`` report, one row per profiled kernel, summed per implementation.
"""
import csv
import math
import re

# What ncu reads per kernel, by our name. All are plain counters (".sum") that exist on Hopper
# (GH100) with Nsight Compute 2025.x, and on Ampere and Ada too. Reads only: the model's
# M*N output words are a write, and no read counter sees them.
METRICS = {
    # 32-byte sectors of L2 reads requested by any unit of the GPCs, i.e. by the SMs: the LSU
    # path through L1 and TMA bulk copies alike (TMA loads skip L1, so an L1TEX-only counter
    # misses them). srcnode_gpc rather than every read at L2 (lts__t_sectors_op_read): on
    # GH100 a read of memory homed in the other L2 partition is looked up in the local slice
    # and then again in the remote one, over the L2 fabric, and "every read" counts it twice.
    "l2_sm": "lts__t_sectors_srcnode_gpc_op_read.sum",
    # The same flow seen from the L1TEX unit only (LSU loads that missed L1, no TMA): a cross
    # check, and the fallback where the srcnode counter is missing.
    "l2_tex": "lts__t_sectors_srcunit_tex_op_read.sum",
    # Bytes read from HBM: L2 misses. ncu flushes the caches before each replay
    # (--cache-control all), so the compulsory first reads are included.
    "dram": "dram__bytes_read.sum",
    # Sectors the warps' global load instructions asked L1 for, and the L1 hits among them:
    # the kernel's own loads at sector granularity before any cache, closest to the model's
    # "words read". Zero for TMA kernels (their loads do not pass the LSU).
    "l1_req": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1_hit": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    # Kernel duration under the profiler: base clocks, cold caches; not comparable with do_bench.
    "time": "gpu__time_duration.sum",
}
REQUIRED = ("l2_tex", "dram", "time")  # the others are dropped, not fatal, where an ncu lacks them
SECTOR = 32  # bytes per L2/L1 sector on every NVIDIA GPU since Volta
MARKER = "traffic_marker"  # the kernel bench/traffic_child.py launches before each implementation
RANGE = "tritonmm_traffic"  # the NVTX range it profiles in (ncu --nvtx-include RANGE/)


def modeled_bytes(M: int, N: int, K: int, elem_bytes: int, tile, output: bool = True) -> int | None:
    """Modeled global-memory bytes for a (BM, BN) tile, or None when the tile is unknown (cuBLAS).
    output=False leaves out the M*N words written, for comparison with read counters."""
    if tile is None:
        return None
    bm, bn = tile
    words = M * K * math.ceil(N / bn) + K * N * math.ceil(M / bm) + (M * N if output else 0)
    return words * elem_bytes


def minimum_bytes(M: int, N: int, K: int, elem_bytes: int, output: bool = True) -> int:
    """Each input read once, the output written once (unless output=False): the floor no tiling beats."""
    return (M * K + K * N + (M * N if output else 0)) * elem_bytes


def intensity(M: int, N: int, K: int, nbytes) -> float | None:
    """Arithmetic intensity, FLOP per byte of modeled traffic."""
    return None if not nbytes else 2.0 * M * N * K / nbytes


# ---- ncu's raw page ----------------------------------------------------------------------------

_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}  # ncu scales by 1000s
_TIME = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,  # to milliseconds
         "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def to_number(text: str, unit: str = "") -> float | None:
    """One cell of the raw page as a number in base units (bytes, sectors) or, for times, ms.
    Cells may carry thousands separators ("1,234,567"); "n/a" and empty cells are None."""
    text = text.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan"):
        return None
    value = float(text)
    unit = unit.strip()
    if unit in _TIME:
        return value * _TIME[unit]
    match = re.fullmatch(r"([KMGT]?)(byte|B|sector|request|inst|cycle|warp|thread|)", unit)
    if not match:
        raise ValueError(f"unknown ncu unit {unit!r} (value {text})")
    return value * _PREFIX[match.group(1)]


def parse_ncu_csv(text: str, metrics=None) -> list:
    """ncu ``--csv --page raw`` output -> one dict per profiled kernel, in launch order:
    {"id", "kernel", "metrics": {metric name: number}} for the metrics asked for (METRICS' by
    default; ncu adds columns of its own, some not numbers). Lines around the table (ncu's
    "==PROF==" lines, the program's output) are skipped. The raw page has a header row ("ID",
    "Process ID", ..., "Kernel Name", ..., then one column per metric), a row of
    units (identity cells empty) and then one row per kernel."""
    wanted = set(METRICS.values() if metrics is None else metrics)
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("==")]
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError("no ncu raw-page table (a header row starting with \"ID\") in the output")
    rows = list(csv.reader(lines[start:]))
    header = rows[0]
    if "Kernel Name" not in header:
        raise ValueError(f"ncu table without a 'Kernel Name' column: {header[:8]}")
    has_units = len(rows) > 1 and bool(rows[1]) and not rows[1][0].strip()
    units = rows[1] if has_units else [""] * len(header)
    metric_cols = [(i, name) for i, name in enumerate(header) if name in wanted]
    kernels = []
    for row in rows[2 if has_units else 1:]:
        if len(row) != len(header) or not row[0].strip().isdigit():
            continue  # a line the program printed into the table, or a truncated row
        cell = dict(zip(header, row))
        values = {name: to_number(row[i], units[i]) for i, name in metric_cols}
        kernels.append(dict(id=int(cell["ID"]), kernel=cell["Kernel Name"],
                            metrics={k: v for k, v in values.items() if v is not None}))
    return sorted(kernels, key=lambda k: k["id"])


def split_at_markers(kernels: list, marker: str) -> list:
    """The profiled child launches a marker kernel before each implementation; the kernels
    between two markers are that implementation's (cuBLAS may launch several). Returns one
    list per marker, in order; kernels before the first marker are an error."""
    groups = []
    for k in kernels:
        if marker in k["kernel"]:
            groups.append([])
        elif not groups:
            raise ValueError(f"kernel {k['kernel']!r} (ID {k['id']}) was profiled before the first marker")
        else:
            groups[-1].append(k)
    return groups


def sums(kernels: list) -> dict:
    """Our metric names -> totals over the kernels (None where no kernel has the metric)."""
    out = {}
    for key, metric in METRICS.items():
        values = [k["metrics"][metric] for k in kernels if metric in k["metrics"]]
        out[key] = sum(values) if values else None
    return out


def _ratio(a, b):
    return None if a is None or not b else a / b


def traffic_row(job: dict, measured: dict, elem_bytes: int) -> dict:
    """One table row: the model's reads for job's tile, the measured reads (bytes) and their ratios.
    job: dtype, M, N, K, impl, level, path, tile ((BM, BN) or None). measured: sums()'s dict.
    L2 reads are the SMs' requests (srcnode_gpc, covering TMA), else the L1TEX-only counter."""
    M, N, K = job["M"], job["N"], job["K"]
    model = modeled_bytes(M, N, K, elem_bytes, job["tile"], output=False)
    floor = minimum_bytes(M, N, K, elem_bytes, output=False)
    l2_sectors = measured.get("l2_sm") if measured.get("l2_sm") is not None else measured.get("l2_tex")
    l2 = None if l2_sectors is None else l2_sectors * SECTOR
    l1 = None if measured.get("l1_req") is None else measured["l1_req"] * SECTOR
    dram = measured.get("dram")
    hit = measured.get("l1_hit")
    return dict(job, model_read_bytes=model, min_read_bytes=floor, l1_req_bytes=l1,
                l1_hit_pct=None if hit is None or not measured.get("l1_req") else 100.0 * hit / measured["l1_req"],
                l2_read_bytes=l2, l2_tex_bytes=None if measured.get("l2_tex") is None else measured["l2_tex"] * SECTOR,
                dram_read_bytes=dram, time_ms=measured.get("time"),
                l1_x_model=_ratio(l1, model), l2_x_model=_ratio(l2, model), dram_x_model=_ratio(dram, model),
                dram_x_min=_ratio(dram, floor))

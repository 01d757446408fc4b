"""Helpers shared by the benchmark scripts: fixture clones and whole-process timing."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"


def fixture_clone(name: str, target_root: Path) -> Path:
    """A fresh clone of ../shared/fixtures/NAME.bundle under `target_root`."""
    bundle = SHARED / "fixtures" / f"{name}.bundle"
    if not bundle.is_file():
        raise SystemExit(f"{bundle} is missing: pass --repo with a clone instead")
    target = target_root / name
    if not target.exists():
        subprocess.run(
            ["git", "clone", "-q", str(bundle), str(target)], check=True, stderr=subprocess.DEVNULL
        )
    return target


@dataclass(frozen=True)
class Run:
    seconds: float
    max_rss_mb: float


def run_once(command: list[str]) -> Run:
    """Wall time and peak resident memory of one whole process, output discarded."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"command failed: {' '.join(command)}")
    return Run(elapsed, usage.ru_maxrss / 1024)


def median(values: list[float]) -> float:
    return statistics.median(values)

"""Fixtures: the `dbtr` command line the package is compared with, and the tiny scans it
makes. tests/python.cmake runs these tests against the build tree, with DBTR_CLI (the
command) and DBTR_LIBRARY (the shared libdbtr) set; without them, the build in ../build."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    """run(*args): runs `dbtr ARGS --quiet` and fails the test with its stderr if it fails."""
    exe = os.environ.get("DBTR_CLI", str(ROOT / "build" / "app" / "dbtr"))
    if not os.access(exe, os.X_OK):
        pytest.fail(f"no dbtr command at {exe}: build it (./run.sh test) or set DBTR_CLI")

    def run(*args) -> None:
        p = subprocess.run([exe, *map(str, args), "--quiet"], capture_output=True, text=True)
        assert p.returncode == 0, f"dbtr {' '.join(map(str, args))}: exit {p.returncode}: {p.stderr}"

    return run


@pytest.fixture(scope="session")
def tiny(cli, tmp_path_factory) -> Path:
    """A folder with scan.h5 (breast phantom on the `tiny` system, Poisson counts, seed 3),
    truth.tif (its ground truth) and li.h5 (the ACR phantom as noiseless line integrals)."""
    d = tmp_path_factory.mktemp("tiny")
    cli("phantom", "--system", "tiny", "--phantom", "breast", "--seed", 3, "-o", d / "scan.h5", "--truth",
        d / "truth.tif")
    cli("phantom", "--system", "tiny", "--phantom", "acr", "--line-integrals", "-o", d / "li.h5")
    return d


# tests/python.cmake sets DBTR_SKIP_EXIT for the files whose tests skip where torch, CuPy or a
# GPU is missing: a run whose every test skipped exits with it (77, CTest's SKIP_RETURN_CODE),
# so that CTest reports a skip, not a pass.
_ran: dict = {"run": 0, "skipped": 0}


def pytest_runtest_logreport(report) -> None:
    if report.when == "call" or report.skipped:
        _ran["skipped" if report.skipped else "run"] += 1


def pytest_collectreport(report) -> None:
    if report.skipped:
        _ran["skipped"] += 1


def pytest_sessionfinish(session, exitstatus) -> None:
    code = os.environ.get("DBTR_SKIP_EXIT")
    if code and _ran["skipped"] and not _ran["run"] and exitstatus in (0, 5):
        session.exitstatus = int(code)

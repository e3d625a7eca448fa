"""The Python package against the `dbtr` command line: the same scan and options give the
same bits (tests/python.cmake runs each test as its own CTest entry)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import tifffile

import dbtr


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def cli_volume(path) -> np.ndarray:
    return tifffile.imread(str(path))


def test_read_scan_fields(tiny):
    s = dbtr.read_scan(tiny / "scan.h5")
    assert s.projections.shape == (9, 80, 128) and s.projections.dtype == np.float64
    assert s.quantity == "counts" and s.dtype == "float32"
    assert s.i0.shape == () and float(s.i0) == 10000.0  # the phantom's default i0
    for f in ("source", "detector_center", "detector_u", "detector_v"):
        a = getattr(s.geometry, f)
        assert a.shape == (9, 3) and a.dtype == np.float64
    assert s.geometry.detector_shape == (80, 128)
    assert s.grid.dims == (128, 80, 24) and s.grid.shape == (24, 80, 128)
    li = dbtr.read_scan(tiny / "li.h5")
    assert li.quantity == "line_integral" and li.i0 is None


@pytest.mark.parametrize("i0_shape", ["scalar", "per_view", "per_pixel", "full"])
def test_write_read_round_trip(tiny, tmp_path, i0_shape):
    s = dbtr.read_scan(tiny / "scan.h5")
    n_views, n_rows, n_cols = s.projections.shape
    shapes = {"scalar": (), "per_view": (n_views,), "per_pixel": (n_rows, n_cols), "full": s.projections.shape}
    s.i0 = np.full(shapes[i0_shape], 1e4) + np.arange(int(np.prod(shapes[i0_shape]))).reshape(shapes[i0_shape])
    dbtr.write_scan(tmp_path / "out.h5", s, dtype="float64", gzip=4)
    back = dbtr.read_scan(tmp_path / "out.h5")
    assert same_bits(back.projections, s.projections) and same_bits(back.i0, s.i0)
    for f in ("source", "detector_center", "detector_u", "detector_v"):
        assert same_bits(getattr(back.geometry, f), getattr(s.geometry, f))
    assert back.grid == s.grid and back.quantity == "counts" and back.dtype == "float64"


def test_forward_equals_cli_project(cli, tiny, tmp_path):
    """`dbtr project` forward-projects the float TIFF in double and stores float32 line
    integrals; forward() of the same volume in float64, rounded to float32, is those bits."""
    s = dbtr.read_scan(tiny / "scan.h5")
    cli("project", tiny / "truth.tif", "--geometry", tiny / "scan.h5", "-o", tmp_path / "p.h5")
    truth = cli_volume(tiny / "truth.tif")
    mine = dbtr.forward(truth.astype(np.float64), s.geometry, s.grid).astype(np.float32)
    theirs = dbtr.read_scan(tmp_path / "p.h5").projections.astype(np.float32)
    assert same_bits(mine, theirs)
    assert dbtr.forward(truth, s.geometry, s.grid).dtype == np.float32  # float32 in, float32 out


def test_back_is_the_transpose(tiny):
    """<A x, y> = <x, A^T y> to rounding. Both sides sum positive terms, so there is no
    cancellation: each ray sum takes 24 slices x 4 bilinear weights, each voxel gather at
    most 9 views x 9 pixels, and numpy's pairwise dot about 17 levels, some 200 roundings of
    2^-53 in all (2e-14 relative); 1e-12 leaves a margin of 50."""
    s = dbtr.read_scan(tiny / "scan.h5")
    rng = np.random.default_rng(14)
    x = rng.uniform(0.5, 1.5, s.grid.shape)
    y = rng.uniform(0.5, 1.5, s.projections.shape)
    lhs = np.dot(dbtr.forward(x, s.geometry, s.grid).ravel(), y.ravel())
    rhs = np.dot(x.ravel(), dbtr.back(y, s.geometry, s.grid).ravel())
    assert abs(lhs - rhs) <= 1e-12 * abs(lhs)


@pytest.mark.parametrize("args", [
    ("scan.h5", "--iterations", 4, "--subsets", 3),
    ("scan.h5", "--iterations", 3, "--precision", "double"),
    ("scan.h5", "--iterations", 2, "--precision", "dd"),
    ("li.h5", "--iterations", 3, "--subsets", 3),
], ids=["float_subsets", "double", "dd", "emission"])
def test_recon_equals_cli(cli, tiny, tmp_path, args):
    """recon() and `dbtr recon --backend cpu` give the same bits (the command stores float32:
    a double or double-double volume is compared rounded to float32)."""
    name, *flags = args
    cli("recon", tiny / name, "-o", tmp_path / "r.tif", "--backend", "cpu", *flags)
    kw = dict(zip((f.lstrip("-") for f in flags[::2]), flags[1::2]))
    s = dbtr.read_scan(tiny / name)
    vol = dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, quantity=s.quantity, backend="cpu", **kw)
    assert vol.dtype == (np.float64 if kw.get("precision") in ("double", "dd") else np.float32)
    assert same_bits(vol.astype(np.float32), cli_volume(tmp_path / "r.tif"))


@pytest.mark.parametrize("precision", ["float", "double", "dd"])
def test_recon_float64_equals_cli(cli, tiny, tmp_path, precision):
    """`dbtr recon --format float64` stores the result rounded to double: recon()'s float64
    volume bit for bit for double and dd (whose float64 are the high parts, taken here from
    the library's (hi, lo) pairs, in the command by dbtr_convert_to_double), and the float
    volume widened exactly for float. 2 iterations, as the dd case above: every voxel the
    rays reach has moved from the start value by then."""
    cli("recon", tiny / "scan.h5", "-o", tmp_path / "r.tif", "--backend", "cpu", "--iterations", 2,
        "--precision", precision, "--format", "float64")
    s = dbtr.read_scan(tiny / "scan.h5")
    vol = dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, iterations=2, backend="cpu", precision=precision)
    with tifffile.TiffFile(str(tmp_path / "r.tif")) as t:
        stored, keys = t.series[0].asarray(), t.imagej_metadata
    assert stored.dtype == np.float64 and same_bits(vol.astype(np.float64), stored)
    assert tuple(float(v) for v in keys["dbtr_voxel_size"].split(",")) == s.grid.voxel_size
    assert tuple(float(v) for v in keys["dbtr_origin"].split(",")) == s.grid.origin


def test_callback_sees_each_iteration_and_can_stop(tiny):
    s = dbtr.read_scan(tiny / "scan.h5")
    seen = []

    def on_iteration(p: dbtr.Progress) -> None:
        seen.append((p.iteration, p.deviance, p.volume() if p.iteration == 2 else None))
        if p.iteration == 3:
            raise KeyboardInterrupt  # what a user's Ctrl-C in a callback does

    with pytest.raises(KeyboardInterrupt):
        dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, iterations=10, backend="cpu", callback=on_iteration)
    assert [it for it, _, _ in seen] == [1, 2, 3] and seen[2][1] < seen[0][1]
    two = dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, iterations=2, backend="cpu")
    assert same_bits(seen[1][2], two)
    kept = []
    dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, iterations=1, backend="cpu", callback=kept.append)
    with pytest.raises(RuntimeError, match="only valid during the callback"):
        kept[0].volume()


def test_validate_equals_cli(cli, tiny, tmp_path):
    """The rows of validate() are the rows of `dbtr validate --report`: counts exactly, and the
    numbers as the report prints them (9 significant digits)."""
    cli("validate", tiny / "scan.h5", "--iterations", 2, "--modes", "cpu-1-thread,cpu-float", "--report",
        tmp_path / "rep")
    report = json.loads((tmp_path / "rep" / "validate.json").read_text())
    s = dbtr.read_scan(tiny / "scan.h5")
    v = dbtr.validate(s.projections, s.geometry, s.grid, i0=s.i0, iterations=2, paths=["cpu-1-thread", "cpu-float"])
    assert v.paths == [p["name"] for p in report["paths"]]
    g = "{:.9g}".format
    for p in report["paths"]:
        rows = [r for r in v.rows if r.path == p["name"]]
        assert [r.reference for r in rows] == [p["reference"]] * 2
        assert (v.first_difference(p["name"]) == 0) == p["identical"]
        for r, it in zip(rows, p["iterations"]):
            for mine, theirs in ((r.proj, it["projections"]), (r.vol, it["volume"])):
                assert (mine.n, mine.n_differ, mine.max_ulp, mine.median_ulp, mine.n_differ_u16) == (
                    theirs["n"], theirs["differ"], theirs["max_ulp"], theirs["median_ulp"], theirs["differ_u16"])
                assert [g(mine.max_abs), g(mine.mean_abs), g(mine.rel_l2)] == [
                    g(theirs["max_abs"]), g(theirs["mean_abs"]), g(theirs["rel_l2"])]
            assert g(r.deviance) == g(it["deviance"])


def test_validate_referee_equals_cli(cli, tiny, tmp_path):
    """With referee=True every row carries the path against the referee, as the report's
    vs_referee says (9 significant digits), and the same referee backend; without it, none."""
    cli("validate", tiny / "scan.h5", "--iterations", 2, "--modes", "cpu-float,cpu-double", "--referee", "--report",
        tmp_path / "rep")
    report = json.loads((tmp_path / "rep" / "validate.json").read_text())
    s = dbtr.read_scan(tiny / "scan.h5")
    v = dbtr.validate(s.projections, s.geometry, s.grid, i0=s.i0, iterations=2, paths=["cpu-float", "cpu-double"],
                      referee=True)
    g = "{:.9g}".format
    for p in report["paths"]:
        rows = [r for r in v.rows if r.path == p["name"]]
        assert [r.referee for r in rows] == [report["referee"]["backend"]] * 2
        for r, it in zip(rows, p["iterations"]):
            for mine, theirs in ((r.vs_proj, it["vs_referee"]["projections"]), (r.vs_vol, it["vs_referee"]["volume"])):
                assert (mine.n, mine.max_ulp, mine.median_ulp, mine.beyond_4ulp) == (
                    theirs["n"], theirs["max_ulp"], theirs["median_ulp"], theirs["beyond_4ulp"])
                assert [g(mine.rel_l2), g(mine.scale_ulp), g(mine.best), g(mine.best_units)] == [
                    g(theirs["rel_l2"]), g(theirs["scale_ulp"]), g(theirs["best"]), g(theirs["best_units"])]
    plain = dbtr.validate(s.projections, s.geometry, s.grid, i0=s.i0, iterations=1, paths=["cpu-double"])
    assert plain.rows[0].vs_vol is None and plain.rows[0].referee is None
    with pytest.raises(dbtr.InvalidArgument, match="referee=True"):
        dbtr.validate(s.projections, s.geometry, s.grid, i0=s.i0, iterations=1, paths=["dd"])


def test_validate_quality_equals_cli(cli, tiny, tmp_path):
    """quality=SCAN gives each row every object's change, the numbers of the report's
    quality_changes.csv (17 digits: the same doubles; empty there, None here, where not
    measurable), and quality_verdict(path) the largest, as validate.json has them; a scan
    without /phantom is refused, naming it, and so is a run without quality asked its verdict."""
    cli("validate", tiny / "scan.h5", "--iterations", 2, "--modes", "cpu-1-thread,cpu-float", "--quality", "--report",
        tmp_path / "rep")
    report = json.loads((tmp_path / "rep" / "validate.json").read_text())
    with open(tmp_path / "rep" / "quality_changes.csv", newline="") as f:
        table = list(csv.DictReader(f))
    s = dbtr.read_scan(tiny / "scan.h5")
    v = dbtr.validate(s.projections, s.geometry, s.grid, i0=s.i0, iterations=2, paths=["cpu-1-thread", "cpu-float"],
                      quality=tiny / "scan.h5")
    mine = [(r.path, r.iteration, c) for r in v.rows for c in r.quality]
    assert len(mine) == len(table) == 2 * 2 * report["quality"]["objects"]
    num = (lambda x: None if x in ("", "inf", "-inf") else float(x))
    for (path, it, c), t in zip(mine, table):
        assert (path, it, c.object, c.focus, c.focus_ref) == (t["path"], int(t["iteration"]), int(t["object"]),
                                                              int(t["focus"]), int(t["focus_ref"]))
        for name in ("cnr", "cnr_ref", "dcnr_percent", "fwhm", "fwhm_ref", "dfwhm_mm", "contrast", "contrast_ref",
                     "dcontrast_percent"):
            assert getattr(c, name) == num(t[name]), f"{path} iteration {it} object {c.object}: {name}"
    for p in report["paths"]:
        verdict = v.quality_verdict(p["name"])
        for key, m in (("cnr_percent", "cnr"), ("fwhm_mm", "fwhm"), ("contrast_percent", "contrast")):
            for span in ("last", "all"):
                e, theirs = getattr(verdict, span)[m], p["quality"][span][key]
                assert (e.change, e.object, e.iteration, e.not_measurable, e.one_sided) == (
                    theirs["change"], theirs["object"], theirs["iteration"], theirs["not_measurable"],
                    theirs["one_sided"])
    plain = tmp_path / "plain.h5"
    dbtr.write_scan(plain, s)  # the arrays alone: no /phantom
    with pytest.raises(dbtr.InvalidArgument, match="plain.h5: no /phantom"):
        dbtr.validate(s.projections, s.geometry, s.grid, i0=s.i0, iterations=1, paths=["cpu-float"], quality=plain)
    without = dbtr.validate(s.projections, s.geometry, s.grid, i0=s.i0, iterations=1, paths=["cpu-float"])
    assert without.rows[0].quality is None
    with pytest.raises(dbtr.InvalidArgument, match="quality_verdict"):
        without.quality_verdict("cpu-float")


def test_errors_are_exceptions_that_name_the_cause(tiny, tmp_path):
    with pytest.raises(dbtr.DbtrIOError, match="missing.h5") as e:
        dbtr.read_scan(tmp_path / "missing.h5")
    assert isinstance(e.value, OSError) and e.value.name == "DBTR_EIO"
    (tmp_path / "junk.h5").write_bytes(b"not an HDF5 file" * 64)
    with pytest.raises(dbtr.FormatError, match="junk.h5"):
        dbtr.read_scan(tmp_path / "junk.h5")
    s = dbtr.read_scan(tiny / "scan.h5")
    with pytest.raises(dbtr.InvalidArgument, match="unknown mode 'fastest'"):
        dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, mode="fastest")
    with pytest.raises(ValueError, match="projections: shape"):
        dbtr.recon(s.projections[1:], s.geometry, s.grid, i0=s.i0)
    bad = s.projections.copy()
    bad[0, 1, 2] = -1.0
    with pytest.raises(dbtr.InvalidArgument, match="negative"):
        dbtr.recon(bad, s.geometry, s.grid, i0=s.i0)
    with pytest.raises(dbtr.InvalidArgument, match="subsets=10: must be"):
        dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, subsets=10)


def test_validate_gpu_mode_without_a_gpu(tiny, tmp_path):
    """A GPU mode asked of validate where there is no GPU: Python raises NoGpuError and the
    command exits 7, before any work, alone or beside a CPU path (docs/validation.md)."""
    if dbtr.gpu_available():
        pytest.skip("a GPU is here: the GPU modes run")
    s = dbtr.read_scan(tiny / "scan.h5")
    exe = os.environ.get("DBTR_CLI", str(Path(__file__).resolve().parents[2] / "build" / "app" / "dbtr"))
    for paths in (["fast"], ["cpu-float", "cpu-match"]):
        with pytest.raises(dbtr.NoGpuError):
            dbtr.validate(s.projections, s.geometry, s.grid, i0=s.i0, iterations=1, paths=paths)
        p = subprocess.run([exe, "validate", str(tiny / "scan.h5"), "--iterations", "1", "--modes", ",".join(paths),
                            "--report", str(tmp_path / "rep")], capture_output=True, text=True)
        assert p.returncode == 7, f"--modes {','.join(paths)}: exit {p.returncode}: {p.stderr}"
        assert "no GPU can be used" in p.stderr and not (tmp_path / "rep").exists()


def test_gpu_backend_without_a_gpu(tiny):
    if dbtr.gpu_available():
        pytest.skip("a GPU is here: tests/gpu.cmake covers the GPU paths")
    s = dbtr.read_scan(tiny / "scan.h5")
    args = (s.projections, s.geometry, s.grid)
    with pytest.raises(dbtr.NoGpuError):
        dbtr.recon(*args, i0=s.i0, backend="gpu", iterations=1)
    with pytest.warns(RuntimeWarning, match="no GPU can be used"):
        auto = dbtr.recon(*args, i0=s.i0, backend="auto", iterations=1)
    assert same_bits(auto, dbtr.recon(*args, i0=s.i0, backend="cpu", iterations=1))


def test_gil_is_released_during_compute(tiny):
    """A thread that wakes every 5 ms counts its wake-ups while recon runs on one CPU thread.
    Were the GIL held during the library's calls, it could wake only between iterations:
    about once each (5 wake-ups in all, measured with the library loaded as ctypes.PyDLL,
    which holds the GIL). Released, it wakes every 5 ms: 80 to 89 times in the 0.41 to 0.46 s
    run here (20 iterations: the CPU reference on the separable tables takes about 0.02 s an
    iteration). 20 lies well between the two."""
    s = dbtr.read_scan(tiny / "scan.h5")
    ticks, stop = [0], threading.Event()

    def tick() -> None:
        while not stop.is_set():
            time.sleep(0.005)
            ticks[0] += 1

    t = threading.Thread(target=tick)
    t.start()
    try:
        start = time.perf_counter()
        dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, iterations=20, backend="cpu", precision="double",
                   threads=1)
        seconds = time.perf_counter() - start
    finally:
        stop.set()
        t.join()
    assert seconds > 0.1, "the reconstruction is too short to tell"
    assert ticks[0] >= 20, f"{ticks[0]} wake-ups in {seconds:.2f} s of reconstruction"


def test_mode_table_is_the_librarys():
    """The table from libdbtr: the modes users pick first, then variants, then the CPU paths,
    and the bitwise classes docs/modes.md promises."""
    rows = {r.name: r for r in dbtr.mode_table()}
    names = [r.name for r in dbtr.mode_table()]
    assert names[:len(dbtr.modes())] == dbtr.modes()
    assert rows["cpu-match"].bitwise_class == "cpu-float" and rows["cpu-1-thread"].bitwise_class == "cpu-float"
    assert rows["double-match"].bitwise_class == "cpu-double" and rows["dd"].bitwise_class == "cpu-dd"
    assert rows["fast"].bitwise_class is None and rows["cpu-match+fma"].variant
    assert not rows["cpu-float"].gpu and rows["cpu-1-thread"].threads == 1 and rows["cpu-dd"].precision == "dd"


def test_version_modes_and_no_stray_warning(tiny):
    assert dbtr.__version__.count(".") == 2
    assert "cpu-match" in dbtr.modes() and "double-match" in dbtr.modes() and "dd" in dbtr.modes()
    s = dbtr.read_scan(tiny / "scan.h5")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # backend="cpu" never warns
        dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, iterations=1, backend="cpu")


def test_quality_matches_cli(tiny, cli, tmp_path):
    # The package's dbtr.quality and `dbtr quality --report` are one computation: the same JSON.
    cli("quality", tiny / "truth.tif", "--scan", tiny / "scan.h5", "--report", tmp_path)
    want = json.loads((tmp_path / "quality.json").read_text())
    s = dbtr.read_scan(tiny / "scan.h5")
    got = dbtr.quality(cli_volume(tiny / "truth.tif"), s.grid, scan=tiny / "scan.h5")
    assert got == want
    mass = next(o for o in got["objects"] if o["index"] == 2)  # the breast's reference mass
    assert mass["kind"] == "mass" and mass["cnr"] is None  # the truth has no noise: an infinite CNR
    # The truth gives the documented contrast to the rounding of its float voxels.
    assert abs(mass["contrast"] - mass["expected_contrast"]) < 1e-8
    with pytest.raises(dbtr.InvalidArgument):
        dbtr.quality(cli_volume(tiny / "truth.tif"), s.grid, scan=tiny / "li.h5", regions=tiny / "x.json")

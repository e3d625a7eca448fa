"""The route to a cluster (docs/scale-out.md): dbtr.recon_file, the unit a distributed engine
maps over scans, and the Dask recipe of the doc run on a LocalCluster of two CPU worker
processes. Every volume must be byte for byte the one `dbtr recon` of its scan writes.

Dask is an optional dependency of the package (the `dask` extra); run.sh installs Debian's
python3-dask and python3-distributed, so a missing Dask fails here, it does not skip."""

from __future__ import annotations

import json

import pytest

import dbtr

ARGS = dict(iterations=2, subsets=3, backend="cpu")
CLI_ARGS = ["--iterations", 2, "--subsets", 3, "--backend", "cpu"]


@pytest.fixture(scope="module")
def scans(cli, tmp_path_factory):
    """Four scans of the tiny system: two phantoms, other seeds."""
    d = tmp_path_factory.mktemp("scans")
    out = []
    for i, phantom in enumerate(["breast", "breast", "acr", "breast"]):
        p = d / f"scan{i}.h5"
        cli("phantom", "--system", "tiny", "--phantom", phantom, "--seed", i + 1, "-o", p)
        out.append(p)
    return out


def test_recon_file_equals_cli_and_records(cli, scans, tmp_path):
    log = tmp_path / "log.jsonl"
    out = tmp_path / "a.tif"
    assert dbtr.recon_file(scans[0], out, log=log, **ARGS) == "written"
    cli("recon", scans[0], "-o", tmp_path / "cli.tif", *CLI_ARGS)
    assert out.read_bytes() == (tmp_path / "cli.tif").read_bytes()
    rec = json.loads(log.read_text().splitlines()[0])
    assert rec["status"] == "ok" and rec["output"] == str(out) and rec["backend"] == "cpu-float"
    assert rec["options"]["iterations"] == 2 and rec["options"]["subsets"] == 3
    # Complete by the log: nothing is done again; other options are refused, not replaced.
    assert dbtr.recon_file(scans[0], out, log=log, **ARGS) == "complete"
    with pytest.raises(dbtr.InvalidArgument, match="a.tif exists"):
        dbtr.recon_file(scans[0], out, log=log, iterations=3, subsets=3, backend="cpu")
    with pytest.raises(dbtr.DbtrIOError, match="missing.h5"):
        dbtr.recon_file(tmp_path / "missing.h5", tmp_path / "m.tif", **ARGS)


def test_dask_recipe_equals_cli(cli, scans, tmp_path):
    from dask.distributed import Client, LocalCluster

    out_dir = tmp_path / "out"
    out_dir.mkdir()
    outs = [str(out_dir / (s.stem + ".tif")) for s in scans]
    # The doc's recipe: one task a scan, the record in one log, the results gathered.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2  # two processes, each its own libdbtr
        futures = client.map(dbtr.recon_file, [str(s) for s in scans], outs, log=str(out_dir / "dbtr-recon.jsonl"),
                             **ARGS)
        assert client.gather(futures) == ["written"] * len(scans)
    for s, o in zip(scans, outs):
        cli("recon", s, "-o", tmp_path / "cli.tif", *CLI_ARGS, "--force")
        assert open(o, "rb").read() == (tmp_path / "cli.tif").read_bytes(), f"{o} is not dbtr recon's volume"
    lines = (out_dir / "dbtr-recon.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["output"] for line in lines) == sorted(outs)

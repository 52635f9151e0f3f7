"""run_fleet over a partitioned Parquet dataset: the driver lists users, workers read and replay them."""

import json
import math
import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from thatchlab.core.errors import InputError, LogValidationError, ThatchlabError
from thatchlab.metrics.scoring import prequential_scores
from thatchlab.replay import _fleet_dataset as fd
from thatchlab.replay import run_fleet
from thatchlab.synth import PreferenceWorld

WORLD = {"n_users": 5, "n_situations": 4, "phrasings_per_situation": 2, "drift_rate": 0.02, "seed": 11}
SCORES = ("log_loss", "brier", "ece")


def _logs() -> dict:
    log = PreferenceWorld(**WORLD).log(150, soft_share=0.3)
    return {store: part.reset_index(drop=True) for store, part in log.groupby("store", sort=True)}


def _write(root, logs: dict, column: str = "user"):
    frame = pd.concat([log.assign(**{column: user}) for user, log in logs.items()], ignore_index=True)
    frame.to_parquet(root, partition_cols=[column])
    return root


def _user_file(root, user: str, column: str = "user") -> str:
    (name,) = os.listdir(os.path.join(root, f"{column}={user}"))
    return os.path.join(root, f"{column}={user}", name)


@pytest.fixture(scope="module")
def logs():
    return _logs()


@pytest.fixture(scope="module")
def emb():
    return PreferenceWorld(**WORLD).lookup_embedder()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, logs):
    return str(_write(tmp_path_factory.mktemp("fleet") / "logs", logs))


@pytest.fixture(scope="module")
def local(logs, emb):
    return run_fleet(logs, embedder=emb)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as c:
        yield c


def _same_pooled(a: dict, b: dict, rel: float = 0.0):
    assert a.keys() == b.keys()
    for k, v in a.items():
        w = b[k]
        if isinstance(v, float) and math.isnan(v):
            assert math.isnan(w), k
        elif k in SCORES and rel:
            assert math.isclose(v, w, rel_tol=rel, abs_tol=1e-15), (k, v, w)
        else:
            assert v == w, (k, v, w)


# the comparison the issue asks for, in a process of its own: a LocalCluster of 2 worker processes
# replays the dataset; the same users, read by hand file by file, replay locally
_COMPARE = textwrap.dedent("""
    import json, math, os, sys
    import pandas as pd
    import pyarrow.parquet as pq
    from distributed import Client, LocalCluster
    from thatchlab.replay import run_fleet
    from thatchlab.synth import PreferenceWorld

    root, world = sys.argv[1], json.loads(sys.argv[2])
    emb = PreferenceWorld(**world).lookup_embedder()
    by_hand = {}
    for part in sorted(os.listdir(root)):
        files = sorted(os.listdir(os.path.join(root, part)))
        frames = [pq.read_table(os.path.join(root, part, f)).to_pandas() for f in files]
        by_hand[part.split("=", 1)[1]] = pd.concat(frames, ignore_index=True).drop(columns="user", errors="ignore")
    alone = run_fleet(by_hand, embedder=emb)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        n_workers = len(client.scheduler_info()["workers"])
        remote = run_fleet(root, embedder=emb, backend="dask", client=client)
        remote_events = run_fleet(root, embedder=emb, backend="dask", client=client, keep_events=True)
    pd.testing.assert_frame_equal(remote.per_user, alone.per_user)
    pd.testing.assert_frame_equal(remote_events.per_user, alone.per_user)
    pd.testing.assert_frame_equal(remote_events.signals, alone.signals)
    pd.testing.assert_frame_equal(remote_events.forecasts, alone.forecasts)
    assert remote_events.pooled == alone.pooled or all(
        v == alone.pooled[k] or (math.isnan(v) and math.isnan(alone.pooled[k]))
        for k, v in remote_events.pooled.items())
    assert len(remote.signals) == len(remote.forecasts) == 0 and not remote.keep_events
    print("COMPARED " + json.dumps({"workers": n_workers, "users": remote.per_user["user"].tolist(),
                                    "remote": remote.pooled, "alone": alone.pooled}))
""")


def test_a_dataset_on_a_local_cluster_equals_a_local_run_in_its_own_process(dataset, logs):
    env = dict(os.environ, TQDM_DISABLE="1", HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", _COMPARE, dataset, json.dumps(WORLD)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("COMPARED "))
    out = json.loads(line.removeprefix("COMPARED "))
    assert out["workers"] == 2 and out["users"] == sorted(logs)
    # metrics only: the pooled scores come from per-user sums, equal up to rounding
    _same_pooled(out["remote"], out["alone"], rel=1e-12)
    assert out["remote"]["n_events"] == sum(len(v) for v in logs.values())


def test_local_backends_equal_the_mapping_run(dataset, local, emb):
    for kw in ({}, {"n_jobs": 2}):
        res = run_fleet(dataset, embedder=emb, **kw)
        pd.testing.assert_frame_equal(res.per_user, local.per_user)
        _same_pooled(res.pooled, local.pooled, rel=1e-12)
        assert not res.keep_events and res.backend == "loky"
        assert list(res.signals.columns) == ["user", "item_id", "signal", "ts"] and res.signals.empty
        assert list(res.forecasts.columns) == ["user", "position", "item_id", "signal", "forecast"]
    kept = run_fleet(dataset, embedder=emb, keep_events=True)
    pd.testing.assert_frame_equal(kept.signals, local.signals)
    pd.testing.assert_frame_equal(kept.forecasts, local.forecasts)
    _same_pooled(kept.pooled, local.pooled)


def test_the_driver_sends_paths_and_user_ids_and_reads_no_row(dataset, local, emb, client, monkeypatch):
    sent = []
    submit = client.submit

    def spy(fn, *args, **kw):
        sent.append((fn, args))
        return submit(fn, *args, **kw)

    def no_rows_here(*args, **kw):
        raise AssertionError("the driver read a user's rows")

    monkeypatch.setattr(client, "submit", spy)
    monkeypatch.setattr(fd, "read_user_files", no_rows_here)   # the driver's copy; workers import their own
    res = run_fleet(dataset, embedder=emb, backend="dask", client=client)
    pd.testing.assert_frame_equal(res.per_user, local.per_user)
    assert sent and sum(len(args[1]) for _, args in sent) == len(local.per_user)
    for fn, (common, users, embedder) in sent:
        assert fn is fd.replay_users
        assert set(common) == {"location", "column", "engine", "params", "keep_events"}
        assert all(set(u) == {"user", "files"} and all(isinstance(f, str) for f in u["files"]) for u in users)
        assert len(pickle.dumps((common, users))) < 4000   # paths and ids, not rows
        assert type(embedder).__name__ == "Future"         # the embedder went to the workers once


def test_a_glob_selects_users_and_other_layouts_read_the_same(tmp_path, dataset, logs, emb):
    some = run_fleet(os.path.join(dataset, "user=user-0[0-2]"), embedder=emb)
    mine = run_fleet({u: logs[u] for u in ("user-00", "user-01", "user-02")}, embedder=emb)
    pd.testing.assert_frame_equal(some.per_user, mine.per_user)
    files = run_fleet(os.path.join(dataset, "*", "*.parquet"), embedder=emb)
    assert files.per_user["user"].tolist() == sorted(logs)
    # pyarrow's own writer, two files for one user, and another partition column name
    frame = pd.concat([log.assign(tenant=u) for u, log in logs.items()], ignore_index=True)
    ds.write_dataset(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "arrow", format="parquet",
                     partitioning=["tenant"], partitioning_flavor="hive")
    split = tmp_path / "arrow" / "tenant=user-03"
    (only,) = os.listdir(split)
    table = pq.read_table(split / only)
    os.remove(split / only)
    pq.write_table(table.slice(0, 100), split / "part-0.parquet")
    pq.write_table(table.slice(100), split / "part-1.parquet")
    assert fd.list_users(tmp_path / "arrow", "tenant").files[3][1].endswith("part-1.parquet")
    res = run_fleet(tmp_path / "arrow", embedder=emb, user_column="tenant")
    pd.testing.assert_frame_equal(res.per_user, run_fleet(logs, embedder=emb).per_user)


def test_mapping_fleets_can_drop_their_events_too(logs, local, emb):
    res = run_fleet(logs, embedder=emb, keep_events=False)
    pd.testing.assert_frame_equal(res.per_user, local.per_user)
    _same_pooled(res.pooled, local.pooled, rel=1e-12)
    assert res.signals.empty and res.forecasts.empty and local.keep_events


def test_pooled_sums_give_the_scores_of_the_stacked_forecasts(local):
    fc = local.forecasts
    stats = [fd.forecast_stats(part, 0.25) for _, part in fc.groupby("user", sort=False)]
    stats.append(fd.forecast_stats(fc.iloc[:0], 0.25))                      # a user with no forecast
    got, want = fd.pooled_scores(stats), prequential_scores(fc, 0.25)
    assert got["n_forecasts"] == want["n_forecasts"] == len(fc)
    for k in SCORES:
        assert math.isclose(got[k], want[k], rel_tol=1e-12, abs_tol=1e-15), k
    assert all(math.isnan(v) for k, v in fd.pooled_scores([stats[-1]]).items() if k != "n_forecasts")


# -- what is wrong with a dataset, said with its path -----------------------------------------------
def test_a_missing_directory_and_an_empty_dataset(tmp_path, emb):
    missing = tmp_path / "nowhere"
    with pytest.raises(InputError, match="no such directory") as info:
        run_fleet(missing, embedder=emb)
    assert str(missing) in str(info.value) and "user=<id>/" in str(info.value)
    (tmp_path / "empty" / "user=u1").mkdir(parents=True)
    (tmp_path / "empty" / "_SUCCESS").write_text("")
    with pytest.raises(InputError, match="empty dataset: no Parquet files") as info:
        run_fleet(tmp_path / "empty", embedder=emb)
    assert str(tmp_path / "empty") in str(info.value)
    with pytest.raises(InputError, match="empty dataset"):
        run_fleet(str(tmp_path / "empty" / "user=nobody*"), embedder=emb)
    with pytest.raises(InputError, match="user_column"):
        run_fleet(tmp_path / "empty", embedder=emb, user_column="")
    with pytest.raises(InputError, match="keep_events"):
        run_fleet(tmp_path / "empty", embedder=emb, keep_events="yes")


def test_a_dataset_without_the_partition_column(tmp_path, logs, emb):
    flat = tmp_path / "flat"
    flat.mkdir()
    logs["user-00"].to_parquet(flat / "part-0.parquet")
    with pytest.raises(LogValidationError, match="no 'user' partition column") as info:
        run_fleet(flat, embedder=emb)
    err = info.value
    assert isinstance(err, ThatchlabError) and err.column == "user"
    assert err.file == str(flat / "part-0.parquet") and "partition_cols=['user']" in str(err)
    assert err.expected == "directories user=<id>/"
    other = _write(tmp_path / "tenants", logs, column="tenant")
    with pytest.raises(LogValidationError, match=r"partition column\(s\) \['tenant'\] found"):
        run_fleet(other, embedder=emb)
    with pytest.raises(InputError, match="a single file"):
        run_fleet(flat / "part-0.parquet", embedder=emb)


@pytest.fixture()
def broken(tmp_path, dataset):
    """The dataset with row 3 of user-02's file made an unknown kind."""
    root = shutil.copytree(dataset, tmp_path / "broken")
    path = _user_file(root, "user-02")
    frame = pq.read_table(path).to_pandas()
    frame.loc[3, "kind"] = "prediction_upsert"
    frame.to_parquet(path)
    return str(root), path


@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_bad_rows_in_one_users_file_name_that_file_row_and_column(broken, emb, client, backend):
    root, path = broken
    with pytest.raises(LogValidationError) as info:
        run_fleet(root, embedder=emb, backend=backend, client=client if backend == "dask" else None)
    err = info.value
    assert isinstance(err, ThatchlabError)
    assert (err.file, err.row, err.column) == (path, 3, "kind")
    assert err.expected.startswith("one of ['message'")
    assert f"{path}: interaction log: row 3, column 'kind'" in str(err) and "'prediction_upsert'" in str(err)


def test_listing_reads_directory_names_only(dataset, logs):
    listing = fd.list_users(dataset)
    assert listing.users == tuple(sorted(logs)) and listing.column == "user"
    assert all(len(f) == 1 and f[0].endswith(".parquet") for f in listing.files)
    assert all(s > 0 for s in listing.sizes)
    assert listing.location == os.path.abspath(dataset)
    # a glob's root and pattern; a URI keeps its query for the workers' filesystem
    assert fd._split("s3://bucket/fleet/user=u0*?region=eu-west-1") == (
        "s3://bucket/fleet?region=eu-west-1", ["user=u0*"])


def test_user_ids_that_need_quoting_come_back_as_written(tmp_path, logs, emb):
    names = {"user-00": "ann smith", "user-01": "bo/b%"}
    frame = pd.concat([logs[u].assign(user=n) for u, n in names.items()], ignore_index=True)
    ds.write_dataset(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "q", format="parquet",
                     partitioning=["user"], partitioning_flavor="hive")
    res = run_fleet(tmp_path / "q", embedder=emb)
    assert res.per_user["user"].tolist() == sorted(names.values())
    assert res.per_user.set_index("user").loc["ann smith", "n_log_rows"] == len(logs["user-00"])


def test_a_users_second_file_is_named_with_the_row_in_that_file(tmp_path, logs, emb):
    root = _write(tmp_path / "two", {"user-00": logs["user-00"], "user-01": logs["user-01"]})
    path = _user_file(root, "user-01")
    table = pq.read_table(path)
    os.remove(path)
    first, second = os.path.join(os.path.dirname(path), "a.parquet"), os.path.join(os.path.dirname(path), "b.parquet")
    pq.write_table(table.slice(0, 40), first)
    frame = table.slice(40).to_pandas()
    frame.loc[5, "session"] = "   "
    frame.to_parquet(second)
    with pytest.raises(LogValidationError) as info:
        run_fleet(root, embedder=emb)
    assert (info.value.file, info.value.row, info.value.column) == (second, 5, "session")
    listing = fd.list_users(f"file://{root}")
    assert listing.location == f"file://{root}" and listing.files[1] == (first, second)
    with pytest.raises(LogValidationError, match="non-empty text id"):
        fd.read_user_log(listing.location, "user", "user-01", listing.files[1])
    good = fd.read_user_log(listing.location, "user", "user-00", listing.files[0])
    assert len(good) == len(logs["user-00"]) and str(good["ts"].dtype) == "datetime64[ns, UTC]"
    # the healthy user alone, through a URI
    res = run_fleet(f"file://{root}/user=user-00", embedder=emb)
    assert res.per_user["user"].tolist() == ["user-00"]

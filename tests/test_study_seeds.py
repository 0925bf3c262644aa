"""Study seeds come from the config (study seed + unit key), never from --name or --out; old runs keep theirs;
duplicate treatments are refused; a study config that is not one is a one-line error; partial runs say so."""

from __future__ import annotations

import json

import pandas as pd

from evaluation.study import SEED_SCHEME, StudyConfig, dialogue_seed, plan_study, score_seed, write_config
from experiments import cli


def _seeds(config: StudyConfig) -> list:
    plan = plan_study(config)
    return [(i.instance_id, i.problem, dialogue_seed(config, i.instance_id, 0), score_seed(config, i.instance_id))
            for i in plan.instances]


def test_seeds_do_not_depend_on_the_name_or_folder():
    a = StudyConfig(name="study70v2", instances=3)
    b = StudyConfig(name="anything-else", instances=3)
    assert a.version == b.version == SEED_SCHEME
    assert _seeds(a) == _seeds(b)
    assert _seeds(StudyConfig(name="x", instances=3, seed=1)) != _seeds(a)  # the study seed does matter
    assert a.comparable() == b.comparable()  # the name is a label: resuming under another name is allowed


def test_cli_out_basename_does_not_change_the_study(tmp_path):
    parser = cli.build_parser("study")
    cfgs = [cli_config(parser, ["study", "--instances", "2", "--out", str(tmp_path / name)]) for name in ("a", "b")]
    assert cfgs[0].name != cfgs[1].name and _seeds(cfgs[0]) == _seeds(cfgs[1])


def cli_config(parser, argv):
    from experiments.cli_study import config_from_cli

    return config_from_cli(parser.parse_args(argv))


def test_version_1_runs_keep_their_seeds_on_resume(tmp_path):
    old = StudyConfig.from_json({"name": "study70v2", "instances": 2})  # a config.json from before `version`
    assert old.version == 1 and old.seed_key == "study70v2/0"
    out = tmp_path / "study70v2"
    write_config(out, old)
    parser = cli.build_parser("study")
    resumed = cli_config(parser, ["study", "--instances", "2", "--out", str(out), "--resume"])
    assert resumed.version == 1 and resumed.comparable() == old.comparable() and _seeds(resumed) == _seeds(old)
    fresh = cli_config(parser, ["study", "--instances", "2", "--out", str(tmp_path / "new")])
    assert fresh.version == SEED_SCHEME and fresh.seed_key == "study/0"


def test_duplicate_treatments_are_refused(tmp_path, capsys):
    assert cli.main(["study", "--instances", "2", "--treatments", "A,A", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--treatments" in err and "more than once" in err
    assert not (tmp_path / "x").exists()


def test_study_numbers_are_bounded(tmp_path, capsys):
    for argv, flag in ((["--instances", "100000000"], "--instances"), (["--num-cpus", "100000"], "--num-cpus"),
                       (["--replications", "0"], "--replications"), (["--max-turns", "0"], "--max-turns")):
        assert cli.main(["study", *argv, "--out", str(tmp_path / "x")]) == 2
        assert capsys.readouterr().err.startswith(f"askopt: error: {flag}:")
    (tmp_path / "file").write_text("x")
    assert cli.main(["study", "--out", str(tmp_path / "file")]) == 2
    assert "--out" in capsys.readouterr().err


def test_bad_config_json_is_a_one_line_error(tmp_path, capsys):
    cases = {"noconfig": {"instances": 3}, "wrongtype": {"config": {"treatments": 5}},
             "dupes": {"config": {"treatments": ["A", "A"]}}, "list": [1, 2]}
    for name, payload in cases.items():
        d = tmp_path / name
        d.mkdir()
        (d / "config.json").write_text(json.dumps(payload))
        assert cli.main(["report", str(d)]) == 2, name
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "config" in err, (name, err)
    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    assert cli.main(["report", str(deep)]) == 2
    assert "nested too deeply" in capsys.readouterr().err
    (tmp_path / "dirconfig" / "config.json").mkdir(parents=True)
    assert cli.main(["report", str(tmp_path / "dirconfig")]) == 2


def test_report_on_a_partial_run_says_so(tmp_path, capsys):
    from test_report import make_rows  # tests/ is on sys.path (pytest rootdir insertion)

    from evaluation.runner import write_batch

    out = tmp_path / "run"
    write_config(out, StudyConfig(name="partial", instances=10, trials=2))  # 10 x 2 x 3 = 60 units planned
    rows = make_rows(n_inst=4, trials=2)  # 24 finished
    for inst in sorted({r["instance_id"] for r in rows}):
        write_batch(out, [r for r in rows if r["instance_id"] == inst])
    assert cli.main(["report", str(out)]) == 0
    captured = capsys.readouterr()
    assert "partial run: 24 of 60 units" in captured.err
    text = (out / "report" / "report.md").read_text()
    assert "**Partial run: 24 of 60 units finished**" in text.splitlines()[2]
    assert len(pd.read_parquet(next((out / "units").glob("*.parquet")))) == 6

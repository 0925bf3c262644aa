"""`askopt web` options become the consultant app's args; bad values exit 2 naming the option (no Ray started)."""

import argparse

import pytest

from experiments.cli import main
from experiments.cli_web import register, web_args


def _parse(argv):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["web", *argv])


def test_options_map_to_app_args():
    args = web_args(_parse(["--collect", "--sessions-url", "sqlite:///x.db", "--replicas", "2", "--rate-per-minute",
                            "30", "--cors-origin", "https://a.example", "--cors-origin", "https://b.example"]))
    assert args == {"num_replicas": 2, "sessions_url": "sqlite:///x.db", "collect": True, "rate_per_minute": 30.0,
                    "cors_origins": "https://a.example,https://b.example"}
    assert web_args(_parse([])) == {"num_replicas": 1}  # CORS off, no collection, the server's default rate


@pytest.mark.parametrize("argv, option", [(["--port", "0"], "--port"), (["--replicas", "0"], "--replicas"),
                                          (["--rate-per-minute", "-5"], "--rate-per-minute")])
def test_bad_options_exit_2_naming_the_option(argv, option, capsys):
    assert main(["web", *argv]) == 2
    assert option in capsys.readouterr().err


def test_sessions_export_bad_url_exits_2(tmp_path, capsys):
    assert main(["sessions", "export", "--jsonl", str(tmp_path / "o.jsonl"), "--url", "nosuchdb://x"]) == 2
    assert "--url" in capsys.readouterr().err

"""The held-out split's freezing: the model list (checksummed) and, since the build depends on the machine's
speed, the instance list with a digest of every sabotaged model, so two scores are on the same instances."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ordebug.heldout import (
    FROZEN,
    FROZEN_INSTANCES,
    freeze_instances,
    instance_digest,
    load_frozen,
    select_frozen,
)
from ordebug.testing import small_instance


def _instances():
    out = [small_instance(fam, op) for fam, op in [("production", "tighten_rhs"), ("transportation", "flip_sense"),
                                                   ("inventory", "conflicting_bound")]]
    assert all(out)
    return out


def test_a_rebuild_is_matched_instance_by_instance(tmp_path):
    a, b, c = _instances()
    path = tmp_path / "frozen.json"
    freeze_instances([a, b], path)
    kept, info = select_frozen([b, a], path)
    assert [i.instance_id for i in kept] == sorted([a.instance_id, b.instance_id]) and info["kept"] == 2
    # A rebuild that lost one, built another with a different model, and made a new one.
    changed = dataclasses.replace(b, model=b.model.copy())
    changed.model.cost[0] += 1.0
    kept, info = select_frozen([changed, c], path)
    assert kept == [] and info["missing"] == [a.instance_id] and info["changed"] == [b.instance_id]
    assert info["extra"] == [c.instance_id]
    assert instance_digest(b) != instance_digest(changed)


def test_an_edited_instance_list_is_refused(tmp_path):
    a, b, _ = _instances()
    path = tmp_path / "frozen.json"
    freeze_instances([a, b], path)
    doc = json.loads(path.read_text())
    doc["instances"].pop()
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="checksum"):
        select_frozen([a, b], path)


def test_the_committed_lists_are_intact():
    doc = json.loads(FROZEN_INSTANCES.read_text())
    assert len(doc["instances"]) == 60 and len({e["instance_id"] for e in doc["instances"]}) == 60
    frozen_models = {m["file"].removesuffix(".mps") for m in json.loads(FROZEN.read_text())["models"]}
    assert {e["instance_id"].split(":")[1] for e in doc["instances"]} <= frozen_models
    select_frozen([], FROZEN_INSTANCES)  # checksum holds (raises otherwise)
    try:
        load_frozen()
    except ValueError as exc:  # the model files live in ../shared; without them only the list is checked
        assert "missing" in str(exc)


def test_a_stale_heldout_cache_is_not_scored_silently(tmp_path, capsys):
    # A cache written by some other build (here: synthetic instances under the held-out name) keeps only
    # what is on the frozen list, and says so.
    from experiments.ordebug_run import build_split
    from ordebug.instances import save_instances

    save_instances(_instances(), tmp_path / "instances_heldout.pkl")
    assert build_split("heldout", tmp_path, use_ray=False, progress=False) == []
    assert "0 of the 60 frozen instances" in capsys.readouterr().err

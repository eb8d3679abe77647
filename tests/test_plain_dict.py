"""The plain-dict form shared by TrainConfig and Provenance: tuples out as lists, back as tuples, strangers refused."""
import json
from dataclasses import dataclass

import pytest

from ftipbook.artifact import Provenance
from ftipbook.plain_dict import from_plain_dict, to_plain_dict
from ftipbook.train.config import TrainConfig


@dataclass(frozen=True)
class _Record:
    name: str
    pair: tuple[float, float] = (0.5, 0.25)
    tags: tuple[str, ...] = ()
    nested: dict = None


def test_round_trip_through_json_restores_tuples():
    r = _Record("a", (1.0, 2.0), ("x", "y"), {"k": [1, 2]})
    d = to_plain_dict(r)
    assert d == {"name": "a", "pair": [1.0, 2.0], "tags": ["x", "y"], "nested": {"k": [1, 2]}}
    back = from_plain_dict(_Record, json.loads(json.dumps(d)))
    assert back == r and isinstance(back.pair, tuple) and isinstance(back.tags, tuple)


def test_missing_keys_take_defaults_and_unknown_keys_are_named():
    assert from_plain_dict(_Record, {"name": "b"}) == _Record("b")
    with pytest.raises(ValueError, match=r"unknown _Record field\(s\) \['colour', 'size'\]"):
        from_plain_dict(_Record, {"name": "b", "size": 1, "colour": 2})


def test_train_config_and_provenance_use_it():
    cfg = TrainConfig(betas=(0.8, 0.9), steps=7)
    assert cfg.to_dict()["betas"] == [0.8, 0.9] and TrainConfig.from_dict(cfg.to_dict()) == cfg
    prov = Provenance(undisclosed=("data",), steps=3, optimizer={"betas": (0.9, 0.95)})
    d = prov.to_dict()
    assert d["undisclosed"] == ["data"] and d["optimizer"] == {"betas": (0.9, 0.95)}  # only top-level tuples change
    assert Provenance.from_dict(json.loads(json.dumps(d))).undisclosed == ("data",)
    with pytest.raises(ValueError, match=r"unknown Provenance field\(s\) \['owner'\]"):
        Provenance.from_dict({"owner": "me"})
    with pytest.raises(ValueError, match=r"unknown TrainConfig field\(s\) \['dropout'\]"):
        TrainConfig.from_dict({"dropout": 0.1})

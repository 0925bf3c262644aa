"""One schema for every way a parameter table enters askopt: files (CSV, JSON), JSON text, dicts (HTTP bodies,
LLM tool calls, generators) and single values.

Why a schema on top of `inventory.spec.normalise_value`: the field rules live once in spec.py, but the *shape*
of the input (which keys, scalar or nested, how large, how deep) was checked differently by each reader; a
nested object, a 1 GB file, /dev/zero or 100,000 levels of JSON nesting reached the field rules as whatever
Python made of them. Here pydantic checks the shape (`ParametersIn`), the field validators call the one set
of field rules, and every failure becomes one `ParameterError` naming the field, the value and what is
allowed, so callers keep catching a single ValueError subclass (CLI: exit 2; HTTP: 400).

Readers: `ParameterTable.from_json / from_csv` (and so `load_problem`, the CLI, serving, the generator) go
through `validate_values`; `read_params_file` is the one place a PARAMS path is opened.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator, model_validator

from inventory.problem import ParameterError
from inventory.spec import PARAMETERS, canonical_name, normalise_value

MAX_PARAMS_BYTES = 1 * 2**20  # a parameter file is twelve rows; anything near a megabyte is not one
MAX_KEYS = 64  # keys in one JSON object (twelve parameters and their aliases)
MAX_DEMAND_ITEMS = 100_000  # observed days in an inline empirical([...]) list

Scalar = str | bool | int | float | None


class ParametersIn(BaseModel):
    """The twelve parameters as they arrive: text, a number, a bool (perishability), null (undefined), or for
    demand a list of observed daily demands. Keys may be the canonical names or their aliases
    (`spec.canonical_name`); a row object {"value": ...} is read as its value. Values come out normalised
    (`spec.normalise_value`): ints, floats, the canonical strings and a `Demand`."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    time_horizon: Scalar = None
    demand_type: Scalar = None
    demand_distribution: Scalar | list[float] = None
    perishability: Scalar = None
    state_transition_model: Scalar = None
    holding_cost: Scalar = None
    penalty_cost: Scalar = None
    setup_cost: Scalar = None
    lead_time: Scalar = None
    max_inventory: Scalar = None
    max_order: Scalar = None
    risk_tolerance: Scalar = None

    @model_validator(mode="before")
    @classmethod
    def _canonical_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ParameterError("json", type(data).__name__, "must be an object of parameter: value")
        if len(data) > MAX_KEYS:
            raise ParameterError("json", f"{len(data)} keys", f"at most {MAX_KEYS} keys (there are twelve parameters)")
        out: dict[str, Any] = {}
        for key, value in data.items():
            name = canonical_name(key)
            if isinstance(value, dict) and "value" in value:
                value = value["value"]
            if name in out and out[name] not in (None, "") and value not in (None, "") and out[name] != value:
                raise ParameterError(name, _clip(value), f"is given twice (also as {_clip(out[name])!r}); give it once")
            out[name] = None if value == "" else value
        return out

    @field_validator("demand_distribution", mode="before")
    @classmethod
    def _demand_list_size(cls, value: Any) -> Any:
        if isinstance(value, list) and len(value) > MAX_DEMAND_ITEMS:
            raise ParameterError("demand_distribution", f"{len(value)} observations",
                                 f"at most {MAX_DEMAND_ITEMS} observed days")
        return value

    @field_validator(*PARAMETERS, mode="after")
    @classmethod
    def _normalise(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return None
        ctx = info.context or {}
        return normalise_value(info.field_name, value, ctx.get("base_dir"), ctx.get("allow_files"))

    def defined(self) -> dict[str, Any]:
        """The fields that were given (normalised), in table order."""
        return {p: getattr(self, p) for p in PARAMETERS if getattr(self, p) is not None}


def _clip(value: Any, n: int = 60) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= n else text[:n] + "..."


def parameter_error(exc: ValidationError) -> ParameterError:
    """The first problem in a ValidationError as the one-line ParameterError the callers print."""
    err = exc.errors(include_url=False)[0]
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, ParameterError):
        return cause
    loc = [str(p) for p in err.get("loc", ()) if not isinstance(p, int)]
    field = loc[0] if loc else "parameters"
    if err.get("type") == "extra_forbidden":  # cannot happen after canonical_name, kept for safety
        return ParameterError("parameter", field, f"allowed: {', '.join(PARAMETERS)}")
    allowed = ("a list of observed daily demands, or text such as poisson(6)" if field == "demand_distribution"
               else "must be text or a single number")
    return ParameterError(field, _clip(err.get("input")), allowed)


def validate_values(data: Any, base_dir: Path | None = None, allow_files: bool | None = None) -> dict[str, Any]:
    """{parameter: normalised value} for the parameters given in `data` (a dict as JSON would give it).
    Raises ParameterError naming the field. `allow_files=False` refuses empirical(file) (request data)."""
    try:
        model = ParametersIn.model_validate(data, context={"base_dir": base_dir, "allow_files": allow_files})
    except ValidationError as exc:
        raise parameter_error(exc) from None
    return model.defined()


def loads_json(text: str, what: str = "json") -> Any:
    """json.loads with the failures named: invalid JSON, nesting too deep for the parser."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParameterError(what, _clip(text, 40), f"is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ParameterError(what, _clip(text, 40), "is nested too deeply to be a parameter table") from None


def read_params_file(path: Path | str, what: str = "PARAMS", max_bytes: int = MAX_PARAMS_BYTES) -> str:
    """The text of a parameter file: an existing regular file (not a directory, device or pipe) under
    `max_bytes`, in UTF-8. The one place a PARAMS path is opened."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise ParameterError(what, str(path), "file not found") from None
    except OSError as exc:
        raise ParameterError(what, str(path), f"cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ParameterError(what, str(path), "is a directory; give a .csv or .json parameter file")
    if not stat.S_ISREG(st.st_mode):
        raise ParameterError(what, str(path), "is not a regular file; give a .csv or .json parameter file")
    if st.st_size > max_bytes:
        raise ParameterError(what, str(path), f"is {st.st_size} bytes; a parameter file is at most {max_bytes}")
    try:
        with p.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise ParameterError(what, str(path), f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:
        raise ParameterError(what, str(path), f"is larger than {max_bytes} bytes")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ParameterError(what, str(path), "is not UTF-8 text; give a .csv or .json parameter file") from None

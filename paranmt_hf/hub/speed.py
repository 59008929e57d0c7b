"""The model card's speed section, read from a speed benchmark JSON (``benchmarks/speed/benchmark.py --json``).

The reader is tolerant of the JSON's shape. Scalar top-level fields (date, sentence count...) and flat objects
(``environment``) become notes. Each *setting* (a top-level object with a ``results`` field, e.g. ``one_core`` /
``all_cores``) or a top-level ``results`` / list of objects becomes a table. ``results`` may be a list of row objects
or an object of rows keyed by encoder name. Rows about this model's kind (a ``group`` / ``kind`` / ``model`` /
``name`` field equal to it) and the peers (``group: "peer"``) are kept when there are any. Top-level lists of
strings (``targets``) become bullet points, narrowed to those naming the kind.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

_ROW_KEYS = ("group", "kind", "model", "name")


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _rows(value: Any) -> list[dict[str, Any]] | None:
    """Row objects of a ``results`` value: a list of objects, or an object of objects keyed by name."""
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        return value
    if isinstance(value, dict) and value and all(isinstance(r, dict) for r in value.values()):
        return [{"name": k, **r} for k, r in value.items()]
    return None


def _notes(obj: dict[str, Any]) -> list[str]:
    notes = []
    for key, value in obj.items():
        if _scalar(value) and value is not None:
            notes.append(f"{key} = {_fmt(value)}")
        elif isinstance(value, dict) and value and all(_scalar(v) for v in value.values()):
            notes.append(f"{key}: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in value.items() if v is not None))
    return notes


def _table(title: str, rows: list[dict[str, Any]], kind: str, notes: list[str]) -> dict[str, Any]:
    mine = [r for r in rows if kind in {str(r.get(k)) for k in _ROW_KEYS}]
    if mine:
        rows = [r for r in rows if r in mine or r.get("group") == "peer"]
    columns = [c for c in dict.fromkeys(k for r in rows for k in r)
               if all(_scalar(r.get(c)) for r in rows) and any(r.get(c) is not None for r in rows)]
    return {"title": title, "notes": notes, "columns": columns,
            "rows": [[_fmt(r.get(c)) for c in columns] for r in rows]}


def read_speed_json(speed_json: str | os.PathLike[str]) -> dict[str, Any] | list[Any]:
    """The content of a speed benchmark JSON: an object or a list.

    Raises:
        FileNotFoundError: ``speed_json`` does not exist.
        ValueError: it is a folder, not UTF-8 JSON, or JSON of another kind (a string, a number...).
    """
    path = Path(speed_json)
    if path.is_dir():
        raise ValueError(f"speed JSON {path} is a folder: give the JSON file a speed benchmark wrote")
    if not path.is_file():
        raise FileNotFoundError(f"speed JSON {path} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"speed JSON {path} is not valid JSON ({err}): give the JSON file a speed benchmark "
                         "wrote") from None
    if not isinstance(data, dict | list):
        kind = {str: "string", bool: "boolean", int: "number", float: "number"}.get(type(data), "null")
        raise ValueError(f"speed JSON {path} holds a JSON {kind}, not the object or list a speed benchmark writes")
    return data


def speed_info(speed_json: str | os.PathLike[str] | None, kinds: list[str]) -> dict[str, Any] | None:
    """The speed section (notes, tables, bullet points) of a model of encoder kinds ``kinds``; ``None`` without JSON.

    Raises:
        FileNotFoundError: ``speed_json`` does not exist.
        ValueError: it is not a JSON object or list (:func:`read_speed_json`).
    """
    if speed_json is None:
        return None
    path = Path(speed_json)
    data = read_speed_json(path)
    kind = "+".join(kinds)
    tables: list[dict[str, Any]] = []
    bullets: list[str] = []
    if isinstance(data, list):
        rows = _rows(data)
        tables = [_table("", rows, kind, [])] if rows else []
        return {"source": path.name, "notes": [], "tables": tables, "bullets": []}
    for key, value in data.items():
        rows = _rows(value) if key in ("results", "rows", "models") else None
        if rows:
            tables.append(_table(key, rows, kind, []))
        elif isinstance(value, dict) and _rows(value.get("results")):
            tables.append(_table(key, _rows(value["results"]) or [], kind, _notes(value)))
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            named = [v for v in value if re.search(rf"\b{re.escape(kind)}\b", v, flags=re.IGNORECASE)]
            bullets += named or value
    return {"source": path.name, "notes": _notes(data), "tables": tables, "bullets": bullets}

"""JSON Schemas for editors, generated from the models.

pydantic emits JSON Schema 2020-12 (`$defs`); yaml-language-server reads draft 7, so
definitions move to `definitions` and the `$schema` says draft-07.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from coursekit.model.documents import DOCUMENT_KINDS

DRAFT7 = "http://json-schema.org/draft-07/schema#"


def _to_draft7(node: Any) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs":
                out["definitions"] = _to_draft7(value)
            elif key == "$ref" and isinstance(value, str):
                out[key] = value.replace("#/$defs/", "#/definitions/")
            else:
                out[key] = _to_draft7(value)
        return out
    if isinstance(node, list):
        return [_to_draft7(item) for item in node]
    return node


def schema_for(kind: str) -> dict[str, Any]:
    model = DOCUMENT_KINDS[kind]
    schema = _to_draft7(model.model_json_schema(by_alias=True))
    return {"$schema": DRAFT7, "$id": f"{kind}.schema.json", **schema}


def rendered() -> dict[str, str]:
    """File name -> content, for every document kind."""
    return {
        f"{kind}.schema.json": json.dumps(schema_for(kind), indent=2, ensure_ascii=False) + "\n"
        for kind in DOCUMENT_KINDS
    }


def stale(folder: Path) -> list[str]:
    """Schema files that are missing or differ from what the models generate."""
    out: list[str] = []
    for name, content in rendered().items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != content:
            out.append(name)
    return out


def write(folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for name, content in rendered().items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
            written.append(name)
    return written

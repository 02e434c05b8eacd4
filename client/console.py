"""What the command line writes: JSON for scripts, and for people tables and colour, where
colour is used only on a terminal and never when NO_COLOR is set (https://no-color.org)."""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel


def print_json(value: Any) -> None:
    """One JSON document on stdout (models as their JSON form)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, list):
        value = [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
    sys.stdout.write(json.dumps(value) + "\n")

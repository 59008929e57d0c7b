"""Hub publishing: model cards and Hub-ready folders."""

from __future__ import annotations

from .card import render_model_card
from .checks import check_hub_folder
from .publish import Published, PublishError, publish, push_folder

__all__ = ["Published", "PublishError", "check_hub_folder", "publish", "push_folder", "render_model_card"]

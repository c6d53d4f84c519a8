"""Reporters by name: diagnostics in, text out. Reporters never decide anything."""

from coursekit.report import github as github
from coursekit.report import json, statistics, text  # noqa: F401
from coursekit.report import sarif as sarif
from coursekit.report.base import REPORTERS, Report

__all__ = ["REPORTERS", "Report"]

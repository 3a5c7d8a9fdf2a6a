"""Modules of scripts/bench (see docs/benchmarks.md)."""

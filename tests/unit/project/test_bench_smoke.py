"""The benchmarks keep working: each runs on tiny sizes (figures are not checked here)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench"


def test_converter_benchmark_runs(tmp_path: Path, capsys) -> None:
    spec = importlib.util.spec_from_file_location("bench_converters", BENCH / "converters.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "figures.json"
    module.main(["--records", "50", "--runs", "1", "--json", str(out)])
    figures = json.loads(out.read_text())
    assert (
        set(figures["to_bytes"])
        == set(figures["from_bytes"])
        == {"JsonConverter", "orjson by hand", "stdlib json"}
    )
    assert "| to bytes | JsonConverter |" in capsys.readouterr().out

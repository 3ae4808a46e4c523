"""Issue 47 §1: where a class outgrows one machine, the Zero to JupyterHub values and the user image.

No Docker or Kubernetes runs here; what can be checked without them is: config.yaml is valid for the chart (its own
values schema, tests/data/), its sizes are the ones docs/instructor.md derives from `make bench-class`, and the
Dockerfile installs with the same step as the tested one-machine hub (tools/hub.py image -> install_packages)."""

import json
import re
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[1]
Z2JH = ROOT / "tools" / "z2jh"


def values() -> dict:
    return yaml.safe_load((Z2JH / "config.yaml").read_text())


def merged(base, ours):
    """Helm's merge of a values file over the chart's defaults: maps merge key by key, anything else replaces."""
    if isinstance(base, dict) and isinstance(ours, dict):
        return {key: merged(base.get(key), ours[key]) if key in ours else base[key] for key in {*base, *ours}}
    return ours


def chart_values(ours: dict) -> dict:
    defaults = json.loads((ROOT / "tests" / "data" / "z2jh-values.defaults.json").read_text())
    return merged(defaults, ours)


def test_the_values_are_valid_for_the_chart():
    schema = json.loads((ROOT / "tests" / "data" / "z2jh-values.schema.json").read_text())
    jsonschema.validate(chart_values(values()), schema)
    broken = {**values(), "singleuser": {**values()["singleuser"], "memory": {"limit": ["not", "a", "size"]}}}
    try:
        jsonschema.validate(chart_values(broken), schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("the schema should refuse a memory limit that is a list")


def test_culling_and_the_shared_exchange_match_the_one_machine_hub():
    config = values()
    assert config["cull"]["enabled"] and config["cull"]["timeout"] == 3600
    mounts = config["singleuser"]["storage"]["extraVolumeMounts"]
    assert any(m["mountPath"] == "/srv/nbgrader/exchange" for m in mounts)
    hub_config = (ROOT / "tools" / "hub_config.py").read_text()
    assert "HUB_CULL_SECONDS', 3600" in hub_config
    assert config["singleuser"]["defaultUrl"].endswith("notebooks/00_start_here.ipynb")


def test_the_image_runs_the_hubs_own_install_step():
    dockerfile = (Z2JH / "Dockerfile").read_text()
    assert re.search(r"^FROM quay\.io/jupyter/", dockerfile, re.M), "a Jupyter docker-stacks base"
    assert "tools/hub.py image" in dockerfile
    hub = (ROOT / "tools" / "hub.py").read_text()
    assert 'elif args.command == "image":\n        install_packages(' in hub
    assert "install_packages(env / \"bin\" / \"python\"" in hub, "the one-machine hub uses the same step"


def test_the_memory_per_student_is_the_measured_one():
    text = (ROOT / "docs" / "instructor.md").read_text()
    table = re.search(r"<!-- bench-class:start -->\n(.*?)<!-- bench-class:end -->", text, re.S).group(1)
    per_student = [int(m) for m in re.findall(r"\| (\d+) MiB \|", table)]
    assert per_student, "the sizing table from make bench-class is in docs/instructor.md"
    limit = values()["singleuser"]["memory"]["limit"]
    assert limit.endswith("G") and float(limit[:-1]) * 1024 >= 1.5 * max(per_student)

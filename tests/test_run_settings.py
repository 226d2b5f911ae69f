"""Run settings are declared once (issue 42, item 5): the command line's flags, the API's keywords, the engine's
validation and run.json's `engine` record all derive from `run_settings.SETTINGS`, so a setting added there reaches
every one of them with no other change."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from ragjudge.api.settings import RunSettings, check_settings
from ragjudge.cli.common import run_settings
from ragjudge.engine.context import EngineOptions
from ragjudge.engine.run_settings import flag, llm_settings, record, settings
from ragjudge.errors import UsageError

pytest_plugins = ["pytester"]
MINI = REPO / "examples" / "mini"
CDR_MINI = REPO / "examples" / "cdr-mini"

ADDED = r'''
import contextlib, importlib.util, io, json, sys
from pathlib import Path

import ragjudge.engine

anchor, added, mini, cdr, out = sys.argv[1:6]
path = Path(ragjudge.engine.__file__).with_name("run_settings.py")
source = path.read_text(encoding="utf-8")
assert source.count(anchor + "\n") == 1, "the documented anchor line is not in run_settings.py"
spec = importlib.util.spec_from_loader("ragjudge.engine.run_settings", loader=None, origin=str(path))
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module  # before anything imports it: the interpreter starts with the one-line change made
exec(compile(source.replace(anchor + "\n", anchor + "\n" + added + "\n"), str(path), "exec"), module.__dict__)
ragjudge.engine.run_settings = module

from ragjudge.cli import main
from ragjudge.errors import UsageError


def cli(*args):
    sys.argv = ["ragjudge", *args]
    stdout, stderr = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            main()
        except SystemExit as exc:
            code = int(exc.code or 0)
    return [code, stdout.getvalue(), stderr.getvalue()]


import ragjudge.api

report = {"eval_help": cli("eval", "--help"), "judge_help": cli("judge", "--help"),
          "run": cli("eval", "--bench", mini, "--gen", "extractive", "--judges", "idk_lexical", "--limit", "2",
                     "--seed", "7", "--out", out, "--format", "json"),
          "negative": cli("eval", "--bench", mini, "--gen", "extractive", "--seed", "-1"),
          "no_llm": cli("eval", "--bench", "cdr", "--data", cdr, "--pipeline", "bm25", "--seed", "7"),
          "keywords": list(ragjudge.api.RunSettings.__annotations__),
          "api": ragjudge.api.prepare_run(mini, gen="extractive", seed=7).engine.seed}
try:
    ragjudge.api.prepare_run(mini, gen="extractive", seed=-1)
except UsageError as exc:
    report["api_negative"] = str(exc)
report["engine"] = json.loads((Path(out) / "run.json").read_text(encoding="utf-8"))["engine"]
import pytest
from importlib.metadata import entry_points

plugin = [] if any(ep.value == "ragjudge.pytest_plugin" for ep in entry_points(group="pytest11")) else \
    ["-p", "ragjudge.pytest_plugin"]
stdout = io.StringIO()
with contextlib.redirect_stdout(stdout):
    pytest.main([*plugin, "-p", "no:cacheprovider", "--help"])
report["pytest_help"] = stdout.getvalue()
print(json.dumps(report))
'''


def documented_addition() -> tuple[str, str]:
    """The line docs/extending.md says to add, and the line it goes after."""
    page = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    section = page[page.index("## Adding a run setting"):]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    anchor, added = block.group(1).rstrip("\n").split("\n")
    return anchor, added


def test_a_setting_added_in_one_line_reaches_the_cli_the_api_and_run_json(tmp_path: Path) -> None:
    """The one-line change docs/extending.md documents, made in a fresh interpreter before anything reads the
    declaration (the command line builds its flags at import, so a process of its own is the point here)."""
    anchor, added = documented_addition()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "RAGJUDGE_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-c", ADDED, anchor, added, str(MINI), str(CDR_MINI), str(tmp_path / "run")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    for command in ("eval_help", "judge_help"):
        code, out, _ = report[command]
        assert code == 0 and "--seed" in out and "Seed sent with every LLM request." in " ".join(out.split())
    code, _, err = report["run"]
    assert code == 0, err
    assert report["engine"]["seed"] == 7 and report["engine"]["concurrency"] == 16
    code, _, err = report["negative"]
    assert code == 2 and "--seed" in err and "Traceback" not in err
    code, _, err = report["no_llm"]
    assert code == 2 and err.strip() == "error: --seed is not used by bench cdr (it calls no LLM)"
    assert "seed" in report["keywords"] and report["api"] == 7
    assert report["api_negative"] == "seed must be a whole number >= 0, got -1"
    help_text = " ".join(report["pytest_help"].split())
    assert "--ragjudge-seed=N Seed sent with every LLM request. (ini: ragjudge_seed)" in help_text
    assert "ragjudge_seed (string):" in help_text


def test_without_the_line_no_seed_anywhere(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The check above fails unless the line is what adds the setting."""
    from ragjudge.pytest_plugin.config import PLUGIN_SETTINGS

    assert "seed" not in settings() and "seed" not in RunSettings.__annotations__
    assert "seed" not in [s.name for s in PLUGIN_SETTINGS]
    code, out, _ = run_cli(["eval", "--help"], monkeypatch, capsys)
    assert code == 0 and "--seed" not in out


def test_every_declared_setting_is_a_flag_of_eval_and_judge_and_an_api_keyword(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    flags = {name: flag(name) for name in settings()}
    assert flags["use_cache"] == "--no-cache" and flags["preflight"] == "--no-preflight"
    assert flags["max_retries"] == "--max-retries"
    for command in ("eval", "judge"):
        code, out, _ = run_cli([command, "--help"], monkeypatch, capsys)
        assert code == 0 and not [f for f in flags.values() if not re.search(rf"{f}\b", out)], command
    assert list(RunSettings.__annotations__) == list(settings())
    assert "show_progress" in EngineOptions.model_fields and "show_progress" not in settings()


def test_run_json_records_every_setting_but_the_cache_folder() -> None:
    options = EngineOptions(cache_dir="/somewhere", limit=3)
    assert set(record(options)) == set(settings()) - {"cache_dir"}
    assert record(options)["limit"] == 3


def test_llm_settings_are_the_ones_marked_so_not_a_slice_of_a_tuple() -> None:
    assert set(llm_settings()) == set(settings()) - {"limit", "encoder_backend"}


def test_flags_give_settings_by_what_they_mean() -> None:
    """A `--no-...` switch turns its setting off; a switch left off, or a value not given, is not a setting."""
    assert run_settings(no_cache=True, no_preflight=False, batch=True, concurrency=None, limit=4) == \
        {"use_cache": False, "batch": True, "limit": 4}
    with pytest.raises(TypeError, match="not run settings: colour"):
        run_settings(colour="red")


def test_the_api_takes_a_path_where_a_setting_is_a_file_or_folder(tmp_path: Path) -> None:
    assert check_settings("evaluate", {"cache_dir": tmp_path, "models": tmp_path / "m.yaml"}) == \
        {"cache_dir": str(tmp_path), "models": str(tmp_path / "m.yaml")}
    with pytest.raises(UsageError, match=r"evaluate\(\) got an unknown keyword argument 'colour'"):
        check_settings("evaluate", {"colour": "red"})


def test_the_command_line_reads_the_declaration_without_building_a_model() -> None:
    """The flags come from plain data: a pydantic model built at start cost the command line 0.2 s (issue 36: an
    argument error answers within 0.5 s). A fresh interpreter, because what one imports at start is the point."""
    code = "import sys, ragjudge.cli; print(sorted({'pydantic.main', 'ragjudge.engine.context'} & set(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_plugin_takes_the_run_settings_and_gives_them_to_its_gateway(pytester: pytest.Pytester) -> None:
    """`--ragjudge-max-retries 2` and ini `ragjudge_concurrency = 3` reach the plugin's gateway; a bad value is a
    usage error naming the option."""
    from ragjudge.pytest_plugin.config import Settings
    from ragjudge.pytest_plugin.evaluator import Evaluator

    pytester.makeini("[pytest]\nragjudge_concurrency = 3\n")
    pytester.makeconftest("def pytest_report_header(config):\n"
                          "    from ragjudge.pytest_plugin.plugin import STATE\n"
                          "    return f'RUN {dict(config.stash[STATE].settings.run)}'\n")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    from importlib.metadata import entry_points

    installed = any(ep.value == "ragjudge.pytest_plugin" for ep in entry_points(group="pytest11"))
    plugin = [*([] if installed else ["-p", "ragjudge.pytest_plugin"]), "-p", "no:cacheprovider",
              "-o", "asyncio_default_fixture_loop_scope=function"]
    result = pytester.runpytest_inprocess(*plugin, "--ragjudge-max-retries", "2", "--ragjudge-no-cache")
    result.stdout.fnmatch_lines(["RUN *'concurrency': 3, *'max_retries': 2, *'use_cache': False*"])
    evaluator = Evaluator(Settings(judge_models=("openai/judge",), run={"concurrency": 3, "max_retries": 2,
                                                                       "use_cache": False}))
    gateway = evaluator.gateway()
    assert gateway is not None and (gateway.concurrency, gateway.max_retries, gateway.cache) == (3, 2, None)
    bad = pytester.runpytest_inprocess(*plugin, "--ragjudge-concurrency", "0")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--ragjudge-concurrency must be >= 1, got 0*"])
    pytester.makeini("[pytest]\nragjudge_timeout = soon\n")
    bad = pytester.runpytest_inprocess(*plugin)
    bad.stderr.fnmatch_lines(["*ini ragjudge_timeout: 'soon' is not a number*"])

"""Where a model is served is decided as litellm decides it: `--api-base`, a models file's `api_base`, then the
variables litellm reads (`OPENAI_BASE_URL`, `OPENAI_API_BASE`, `AZURE_API_BASE`...), then the provider's default.
The preflight probes that server with the key litellm would send, the completions go to that same server, and
a closed port there stops the run with one line naming it (exit 3), never api.openai.com."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from conftest import run_cli
from ragjudge.llm.routes import ModelRoute, resolve_target
from ragjudge.testing.openai_server import OpenAIServer

ENDPOINT_VARIABLES = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "AZURE_API_BASE", "AZURE_API_VERSION", "AZURE_API_KEY",
                      "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN", "HOSTED_VLLM_API_BASE", "ANTHROPIC_API_BASE",
                      "ANTHROPIC_BASE_URL", "RAGJUDGE_MODELS")
OPENAI_KEY = "sk-endpoint-test-key-1234"
AZURE_KEY = "azure-endpoint-test-key-5678"
WAYS = ["--api-base", "models file", "OPENAI_BASE_URL", "OPENAI_API_BASE", "AZURE_API_BASE"]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own endpoint variables must not decide these tests."""
    for name in ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def predictions(path: Path, n: int = 4) -> Path:
    path.write_text("".join(json.dumps({
        "task_id": f"c{i}::1", "input": [{"speaker": "user", "text": f"question {i}?"}],
        "targets": [{"speaker": "agent", "text": f"answer {i}"}], "answerability": ["ANSWERABLE"],
        "contexts": [{"document_id": f"d{i}", "text": f"passage {i}", "score": 1.0}],
        "predictions": [{"text": f"response {i}"}]}) + "\n" for i in range(n)))
    return path


def point_at(way: str, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[str], str]:
    """Send model j1 to `url` (an OpenAI-style base ending in /v1) one way. Returns (the name the run uses for
    the model, extra CLI options, the URL litellm calls and messages name)."""
    if way == "--api-base":
        return "openai/j1", ["--api-base", url], url
    if way == "models file":
        models = tmp_path / "models.yaml"
        models.write_text(f'model_list:\n  - model_name: j1\n'
                          f'    litellm_params: {{model: openai/j1, api_base: "{url}"}}\n')
        return "j1", ["--models", str(models)], url
    if way == "AZURE_API_BASE":  # an Azure resource's endpoint is the server's root: https://NAME.openai.azure.com
        root = url.removesuffix("/v1")
        monkeypatch.setenv("AZURE_API_BASE", root)
        monkeypatch.setenv("AZURE_API_KEY", AZURE_KEY)
        return "azure/j1", [], root
    monkeypatch.setenv(way, url)
    return "openai/j1", [], url


def judge(tmp_path: Path, model: str, *options: str) -> list[str]:
    return ["judge", str(predictions(tmp_path / "preds.jsonl")), "--out", str(tmp_path / "out.jsonl"), "--judges",
            "idk", "--judge-models", model, "--format", "json", "--no-cache", *options]


@pytest.mark.parametrize("way", WAYS)
def test_the_server_the_preflight_probed_answers_the_completions(way: str, tmp_path, monkeypatch, capsys) -> None:
    with OpenAIServer(lambda request: "no") as server:
        model, options, _ = point_at(way, server.base_url, tmp_path, monkeypatch)
        # the server takes only the key litellm sends: the preflight must send that one too, not none
        server.valid_key = AZURE_KEY if way == "AZURE_API_BASE" else OPENAI_KEY
        code, _, err = run_cli(judge(tmp_path, model, *options), monkeypatch, capsys)
        listings, requests = server.listings, server.requests
    assert code == 0, err
    assert len(listings) == 1 and len(requests) == 4  # probed once, then every completion went there
    assert listings[0].path == "/v1/models" if way != "AZURE_API_BASE" else \
        listings[0].path.startswith("/openai/models?api-version=")
    if way == "AZURE_API_BASE":  # what litellm's Azure handler sends: the deployment in the path
        assert all(r.path.startswith("/openai/deployments/j1/chat/completions?api-version=") for r in requests)
    else:
        assert {r.path for r in requests} == {"/v1/chat/completions"}
    assert {r.model for r in requests} == {"j1"}


@pytest.mark.parametrize("way", WAYS)
def test_a_closed_port_is_named_by_its_url_before_any_work(way: str, tmp_path, monkeypatch, capsys) -> None:
    model, options, url = point_at(way, f"http://127.0.0.1:{closed_port()}/v1", tmp_path, monkeypatch)
    code, out, err = run_cli(judge(tmp_path, model, *options), monkeypatch, capsys)
    assert code == 3 and out == "", err
    assert err.strip() == f"error: cannot reach {url} (model {model}): connection refused or host unreachable"
    assert "api.openai.com" not in err
    assert not (tmp_path / "out.judgements.jsonl").exists()  # stopped before any work


@pytest.mark.parametrize("way", ["OPENAI_BASE_URL", "AZURE_API_BASE"])
def test_without_the_preflight_the_breaker_names_the_url_litellm_called(way: str, tmp_path, monkeypatch,
                                                                          capsys) -> None:
    model, options, url = point_at(way, f"http://127.0.0.1:{closed_port()}/v1", tmp_path, monkeypatch)
    code, _, err = run_cli(judge(tmp_path, model, *options, "--no-preflight"), monkeypatch, capsys)
    assert code == 3, err
    errors = [line for line in err.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and errors[0].startswith(f"error: cannot reach {url} (model {model}): "), err
    assert "api.openai.com" not in err


def test_explicit_endpoints_come_before_the_variables(tmp_path, monkeypatch, capsys) -> None:
    """litellm's precedence: --api-base (or a models file's api_base) over OPENAI_BASE_URL over OPENAI_API_BASE."""
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    with OpenAIServer(lambda request: "no") as explicit, OpenAIServer(lambda request: "no") as by_url, \
            OpenAIServer(lambda request: "no") as by_base:
        monkeypatch.setenv("OPENAI_BASE_URL", dead)
        monkeypatch.setenv("OPENAI_API_BASE", dead)
        code, _, err = run_cli(judge(tmp_path, "openai/j1", "--api-base", explicit.base_url), monkeypatch, capsys)
        assert code == 0, err
        assert len(explicit.listings) == 1 and len(explicit.requests) == 4
        models = tmp_path / "models.yaml"
        models.write_text(f'model_list:\n  - model_name: j1\n    litellm_params: {{model: openai/j1, api_base: '
                          f'"{explicit.base_url}"}}\n')
        (tmp_path / "m").mkdir()
        code, _, err = run_cli(judge(tmp_path / "m", "j1", "--models", str(models)), monkeypatch, capsys)
        assert code == 0, err
        assert len(explicit.listings) == 2 and len(explicit.requests) == 8
        monkeypatch.setenv("OPENAI_BASE_URL", by_url.base_url)
        monkeypatch.setenv("OPENAI_API_BASE", by_base.base_url)
        (tmp_path / "v").mkdir()
        code, _, err = run_cli(judge(tmp_path / "v", "openai/j1"), monkeypatch, capsys)
        assert code == 0, err
        assert (len(by_url.listings), len(by_url.requests)) == (1, 4)
        assert (by_base.listings, by_base.requests) == ([], [])


def test_a_refused_env_key_is_found_by_the_preflight(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-endpoint-key-000")
    with OpenAIServer() as server:
        server.valid_key = OPENAI_KEY
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, _, err = run_cli(judge(tmp_path, "openai/j1"), monkeypatch, capsys)
        assert server.requests == [] and len(server.listings) == 1
    assert code == 2 and err.strip() == (f"error: model openai/j1: {server.base_url} rejected the credentials "
                                         "(HTTP 401)")
    assert "sk-wrong-endpoint-key" not in err


def test_an_endpoint_url_with_credentials_is_named_without_them(tmp_path, monkeypatch, capsys) -> None:
    port = closed_port()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://proxyuser:pr0xy-s3cret@127.0.0.1:{port}/v1")
    code, _, err = run_cli(judge(tmp_path, "openai/j1"), monkeypatch, capsys)
    assert code == 3
    assert err.strip() == (f"error: cannot reach http://127.0.0.1:{port}/v1 (model openai/j1): connection refused "
                           "or host unreachable")
    assert "pr0xy-s3cret" not in err and "proxyuser" not in err


def test_azure_without_an_endpoint_is_one_line(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("AZURE_API_KEY", AZURE_KEY)
    code, _, err = run_cli(judge(tmp_path, "azure/j1"), monkeypatch, capsys)
    assert code == 2 and err.strip() == ("error: model azure/j1: no Azure endpoint: set AZURE_API_BASE (or "
                                         "--api-base, or api_base for it in a --models file)")


def test_targets_follow_litellm_for_each_provider(monkeypatch) -> None:
    """Provider defaults and variables, as litellm 1.106 resolves them (litellm/main.py's handlers)."""
    assert resolve_target("openai/j1").api_base == "https://api.openai.com/v1"
    assert resolve_target("gpt-4o-mini").api_base == "https://api.openai.com/v1"
    assert resolve_target("groq/llama-3.1-8b-instant").api_base == "https://api.groq.com/openai/v1"
    assert resolve_target("anthropic/claude-3-5-haiku-latest").api_base == "https://api.anthropic.com"
    assert resolve_target("azure/j1").api_base is None and resolve_target("hosted_vllm/m").api_base is None
    monkeypatch.setenv("OPENAI_API_BASE", "http://b.example/v1")
    assert resolve_target("openai/j1").api_base == "http://b.example/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://a.example/v1")
    assert resolve_target("openai/j1").api_base == "http://a.example/v1"
    assert resolve_target("openai/j1", "http://c.example/v1").api_base == "http://c.example/v1"
    assert resolve_target("hosted_vllm/m").api_base is None  # vLLM's handler reads HOSTED_VLLM_API_BASE only
    monkeypatch.setenv("HOSTED_VLLM_API_BASE", "http://gpu.example:8000/v1")
    assert resolve_target("hosted_vllm/m").api_base == "http://gpu.example:8000/v1"
    monkeypatch.setenv("AZURE_API_BASE", "https://res.openai.azure.com")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", AZURE_KEY)
    target = resolve_target("azure/j1", with_key=True)
    assert (target.api_base, target.api_key) == ("https://res.openai.azure.com", AZURE_KEY)
    assert AZURE_KEY not in repr(target)
    # what a limiter and a breaker belong to
    assert ModelRoute(name="x", model="openai/x").endpoint == "http://a.example/v1"
    assert ModelRoute(name="y", model="bedrock/anthropic.claude-v2").endpoint == "bedrock"

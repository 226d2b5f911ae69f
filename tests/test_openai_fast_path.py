"""The OpenAI fast path (`ragjudge.llm.openai_client`) sends what litellm sends and keeps every record the same.

Each test makes the same calls twice against the local test server, once through litellm (`RAGJUDGE_LLM_CLIENT=
litellm`) and once through the fast path, and compares what the server received and what the gateway recorded.
Which client sent a request is told by its User-Agent (litellm's openai SDK says `AsyncOpenAI/Python ...`, the
fast path's aiohttp `Python/3.x aiohttp/...`), so no test can pass by both runs going through the same client.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ragjudge.errors import UsageError
from ragjudge.llm import prices
from ragjudge.llm.cache import ResponseCache
from ragjudge.llm.faults import ProviderUnreachable
from ragjudge.llm.gateway import LLMError, LLMGateway, validate_model
from ragjudge.llm.openai_client import CLIENT_ENV, chat_request, fast_name
from ragjudge.llm.routes import resolve_target
from ragjudge.testing.openai_server import OpenAIServer, Reply

KEY = "sk-capture"
MODEL = "openai/gpt-4o-mini"
MESSAGES = [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Is the sky blue?"}]
TOOLS = [{"type": "function", "function": {"name": "verdict", "description": "Say it",
                                           "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                                          "required": ["ok"]}}}]
SCHEMA = {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": {
    "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": False}}}
CHAT_CALLS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "sampling": {"temperature": 0.7, "seed": 7, "max_tokens": 12, "stop": ["\n\n", "END"], "top_p": 0.9},
    "logprobs": {"logprobs": True, "top_logprobs": 5},
    "tools": {"tools": TOOLS, "tool_choice": "auto"},
    "tool_choice without tools": {"tool_choice": "none"},
    "json object": {"response_format": {"type": "json_object"}},
    "json schema": {"response_format": SCHEMA},
}


def _client(request: Any) -> str:
    agent = request.headers.get("user-agent", "")
    return "fast" if "aiohttp" in agent and "OpenAI" not in agent else "litellm" if "OpenAI" in agent else agent


def _run(monkeypatch: pytest.MonkeyPatch, path: str, calls: Any, **gateway: Any) -> Any:
    """`calls(gateway)` on a gateway of the given path ('fast' or 'litellm'); what it returns."""
    if path == "litellm":
        monkeypatch.setenv(CLIENT_ENV, "litellm")
    else:
        monkeypatch.delenv(CLIENT_ENV, raising=False)

    async def main() -> Any:
        gw = LLMGateway(**gateway)
        try:
            return await calls(gw)
        finally:
            await gw.aclose()

    return asyncio.run(main())


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("params", CHAT_CALLS.values(), ids=CHAT_CALLS)
def test_a_chat_call_sends_what_litellm_sends(monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]) -> None:
    def reply(request: Any) -> Reply:
        return Reply(content="Yes.", tool_calls=[{"name": "verdict", "arguments": '{"ok": true}'}]
                     if request.body.get("tools") else None)

    with OpenAIServer(reply) as server:
        server.valid_key = KEY  # any other Authorization header is answered 401
        answers = {}
        for path in ("litellm", "fast"):
            answers[path] = _run(monkeypatch, path, lambda gw: gw.complete(MODEL, MESSAGES, **params),
                                 api_base=server.base_url, max_retries=0)
        sent = {_client(r): r for r in server.requests}
    assert set(sent) == {"litellm", "fast"}
    assert (sent["fast"].method, sent["fast"].path) == (sent["litellm"].method, sent["litellm"].path)
    assert sent["fast"].body == sent["litellm"].body
    fast, slow = answers["fast"], answers["litellm"]
    assert (fast.text, fast.tool_calls, fast.prompt_tokens, fast.completion_tokens, fast.top_logprobs) == \
        (slow.text, slow.tool_calls, slow.prompt_tokens, slow.completion_tokens, slow.top_logprobs)
    assert fast.cost == pytest.approx(slow.cost, rel=1e-12) and fast.cost > 0


def test_an_embeddings_call_sends_what_litellm_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIServer() as server:
        server.valid_key = KEY
        vectors = {}
        for path in ("litellm", "fast"):
            vectors[path] = _run(monkeypatch, path, lambda gw: gw.embed(
                "openai/text-embedding-3-small", ["one text", "another text"], dimensions=8), api_base=server.base_url)
        sent = {_client(r): r for r in server.requests}
    assert set(sent) == {"litellm", "fast"}
    assert sent["fast"].path == sent["litellm"].path and sent["fast"].body == sent["litellm"].body
    assert vectors["fast"].vectors == vectors["litellm"].vectors
    assert vectors["fast"].cost == pytest.approx(vectors["litellm"].cost, rel=1e-12) and vectors["fast"].cost > 0


def test_a_run_keeps_the_same_usage_cache_and_pacing_records(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async def calls(gw: LLMGateway) -> LLMGateway:
        for question in ("a", "b", "a"):  # the second "a" is a cache hit
            await gw.complete(MODEL, [{"role": "user", "content": question}], seed=1)
        await gw.embed("openai/text-embedding-3-small", ["x", "y"])
        await gw.embed("openai/text-embedding-3-small", ["y", "z"])
        return gw

    gateways, rows, agents = {}, {}, {}
    with OpenAIServer(rate_limit=(600, 60)) as server:  # announces 600 requests a minute
        for path in ("litellm", "fast"):
            sent = len(server.requests)
            cache = ResponseCache(tmp_path / path)
            gateways[path] = _run(monkeypatch, path, calls, api_base=server.base_url, cache=cache)
            cache.close()
            agents[path] = {_client(r) for r in server.requests[sent:]}
    for path in ("litellm", "fast"):
        with sqlite3.connect(tmp_path / path / "llm-responses.sqlite") as db:
            rows[path] = {key: (model, json.loads(payload))
                          for key, model, payload in db.execute("SELECT key, model, payload FROM responses")}
    assert agents == {"litellm": {"litellm"}, "fast": {"fast"}}
    fast, slow = gateways["fast"], gateways["litellm"]
    _same_usage(fast, slow)
    assert rows["fast"].keys() == rows["litellm"].keys() and len(rows["fast"]) == 5
    for key, (model, payload) in rows["fast"].items():
        other_model, other = rows["litellm"][key]
        assert model == other_model
        assert {k: v for k, v in payload.items() if k != "cost"} == {k: v for k, v in other.items() if k != "cost"}
        assert payload.get("cost", -1.0) == pytest.approx(other.get("cost", -1.0), rel=1e-12)
    learned = {path: [(lim.target_rpm, lim.rpm) for lim in gw.limiters.values()] for path, gw in gateways.items()}
    assert learned["fast"] == learned["litellm"] == [(600.0, 600.0)]


def _same_usage(fast: LLMGateway, slow: LLMGateway) -> None:
    a, b = fast.usage.as_dict(), slow.usage.as_dict()
    assert a.keys() == b.keys()
    for model in a:
        assert {k: v for k, v in a[model].items() if k != "cost"} == {k: v for k, v in b[model].items() if k != "cost"}
        assert a[model]["cost"] == pytest.approx(b[model]["cost"], rel=1e-12)


FAULTS = [400, 401, 403, 404, 408, 422, 429, 500, 502, 503, 504, 418, "garbage", "hang"]


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_a_failure_reads_and_is_retried_as_with_litellm(monkeypatch: pytest.MonkeyPatch, fault: Any) -> None:
    """The same message when it fails at once (no retry budget), and the same attempts when one failure is
    followed by a good answer (retried or not, as litellm's exception of the same status is)."""

    def inject(server: OpenAIServer) -> None:
        if fault == "garbage":
            server.garbage_next(1)
        elif fault == "hang":
            server.hang_next(1, 3.0)
        else:
            server.fail_next(1, fault, retry_after=0.01 if fault == 429 else None)

    async def once(gw: LLMGateway) -> str:
        inject(server)
        try:
            return (await gw.complete(MODEL, [{"role": "user", "content": f"{fault} {gw.max_retries}"}])).text
        except LLMError as exc:
            return re.sub(r"time taken=[\d.]+", "time taken=T", str(exc))

    # only the hang needs a short timeout: a process's first litellm call has taken over 0.3 s on a loaded machine,
    # and turned a 401 into a timeout
    timeout = 1.0 if fault == "hang" else 10.0
    outcomes: dict[str, list[Any]] = {}
    for path in ("litellm", "fast"):
        with OpenAIServer() as server:
            said = _run(monkeypatch, path, once, api_base=server.base_url, max_retries=0, retry_seconds=0,
                        timeout=timeout)
            before = server.chat_count()
            retried = _run(monkeypatch, path, once, api_base=server.base_url, max_retries=2, retry_seconds=30,
                           backoff_base=0.001, timeout=timeout)
            outcomes[path] = [said, retried, server.chat_count() - before, {_client(r) for r in server.requests}]
    assert outcomes["litellm"].pop() == {"litellm"} and outcomes["fast"].pop() == {"fast"}
    assert outcomes["fast"] == outcomes["litellm"]


def test_an_endpoint_that_refuses_connections_stops_the_run_as_with_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"

    async def calls(gw: LLMGateway) -> list[str]:
        said = []
        for _ in range(2):
            try:
                await gw.complete(MODEL, [{"role": "user", "content": "hi"}])
            except (LLMError, ProviderUnreachable) as exc:
                said.append(f"{type(exc).__name__}: {exc}")
        return said

    said = {path: _run(monkeypatch, path, calls, api_base=base, max_retries=3, backoff_base=0.001,
                       breaker_threshold=3) for path in ("litellm", "fast")}
    assert said["fast"] == said["litellm"]
    assert said["fast"][0].startswith("ProviderUnreachable: cannot reach")


def test_fast_path_costs_are_litellm_s() -> None:
    """litellm.completion_cost of an answer equals the fast path's price for it: real model names, cached prompt
    tokens, embeddings; a model without a price costs 0 on both."""
    from ragjudge.llm._litellm import litellm

    ll = litellm()
    for model, usage in [("gpt-4o-mini", {"prompt_tokens": 1200, "completion_tokens": 345}),
                         ("gpt-4o", {"prompt_tokens": 5000, "completion_tokens": 12,
                                     "prompt_tokens_details": {"cached_tokens": 2048}}),
                         ("gpt-4o-mini", {"prompt_tokens": 4096, "completion_tokens": 1,
                                          "prompt_tokens_details": {"cached_tokens": 1024}})]:
        response = ll.ModelResponse(model=model, choices=[{"message": {"role": "assistant", "content": "ok"}}],
                                    usage={**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]})
        expected = ll.completion_cost(completion_response=response)
        assert expected > 0
        assert prices.cost(model, usage) == pytest.approx(expected, rel=1e-12)
        assert prices.cost(f"openai/{model}", usage) == pytest.approx(expected, rel=1e-12)
    embedding = ll.EmbeddingResponse(model="text-embedding-3-small", data=[{"embedding": [0.0], "index": 0}],
                                     usage={"prompt_tokens": 777, "total_tokens": 777})
    expected = ll.completion_cost(completion_response=embedding, call_type="aembedding")
    assert expected > 0 and prices.cost("text-embedding-3-small", {"prompt_tokens": 777}) == pytest.approx(expected)
    assert prices.cost("my-local-judge", {"prompt_tokens": 10, "completion_tokens": 10}) == 0.0


def test_which_calls_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fast_name("openai/gpt-4o-mini") == "gpt-4o-mini" and fast_name("openai/my-judge") == "my-judge"
    for model in ("gpt-4o-mini", "hosted_vllm/llama", "anthropic/claude-3-5-haiku", "openai/o3-mini", "openai/o1",
                  "openai/gpt-5-mini", "openai/responses/gpt-4o", "azure/gpt-4o"):
        assert fast_name(model) is None, model
    plain = {"api_base": "http://h/v1", "temperature": 0.0, "seed": None}
    request = chat_request(MODEL, MESSAGES, plain, "k")
    assert request is not None and request.body == {"model": "gpt-4o-mini", "messages": MESSAGES, "temperature": 0.0}
    assert request.url == "http://h/v1/chat/completions" and request.key == "k"
    assert chat_request(MODEL, MESSAGES, {**plain, "api_version": "2024"}, "k") is None  # a parameter for litellm
    assert chat_request(MODEL, MESSAGES, {**plain, "response_format": dict}, "k") is None  # litellm converts a class
    parts = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert chat_request(MODEL, parts, plain, "k") is None  # content parts: litellm rewrites them
    monkeypatch.delenv("OPENAI_API_KEY")
    assert chat_request(MODEL, MESSAGES, plain, None) is None  # litellm's own error for a missing key
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env-base/v1")
    assert resolve_target(MODEL).api_base == "http://env-base/v1" and resolve_target(MODEL).provider == "openai"
    monkeypatch.setenv(CLIENT_ENV, "litellm")
    assert fast_name(MODEL) is None
    monkeypatch.setenv(CLIENT_ENV, "httpx")
    with pytest.raises(UsageError, match=r"\$RAGJUDGE_LLM_CLIENT must be one of auto, litellm, got 'httpx'"):
        fast_name(MODEL)


def test_the_opt_out_sends_everything_through_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIServer() as server:
        _run(monkeypatch, "litellm", lambda gw: gw.complete(MODEL, MESSAGES), api_base=server.base_url)
        _run(monkeypatch, "fast", lambda gw: gw.complete(MODEL, [{"role": "user", "content": "other"}]),
             api_base=server.base_url)
        assert [_client(r) for r in server.requests] == ["litellm", "fast"]


CHILD = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write(f"\\nlitellm imported: {'litellm' in sys.modules}\\n"))
sys.argv = ["ragjudge", *sys.argv[1:]]
runpy.run_module("ragjudge", run_name="__main__")
"""


@pytest.mark.parametrize(("model", "imported"), [("openai/judge", False), ("hosted_vllm/judge", True)])
def test_a_judge_run_on_an_openai_endpoint_never_imports_litellm(tmp_path: Path, model: str, imported: bool) -> None:
    """A fresh `ragjudge judge` process (the point is what the process imports): litellm stays out for an
    `openai/` judge, and still serves another provider."""
    root = Path(__file__).resolve().parents[1]
    with OpenAIServer(judge_mode="lexical") as server:
        env = {**os.environ, "RAGJUDGE_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": KEY,
               "HOSTED_VLLM_API_KEY": KEY, "PYTHONPATH": str(root)}
        env.pop(CLIENT_ENV, None)
        done = subprocess.run([sys.executable, "-c", CHILD, "judge", str(root / "examples/rag-app/rows.csv"),
                               "--judges", "faithfulness", "--judge-models", model, "--api-base", server.base_url,
                               "--out", str(tmp_path / "run")], capture_output=True, text=True, env=env, timeout=300)
        sent = len(server.requests)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sent > 0
    assert f"litellm imported: {imported}" in done.stderr


def test_validate_model_answers_for_an_openai_model_without_litellm() -> None:
    code = ("import sys; from ragjudge.llm.gateway import validate_model; validate_model('openai/judge'); "
            "print('litellm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.stdout.strip() == "False", done.stderr[-2000:]
    with pytest.raises(UsageError, match="unknown model 'nosuchprovider/x'"):
        validate_model("nosuchprovider/x")


def test_a_422_naming_a_parameter_is_sent_again_without_it_as_litellm_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm (drop_params) resends a chat call once without the parameters a 422 names (vLLM's FastAPI errors)."""
    unsupported = json.dumps({"detail": [{"loc": ["body", "seed"], "msg": "extra fields not permitted"}]})

    def reply(request: Any) -> Reply:
        return Reply(status=422, content=unsupported) if "seed" in request.body else Reply(content="fine")

    with OpenAIServer(reply) as server:
        answers = {path: _run(monkeypatch, path, lambda gw: gw.complete(MODEL, MESSAGES, seed=3),
                              api_base=server.base_url, max_retries=0).text for path in ("litellm", "fast")}
        sent = [(_client(r), r.body) for r in server.requests]
    assert answers == {"litellm": "fine", "fast": "fine"}
    assert [client for client, _ in sent] == ["litellm", "litellm", "fast", "fast"]
    assert sent[2][1] == sent[0][1] and sent[3][1] == sent[1][1] and "seed" not in sent[3][1]


def test_an_unknown_client_setting_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from conftest import run_cli

    monkeypatch.setenv(CLIENT_ENV, "bogus")
    rows = Path(__file__).resolve().parents[1] / "examples/rag-app/rows.csv"
    code, out, err = run_cli(["judge", str(rows), "--judges", "faithfulness", "--judge-models", "openai/judge",
                              "--api-base", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "run")],
                             monkeypatch, capsys)
    assert (code, err.strip()) == (2, "error: $RAGJUDGE_LLM_CLIENT must be one of auto, litellm, got 'bogus'")


@pytest.mark.parametrize("env", [{}, {"OPENAI_BASE_URL": "http://a/v1"}, {"OPENAI_API_BASE": "http://b/v1"},
                                 {"OPENAI_BASE_URL": "http://a/v1", "OPENAI_API_BASE": "http://b/v1"}])
def test_the_fast_path_targets_the_server_and_key_litellm_resolves(monkeypatch: pytest.MonkeyPatch,
                                                                     env: dict[str, str]) -> None:
    """Where the limiter, breaker and preflight think requests go is where litellm sends them."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for api_base, key in [(None, None), ("http://explicit/v1", None), (None, "sk-given")]:
        targets = {}
        for path in ("litellm", "fast"):
            monkeypatch.setenv(CLIENT_ENV, "litellm" if path == "litellm" else "auto")
            targets[path] = resolve_target(MODEL, api_base, key, with_key=True)
        assert targets["fast"] == targets["litellm"]
        assert (targets["fast"].api_key, targets["fast"].provider) == (key or KEY, "openai")


class _ForwardProxy:
    """A plain-HTTP forward proxy: records each request's target (an absolute URL, as clients send a proxy) and
    passes it on to `upstream` (the test server) whatever host it names."""

    def __init__(self, upstream: str):
        import http.server
        import threading
        import urllib.request

        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                seen.append(self.path)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                path = "/" + self.path.split("://", 1)[1].split("/", 1)[1]
                forwarded = urllib.request.Request(upstream + path, data=body, method="POST", headers={
                    k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type", "user-agent")})
                with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(forwarded) as answer:
                    content = answer.read()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_environments_proxy_carries_requests_as_with_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY / NO_PROXY are honoured as the openai SDK (litellm's client) honours them; the fast path reads
    them once per endpoint rather than on every request."""
    with OpenAIServer(lambda req: Reply(content="ok")) as server:
        proxy = _ForwardProxy(server.base_url.rsplit("/v1", 1)[0])
        try:
            monkeypatch.setenv("HTTP_PROXY", proxy.url)
            monkeypatch.delenv("NO_PROXY", raising=False)
            monkeypatch.delenv("no_proxy", raising=False)
            for path in ("litellm", "fast"):  # a host only the proxy can reach
                answer = _run(monkeypatch, path, lambda gw: gw.complete(MODEL, [{"role": "user", "content": path}]),
                              api_base="http://judge.invalid/v1", max_retries=0)
                assert answer.text == "ok"
            assert proxy.seen == ["http://judge.invalid/v1/chat/completions"] * 2
            assert [_client(r) for r in server.requests] == ["litellm", "fast"]
            monkeypatch.setenv("NO_PROXY", "127.0.0.1")
            for path in ("litellm", "fast"):
                _run(monkeypatch, path, lambda gw: gw.complete(MODEL, [{"role": "user", "content": "direct " + path}]),
                     api_base=server.base_url, max_retries=0)
            assert len(proxy.seen) == 2 and len(server.requests) == 4
        finally:
            proxy.close()

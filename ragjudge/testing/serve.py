"""`python -m ragjudge.testing.openai_server`: the local OpenAI-compatible server ragjudge's own tests use, as a tool
for yours. Point ragjudge (or anything that speaks OpenAI's API) at it with `--api-base` to test an evaluation
offline, in CI, without a key or a bill: it answers from a file of scripted replies, with the latency, rate limit and
faults you ask for, on 127.0.0.1 only.

The replies file's rules, `--judge-mode lexical` (`ragjudge.testing.lexical_judge`) and every flag are described in
docs/testing-offline.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from ragjudge.testing.replies import Reply, Request, Responder

REPLY_FIELDS = {"content", "status", "retry_after", "delay", "tool_calls", "top_logprobs", "prompt_tokens",
                "completion_tokens", "garbage"}


def read_rules(path: Path) -> list[tuple[re.Pattern[str], str | None, Reply]]:
    """The rules of a replies file; a bad line stops the server before it starts, naming the file and line."""
    rules = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            rule = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"error: {where}: invalid JSON ({exc.msg})") from None
        if not isinstance(rule, dict) or not isinstance(rule.get("match"), str) or "reply" not in rule:
            raise SystemExit(f"error: {where}: a rule is {{\"match\": REGEX, \"reply\": TEXT or OBJECT}}")
        try:
            pattern = re.compile(rule["match"], re.DOTALL)
        except re.error as exc:
            raise SystemExit(f"error: {where}: field 'match': not a regular expression ({exc})") from None
        reply = rule["reply"]
        if isinstance(reply, str):
            reply = {"content": reply}
        if not isinstance(reply, dict) or set(reply) - REPLY_FIELDS:
            raise SystemExit(f"error: {where}: field 'reply': text, or an object of {', '.join(sorted(REPLY_FIELDS))}")
        model = rule.get("model")
        rules.append((pattern, model.split("/")[-1] if isinstance(model, str) else None, Reply(**reply)))
    return rules


def responder(rules: list[tuple[re.Pattern[str], str | None, Reply]], default: str | None) -> Responder:
    """The rules, then `default` (None: the request is passed on, to the lexical judge)."""
    def respond(request: Request) -> str | Reply:
        for pattern, model, reply in rules:
            if model is not None and request.model.split("/")[-1] != model:
                continue
            if pattern.search(request.last_user) or pattern.search(request.prompt):
                return reply
        return default

    return respond


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m ragjudge.testing.openai_server", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--replies", type=Path, help="JSONL file of scripted replies (see the module's help)")
    parser.add_argument("--judge-mode", choices=["lexical"], help="lexical: answer every built-in judge's prompts "
                        "by word overlap (a stand-in judge model); the replies file's rules answer first")
    parser.add_argument("--default", help="the reply to a request no rule matches (default: OK); not with "
                        "--judge-mode, which answers those")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer")
    parser.add_argument("--rate-limit", metavar="N/SECONDS", help="at most N requests in any SECONDS: beyond, 429 "
                        "with Retry-After (as a provider's RPM limit)")
    parser.add_argument("--fail-first", type=int, default=0, metavar="N", help="answer the first N chat requests "
                        "with --fail-status")
    parser.add_argument("--fail-status", type=int, default=500, help="the status of those failures (default 500)")
    parser.add_argument("--key", help="the only API key accepted (others get 401)")
    parser.add_argument("--detach", action="store_true", help="serve in the background: return once the server "
                        "listens, printing its URL and process id (for a CI script: the next command can use it)")
    parser.add_argument("--pid-file", type=Path, help="write the server's process id there once it listens "
                        "(`kill $(cat FILE)` stops it)")
    args = parser.parse_args(argv)
    if args.rate_limit is not None and not re.fullmatch(r"\d+/\d+(\.\d+)?", args.rate_limit):
        parser.error(f"--rate-limit must be N/SECONDS (e.g. 60/60), got {args.rate_limit!r}")
    if args.latency < 0 or args.fail_first < 0 or not 0 <= args.port <= 65535:
        parser.error("--latency and --fail-first must be 0 or more, --port from 0 to 65535")
    if args.judge_mode is not None and args.default is not None:
        parser.error("--default is not used with --judge-mode: the judge answers what no rule matches")
    if args.judge_mode is None and args.default is None:
        args.default = "OK"
    return args


def main(make_server: Callable[..., Any], argv: list[str] | None = None) -> None:
    """Serve until Ctrl-C or SIGTERM. `make_server` is `OpenAIServer`, passed in by the module that defines it (its
    `__main__`), so that this module does not import it back."""
    args = parse_args(argv)
    if args.detach:
        detach([a for a in (sys.argv[1:] if argv is None else argv) if a != "--detach"])
        return
    if args.replies is not None and not args.replies.is_file():
        raise SystemExit(f"error: {args.replies}: file not found")
    rules = read_rules(args.replies) if args.replies is not None else []
    n, _, seconds = (args.rate_limit or "").partition("/")
    rate = (int(n), float(seconds)) if args.rate_limit else None
    server = make_server(responder(rules, args.default), latency=args.latency, rate_limit=rate, port=args.port,
                         judge_mode=args.judge_mode)
    server.valid_key = args.key
    try:
        server.start()
    except OSError as exc:
        raise SystemExit(f"error: cannot listen on 127.0.0.1:{args.port} ({exc.strerror or exc})") from None
    if args.fail_first:
        server.fail_next(args.fail_first, args.fail_status)
    if args.pid_file is not None:
        args.pid_file.write_text(f"{os.getpid()}\n", encoding="utf-8")
    mode = f"; {args.judge_mode} judge" if args.judge_mode else ""
    print(f"ragjudge test server: {server.base_url} ({len(rules)} rule(s){mode}; Ctrl-C stops it)", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        # a timed wait: a signal that one of the server's threads took is run here (Python runs handlers in the main
        # thread) only once this thread wakes; an untimed wait never did, and the server outlived its `kill`
        while not stop.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        with contextlib.suppress(OSError):  # detached, nobody may read it any more
            print(f"served {len(server.requests)} request(s)", file=sys.stderr, flush=True)


def detach(argv: list[str]) -> None:
    """`--detach`: the same server in a process of its own (its own session: a terminal's Ctrl-C does not reach it),
    returning once it listens, so that the next command of a script finds it answering."""
    proc = subprocess.Popen([sys.executable, "-m", "ragjudge.testing.openai_server", *argv],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    if not line.startswith("ragjudge test server: "):
        proc.wait()
        raise SystemExit(proc.stderr.read().strip() or f"error: the server stopped (exit {proc.returncode})")
    print(line.rstrip().replace("Ctrl-C stops it", f"process {proc.pid}: kill {proc.pid} stops it"), flush=True)

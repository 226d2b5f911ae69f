"""The agent's prompt: the official template for the memory and answer format, filled in one pass.

Question formats (`-T format=`), as the official simulator writes the question line:
- `mc`:    `Asker: question` then `\t(A) option` ... `\t(E) I don't know.` on their own lines;
- `mc-nl`: `Asker: question o1? or o2? or o3? or o4? or you don't know?`;
- `open`:  `Asker: question`.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

from ragjudge.bench.dialsim.plan import OPTION_LETTERS, PlannedQuestion

AnswerFormat = Literal["mc", "mc-nl", "open"]
SYSTEM = "You are a helpful assistant."
"""The official inference functions' system message."""
PARAMS = {"temperature": 0.2, "top_p": 0.1}
"""The paper's decoding settings (§5.1)."""

_FOLDER = Path(__file__).resolve().parent / "prompts"
_RETRIEVED = {"mc": "RAG_qa_prompt_multi_choice_structured.txt",
              "mc-nl": "RAG_qa_prompt_multi_choice_unstructured.txt", "open": "RAG_qa_prompt_open_ended.txt"}
_HISTORY = {"mc": "naive_llm_inference_multi_choice_structured.txt",
            "mc-nl": "naive_llm_inference_multi_choice_unstructured.txt", "open": "naive_llm_inference_open_ended.txt"}
UPSTREAM_COMMIT = "624b3b0bc4931e31ff8f35a31f2912fa3b480744"
"""The commit of github.com/jiho283/Simulator whose `prompt/` folder these files are (byte for byte)."""
SUMMARIZE = "chatgpt_summarize_prompt.txt"
_SLOT = re.compile(r"<<<(Chatbot|Date|Dialog_History|Question|DIALOG)>>>")


@cache
def template(name: str) -> str:
    return (_FOLDER / name).read_text(encoding="utf-8")


def template_name(fmt: AnswerFormat, memory: str) -> str:
    return (_HISTORY if memory == "recent" else _RETRIEVED)[fmt]


def fill(text: str, values: dict[str, str]) -> str:
    """Replace every placeholder at once, so text put in one slot is never scanned for another."""
    return _SLOT.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def question_line(q: PlannedQuestion, fmt: AnswerFormat) -> str:
    head = f"{q.asker}: {q.question}"
    if fmt == "mc":
        return head + "\n" + "\n".join(f"\t{letter} {option}" for letter, option in zip(OPTION_LETTERS, q.options))
    if fmt == "mc-nl":
        return head + " " + "".join(f"{o}? or " for o in q.options[:4]) + "you don't know?"
    return head


def agent_prompt(q: PlannedQuestion, fmt: AnswerFormat, memory: str, history: str) -> str:
    return fill(template(template_name(fmt, memory)),
                {"Chatbot": q.agent, "Date": q.date, "Dialog_History": history, "Question": question_line(q, fmt)})


def summary_prompt(dialog: str) -> str:
    return fill(template(SUMMARIZE), {"DIALOG": dialog})

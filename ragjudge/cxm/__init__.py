"""CXMArena conversation-analytics tasks: intent prediction, agent quality adherence, tool calls,
multi-turn answer classification, knowledge-base refinement and article search.

Loaders read the public release (`sprinklr-huggingface/CXM_Arena`) or plain JSONL files; runners put a
model to each task through the LLM gateway; metrics are pure functions; `ragjudge cxm` is the CLI.
"""

from ragjudge.cxm.tasks import TASKS, RunSettings, ScoreOptions, run_task, score_all, score_task, task_name

__all__ = ["TASKS", "RunSettings", "ScoreOptions", "run_task", "score_all", "score_task", "task_name"]

"""Judges: each is declared by a spec file in a judges folder and run by the code in this package."""

from ragjudge.judges.base import Judge, JudgeContext, JudgedItem, judge_runtime, judges_models, require_judge_models
from ragjudge.judges.registry import JudgeRegistry

__all__ = ["Judge", "JudgeContext", "JudgedItem", "JudgeRegistry", "judge_runtime", "judges_models",
           "require_judge_models"]

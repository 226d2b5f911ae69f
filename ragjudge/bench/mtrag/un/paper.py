"""MTRAG-UN's Table 4 (Rosenthal et al., 2026, arXiv 2602.23184), printed beside a run's own. Table 5 has no figures
(`un/summary.py` sorts answers into its types); the retrieval tables are `un_retrieval/paper.py`'s.
"""

from __future__ import annotations

from ragjudge.engine.summary import Reference

PAPER = "MTRAG-UN (Rosenthal et al., 2026)"

TABLE4_COLUMNS = ["model", "RL_F •", "RL_F ◦", "RB_llm •", "RB_llm ◦", "RB_alg •", "RB_alg ◦"]
TABLE4 = [
    ["target", 0.85, 0.69, 0.96, 0.92, 0.89, 0.88],
    ["gpt-oss-120b", 0.65, 0.59, 0.76, 0.65, 0.46, 0.37],
    ["gpt-oss-20b", 0.60, 0.55, 0.67, 0.63, 0.43, 0.36],
    ["deepseek-v3", 0.63, 0.60, 0.61, 0.58, 0.42, 0.37],
    ["deepseek-r1", 0.47, 0.46, 0.54, 0.52, 0.26, 0.23],
    ["granite-4-0-small", 0.62, 0.56, 0.55, 0.53, 0.45, 0.38],
    ["granite-4-0-tiny", 0.48, 0.46, 0.50, 0.50, 0.35, 0.31],
    ["qwen-30b-a3b", 0.61, 0.60, 0.68, 0.60, 0.41, 0.36],
    ["qwen3-8B", 0.57, 0.55, 0.64, 0.58, 0.41, 0.36],
    ["llama-4-mvk-17b", 0.62, 0.58, 0.59, 0.57, 0.42, 0.37],
    ["llama-3.3-70b", 0.62, 0.58, 0.58, 0.55, 0.43, 0.38],
    ["mistral-small 24b", 0.63, 0.59, 0.67, 0.57, 0.45, 0.37],
    ["mistral-large 675b", 0.55, 0.52, 0.67, 0.60, 0.39, 0.34],
    ["phi-4", 0.54, 0.49, 0.64, 0.57, 0.40, 0.34],
]


SETTING_MARKS = {"reference": "•", "rag": "◦"}
"""Our setting → the paper's column; other settings (reference+rag, predictions) show both."""


def generation_reference(setting: str | None, judges: dict[str, list[str]]) -> Reference:
    """Table 4, with what our run used beside what the paper did."""
    used = "; ".join(f"{name}: {', '.join(models) or 'no model'}" for name, models in judges.items())
    ours = f"setting {setting}" if setting else "predictions judged as given (their setting is not recorded)"
    mark = SETTING_MARKS.get(setting or "")
    keep = [i for i, c in enumerate(TABLE4_COLUMNS) if mark is None or i == 0 or c.endswith(mark)]
    shown = {"•": "Reference •", "◦": "RAG ◦"}.get(mark or "", "Reference • and RAG ◦")
    return Reference(
        title=f"Generation, the paper's Table 4: {shown}",
        columns=[TABLE4_COLUMNS[i] for i in keep], rows=[[r[i] for i in keep] for r in TABLE4],
        source=f"{PAPER}, Table 4", unit="fraction", comparable="",
        notes=["the paper: all 666 tasks of six domains (Banking and Telco are not released), every metric "
               "conditioned on answerability, GPT-OSS-120B as judge, RB_alg's BERTScore on deberta-xlarge-mnli; "
               "Reference sends up to 10 reference passages, RAG the top 5 of ELSER with query rewrite",
               f"this run: {ours}; judges {used}. Not comparable as such (other tasks, judges or encoder); the "
               "`target` row is what the reference answers score"])

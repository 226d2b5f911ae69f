"""The CDR paper's published figures (Lee, Song and Kim, 2025: "Finding Diamonds in Conversation Haystacks") as the
summary's `reference`, published rows only (which tables: docs/benches/cdr.md#the-papers-figures-beside-ours).

Transcribed from the paper's text, where rows of two models are sometimes merged into one line (their values
interleaved); every row was checked against ACC@1 = P@1 = nDCG@1 = MRR@1 and against Table 3 (a test re-checks both).
What the text gets wrong or leaves open is listed in `NOTES`, never silently fixed.
"""

from __future__ import annotations

from pathlib import Path

from ragjudge.bench.cdr.data import CATEGORIES
from ragjudge.bench.cdr.units import UnitSpec
from ragjudge.engine.summary import Reference

_TABLES = Path(__file__).resolve().parent / "paper_tables"
COMMERCIAL = ("Voyage-3-large", "Text-embedding-3-large", "Text-embedding-3-small", "Embed-english-v3.0")
SETTINGS = {"turn": "Table 9 (turn-based)", "window": "Table 10 (sliding chunk, k=3)",
            "session": "Table 11 (session-based)"}
TABLE_2 = {"conversations": 9146, "queries": 1583, "messages_per_conversation": 5.4,
           "tokens_per_conversation": 464, "relevant_per_query": 20.44, "pairs": 32357,
           "category_share": {"Intent & Purpose": 0.361, "Emotion & Feedback": 0.201,
                              "Linguistic Style & Expression": 0.159, "Trust, Safety & Ethics": 0.146,
                              "Conversation Dynamics": 0.134}}
"""Table 2. Tokens are GPT-4o tokens; the paper does not say whether the 32,357 pairs count duplicates."""

NOTES = (
    ("The paper's models ran on an NVIDIA H100 with batch size 4 (ingestion: embedding the 9,146 conversations; "
     "inference: 1,583 queries end to end, Table 3, setting not stated); times here are this machine's."),
    ("Table 3 swaps the sliding-chunk nDCG@10 and R@10 of Text-embedding-3-small (0.4855, 0.2558) and "
     "Stella_en_1.5B_v5 (0.4894, 0.2528) relative to Table 10 (0.4894/0.2528 and 0.4855/0.2558); Table 10's "
     "values are printed."),
    ("Table 9 gives NV-Embed-v2 (turn) ACC@1 = P@1 = nDCG@1 = MRR@1 = 0.0013 but ACC@5 = 0.7410: printed as "
     "published, implausible."),
    ("Table 12 does not name its setting; its query-weighted means (Table 2 shares) match the session setting's "
     "nDCG@10 and P@10 (mean gap -0.003 and +0.001) but run 0.011 under its R@10; Cde-small-v2 has "
     "three-decimal values (0.086, 0.048) as printed."),
    ("Section 4.3 says no model passes 0.17 nDCG@10 on Conversation Dynamics; Table 12 gives "
     "Modernbert-embed-base 0.1848."),
    ("The paper's 'turn' is read as a message (Table 2 counts 5.4 messages per conversation); its sliding "
     "chunks as 3 consecutive messages. It does not say whether a conversation retrieved through several "
     "turns counts once; ragjudge ranks each conversation once, by its best unit (max-passage)."),
)


def table(name: str) -> tuple[list[str], dict[str, list[float]]]:
    """(columns, model -> values) of `TABLE_3`, `TABLE_9`... as published (`paper_tables/TABLE_3.tsv`...)."""
    header, *lines = (_TABLES / f"{name}.tsv").read_text(encoding="utf-8").splitlines()
    rows = {model: [float(v) for v in values] for model, *values in (line.split("\t") for line in lines)}
    return header.split("\t")[1:], rows


def setting_of(spec: UnitSpec) -> str | None:
    """The paper's setting a unit reproduces: session, window (k=3, stride 1), turn (a message), or None."""
    if spec.kind == "session":
        return "session"
    if spec.kind == "window" and (spec.size, spec.stride) == (3, 1):
        return "window"
    if spec.kind == "message":
        return "turn"
    return None


def _named(model: str) -> str:
    """The model's name, marked when it is a commercial API (the paper's grouping) without a column of its own, so
    that a setting's table fits 80 columns."""
    return f"{model} (API)" if model in COMMERCIAL else model


SOURCE = "Finding Diamonds in Conversation Haystacks (Lee, Song and Kim, 2025)"
OFFICIAL = "the official test set (9,146 conversations, 1,583 queries with a relevant conversation)"
TIMES_NOT_COMPARABLE = ("ingestion and inference times are the paper's (NVIDIA H100, batch size 4), never "
                        "comparable with this machine's")
SHOWN = ("ACC@1", "ACC@10", "P@10", "R@10", "NDCG@10")
"""The published columns a setting's reference shows (the terminal is 80 columns wide); `full_tables` has all."""
UNIT_OF_SETTING = {"turn": "-T unit=message", "window": "-T unit=window:3:1", "session": "-T unit=session"}
TABLE_OF_SETTING = {"turn": "TABLE_9", "window": "TABLE_10", "session": "TABLE_11"}


def setting_table(setting: str) -> Reference:
    """Tables 9-11 (the cut-off 10 and ACC@1 of one setting) as published: 16 models."""
    columns, rows = table(TABLE_OF_SETTING[setting])
    idx = [columns.index(c) for c in SHOWN]
    return Reference(
        title=f"CDR paper, {SETTINGS[setting]}: 16 embedding models (not this run)",
        columns=["model", *SHOWN],
        rows=[[_named(model), *(values[i] for i in idx)] for model, values in rows.items()],
        notes=["(API): a commercial API, the others open-source models; ACC@k is our hit@k, NDCG@k our nDCG@k; every "
               "cut-off (1, 5, 10, 20), MRR and Table 3's ingestion and inference times are in summary.json's "
               f"details.paper; {TIMES_NOT_COMPARABLE}"],
        source=f"{SOURCE}, {SETTINGS[setting].split(' (')[0]}", unit="fraction",
        comparable=f"a run on {OFFICIAL} with {UNIT_OF_SETTING[setting]} (the models differ)")


def overview_table() -> Reference:
    """Table 3 as published (nDCG/R/P@10 for the three settings, times): for units no setting reproduces."""
    columns, rows = table("TABLE_3")
    return Reference(
        title="CDR paper, Table 3: 16 embedding models (not this run)", columns=["model", *columns],
        rows=[[_named(m), *v] for m, v in rows.items()],
        notes=["no paper setting uses this run's unit (-T unit=message, window:3:1 or session do); "
               + TIMES_NOT_COMPARABLE],
        source=f"{SOURCE}, Table 3", unit="fraction", comparable="")


SHORT_CATEGORY = {"Intent & Purpose": "intent", "Emotion & Feedback": "emotion",
                  "Conversation Dynamics": "dynamics", "Trust, Safety & Ethics": "trust",
                  "Linguistic Style & Expression": "style"}
"""Table 12's category names as column headers short enough for one 80-column table."""


def category_table() -> Reference:
    """Table 12's nDCG@10 per task category as published (R@10 and P@10 are in `full_tables`)."""
    columns, rows = table("TABLE_12")
    idx = [columns.index(f"{c} NDCG@10") for c in CATEGORIES]
    return Reference(
        title="CDR paper, Table 12 (setting not stated): nDCG@10 per task category, 16 embedding models "
              "(not this run)",
        columns=["model", *(SHORT_CATEGORY[c] for c in CATEGORIES)],
        rows=[[_named(m), *(v[i] for i in idx)] for m, v in rows.items()],
        notes=["columns: " + ", ".join(f"{SHORT_CATEGORY[c]}: {c}" for c in CATEGORIES) + "; ours: the 'category' "
               "breakdown; R@10 and P@10 per category are in summary.json's details.paper"],
        source=f"{SOURCE}, Table 12", unit="fraction",
        comparable=(f"a run on {OFFICIAL} with the paper's task categories and -T unit=session, if Table 12 is "
                    "the session setting (the paper does not say; see the notes)"))


def full_tables(setting: str | None, categories: bool) -> dict[str, dict[str, object]]:
    """Every published column of the tables a run is shown beside (for scripts: summary.json's details)."""
    out: dict[str, dict[str, object]] = {}
    names = ([TABLE_OF_SETTING[setting]] if setting else []) + ["TABLE_3"] + (["TABLE_12"] if categories else [])
    for name in names:
        columns, rows = table(name)
        out[name.replace("TABLE_", "Table ")] = {"columns": ["model", *columns],
                                                  "rows": [[m, *v] for m, v in rows.items()]}
    return out

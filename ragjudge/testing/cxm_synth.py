"""Release-shaped CXMArena data, made up offline and deterministic for a seed: knowledge-base articles of the
release's length (2-4 KB with a brand's recurring boilerplate), multi-turn conversations in the release's transcript
format (IVR lines, fragments) with known gold articles, and KB-refinement pairs made as the paper made them (a
segment of one article inserted into a related one).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from ragjudge.formats import jsonl

PRODUCTS = ["Flex Plan", "Travel Pass", "Home Fibre 500", "eSIM", "Smart Watch LTE", "Family Bundle", "Prepaid Go",
            "Business Line", "Router X2", "Cloud Backup", "TV Stream", "Device Insurance", "Student Plan",
            "Data Booster", "Roaming Saver", "Fixed Line", "5G Hotspot", "Tablet Plan", "Senior Care", "Kids Watch"]
ASPECTS = ["roaming charges", "activation steps", "billing disputes", "cancellation terms", "data allowance",
           "device repair", "number porting", "payment methods", "coverage checks", "upgrade eligibility",
           "contract renewal", "refund timelines", "parental controls", "international calls", "SIM replacement"]
BOILERPLATE = [
    "Customers can contact support through the app, the website chat or by phone, every day from 8:00 to 22:00.",
    "All prices include VAT unless stated otherwise, and changes are announced at least 30 days in advance.",
    "For security reasons an agent will verify the account holder's date of birth and the last four digits of "
    "the account number before making changes.",
    "<p>See also the general terms and conditions and the fair use policy.</p>",
    "Note: promotional offers cannot be combined with other discounts.",
]
FEATURES = ["voicemail", "hotspot", "wifi calling", "SIM lock", "loyalty points", "late fee", "direct debit", "PUK code",
            "cell tower", "fibre box", "warranty", "trade-in", "screen repair", "call barring", "spam filter",
            "data rollover", "e-bill", "credit check", "deposit", "autopay", "static IP", "mesh extender",
            "battery swap", "family sharing", "usage alert", "speed cap", "port-out code", "installation slot",
            "technician visit", "contract buyout", "price lock", "welcome bonus", "referral credit", "caller ID",
            "conference call", "visual voicemail", "MMS", "VoLTE", "eSIM profile", "QR code", "APN settings",
            "network unlock", "insurance claim", "excess fee", "pro-rata charge", "paper bill", "refund voucher"]
FILLER = ["Please note", "In most cases", "As a rule", "Where applicable", "For new customers",
          "For existing customers", "Depending on the region", "Within the EU", "Outside the EU", "During peak hours"]


def _article_text(rng: random.Random, product: str, aspect: str, target: int) -> str:
    """One article: a heading, topic paragraphs with specific figures and features, boilerplate, until `target`
    characters."""
    price, days, limit = rng.randint(2, 60), rng.randint(1, 30), rng.choice([5, 10, 20, 50, 100])
    features = rng.sample(FEATURES, 4)
    parts = [f"# {product}: {aspect}", f"<h2>Overview</h2>\nThis article explains {aspect} for the {product}, "
             f"including {', '.join(features[:3])} and {features[3]}. The rules below apply since the last tariff "
             f"update."]
    while sum(len(p) for p in parts) < target:
        kind = rng.random()
        feature = rng.choice(features)
        if kind < 0.55:
            parts.append(f"{rng.choice(FILLER)}, the {feature} for {aspect} on the {product} costs {price} euros and "
                         f"takes up to {days} days. Ask about the {feature} in the {product} section of the app; the "
                         f"limit is {limit} GB or {limit} requests per month, whichever comes first.")
        elif kind < 0.75:
            parts.append(f"* Step {rng.randint(1, 9)}: open Settings > {product} > {aspect.title()} and follow the "
                         f"instructions.\n* If the {product} shows an error, restart the device and try again.")
        elif kind < 0.85:
            parts.append(f"| Item | Value |\n|---|---|\n| {aspect} fee | {price} EUR |\n| processing time | {days} "
                         f"days |")
        else:
            parts.append(rng.choice(BOILERPLATE))
    return "\n\n".join(parts)


def articles(n: int, seed: int = 0, *, min_chars: int = 2000, max_chars: int = 4000) -> list[dict[str, Any]]:
    """n articles `{"document_id", "document_content", "topic"}` (KB_1...), topics cycling over product x aspect."""
    rng = random.Random(seed)
    topics = [(p, a) for a in ASPECTS for p in PRODUCTS]
    rng.shuffle(topics)
    out = []
    for i in range(n):
        product, aspect = topics[i % len(topics)]
        text = _article_text(rng, product, aspect, rng.randint(min_chars, max_chars))
        out.append({"document_id": f"KB_{i + 1}", "document_content": text, "topic": [product, aspect]})
    return out


def _conversation(rng: random.Random, product: str, aspect: str, turns: int) -> str:
    lines = ["[call transferred from the IVR]"] if rng.random() < 0.3 else []
    if rng.random() < 0.5:
        lines += ["IVR-Bot: Welcome to Northwind support. For billing press 1, for everything else press 2.",
                  f"User: {rng.choice([1, 2])}", "IVR-Bot: Please hold while we connect you to an agent."]
    lines.append("Agent: Thanks for calling Northwind, how can I help you today?")
    question = f"I have a question about {aspect} on my {product}, my model: {product} basic"
    lines += [f"Customer: hi {question[:30]}", f"Customer: {question[30:]}"]
    for _ in range(turns - 1):
        lines += [f"Agent: Sure, let me check the {product} details for you.",
                  f"Customer: and what about the {aspect.split()[0]} fee, is it {rng.randint(2, 60)} euros?"]
    return "\n".join(lines)


def multi_turn_rows(kb: list[dict[str, Any]], n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Rows of the release's Multi_Turn split: conversation_id, conversation_context, correct_agent_response,
    kb_ids (a Python-literal list in text, as the release's CSV exports write it)."""
    rng = random.Random(seed + 1)
    rows = []
    for i in range(n):
        gold = rng.sample(kb, 2 if rng.random() < 0.3 else 1)
        product, aspect = gold[0]["topic"]
        rows.append({"conversation_id": 100 + i // 2, "conversation_context": _conversation(rng, product, aspect,
                                                                                           rng.randint(1, 3)),
                     "correct_agent_response": f"The {product} {aspect} rules are explained in the app.",
                     "kb_ids": str([g["document_id"] for g in gold])})
    return rows


def similar_pairs(kb: list[dict[str, Any]], n: int, seed: int = 0) -> list[list[str]]:
    """Make n similar pairs the way the paper did: copy a segment of one article into a related one (in place)."""
    rng = random.Random(seed + 2)
    pairs = []
    used: set[int] = set()
    while len(pairs) < n:
        a, b = rng.sample(range(len(kb)), 2)
        if a in used or b in used:
            continue
        used |= {a, b}
        source = kb[a]["document_content"]
        start = rng.randint(0, max(0, len(source) - 1200))
        head, _, rest = kb[b]["document_content"].partition("\n\n")  # inserted near the top, as a related section
        kb[b]["document_content"] = f"{head}\n\n{source[start:start + rng.randint(800, 1200)]}\n\n{rest}"
        pairs.append(sorted([kb[a]["document_id"], kb[b]["document_id"]]))
    return pairs


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    jsonl.write_jsonl(path, ({k: v for k, v in r.items() if k != "topic"} for r in rows))
    return path


def write_multi_turn_release(folder: Path, n_articles: int = 30, n_turns: int = 12, seed: int = 0, *,
                             min_chars: int = 2000, max_chars: int = 4000) -> Path:
    """`<folder>/Multi_Turn/train.jsonl` and `<folder>/Articles/multi_turn_articles.jsonl`, as `cxm fetch` writes."""
    kb = articles(n_articles, seed, min_chars=min_chars, max_chars=max_chars)
    write_jsonl(folder / "Articles" / "multi_turn_articles.jsonl", kb)
    write_jsonl(folder / "Multi_Turn" / "train.jsonl", multi_turn_rows(kb, n_turns, seed))
    return folder


def write_kb_release(folder: Path, n_articles: int, n_pairs: int, seed: int = 0) -> Path:
    """`KB_Refinement/similarity_pairs.jsonl` and `Articles/KB_refinement_articles.jsonl`."""
    kb = articles(n_articles, seed)
    pairs = similar_pairs(kb, n_pairs, seed)
    write_jsonl(folder / "Articles" / "KB_refinement_articles.jsonl", kb)
    write_jsonl(folder / "KB_Refinement" / "similarity_pairs.jsonl", [{"Pairs": str(p)} for p in pairs])
    return folder

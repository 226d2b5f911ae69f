"""Write the synthetic sentence-retrieval example (run from the repository root):

    python examples/sentret-mini/make_mini.py

12 Reddit-style dialogues we wrote ourselves (6 ungrounded, 6 Wikipedia grounded), a bank of 72 Wikipedia-
style sentences (6 topics x 2 pages x 6 sentences), relevance labels set by hand, and 10 balanced
validation/test splits. Each dialogue's 50 candidates and their order come from the paper's initial ranker
(Section 3.3) run over the bank: document score -CE(Eq. 1 || p_d^Dir), sentence score -CE(Eq. 2 || p_s^Dir),
min-max normalised and combined with gamma = 0.75 (Eq. 3); beta = 0.3, delta = 0.01, mu = 1000.
The output is deterministic: rerunning rewrites the same files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from ragjudge.bench.sentence_retrieval import lexical
from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.bench.sentence_retrieval.queries import turn_mixture_weights, turn_texts
from ragjudge.bench.sentence_retrieval.text import Analyzer, pool_stats

HERE = Path(__file__).resolve().parent

# (topic, page title, doc id) -> sentences; a candidate id is "<title>_<doc>_<section>_<passage>_<sentence>_<title>"
PAGES = {
    ("bread", "Sourdough", 4431): [
        "Sourdough is bread made by the fermentation of dough using naturally occurring lactobacilli and yeast.",
        "The lactic acid produced by the lactobacilli gives sourdough its sour taste and improves its keeping qualities.",
        "A sourdough starter is a stable culture of flour and water that is fed regularly to keep the microbes active.",
        "Bakers often discard part of the starter before each feeding so that the culture does not grow without limit.",
        "Sourdough rises more slowly than bread leavened with baker's yeast, often needing many hours to proof.",
        "San Francisco sourdough is known for a bacterium named Fructilactobacillus sanfranciscensis after the city.",
    ],
    ("bread", "Gluten", 9120): [
        "Gluten is a group of seed storage proteins found in wheat, barley and rye.",
        "When flour is mixed with water, gluten proteins form an elastic network that traps gas from fermentation.",
        "Kneading develops the gluten network, which allows bread dough to stretch and hold its shape while rising.",
        "Bread flour has a higher protein content than cake flour and therefore forms stronger gluten.",
        "Long fermentation partly breaks down gluten, which is why very long proofs can make dough slack and sticky.",
        "People with coeliac disease must avoid gluten because it triggers an immune reaction in the small intestine.",
    ],
    ("space", "Black hole", 1203): [
        "A black hole is a region of spacetime where gravity is so strong that nothing, not even light, can escape.",
        "The boundary beyond which no escape is possible is called the event horizon.",
        "Stellar black holes form when very massive stars collapse at the end of their life cycle.",
        "Supermassive black holes of millions of solar masses exist in the centres of most galaxies.",
        "Stephen Hawking predicted that black holes emit thermal radiation and slowly lose mass over time.",
        "In 2019 the Event Horizon Telescope published the first image of the black hole in the galaxy M87.",
    ],
    ("space", "Spaghettification", 5561): [
        "Spaghettification is the vertical stretching and horizontal compression of objects in a very strong gravitational field.",
        "It is caused by tidal forces, the difference in gravitational pull between the near and far sides of an object.",
        "Near a stellar black hole an astronaut would be stretched apart well before reaching the event horizon.",
        "Near a supermassive black hole the tidal forces at the horizon are weak enough to cross it intact.",
        "Time dilation means a distant observer never sees an infalling object actually cross the event horizon.",
        "Tidal disruption events occur when a star passes too close to a black hole and is torn apart.",
    ],
    ("rome", "Roman aqueduct", 3312): [
        "The Romans built aqueducts throughout their republic and later empire to bring water into cities and towns.",
        "Aqueducts moved water through gravity alone, along a slight overall downward gradient within conduits of stone, brick or concrete.",
        "Most aqueduct conduits ran underground, and only a small part was carried on the famous arched bridges.",
        "The Aqua Appia, the first aqueduct of Rome, was built in 312 BC.",
        "The water supplied public baths, fountains and latrines as well as private households that paid for a connection.",
        "Sediment and calcium carbonate deposits had to be cleaned out of the channels regularly.",
    ],
    ("rome", "Roman concrete", 7781): [
        "Roman concrete, also called opus caementicium, was a material used in construction in ancient Rome.",
        "It was made from lime mortar mixed with volcanic ash known as pozzolana and chunks of rock.",
        "Roman concrete could set underwater, which made it suitable for harbours and piers.",
        "The Pantheon in Rome still has the largest unreinforced concrete dome in the world.",
        "Lime clasts in the mortar allowed cracks to heal themselves when water seeped in.",
        "Modern concrete usually contains steel reinforcement, which can rust and crack the material over time.",
    ],
    ("running", "Marathon", 2217): [
        "The marathon is a long-distance foot race with a distance of 42.195 kilometres.",
        "Most runners hit the wall around the 30 kilometre mark when their glycogen stores run low.",
        "Marathon training plans usually last 16 to 20 weeks and build up the weekly mileage gradually.",
        "The long run, done once a week at an easy pace, is the core of most marathon training plans.",
        "Tapering means reducing training volume in the last two or three weeks before the race.",
        "The event commemorates the legendary run of the Greek messenger Pheidippides from Marathon to Athens.",
    ],
    ("running", "Carbohydrate loading", 6643): [
        "Carbohydrate loading is a strategy to maximise the storage of glycogen in the muscles and liver before an endurance event.",
        "Athletes typically eat a high carbohydrate diet for the two or three days before a race.",
        "Glycogen is the main fuel for moderate and intense exercise lasting more than about 90 minutes.",
        "Taking in carbohydrate gels or sports drinks during a race can delay the depletion of glycogen.",
        "Carbohydrate loading offers little benefit for races shorter than about 90 minutes.",
        "Weight gain of one or two kilograms is common after loading because glycogen is stored with water.",
    ],
    ("bees", "Honey bee", 8802): [
        "Honey bees are eusocial flying insects known for building colonies and producing honey.",
        "A colony has a single queen, thousands of female worker bees and, in summer, male drones.",
        "Worker bees communicate the location of flowers to each other with the waggle dance.",
        "Bees make honey by collecting nectar and evaporating most of its water inside the hive.",
        "Colony collapse disorder is the sudden disappearance of the worker bees of a colony.",
        "The varroa mite is a parasite that weakens colonies and spreads viruses between bees.",
    ],
    ("bees", "Swarming (honey bee)", 4120): [
        "Swarming is the natural way a honey bee colony reproduces, when the old queen leaves with about half of the workers.",
        "Before swarming, workers raise new queens in special queen cells along the edges of the comb.",
        "Crowding in the hive and a lack of space for the queen to lay eggs are the main triggers of swarming.",
        "Beekeepers prevent swarms by adding boxes, splitting colonies or removing queen cells.",
        "A swarm usually clusters on a branch near the hive while scout bees search for a new home.",
        "Swarming bees are rarely aggressive because they have no comb or brood to defend.",
    ],
    ("chess", "Sicilian Defence", 1187): [
        "The Sicilian Defence is a chess opening that begins with the moves 1. e4 c5.",
        "Black fights for the centre asymmetrically, trading a flank pawn for White's central d-pawn.",
        "The Najdorf Variation, named after Miguel Najdorf, is one of the most popular and deeply analysed lines.",
        "The Dragon Variation is known for sharp play where both sides attack on opposite wings.",
        "White can avoid the main lines with the Alapin Variation, playing 2. c3 to prepare d4.",
        "The Sicilian scores better for Black than any other reply to 1. e4 in master games.",
    ],
    ("chess", "Chess opening theory", 6034): [
        "Opening theory is the body of analysis of the first moves of chess games.",
        "Players memorise opening lines, but understanding the ideas behind the moves matters more for club players.",
        "Common principles are to control the centre, develop pieces quickly and castle early.",
        "A gambit is an opening in which a player sacrifices material, usually a pawn, for an advantage in development.",
        "Engines and databases have pushed some main lines of opening theory beyond move 30.",
        "Beginners are often advised to learn a small repertoire of openings rather than many lines.",
    ],
}

# id, subreddit, title, context turns (author, text), target, topic, relevant (page title, sentence index)
UNGROUNDED = [
    ("t5_2r5tv.f1a2b.0.3", "Breadit", "My sourdough never rises properly",
     [("u1", "I have been feeding my starter for two weeks and the loaves still come out dense and flat."),
      ("u2", "How long are you letting the dough proof before baking it?"),
      ("u1", "About two hours, same as the yeast recipe I used before. Is that wrong?")],
     "Way too short, wild yeast is much slower, give it most of the day.", "bread",
     [("Sourdough", 4), ("Sourdough", 2), ("Gluten", 1)]),
    ("t5_2qm4e.g7h8j.0.3", "askscience", "What would actually happen to a person falling into a black hole?",
     [("u3", ""),
      ("u4", "Depends a lot on the size of the black hole, funnily enough."),
      ("u3", "Wait, why would a bigger one be less dangerous?")],
     "The tidal stretching is gentler at the horizon of a huge one.", "space",
     [("Spaghettification", 3), ("Spaghettification", 2), ("Spaghettification", 1), ("Black hole", 3)]),
    ("t5_2ssp3.k2l3m.0.5", "AskHistorians", "How did Roman cities get running water?",
     [("u5", "I keep seeing pictures of the big arched bridges but how did the water actually move?"),
      ("u6", "Mostly downhill, very gently, over dozens of kilometres."),
      ("u5", "No pumps at all? That seems impossible over such distances."),
      ("u6", "They surveyed the routes with remarkable precision."),
      ("u5", "And the arches were just to keep the slope right across valleys?")],
     "Yes, and most of the route was actually underground.", "rome",
     [("Roman aqueduct", 1), ("Roman aqueduct", 2)]),
    ("t5_2qlit.n4p5q.0.3", "running", "First marathon in April, questions about the wall",
     [("u7", "Everyone warns me about hitting the wall. What actually causes it?"),
      ("u8", "Running out of stored energy, basically."),
      ("u7", "Can I do anything in the days before to avoid it?")],
     "Eat a lot of carbs for two or three days, and take gels during the race.", "running",
     [("Carbohydrate loading", 1), ("Carbohydrate loading", 0), ("Marathon", 1), ("Carbohydrate loading", 3)]),
    ("t5_2s6pb.r6s7t.0.3", "Beekeeping", "A huge cluster of bees on my apple tree",
     [("u9", "There is a ball of bees hanging from a branch in my garden since this morning."),
      ("u10", "Sounds like a swarm resting while scouts look for a new home."),
      ("u9", "Should I be worried about getting stung if I walk past?")],
     "Not really, swarms are usually very docile.", "bees",
     [("Swarming (honey bee)", 5), ("Swarming (honey bee)", 4)]),
    ("t5_2qhr7.u8v9w.0.3", "chess", "",
     [("u11", "I am 1200 and keep losing in the opening against 1. e4. What should I play as Black?"),
      ("u12", "The Sicilian is a great fighting choice if you like sharp positions."),
      ("u11", "Isn't it way too much theory for someone at my level though?")],
     "Learn the ideas, not the lines, and keep a small repertoire.", "chess",
     [("Chess opening theory", 1), ("Chess opening theory", 5), ("Sicilian Defence", 0)]),
]
GROUNDED = [
    ("t5_2r5tv.x1y2z.0.3", "Breadit", "Why is my dough so sticky after an overnight proof?",
     [("u13", "I left my dough in the fridge for 36 hours and it turned into a sticky puddle."),
      ("u14", "Did you use bread flour or all purpose?"),
      ("u13", "All purpose. It was fine after 12 hours last time.")],
     "Long fermentation breaks down the gluten, see https://en.wikipedia.org/wiki/Gluten#Bread", "bread",
     [("Gluten", 4), ("Gluten", 3), ("Gluten", 2), ("Sourdough", 4)]),
    ("t5_2qm4e.b3c4d.0.3", "askscience", "Has anyone actually seen a black hole?",
     [("u15", "Everything I read says black holes are invisible, so how do we know they exist?"),
      ("u16", "We see what happens around them, like stars orbiting nothing."),
      ("u15", "But is there an actual picture?")],
     "Yes, the EHT imaged M87's https://en.wikipedia.org/wiki/Black_hole#Observational_evidence", "space",
     [("Black hole", 5), ("Black hole", 3), ("Spaghettification", 5)]),
    ("t5_2ssp3.e5f6g.0.3", "AskHistorians",
     "Why are so many Roman buildings still standing when modern concrete cracks after decades?",
     [("u17", ""),
      ("u18", "Partly survivorship bias, but their concrete really was different."),
      ("u17", "Different how? Was it the volcanic ash everyone mentions?")],
     "The ash and the lime clasts, see https://en.wikipedia.org/wiki/Roman_concrete#Durability", "rome",
     [("Roman concrete", 1), ("Roman concrete", 4), ("Roman concrete", 5), ("Roman concrete", 2)]),
    ("t5_2qlit.h7i8j.0.5", "running", "Gained weight during taper week, panicking",
     [("u19", "Race is on Sunday and I am up almost two kilos since I started eating pasta every night."),
      ("u20", "Are you carb loading on purpose?"),
      ("u19", "Yes, my plan told me to for the last three days."),
      ("u20", "Then the scale is probably lying to you in a good way."),
      ("u19", "So it is not actual fat? It is really freaking me out.")],
     "It is water stored with glycogen https://en.wikipedia.org/wiki/Carbohydrate_loading", "running",
     [("Carbohydrate loading", 5), ("Carbohydrate loading", 0)]),
    ("t5_2s6pb.k9l0m.0.3", "Beekeeping", "Found queen cells on the edge of the frames",
     [("u21", "During my inspection I found four peanut shaped cells hanging at the bottom of the comb."),
      ("u22", "Those are queen cells. How full is the hive?"),
      ("u21", "Packed, they have filled every frame in the box.")],
     "They are getting ready to swarm https://en.wikipedia.org/wiki/Swarming_(honey_bee)", "bees",
     [("Swarming (honey bee)", 1), ("Swarming (honey bee)", 2), ("Swarming (honey bee)", 3),
      ("Swarming (honey bee)", 0)]),
    ("t5_2qhr7.n1o2p.0.3", "chess", "What is the point of 2. c3 against the Sicilian?",
     [("u23", "My opponent played 2. c3 after 1. e4 c5 and I had no idea what to do."),
      ("u24", "That is the Alapin. White wants to build a big pawn centre."),
      ("u23", "So how does it differ from the open Sicilian lines?")],
     "It prepares d4 so White can recapture with a pawn https://en.wikipedia.org/wiki/Sicilian_Defence", "chess",
     [("Sicilian Defence", 4), ("Sicilian Defence", 1)]),
]
N_CANDIDATES = 50
BETA, DELTA, GAMMA, MU = 0.3, 0.01, 0.75, 1000.0


def bank() -> list[dict]:
    out = []
    for (topic, title, doc), sentences in PAGES.items():
        for i, text in enumerate(sentences):
            section, passage = 1 + i // 3, 1 + i % 3
            out.append({"id": f"{title}_{doc}_{section}_{passage}_{i}_{title}", "title": title, "body": text,
                        "page": title, "index": i, "topic": topic})
    return out


def lm_score(analyzer: Analyzer, parts: list[tuple[float, str]], docs: list[np.ndarray], stats) -> np.ndarray:
    terms, weights = lexical.query_terms([(w, analyzer.ids(t)) for w, t in parts])
    tf, lengths = lexical.term_matrix(docs, terms)
    return lexical.lm_scores(tf, lengths, weights, lexical.pool_collection(stats, terms), [MU])[0]


def minmax(x: np.ndarray) -> np.ndarray:
    span = x.max() - x.min()
    return (x - x.min()) / span if span else np.zeros_like(x)


def initial_ranking(dialogue: Dialogue, sentences: list[dict], analyzer: Analyzer) -> list[tuple[int, float]]:
    """(bank index, final score) of the top 50 by the paper's Eq. 3."""
    turns = turn_texts(dialogue)
    pages = sorted({s["page"] for s in sentences})
    page_docs = [analyzer.ids(" ".join(s["body"] for s in sentences if s["page"] == p), drop_stopwords=False)
                 for p in pages]
    sent_docs = [analyzer.ids(s["body"], drop_stopwords=False) for s in sentences]
    doc_stats = pool_stats(page_docs, analyzer.n_terms)
    sent_stats = pool_stats(sent_docs, analyzer.n_terms)
    n = len(turns)
    doc_parts = [(1 - BETA, turns[0])] + [(BETA / (n - 1), t) for t in turns[1:]]  # Eq. 1
    sent_parts = list(zip(turn_mixture_weights(n, BETA, DELTA), turns, strict=True))  # Eq. 2
    doc_score = dict(zip(pages, minmax(lm_score(analyzer, doc_parts, page_docs, doc_stats)), strict=True))
    sent_score = minmax(lm_score(analyzer, sent_parts, sent_docs, sent_stats))
    final = np.array([(1 - GAMMA) * doc_score[s["page"]] + GAMMA * sent_score[i] for i, s in enumerate(sentences)])
    order = np.argsort(-final, kind="stable")[:N_CANDIDATES]
    return [(int(i), float(final[i])) for i in order]


def dialogue_record(entry: tuple, sentences: list[dict], analyzer: Analyzer) -> dict:
    did, subreddit, title, turns, target, _topic, relevant = entry
    context = [{"author_id": a, "author_name": f"user_{a}", "body": text, "score": 1 + k % 4}
               for k, (a, text) in enumerate(turns)]
    dialogue = Dialogue.model_validate({"id": did, "subreddit": subreddit, "title": title, "context": context,
                                        "candidates": []})
    ranked = initial_ranking(dialogue, sentences, analyzer)
    wanted = set(relevant)
    candidates = [{"id": sentences[i]["id"], "title": sentences[i]["title"], "body": sentences[i]["body"],
                   "score": round(score, 4), "label": int((sentences[i]["page"], sentences[i]["index"]) in wanted)}
                  for i, score in ranked]
    missing = wanted - {(sentences[i]["page"], sentences[i]["index"]) for i, _ in ranked}
    assert not missing, f"{did}: relevant sentences outside the top {N_CANDIDATES}: {missing}"
    return {"id": did, "subreddit": subreddit, "title": title,
            "target": {"author_id": "r0", "author_name": "responder", "body": target, "score": 5},
            "context": context, "candidates": candidates}


def splits(ungrounded: list[str], grounded: list[str], n: int = 10, seed: int = 12) -> list[dict]:
    """Balanced halves, as in the paper: each half holds half of each dialogue type."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        val, test = [], []
        for ids in (ungrounded, grounded):
            shuffled = ids[:]
            rng.shuffle(shuffled)
            val += shuffled[: len(ids) // 2]
            test += shuffled[len(ids) // 2:]
        out.append({"test": test, "val": val})
    return out


def main() -> None:
    sentences = bank()
    analyzer = Analyzer()
    files = {"dialogues.json": UNGROUNDED, "wikipedia_grounded_dialogues.json": GROUNDED}
    for name, entries in files.items():
        records = [dialogue_record(e, sentences, analyzer) for e in entries]
        (HERE / name).write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = splits([e[0] for e in UNGROUNDED], [e[0] for e in GROUNDED])
    (HERE / "val_test_splits.json").write_text("".join(json.dumps(s) + "\n" for s in lines), encoding="utf-8")
    print(f"wrote {len(UNGROUNDED) + len(GROUNDED)} dialogues x {N_CANDIDATES} candidates and {len(lines)} splits "
          f"to {HERE}")


if __name__ == "__main__":
    main()

"""Write the synthetic DialSim show "mini" (Harbor Lane) in the published nested layout, as JSON.

The scenes are hand-written for ragjudge (not from any TV show); the questions are generated from them
the way the paper describes: a temporal knowledge graph of facts, each stated in one session, asked as
past (with its date), cur (same day, no date) or fu (a date still to come: "I don't know") questions, one
and two hops; and fan-quiz questions per episode, answerable after their scene (with and without its
date), unanswerable before it, or never (events the main character did not see). Run it to regenerate
mini_dialsim.json, mini_oracle_tkg.json and mini_oracle_fan.json (the output is deterministic).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
IDK = "I don't know."

SCENES = [  # (episode, scene, date, script)
    ("S01E01", 1, "March 4, 2021", """Teleplay: A. Writer
Theo: Morning, Nora. Is the espresso machine fixed yet?
Nora: It gurgles, but it works. Where is your sister?
Theo: Priya is parking. She is my little sister, and she is always late.
Priya: I heard that! I am right here.
Nora: Priya, Theo says you are always late.
Priya: Theo says a lot of things.
Lena: Hi everyone. Did anyone see the ferry schedule?
Nora: The last ferry leaves at six.
Lena: Perfect, then I can still
pick up the flowers for the shop."""),
    ("S01E01", 2, "March 4, 2021", """Lena: Marcus, this is Nora. Nora, this is Marcus, my boyfriend.
Marcus: Nice to meet you. Lena talks about you all the time.
Nora: All good things, I hope. Where is Theo?
Lena: Theo missed the ferry. He stopped to buy tulips for Theodora's bakery opening.
Marcus: Tulips! He will never hear the end of it.
Nora: Tulips are a sweet gesture, Marcus.
Marcus: Sure, if you like being late."""),
    ("S01E01", 3, "March 6, 2021", """Priya: Welcome to the clinic, Nora. Mind the dog bowls.
Nora: So this is where you work.
Priya: Every day. I am a veterinarian here, mostly cats and one very angry parrot.
Nora: A veterinarian! I thought you worked at the bank.
Priya: That was two years ago.
Nora: Well, the waiting room is lovely.
Priya: Thanks. Do not tell Theo, but I love this job."""),
    ("S01E02", 1, "March 20, 2021", """Marcus: Nora, come in. Mind the boxes, Theo is still unpacking.
Nora: Theo moved in with you?
Marcus: Yep, Theo is my roommate now. Split rent, split chores.
Theo: Split cake, apparently. I ate the birthday cake in the fridge.
Marcus: That was MY birthday cake, Theo!
Nora: You two argue like an old couple.
Theo: He will forgive me by dinner.
Marcus: I will not."""),
    ("S01E02", 2, "March 21, 2021", """Lena: Welcome to my shop! Everything you see, I arranged.
Nora: You work here?
Lena: I am a florist. Priyanka helps on weekends.
Priyanka: Hi Nora. Lena is the best florist in town.
Nora: These peonies are beautiful, Lena.
Lena: Take some for your neighbor."""),
    ("S01E02", 3, "April 2, 2021", """Theo: Nora, meet Ivy. Ivy, Nora.
Ivy: Hi! Theo has told me so much about you.
Nora: Nice to meet you, Ivy. How do you two know each other?
Theo: Ivy is my girlfriend. We met at the bakery.
Ivy: He bought every croissant they had.
Nora: That sounds like Theo.
Theo: They were good croissants."""),
    ("S01E03", 1, "April 15, 2021", """Mrs. Alvarez: Nora, dear, your package came to my door again.
Nora: Sorry, Mrs. Alvarez. The courier never reads the numbers.
Mrs. Alvarez: Neighbors help each other. I live right next door, after all.
Nora: You are the best neighbor on Harbor Lane.
Mrs. Alvarez: Bring me some of those peonies and we are even."""),
    ("S01E03", 2, "April 15, 2021", """Marcus: Nora! Welcome to the aquarium, where I work.
Nora: You work at the aquarium? I thought you were a pilot.
Marcus: I feed the otters. Much better than flying.
Priya: The otters bite, Marcus.
Marcus: Only on Tuesdays.
Nora: Priya, are you here for the otters too?
Priya: I am their veterinarian, remember?"""),
    ("S01E03", 3, "April 18, 2021", """Lena: It is over. I broke up with Marcus.
Nora: What? Why?
Lena: He forgot my birthday. Again.
Priya: Oh, Lena. I am so sorry.
Nora: Do you want to stay at my place tonight?
Lena: Yes please. And bring wine.
Priya: I will bring the wine."""),
    ("S01E03", 4, "April 18, 2021", """Nora: Dear diary, what a week.
Nora: Lena is on my couch, Theo is in love, and Marcus feeds otters.
Nora: Tomorrow I will fix the espresso machine for good."""),
    ("S01E04", 1, "May 2, 2021", """Lena: Nora, this is Julian. He is my boyfriend now.
Julian: Hello, Nora. I have heard you make terrible espresso.
Nora: The machine makes terrible espresso, Julian. I just serve it.
Lena: Julian teaches piano at the music school.
Nora: Lena, you look happy.
Lena: I am."""),
    ("S01E04", 2, "May 3, 2021", """Priya: Nora, I have news. Omar proposed!
Nora: Omar? Your Omar? Where?
Priya: At the lighthouse, at sunset. He is my fiance now!
Omar: She said yes before I finished the question.
Nora: Congratulations, Omar. Priya, I am so happy for you.
Priya: You have to help me plan everything."""),
    ("S01E04", 3, "May 3, 2021", """Theo: Nora, I got the job! I am the new sous-chef at the harbor restaurant.
Nora: Sous-chef! Theo, that is amazing.
Theo: No more bakery shifts for me.
Ivy: He made me taste twelve sauces last night.
Nora: Ivy, you deserve a medal.
Ivy: Or at least dessert."""),
    ("S01E05", 1, "May 28, 2021", """Ivy: I am going home to Portland for the weekend.
Nora: Portland is your hometown?
Ivy: Born and raised. My parents still live there.
Theo: I am going with her. I have to meet the parents.
Nora: Good luck, Theo.
Theo: I will need it."""),
    ("S01E05", 2, "May 28, 2021", """Marcus: Nora, meet Biscuit.
Nora: Marcus, you got a parrot?
Marcus: Biscuit is my pet parrot. He already knows three words.
Biscuit: Otters! Otters!
Nora: Well, that is one word.
Marcus: He is still learning."""),
    ("S01E05", 3, "June 5, 2021", """Priya: Welcome to the engagement party, everyone!
Nora: The lighthouse looks beautiful tonight.
Omar: Priya planned everything.
All: To Priya and Omar!
Theo, Lena and Marcus: Speech! Speech!
Nora: Fine, a short one. To the best veterinarian on Harbor Lane and her fiance.
Lena: Now everybody sing!
Priya: Not the sea shanty again."""),
]

# Facts of the temporal knowledge graph: (id, head, relation, tail, session index where it is stated).
FACTS = [
    ("sister", "Theo", "sister", "Priya", 0),
    ("boyfriend1", "Lena", "boyfriend", "Marcus", 1),
    ("job_priya", "Priya", "job", "veterinarian", 2),
    ("roommate", "Marcus", "roommate", "Theo", 3),
    ("job_lena", "Lena", "job", "florist", 4),
    ("girlfriend", "Theo", "girlfriend", "Ivy", 5),
    ("neighbor", "Nora", "neighbor", "Mrs. Alvarez", 6),
    ("work_marcus", "Marcus", "place of work", "the aquarium", 7),
    ("boyfriend2", "Lena", "boyfriend", "Julian", 10),
    ("fiance", "Priya", "fiance", "Omar", 11),
    ("job_theo", "Theo", "job", "sous-chef", 12),
    ("hometown", "Ivy", "hometown", "Portland", 13),
    ("pet", "Marcus", "pet", "Biscuit", 14),
]
CHAINS = [("sister", "job_priya"), ("sister", "fiance"), ("girlfriend", "hometown"), ("roommate", "job_theo"),
          ("boyfriend1", "work_marcus"), ("boyfriend1", "pet")]
PEOPLE = ["Theo", "Priya", "Marcus", "Lena", "Ivy", "Julian", "Omar", "Mrs. Alvarez", "Priyanka"]
POOLS = {  # relation -> where wrong options come from (people otherwise)
    "job": ["veterinarian", "florist", "sous-chef", "pilot", "piano teacher", "banker"],
    "place of work": ["the aquarium", "the bakery", "the clinic", "the music school"],
    "hometown": ["Portland", "Boston", "Denver", "Austin"],
    "pet": ["Biscuit", "Miso", "Pickles", "Captain"],
}

ONE_HOP = {  # relation -> (with a date, without one)
    "sister": ("Who was {h}'s sister on {d}?", "Who is {h}'s sister?"),
    "boyfriend": ("Who was {h}'s boyfriend on {d}?", "Who is {h}'s boyfriend?"),
    "girlfriend": ("Who was {h}'s girlfriend on {d}?", "Who is {h}'s girlfriend?"),
    "roommate": ("Who was {h}'s roommate on {d}?", "Who is {h}'s roommate?"),
    "neighbor": ("Who was {h}'s neighbor on {d}?", "Who is {h}'s neighbor?"),
    "fiance": ("Who was {h}'s fiance on {d}?", "Who is {h}'s fiance?"),
    "job": ("What was {h}'s job on {d}?", "What is {h}'s job?"),
    "place of work": ("Where did {h} work on {d}?", "Where does {h} work?"),
    "hometown": ("Where was {h}'s hometown on {d}?", "Where is {h}'s hometown?"),
    "pet": ("Who was {h}'s pet on {d}?", "Who is {h}'s pet?"),
}
TWO_HOP = {  # (first relation, second relation) -> template; {x} is the first fact's head
    ("sister", "job"): "{x} has a sister. What was the sister's job on {d}?",
    ("sister", "fiance"): "Who was the fiance of {x}'s sister on {d}?",
    ("girlfriend", "hometown"): "Where is the hometown of {x}'s girlfriend?",
    ("roommate", "job"): "What was the job of {x}'s roommate on {d}?",
    ("boyfriend", "place of work"): "{x} had a boyfriend on {d0}. Where did he work on {d}?",
    ("boyfriend", "pet"): "{x} had a boyfriend on {d0}. Who was his pet on {d}?",
}
STYLES = {  # asker -> how they open a question (askers without a style get the default)
    "default": "By the way, {q}",
    "Theo": "Hey, random one: {q}",
    "Priya": "Okay, quick question. {q}",
    "Lena": "Nora, tell me: {q}",
    "Marcus": "Settle a bet for me. {q}",
}

FAN = {  # episode -> [(question, answer, distractors, evidence session index or None, offscreen date)]
    "S01E01": [("What did Theo buy before missing the ferry?", "Tulips", ["Roses", "Coffee", "A newspaper"], 1, None),
               ("What did Priya forget at the clinic?", "Her keys", ["Her phone", "Her umbrella", "A parrot"], None,
                "March 6, 2021")],
    "S01E02": [("Why did Marcus and Theo argue?", "Theo ate Marcus's birthday cake",
                ["Theo broke the television", "Marcus lost the keys", "Theo was late for rent"], 3, None),
               ("Who did Lena hire to help at the shop?", "Priyanka", ["Ivy", "Julian", "Omar"], 4, None)],
    "S01E03": [("Why did Lena break up with Marcus?", "He forgot her birthday",
                ["He moved to Portland", "He adopted a parrot", "He quit his job"], 8, None),
               ("What did Marcus feed at his work?", "The otters", ["The penguins", "The sharks", "The seals"], 7, None),
               ("What did Theo cook for Ivy's parents?", "Lasagna", ["Paella", "Ramen", "Tacos"], None,
                "April 15, 2021")],
    "S01E04": [("Where did Omar propose to Priya?", "At the lighthouse",
                ["At the aquarium", "At the bakery", "On the ferry"], 11, None),
               ("What does Julian teach?", "Piano", ["Guitar", "Cooking", "Swimming"], 10, None)],
    "S01E05": [("Where is Ivy going for the weekend?", "Portland", ["Boston", "Denver", "Austin"], 13, None),
               ("What does Biscuit the parrot keep saying?", "Otters", ["Hello", "Cracker", "Nora"], 14, None),
               ("What did Omar give Priya at the party?", "A compass", ["A ring", "A puppy", "A poem"], None,
                "May 28, 2021")],
}


def styled(question: str, askers: list[str]) -> dict[str, str]:
    lowered = question[0].lower() + question[1:]
    return {who: STYLES[who].format(q=question if who == "Priya" else lowered) for who in ["default", *askers]}


def options(rng: random.Random, answer: str, pool: list[str]) -> list[str]:
    distractors = [p for p in pool if p != answer]
    picked = rng.sample(distractors, 3) + [answer]
    rng.shuffle(picked)
    return picked + [IDK]


def relation_pool(relation: str) -> list[str]:
    return POOLS.get(relation, PEOPLE)


def when(fact_session: int, asked: int) -> str:
    if fact_session >= asked:
        return "fu"
    return "cur" if SCENES[fact_session][2] == SCENES[asked][2] else "past"


def build() -> tuple[dict, dict, dict]:
    rng = random.Random(20210304)
    facts = {f[0]: f for f in FACTS}
    data: dict = {}
    oracle_tkg: dict = {}
    oracle_fan: dict = {}
    askers_cycle = [["Theo", "Priya", "Lena", "Marcus"], ["Theo", "Lena"], ["Priya", "Marcus"], []]
    for s, (episode, scene, date, script) in enumerate(SCENES):
        hard: dict[str, list] = {}
        tkg_dates: dict[str, dict] = {}
        askers = askers_cycle[s % len(askers_cycle)]
        for fid, head, relation, tail, stated in FACTS:
            kind = when(stated, s)
            d = SCENES[stated][2]
            with_date, plain = ONE_HOP[relation]
            text = plain.format(h=head) if kind == "cur" else with_date.format(h=head, d=d)
            answer = tail if kind != "fu" else IDK
            opts = options(rng, tail, relation_pool(relation))
            hard.setdefault(kind, []).append({"questions": styled(text, askers), "options": opts,
                                              "answer": answer if kind != "fu" else IDK})
            tkg_dates.setdefault(kind, {})[str(len(hard[kind]) - 1)] = [d] if kind != "fu" else ["fu"]
        for first, second in CHAINS:
            f1, f2 = facts[first], facts[second]
            k1, k2 = when(f1[4], s), when(f2[4], s)
            qtype = f"{k1}_{k2}"
            template = TWO_HOP[(f1[2], f2[2])]
            text = template.format(x=f1[1], d0=SCENES[f1[4]][2], d=SCENES[f2[4]][2])
            unanswerable = "fu" in (k1, k2)
            opts = options(rng, f2[3], relation_pool(f2[2]))
            hard.setdefault(qtype, []).append({"questions": styled(text, askers), "options": opts,
                                               "answer": IDK if unanswerable else f2[3]})
            tkg_dates.setdefault(qtype, {})[str(len(hard[qtype]) - 1)] = [
                "fu" if k == "fu" else SCENES[f[4]][2] for k, f in ((k1, f1), (k2, f2))]
        easy: dict[str, dict] = {}
        fan_dates: dict[str, dict] = {}
        for question, answer, distractors, evidence, offscreen in FAN[episode]:
            opts = options(rng, answer, distractors + [answer])

            def add(qtype: str, text: str, gold: str, dates: list[str] | None = None, opts: list[str] = opts,
                    askers: list[str] = askers, easy: dict = easy, fan_dates: dict = fan_dates) -> None:
                bucket = easy.setdefault(qtype, {})
                qid = str(len(bucket))
                bucket[qid] = {"questions": styled(text, askers), "options": opts, "answer": gold}
                if dates is not None:
                    fan_dates.setdefault(qtype, {})[qid] = dates

            if evidence is None:
                add("dont_know_unans", question, IDK)
                add("dont_know_unans_time", question[:-1] + f" on {offscreen}?", IDK, [offscreen])
            elif evidence < s:
                ev_date = SCENES[evidence][2]
                add("ans_wo_time", question, answer)
                add("ans_w_time", question[:-1] + f" on {ev_date}?", answer, [ev_date])
            else:
                add("before_event_unans", question, IDK)
        data.setdefault(episode, {})[str(scene)] = {"date": date, "script": script, "hard_q": hard, "easy_q": easy}
        oracle_tkg.setdefault(episode, {})[str(scene)] = tkg_dates
        oracle_fan.setdefault(episode, {})[str(scene)] = fan_dates
    return data, oracle_tkg, oracle_fan


def main() -> None:
    data, oracle_tkg, oracle_fan = build()
    for name, value in (("mini_dialsim.json", data), ("mini_oracle_tkg.json", oracle_tkg),
                        ("mini_oracle_fan.json", oracle_fan)):
        (HERE / name).write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

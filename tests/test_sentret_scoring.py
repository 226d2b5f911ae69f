"""Sentence retrieval: metrics on hand-computed rankings, the LM and BM25 rerankers, ties, fusion."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragjudge.bench.sentence_retrieval import lexical
from ragjudge.bench.sentence_retrieval.metrics import measure
from ragjudge.metrics.ranking import average_precision_rows as average_precision
from ragjudge.metrics.ranking import ndcg_rows as ndcg_at
from ragjudge.metrics.ranking import reciprocal_rank_rows as reciprocal_rank
from ragjudge.bench.sentence_retrieval.systems import rrf_fuse
from ragjudge.bench.sentence_retrieval.text import Analyzer, pool_stats


def test_metrics_on_hand_computed_rankings() -> None:
    # relevant at ranks 2, 4 and 5 of 10
    rel = np.array([[0, 1, 0, 1, 1, 0, 0, 0, 0, 0]], dtype=float)
    assert average_precision(rel)[0] == pytest.approx((1 / 2 + 2 / 4 + 3 / 5) / 3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(6)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(rel, 5)[0] == pytest.approx(dcg / ideal)
    assert reciprocal_rank(rel)[0] == pytest.approx(1 / 2)
    # the only relevant candidate last of 50: MRR has no cut-off, NDCG@5 sees nothing
    last = np.zeros((1, 50))
    last[0, 49] = 1
    assert reciprocal_rank(last)[0] == pytest.approx(1 / 50)
    assert average_precision(last)[0] == pytest.approx(1 / 50)
    assert ndcg_at(last, 5)[0] == 0.0
    # more relevant than 5: the ideal DCG@5 is five ones
    many = np.array([[1, 0, 1, 1, 1, 1, 1, 1]], dtype=float)
    assert ndcg_at(many, 5)[0] == pytest.approx((1 + 1 / math.log2(4) + 1 / math.log2(5) + 1 / math.log2(6)) /
                                                sum(1 / math.log2(k + 1) for k in range(1, 6)))


def test_measure_applies_the_permutation_to_the_labels() -> None:
    labels = np.array([0, 0, 1, 0, 1])  # in the initial order
    rankings = np.array([[0, 1, 2, 3, 4], [4, 2, 0, 1, 3]])
    values = measure(labels, rankings)
    assert values[0] == pytest.approx([(1 / 3 + 2 / 5) / 2,
                                       (1 / math.log2(4) + 1 / math.log2(6)) / (1 + 1 / math.log2(3)), 1 / 3])
    assert values[1] == pytest.approx([1.0, 1.0, 1.0])


def _tokens(analyzer: Analyzer, texts: list[str], keep_stopwords: bool = True) -> list[np.ndarray]:
    return analyzer.many(texts, drop_stopwords=not keep_stopwords)


SENTENCES = ["The cat sat on the mat with another cat.", "Dogs chase cats in the garden.",
             "A garden of roses and tulips.", "Quantum physics of cats in boxes."]


def test_lm_score_by_hand() -> None:
    analyzer = Analyzer(stemmer=None, stopwords="none")
    docs = _tokens(analyzer, SENTENCES)
    stats = pool_stats(docs, analyzer.n_terms)
    terms, weights = lexical.query_terms([(1.0, analyzer.ids("cat garden cat"))])
    tf, lengths = lexical.term_matrix(docs, terms)
    scores = lexical.lm_scores(tf, lengths, weights, lexical.pool_collection(stats, terms), [1000.0])[0]
    total = sum(len(d) for d in docs)
    p_cat, p_garden = 2 / total, 2 / total  # "cat" twice (sentence 1), "garden" twice (sentences 2 and 3)
    for i, doc in enumerate(SENTENCES):
        words = [w for w in doc.lower().replace(".", "").split() if len(w) > 1]  # tokens: 2+ word characters
        expected = (2 / 3) * math.log((words.count("cat") + 1000 * p_cat) / (len(words) + 1000)) + \
                   (1 / 3) * math.log((words.count("garden") + 1000 * p_garden) / (len(words) + 1000))
        assert scores[i] == pytest.approx(expected)


@pytest.mark.parametrize("collection", ["pool", "dialogue"])
def test_lm_mixture_score_is_the_weighted_sum_of_per_turn_scores(collection: str) -> None:
    analyzer = Analyzer()
    docs = _tokens(analyzer, SENTENCES)
    stats = pool_stats(docs, analyzer.n_terms)
    turns = ["my cat hides in boxes", "roses in the garden", "quantum cats and unknownword"]
    weights = [0.7, 0.1, 0.2]

    def score(parts: list[tuple[float, str]]) -> np.ndarray:
        terms, q = lexical.query_terms([(w, analyzer.ids(t)) for w, t in parts])
        tf, lengths = lexical.term_matrix(docs, terms)
        coll = lexical.pool_collection(stats, terms) if collection == "pool" else \
            lexical.dialogue_collection(tf, lengths)
        return lexical.lm_scores(tf, lengths, q, coll, [1000.0, 2000.0])

    mixture = score(list(zip(weights, turns)))
    per_turn = sum(w * score([(1.0, t)]) for w, t in zip(weights, turns))
    np.testing.assert_allclose(mixture, per_turn, rtol=1e-12)
    assert np.isfinite(mixture).all()  # 'unknownword' is in no sentence: dropped, not -inf


def test_bm25_with_per_dialogue_statistics_equals_bm25s() -> None:
    import bm25s
    import Stemmer
    from bm25s.tokenization import Tokenizer

    texts = SENTENCES + ["Cats and dogs and more cats sleep in the warm garden sun.", "Tulips bloom in spring."]
    query = "cats sleeping in gardens"
    for k1, b in ((1.2, 0.75), (8.0, 0.25), (2.0, 1.0)):
        tokenizer = Tokenizer(stopwords="en", stemmer=Stemmer.Stemmer("english"))
        engine = bm25s.BM25(k1=k1, b=b, method="lucene")
        engine.index(tokenizer.tokenize(texts, return_as="tuple", show_progress=False), show_progress=False)
        ids = tokenizer.tokenize([query], update_vocab=False, return_as="ids", show_progress=False)[0]
        expected = engine.get_scores(ids)

        analyzer = Analyzer()
        docs = _tokens(analyzer, texts, keep_stopwords=False)
        q_ids = analyzer.ids(query)
        terms, weights = lexical.query_terms([(1.0, q_ids)])
        tf, lengths = lexical.term_matrix(docs, terms)
        ours = lexical.bm25_scores(tf, lengths, weights, lexical.dialogue_collection(tf, lengths), [k1], [b])[0]
        np.testing.assert_allclose(ours * len(q_ids), expected, rtol=1e-5)  # ours: the query's term shares


def test_bm25_grid_is_scored_at_once_and_matches_one_by_one() -> None:
    analyzer = Analyzer()
    docs = _tokens(analyzer, SENTENCES)
    stats = pool_stats(docs, analyzer.n_terms)
    terms, weights = lexical.query_terms([(1.0, analyzer.ids("cats in the garden"))])
    tf, lengths = lexical.term_matrix(docs, terms)
    coll = lexical.pool_collection(stats, terms)
    grid = [(k1, b) for k1 in (1.2, 2, 4, 8, 12) for b in (0.25, 0.5, 0.75, 1)]
    together = lexical.bm25_scores(tf, lengths, weights, coll, [g[0] for g in grid], [g[1] for g in grid])
    for i, (k1, b) in enumerate(grid):
        np.testing.assert_allclose(together[i], lexical.bm25_scores(tf, lengths, weights, coll, [k1], [b])[0])


def test_ties_keep_the_initial_order() -> None:
    scores = np.array([[0.0, 2.0, 0.0, 2.0, -0.0, 1.0]])
    assert lexical.rank_order(scores)[0].tolist() == [1, 3, 5, 0, 2, 4]
    # a query matching nothing leaves the initial order
    analyzer = Analyzer()
    docs = _tokens(analyzer, SENTENCES)
    terms, weights = lexical.query_terms([(1.0, analyzer.ids("zebra xylophone"))])
    tf, lengths = lexical.term_matrix(docs, terms)
    coll = lexical.pool_collection(pool_stats(docs, analyzer.n_terms), terms)
    assert lexical.rank_order(lexical.bm25_scores(tf, lengths, weights, coll, [1.2], [0.75]))[0].tolist() == [0, 1, 2, 3]
    assert lexical.rank_order(lexical.lm_scores(tf, lengths, weights, coll, [1000]))[0].tolist() == [0, 1, 2, 3]


def test_rrf_fuses_ranks_and_breaks_ties_by_initial_rank() -> None:
    initial = np.array([0, 1, 2, 3])
    other = np.array([3, 2, 1, 0])
    fused = rrf_fuse([initial, other], [1.0, 1.0], 60)
    assert fused.tolist() == [0, 3, 1, 2]  # 0 and 3 tie at 1/61 + 1/64, 1 and 2 at 1/62 + 1/63 (lower)
    fused = rrf_fuse([initial, np.array([2, 0, 1, 3])], [1.0, 1.0], 60)
    assert fused.tolist() == [0, 2, 1, 3]  # 0: 1/61+1/62, 2: 1/63+1/61, 1: 1/62+1/63

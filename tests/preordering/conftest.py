"""A synthetic language with systematic reordering, for the preorderer tests.

Sentences are noun phrases (determiner, optional adjective, noun; some nouns are two BPE
pieces), verbs and filler words. The target order puts each adjective after its noun and
every verb at the sentence end, so the reorder positions follow from the source alone.
"""
import random

import pytest

NOUNS = [f"noun{k}" for k in range(30)]
ADJECTIVES = [f"adj{k}" for k in range(15)]
VERBS = [f"verb{k}" for k in range(10)]
FILLERS = [f"word{k}" for k in range(20)]
DETERMINERS = ["the", "a", "this"]


def synthetic_sentence(rng, max_phrases):
    """Source tokens and their target-order positions."""
    source = []
    main_order = []  # source indices in target order, verbs left out
    verbs = []
    for _ in range(rng.randint(1, max_phrases)):
        kind = rng.random()
        if kind < 0.5:
            start = len(source)
            source.append(rng.choice(DETERMINERS))
            adjective = rng.random() < 0.6
            if adjective:
                source.append(rng.choice(ADJECTIVES))
            noun = rng.choice(NOUNS)
            source.extend([noun + "@@", "s"] if rng.random() < 0.3 else [noun])
            phrase = list(range(start, len(source)))
            if adjective:  # determiner, noun pieces, adjective
                phrase = [phrase[0]] + phrase[2:] + [phrase[1]]
            main_order.extend(phrase)
        elif kind < 0.7:
            verbs.append(len(source))
            source.append(rng.choice(VERBS))
        else:
            main_order.append(len(source))
            source.append(rng.choice(FILLERS))
    positions = [0] * len(source)
    for rank, index in enumerate(main_order + verbs):
        positions[index] = rank
    return source, positions


def synthetic_corpus(count, seed, max_phrases=8):
    rng = random.Random(seed)
    pairs = [synthetic_sentence(rng, max_phrases) for _ in range(count)]
    return [s for s, _ in pairs], [p for _, p in pairs]


@pytest.fixture(scope="session")
def synthetic_train():
    return synthetic_corpus(1500, seed=1)


@pytest.fixture(scope="session")
def synthetic_test():
    return synthetic_corpus(300, seed=2)

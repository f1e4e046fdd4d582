"""Tiny parallel text for the recipes and the pipeline: sentences in several languages that
translate each other word for word (so the aligner has signal), a raw corpus folder of them,
and the recipes' settings that make every step run and none take long."""
import random

PAIRS = 30
# tiny settings: every step runs, none takes long (one preorderer, not the ensemble a corpus
# of this size gets by default)
RECIPE_ENV = {
    "WORKERS": "1", "MERGES": "40", "PREORDER_EPOCHS": "1", "PREORDER_SEEDS": "1",
    "PREORDER_SECONDS": "20",
    "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore",
}
# a small lexicon per language: the same sentence "meaning" in each, so the aligner has signal
WORDS = {
    "en": ["the", "house", "is", "small", "a", "dog", "sees", "cat", "we", "read", "book", "today"],
    "de": ["das", "Haus", "ist", "klein", "ein", "Hund", "sieht", "Katze", "wir", "lesen", "Buch",
           "heute"],
    "fr": ["la", "maison", "est", "petite", "un", "chien", "voit", "chat", "nous", "lisons",
           "livre", "aujourd'hui"],
    "it": ["la", "casa", "è", "piccola", "un", "cane", "vede", "gatto", "noi", "leggiamo", "libro",
           "oggi"],
    "zh": ["这", "房子", "是", "小", "一只", "狗", "看见", "猫", "我们", "读", "书", "今天"],
    "ja": ["その", "家", "は", "小さい", "一匹の", "犬", "見る", "猫", "私たち", "読む", "本",
           "今日"],
}
UNSPACED = {"zh", "ja"}
END = {"zh": "。", "ja": "。"}


def sentences(lang, count, seed):
    """``count`` sentences; the same seed gives translations of each other across languages."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        indices = [rng.randrange(len(WORDS["en"])) for _ in range(rng.randint(3, 8))]
        words = [WORDS[lang][i] for i in indices]
        joiner = "" if lang in UNSPACED else " "
        lines.append(joiner.join(words) + END.get(lang, " ."))
    return lines


def write_raw(directory, src, tgt):
    """``directory`` holding train (PAIRS pairs), valid and test (8 each) in ``src`` and
    ``tgt``."""
    directory.mkdir(parents=True, exist_ok=True)
    for split, seed, count in (("train", 1, PAIRS), ("valid", 2, 8), ("test", 3, 8)):
        for lang in (src, tgt):
            (directory / f"{split}.{lang}").write_text(
                "\n".join(sentences(lang, count, seed)) + "\n", encoding="utf-8")
    return directory


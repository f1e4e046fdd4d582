"""Token vocabulary of the preorderer: BPE token strings to embedding rows."""
import collections

PAD = "<pad>"
UNK = "<unk>"


class Vocabulary:
    """A fixed list of tokens; index 0 is padding, index 1 stands for unknown tokens."""

    pad_index = 0
    unk_index = 1

    def __init__(self, tokens):
        tokens = list(tokens)
        if tokens[:2] != [PAD, UNK]:
            raise ValueError(f"a vocabulary starts with {PAD!r} and {UNK!r}, got {tokens[:2]}")
        self.tokens = tokens
        self._index = {}
        for k, token in enumerate(tokens):
            # a token twice would leave an embedding row that no token reaches
            if token in self._index:
                raise ValueError(f"{token!r} twice in the vocabulary (entries "
                                 f"{self._index[token]} and {k})")
            self._index[token] = k

    @classmethod
    def build(cls, sentences, max_size=None, min_count=1):
        """The ``max_size`` most frequent tokens seen at least ``min_count`` times."""
        counts = collections.Counter(token for sentence in sentences for token in sentence)
        # frequency first, then the token itself, so the vocabulary does not depend on
        # the order of the training data
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        kept = [token for token, count in ranked if count >= min_count][:max_size]
        return cls([PAD, UNK] + [token for token in kept if token not in (PAD, UNK)])

    def __len__(self):
        return len(self.tokens)

    def encode(self, sentence):
        """Indices of the tokens of one sentence (a list of strings)."""
        index = self._index
        return [index.get(token, self.unk_index) for token in sentence]

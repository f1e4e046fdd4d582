"""``--tokenizer xlpe`` for fairseq-interactive: the pipeline's own tokenization of the source
(``xlpe-tokenize``: Moses rules, jieba words for zh, MeCab words for ja, placeholders such as
``%s`` and ``{0}`` kept whole, the line's spacing recorded in the tokens, lowercased with
``--lowercase-source``) and detokenization of the target (``detokenize``: the line as its
tokens record it, in any language), so that fairseq's command translates as
``xlpe-translate`` does."""
from dataclasses import dataclass, field

from fairseq.data.encoders import register_tokenizer
from fairseq.dataclass import FairseqDataclass

from .text.detokenization import detokenize_line
from .text.tokenization import tokenize_line


@dataclass
class XlpeTokenizerConfig(FairseqDataclass):
    source_lang: str = field(default="en", metadata={"help": "source language"})
    lowercase_source: bool = field(
        default=False, metadata={"help": "lowercase the source, for a lowercased corpus"})


@register_tokenizer("xlpe", dataclass=XlpeTokenizerConfig)
class XlpeTokenizer:
    def __init__(self, cfg):
        self.cfg = cfg

    def encode(self, text):
        return tokenize_line(text, self.cfg.source_lang, self.cfg.lowercase_source)

    def decode(self, text):
        return detokenize_line(text)

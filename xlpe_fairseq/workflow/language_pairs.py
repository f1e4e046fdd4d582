"""Language pairs written SRC-TGT, as fairseq names them, where a code holds '-' itself
(``zh-CN``, ``pt-BR``, ``sr-Latn``): ``zh-CN-en`` is Chinese (China) to English.

A code is a file suffix and fairseq's ``--source-lang``/``--target-lang`` as it is written
(``train.zh-CN``, ``dict.zh-CN.txt``, ``train.zh-CN-en.zh-CN.bin``); what it means (the
tokenizer's rules, BLEU's tokenizer, Debian's package) is read from it whatever its case and
separator (``text.detokenization.base_language``). fairseq itself splits a pair only where no
``--source-lang`` is given, and then only at a single '-': the commands here always give it.
"""
import os
import re

from ..io.options import LANGUAGE_CODE
from .script_options import Refused

# fairseq-preprocess's index files: train.SRC-TGT.LANG.idx
INDEX = re.compile(r"train\.([^.]+)\.([^.]+)\.idx")


def splits(pair):
    """Every ``(src, tgt)`` that ``pair`` reads as: cut at one '-', both sides codes."""
    cuts = [i for i, character in enumerate(pair) if character == "-"]
    return [(pair[:i], pair[i + 1:]) for i in cuts
            if LANGUAGE_CODE.fullmatch(pair[:i]) and LANGUAGE_CODE.fullmatch(pair[i + 1:])]


def starts_as_language(code):
    """Whether ``code`` begins with a language subtag as written: lower-case letters (a
    region is written in capitals, a script capitalized: zh-CN, sr-Latn)."""
    first = re.split(r"[-_]", code)[0]
    return first.islower() and first.isalpha()


def split_pair(pair, what="PAIR"):
    """``(src, tgt)`` of a pair such as ``en-de``, ``zh-CN-en`` or ``en-sr-Latn``; a pair that
    reads two ways (``zh-cn-en``: zh-cn to en, or zh to cn-en) or none is refused in one line
    (status 2) saying how to write it."""
    found = [split for split in splits(pair) if starts_as_language(split[1])]
    if len(found) == 1:
        return found[0]
    if not found:
        raise Refused(f"{what} must be SRC-TGT, two language codes such as en-de or zh-CN-en, "
                      f"not '{pair}'", 2)
    readings = ", ".join(f"{src} to {tgt}" for src, tgt in found)
    raise Refused(f"{what} '{pair}' reads {len(found)} ways ({readings}): write a region in "
                  "capitals and a script capitalized, e.g. zh-CN-en, en-sr-Latn", 2)


def data_bin_pair(text):
    """``(src, tgt)`` of a data-bin variant folder from fairseq-preprocess's file names
    (``train.SRC-TGT.SRC.idx`` and ``train.SRC-TGT.TGT.idx``; where one is missing, the
    reading of SRC-TGT the other or the codes' case tells); None where it holds none."""
    found = [match for name in sorted(os.listdir(text)) if (match := INDEX.fullmatch(name))]
    languages = {match.group(2) for match in found}
    tests = (lambda src, tgt: src in languages and tgt in languages,
             lambda src, tgt: src in languages or tgt in languages,
             lambda src, tgt: starts_as_language(tgt))
    for pair in sorted({match.group(1) for match in found}):
        for test in tests:
            chosen = [(src, tgt) for src, tgt in splits(pair) if src != tgt and test(src, tgt)]
            if len(chosen) == 1:
                return chosen[0]
    return None

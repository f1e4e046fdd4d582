"""Detokenization: each tokenized line as it was written, in every language (the tokens
record its spacing); the same function behind xlpe-bleu, xlpe-translate and
fairseq-interactive's --tokenizer xlpe."""
from argparse import Namespace
from pathlib import Path

import pytest

from xlpe_fairseq.evaluation import bleu, translate
from xlpe_fairseq.text.detokenization import detokenize, detokenize_line
from xlpe_fairseq.text.tokenization import tokenize_line


# raw target lines of software strings, as each language writes its quotes and marks
WRITTEN = [
    ("ru", "Файл «%s» не найден."),
    ("ru", "Стиль «Обычный» (по умолчанию) — «%1», «%2» и «%3»?"),
    ("ru", "«Документ «%s» не сохранён»"),
    ("de", "Klicken Sie auf »OK«, dann auf „Speichern“."),
    ("de-CH", "Klicken Sie auf «OK»."),
    ("fr", "Cliquez sur « OK » : le fichier « %s » est introuvable !"),
    ("sv", "Klicka på »OK»."),
    ("zh", "选择“工具 - 选项”，然后点击 OK。"),
    ("ja", "「ファイル」を開きます。次に、OK をクリックします。"),
]


@pytest.mark.parametrize("language, written", WRITTEN,
                         ids=[f"{language}-{k}" for k, (language, _) in enumerate(WRITTEN)])
def test_a_tokenized_target_comes_back_as_written(language, written):
    """xlpe-tokenize then the detokenizer: the line as written; Moses's detokenizer left a
    space inside guillemets (``Файл « %s » не найден.``) and needed rules per language."""
    tokenized = tokenize_line(written, language)
    assert detokenize_line(tokenized) == written, tokenized
    assert detokenize([tokenized]) == [written]


def test_round_tripped_references_score_100_against_themselves():
    """A perfect system scores 100: the tokenized reference, as a model would write it,
    detokenized, is the reference."""
    references = [written for _, written in WRITTEN]
    hypotheses = detokenize([tokenize_line(line, language) for language, line in WRITTEN])
    assert bleu.score(hypotheses, references, "13a")["bleu"] == 100, hypotheses


def test_every_command_detokenizes_with_the_same_function():
    assert bleu.detokenize is detokenize
    assert translate.detokenize_line is detokenize_line


def test_fairseq_tokenizer_of_the_plugin_segments_and_joins():
    from fairseq.data import encoders

    import xlpe_fairseq.tokenizer  # noqa: F401  (registers --tokenizer xlpe)

    tokenizer = encoders.build_tokenizer(Namespace(tokenizer="xlpe", source_lang="en",
                                                   lowercase_source=True))
    assert tokenizer.encode("Open the file, then close it.") == \
        "open the file \uffed, then close it \uffed."
    assert tokenizer.decode("在 「 打开 」 对话框 。") == "在「打开」对话框。"


@pytest.mark.parametrize("lang, references", [
    ("ja", ["エラー: %s が見つかりません", "ファイル %s を開けません: %d", "%(name)s を {0} に保存",
            "ファイル(&F)", "/usr/share/locale を参照"]),
    ("en", ["Error: %s not found", "Cannot open %s: %d", "Save %(name)s in {0}.",
            "&File", "See /usr/share/locale."]),
])
def test_placeholders_of_a_target_survive_tokenization_bpe_and_scoring(tmp_path, lang,
                                                                        references):
    """The target side's path through the pipeline, the model aside: xlpe-tokenize, BPE
    learned and applied with few merges (so that a placeholder may come out in pieces,
    ``%@@ s``), fairseq's --remove-bpe, and xlpe-bleu's detokenization: a model that
    reproduces the reference prints every placeholder as written, and scores 100."""
    import json

    from fairseq.data.data_utils import post_process

    from xlpe_fairseq.preprocessing import bpe as bpe_command, tokenize

    raw, tokenized, codes, bpe = (str(tmp_path / name) for name in ("raw", "tok", "codes", "bpe"))
    Path(raw).write_text("".join(f"{line}\n" for line in references), encoding="utf-8")
    tokenize.main(["--lang", lang, "--input", raw, "--output", tokenized, "--workers", "1"])
    bpe_command.main(["learn", "--input", tokenized, "--codes", codes, "--merges", "3",
                      "--workers", "1"])
    bpe_command.main(["apply", "--codes", codes, "--input", tokenized, "--output", bpe,
                      "--workers", "1"])
    tokenized, bpe = Path(tokenized), Path(bpe)
    tokens = tokenized.read_text(encoding="utf-8").split()
    assert "%s" in tokens and "%(name)s" in tokens and "{0}" in tokens, tokens
    assert "%@@ d" in bpe.read_text(encoding="utf-8"), "the rarer %d comes out in pieces"
    generate = tmp_path / "generate.out"
    generate.write_text("".join(f"H-{i}\t-0.1\t{post_process(line, 'subword_nmt')}\n"
                                for i, line in enumerate(
                                    bpe.read_text(encoding="utf-8").splitlines())),
                        encoding="utf-8")
    scores, printed = tmp_path / "bleu.json", tmp_path / "hypotheses"
    bleu.main(["--generate-output", str(generate), "--reference", raw, "--target-lang",
               lang, "--json", str(scores), "--detokenized-output", str(printed)])
    assert printed.read_text(encoding="utf-8").splitlines() == references
    assert json.loads(scores.read_text())["bleu"] == pytest.approx(100)


def test_fairseq_tokenizer_of_the_plugin_keeps_placeholders():
    from fairseq.data import encoders

    import xlpe_fairseq.tokenizer  # noqa: F401  (registers --tokenizer xlpe)

    tokenizer = encoders.build_tokenizer(Namespace(tokenizer="xlpe", source_lang="en",
                                                   lowercase_source=False))
    assert tokenizer.encode("Error: %s not found") == "Error \uffed: %s not found"
    assert tokenizer.decode(tokenize_line("エラー: %s が見つかりません", "ja")) == \
        "エラー: %s が見つかりません"

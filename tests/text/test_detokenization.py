"""Detokenization by target language: Chinese and Japanese as a reader writes them, no space
between CJK characters or next to CJK punctuation; guillemets as each language writes them;
other languages as Moses writes them; the same function behind xlpe-bleu, xlpe-translate and
fairseq-interactive's --tokenizer xlpe."""
from argparse import Namespace
from pathlib import Path

import pytest

from xlpe_fairseq.evaluation import bleu, translate
from xlpe_fairseq.text.detokenization import detokenize, detokenize_line
from xlpe_fairseq.text.tokenization import tokenize_line


@pytest.mark.parametrize("language, tokenized, expected", [
    ("zh", "在 「 打开 」 对话框 ， 选择 文件 。", "在「打开」对话框，选择文件。"),
    ("zh", "选择 “ 工具 - 选项 ” ， 然后 点击 OK 。", "选择“工具 - 选项”，然后点击 OK。"),
    ("zh", "使用 LibreOffice Writer 打开 文件 。 按 Ctrl + C 。",
     "使用 LibreOffice Writer 打开文件。按 Ctrl + C。"),
    ("zh-CN", "是否 保存 （ 可选 ） ？", "是否保存（可选）？"),
    ("ja", "「 ファイル 」 を 開き ます 。 次 に 、 OK を クリック し ます 。",
     "「ファイル」を開きます。次に、OK をクリックします。"),
    ("ja", "ページ 数 ： 10 … 以上 ！", "ページ数：10…以上！"),
    ("en", "Choose Tools - Options , then click \" OK \" .",
     "Choose Tools - Options, then click \"OK\"."),
])
def test_detokenized_as_written(language, tokenized, expected):
    assert detokenize_line(tokenized, language) == expected
    assert detokenize([tokenized], language) == [expected]


# raw target lines of software strings, as the language writes its quotes and marks
WRITTEN = [
    ("ru", "Файл «%s» не найден."),
    ("ru", "Нажмите «OK»."),
    ("ru", "Стиль «Обычный» (по умолчанию) — «%1», «%2» и «%3»?"),
    ("ru", "Введите „%s“ и нажмите «Сохранить»: № 5."),
    ("ru", "«Документ «%s» не сохранён»"),
    ("uk", "Файл «%s» не знайдено."),
    ("be", "Націсніце «Захаваць»."),
    ("es", "Pulse «Aceptar»."),
    ("de", "Klicken Sie auf »OK«, dann auf „Speichern“."),
    ("de-CH", "Klicken Sie auf «OK»."),
    ("fr", "Cliquez sur « OK » : le fichier « %s » est introuvable !"),
]


@pytest.mark.parametrize("language, written", WRITTEN,
                         ids=[f"{language}-{k}" for k, (language, _) in enumerate(WRITTEN)])
def test_a_tokenized_target_comes_back_as_written(language, written):
    """xlpe-tokenize then the detokenizer: the line as the language writes it; Moses alone
    left a space inside guillemets (``Файл « %s » не найден.``)."""
    tokenized = tokenize_line(written, language)
    assert detokenize_line(tokenized, language) == written, tokenized


@pytest.mark.parametrize("language, tokenized, expected", [
    ("ru", "Файл %s » не найден", "Файл %s » не найден"),
    ("de", "Datei « %s » fehlt", "Datei « %s » fehlt"),
    ("sv", "Klicka på » OK » .", "Klicka på » OK »."),
])
def test_guillemets_without_their_partner_keep_their_spaces(language, tokenized, expected):
    """A mark without its partner (a truncated hypothesis, Swiss quotes under plain de) or of
    a language writing one mark at both ends is left as Moses writes it, not joined to a
    neighbour it does not quote."""
    assert detokenize_line(tokenized, language) == expected


def test_round_tripped_references_score_100_against_themselves_under_13a():
    """13a splits ASCII punctuation only: a guillemet left apart by the detokenizer made the
    reference's ``«%s»`` a word no hypothesis had, so a perfect translation scored below 100
    (34.57 on ``Файл «%s» не найден.`` alone)."""
    references = [written for language, written in WRITTEN if language == "ru"]
    hypotheses = detokenize([tokenize_line(line, "ru") for line in references], "ru")
    assert bleu.score(hypotheses, references, "13a")["bleu"] == 100, hypotheses


def test_every_command_detokenizes_with_the_same_function():
    assert bleu.detokenize is detokenize
    assert translate.detokenize_line is detokenize_line


def test_fairseq_tokenizer_of_the_plugin_segments_and_joins_by_language():
    from fairseq.data import encoders

    import xlpe_fairseq.tokenizer  # noqa: F401  (registers --tokenizer xlpe)

    tokenizer = encoders.build_tokenizer(Namespace(tokenizer="xlpe", source_lang="en",
                                                   target_lang="zh", lowercase_source=True))
    assert tokenizer.encode("Open the file, then close it.") == \
        "open the file , then close it ."
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
                                                   target_lang="ja", lowercase_source=False))
    assert tokenizer.encode("Error: %s not found") == "Error : %s not found"
    assert tokenizer.decode("エラー : %s が 見つかり ませ ん") == "エラー: %s が見つかりません"

"""sacreBLEU's tokenizer follows the target language everywhere BLEU is computed."""
import json

import pytest
import sacrebleu

from xlpe_fairseq.evaluation import bleu, compare
from xlpe_fairseq.io import InputError


@pytest.mark.parametrize("language, tokenizer", [
    ("zh", "zh"), ("ja", "ja-mecab"), ("ko", "ko-mecab"), ("en", "13a"), ("de", "13a"),
    ("ZH", "zh"), ("zh-cn", "zh"), ("ja_JP", "ja-mecab"), ("tr", "13a"),
])
def test_tokenizer_by_target_language(language, tokenizer):
    assert bleu.bleu_tokenizer(language) == tokenizer


def test_an_explicit_tokenizer_wins():
    assert bleu.bleu_tokenizer("ja", "char") == "char"
    assert bleu.bleu_tokenizer("en", "intl") == "intl"


def test_a_missing_extra_is_named(monkeypatch):
    def unavailable(tokenize):
        raise RuntimeError("Please install MeCab")

    monkeypatch.setattr(sacrebleu.metrics, "BLEU", unavailable)
    with pytest.raises(InputError, match=r"pip install 'xlpe-fairseq\[ja\]'"):
        bleu.bleu_tokenizer("ja")


def test_japanese_is_scored_by_words_not_by_sentences():
    """13a sees an unspaced Japanese sentence as one token: one word wrong scores 0."""
    hypothesis, reference = ["私は本を読みます。"], ["私は本を読んだ。"]
    assert bleu.score(hypothesis, reference)["bleu"] == 0
    japanese = bleu.score(hypothesis, reference, bleu.bleu_tokenizer("ja"))
    assert japanese["bleu"] > 0
    assert "tok:ja-mecab" in japanese["bleu_signature"]


def test_detokenize_joins_chinese_and_japanese_words():
    assert bleu.detokenize(["今天 天气 很 好 。"]) == ["今天天气很好。"]
    assert bleu.detokenize(["私 は 本 を 読む 。"]) == ["私は本を読む。"]
    assert bleu.detokenize(["오늘은 날씨가 좋습니다 \uffed."]) == ["오늘은 날씨가 좋습니다."]


def generate_output(path, hypotheses):
    path.write_text("".join(f"H-{i}\t-0.1\t{h}\n" for i, h in enumerate(hypotheses)),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("options, tok", [([], "ja-mecab"), (["--tokenize", "char"], "char")])
def test_xlpe_bleu_prints_the_signature_of_the_chosen_tokenizer(tmp_path, capsys, options, tok):
    hypotheses = generate_output(tmp_path / "gen.out", ["私 は 本 を 読む 。"])
    reference = tmp_path / "ref.ja"
    reference.write_text("私は本を読む。\n", encoding="utf-8")
    bleu.main(["--generate-output", str(hypotheses), "--reference", str(reference),
               "--target-lang", "ja", "--json", str(tmp_path / "bleu.json"), *options])
    assert f"tok:{tok}" in capsys.readouterr().out
    result = json.loads((tmp_path / "bleu.json").read_text())
    assert result["bleu"] == 100 and f"tok:{tok}" in result["bleu_signature"]


def test_xlpe_compare_scores_chinese_with_the_zh_tokenizer(tmp_path, capsys):
    reference = tmp_path / "ref.zh"
    reference.write_text("今天天气很好。\n我们读书。\n", encoding="utf-8")
    system = generate_output(tmp_path / "a.out", ["今天 天气 很 好 。", "我们 读 书 。"])
    compare.main(["--generated", f"a={system}", "--reference", str(reference),
                  "--target-lang", "zh", "--bootstrap-samples", "10"])
    table = capsys.readouterr().out
    assert "tok:zh" in table and "| a (baseline) | 100.00 |" in table

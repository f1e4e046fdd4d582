"""The reference checked against the generate output's T- lines: another test set's reference
is refused, the right one passes however the pipeline tokenized, segmented, lowercased, split
into BPE or left words unknown."""
import pytest

from xlpe_fairseq.evaluation.reference_check import check_reference, matches
from xlpe_fairseq.io import InputError
from xlpe_fairseq.text.tokenization import tokenize_line

RAW = {
    "en": "Don't stop... the \"quick\" (brown) fox's 5,300 cats!\x07 e-mail: a@b.com %s {0}",
    "de": "„Öffnen“ Sie die Datei… z.B. Nr. 5",
    "fr": "l'homme « bonjour » aujourd'hui",
    "tr": "İstanbul'da IŞIK",
    "zh": "在「打开」对话框中，选择 PDF 文件。",
    "ja": "ファイル(&F)を開きます。 %s が見つかりません",
}


@pytest.mark.parametrize("lang", sorted(RAW))
@pytest.mark.parametrize("lowercase", [False, True])
def test_the_tokenized_text_of_a_raw_line_matches_it(lang, lowercase):
    if lang in ("zh", "ja"):
        pytest.importorskip({"zh": "jieba", "ja": "fugashi"}[lang])
    tokenized = tokenize_line(RAW[lang], lang, lowercase=lowercase)
    assert matches(tokenized, RAW[lang]), f"{tokenized!r} refused against {RAW[lang]!r}"


def test_bpe_marks_and_unknown_words_match_what_they_stand_for():
    assert matches("the qu@@ ick fox", "the quick fox")
    assert matches("the <<unk>> fox <<unk>>", "the quick fox jumps")
    assert matches("<<unk>> <<unk>>", "Ελληνικά")
    assert matches("<<unk>>", "")


def test_xml_escapes_of_the_perl_tokenizer_match_the_raw_text_and_kept_ones_still_do():
    assert matches("it &apos;s &quot; A &amp; B &quot; &#124; x", "it's \"A & B\" | x")
    assert matches("save &amp; close", "save &amp; close"), "an escape the raw text had"
    assert not matches("it &apos;s", "it was")


@pytest.mark.parametrize("target, reference", [
    ("the quick fox", "the quick dog"),
    ("the quick fox", "the quick fox ."),
    ("the <<unk>> fox", "a quick fox"),
    ("the <<unk>> fox", "the fox dog"),
    ("<<unk>> fox <<unk>> cat", "a cat and a fox"),
])
def test_other_text_does_not_match(target, reference):
    assert not matches(target, reference)


def test_the_first_line_that_differs_is_named_with_both_texts():
    targets = [(2, "the cat"), (8, "a dog <<unk>>"), (14, "a bird")]
    with pytest.raises(InputError) as error:
        check_reference(["The cat", "A dog barked", "a bard"], targets, "ref.en", "gen.out")
    message = str(error.value)
    assert message.startswith("ref.en line 3: 'a bard' is not the target gen.out translated "
                              "('a bird', its T- line 14;"), message
    assert "\n" not in message


def test_an_output_without_targets_checks_nothing():
    check_reference(["anything"], None, "ref.en", "gen.out")
    check_reference(["anything", "else"], [None, (3, "else")], "ref.en", "gen.out")

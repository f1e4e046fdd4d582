"""Bible corpus parsing on a tiny fake wheel with the real file layout."""
import json
import zipfile

import pytest

from xlpe_fairseq.io import InputError
from xlpe_fairseq.preprocessing import bible_corpus

SOURCE_TSV = (
    "id\taltId\ttext\tstrongs\tgloss\tgloss2\tpos\tmorph\n"
    "o010010010011\tx\tבְּ\t\t\t\t\t\n"
    "o010010010012\tx\tרֵאשִׁית\t\t\t\t\t\n"
    "o010010010021\tx\tבָּרָא\t\t\t\t\t\n"
    "o010010020011\tx\tוְ\t\t\t\t\t\n"
    "o010010030011\tx\tאוֹר\t\t\t\t\t\n"
)
TARGET_HEADER = "id\tsource_verse\ttext\tskip_space_after\texclude\tid_range_end\tsource_verse_range_end\n"
OT_TSV = TARGET_HEADER + (
    "01001001001\t01001001\tIn\t\t\t\t\n"
    "01001001002\t01001001\tthe\t\t\t\t\n"
    "01001001003\t01001001\tbeginning\t\t\t\t\n"
    "01001001004\t01001001\tcreated\ty\t\t\t\n"
    "01001001005\t01001001\t.\t\ty\t\t\n"
    # an English verse whose tokens translate the Hebrew verse 01001003
    "01001002001\t01001003\tlight\t\t\t\t\n"
)
NT_TSV = TARGET_HEADER + "40001001001\t40001001\tThe\t\t\t\t\n"
RECORDS = [
    {"source": ["o010010010011", "o010010010012"], "target": ["010010010011", "010010010031"]},
    {"source": ["o010010010021"], "target": ["010010010041", "010010010991"]},  # 99: unknown
    {"source": ["o010010030011"], "target": ["010010020011"]},
    {"source": ["o010010030011"], "target": ["010010010021"]},  # across verses
]


def fake_wheel(path):
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(bible_corpus.SOURCE_MEMBER, SOURCE_TSV)
        wheel.writestr("data/eng/targets/BSB/ot_BSB.tsv", OT_TSV)
        wheel.writestr("data/eng/targets/BSB/nt_BSB.tsv", NT_TSV)
        wheel.writestr(bible_corpus.ALIGNMENT_MEMBER, json.dumps({"records": [
            dict(record, meta={"id": "x", "process": "manual"}) for record in RECORDS]}))
    return str(path)


def test_verses_follow_source_versification_and_links_index_tokens(tmp_path):
    verses, stats = bible_corpus.read_corpus(fake_wheel(tmp_path / "fake.whl"))
    by_id = {v.verse_id: v for v in verses}
    assert sorted(by_id) == ["01001001", "01001003"], "verse 01001002 has no English: dropped"
    first = by_id["01001001"]
    assert first.source == ["בְּ", "רֵאשִׁית", "בָּרָא"]
    assert first.target == ["In", "the", "beginning", "created", "."]
    assert first.links == {(0, 0), (0, 2), (1, 0), (1, 2), (2, 3)}
    assert by_id["01001003"].target == ["light"] and by_id["01001003"].links == {(0, 0)}
    assert (stats.dropped_empty, stats.links_to_unknown_token, stats.links_across_verses) == \
        (1, 1, 1), stats


def test_split_is_deterministic_and_disjoint(tmp_path, monkeypatch):
    monkeypatch.setattr(bible_corpus, "HELD_OUT", (("test", 1), ("valid", 0)))
    verses, _ = bible_corpus.read_corpus(fake_wheel(tmp_path / "fake.whl"))
    first = bible_corpus.split_verses(verses)
    again = bible_corpus.split_verses(list(reversed(verses)))
    assert {k: sorted(v.verse_id for v in vs) for k, vs in first.items()} == \
        {k: sorted(v.verse_id for v in vs) for k, vs in again.items()}
    assert (len(first["train"]), len(first["valid"]), len(first["test"])) == (1, 0, 1)


def test_main_writes_text_ids_and_gold_alignments(tmp_path, monkeypatch):
    monkeypatch.setattr(bible_corpus, "HELD_OUT", (("test", 1), ("valid", 1)))
    out = tmp_path / "corpus"
    bible_corpus.main(["--out", str(out), "--wheel", fake_wheel(tmp_path / "fake.whl")])
    assert (out / "train.he").read_text() == ""
    for split in ("valid", "test"):
        he = (out / f"{split}.he").read_text(encoding="utf-8").splitlines()
        en = (out / f"{split}.en").read_text(encoding="utf-8").splitlines()
        gold = (out / f"{split}.gold.align").read_text().splitlines()
        assert len(he) == len(en) == len(gold) == 1
        for link in gold[0].split():
            i, j = map(int, link.split("-"))
            assert i < len(he[0].split()) and j < len(en[0].split()), f"{split}: {link}"
    assert not (out / "train.gold.align").exists()


def test_wheel_without_the_data_is_rejected(tmp_path):
    path = tmp_path / "empty.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("README", "")
    with pytest.raises(InputError, match=r"no data/sources/WLCM.tsv inside"):
        bible_corpus.read_corpus(str(path))

"""The study's Markdown report: its header, its portable paths, one row and seed, variants."""
import re
from pathlib import Path

from xlpe_fairseq.evaluation.study.report import markdown_report
from xlpe_fairseq.evaluation.study.statistics import across_seeds


REPO = Path(__file__).resolve().parents[3]


ABSOLUTE_PATH = re.compile(r"(^|[\s`'=])/\w", re.MULTILINE)


def test_report_header_counts_models_and_shows_no_absolute_paths(tmp_path):
    work, data = tmp_path / "study", tmp_path / "lo-en-de" / "data-bin"
    plugin = REPO / "xlpe_fairseq"
    scores = {"per_seed": [1.0, 2.0], "mean": 1.5, "sd": 0.7}
    versus = {**scores, "vs_baseline": {"delta": 0.1, "low": -0.1, "high": 0.3, "p": 0.5}}
    summary = {
        "baseline": "transformer", "bootstrap_samples": 10, "bootstrap_seed": 1,
        "bleu_signature": "BLEU", "chrf_signature": "chrF",
        "settings": {"profile": "cpu-demo", "updates": 6, "data_bin": str(data),
                     "source_lang": "en", "target_lang": "de", "checkpoint": "last",
                     "generate_args": "--beam 5", "positions": {"oracle": str(data) + "-oracle"}},
        "models": [{"model": "transformer", "baseline": True, "seeds": [1, 2], "bleu": scores,
                    "chrf": scores},
                   {"model": "xlpe-inxl", "baseline": False, "seeds": [1, 2], "bleu": versus,
                    "chrf": versus},
                   {"model": "xlpe-inxl [test: oracle]", "baseline": False, "seeds": [1, 2],
                    "bleu": versus, "chrf": versus}],
    }
    command = (f"/opt/venv/bin/python3 -m fairseq_cli.train {data} --user-dir {plugin} "
               f"--save-dir {work}/runs/dpe/seed1")
    markdown = markdown_report(summary, [command], work)
    assert markdown.startswith("# Study: 3 rows (2 models) × 2 seeds\n"), markdown.splitlines()[0]
    assert not ABSOLUTE_PATH.search(markdown), "absolute path in the report:\n" + markdown
    assert "data `../lo-en-de/data-bin`" in markdown and "`oracle` = `../lo-en-de/data-bin-oracle`" \
        in markdown, markdown
    assert ("    python -m fairseq_cli.train ../lo-en-de/data-bin --user-dir $(xlpe-user-dir) "
            "--save-dir runs/dpe/seed1") in markdown, markdown


def test_report_of_one_row_and_seed_counts_in_the_singular_and_gives_no_verdicts(tmp_path):
    """A row trained alone, to be compared with published rows later (scripts/compare_rows.py)."""
    scores = across_seeds([10.99])
    summary = {
        "baseline": "transformer-deep", "bootstrap_samples": 10, "bootstrap_seed": 1,
        "bleu_signature": "BLEU", "chrf_signature": "chrF",
        "settings": {"profile": "cpu-demo", "updates": 6, "data_bin": str(tmp_path / "bin"),
                     "source_lang": "en", "target_lang": "tr", "checkpoint": "last",
                     "generate_args": "--beam 5", "positions": None},
        "models": [{"model": "transformer-deep", "baseline": True, "seeds": [1],
                    "bleu": scores, "chrf": scores}],
    }
    markdown = markdown_report(summary, [], tmp_path / "study")
    assert markdown.startswith("# Study: 1 row (1 model) × 1 seed\n"), markdown.splitlines()[0]
    assert "Verdicts" not in markdown, "a verdict line without a compared row:\n" + markdown
    assert scores["sd"] is None and "| 10.99 | 10.99 |" in markdown and "±" not in \
        markdown.split("|---")[1], "one seed has no spread to report:\n" + markdown


def test_report_defines_only_the_variants_it_shows(tmp_path):
    """A work folder keeps every --variant it was given; its report names those of its rows."""
    scores = {"per_seed": [1.0, 2.0], "mean": 1.5, "sd": 0.7}
    summary = {
        "baseline": "transformer", "bootstrap_samples": 10, "bootstrap_seed": 1,
        "bleu_signature": "BLEU", "chrf_signature": "chrF",
        "settings": {"profile": "cpu-demo", "updates": 6, "data_bin": str(tmp_path / "bin"),
                     "source_lang": "en", "target_lang": "de", "checkpoint": "last",
                     "generate_args": "--beam 5", "positions": None,
                     "variants": {"dpe-lambda0": "dpe --order-loss-weight 0",
                                  "dpe-small": "dpe --dpe-layers 1"}},
        "models": [{"model": name, "baseline": name == "transformer", "seeds": [1, 2],
                    "bleu": scores, "chrf": scores} for name in ("transformer", "dpe-small")],
    }
    markdown = markdown_report(summary, [], tmp_path / "study")
    assert "`dpe-small` = `dpe --dpe-layers 1`" in markdown, markdown
    assert "dpe-lambda0" not in markdown, "a variant without a row is named:\n" + markdown


def test_the_report_gives_the_recipe_advice_for_xl_pe_rows(tmp_path):
    """The study finds the recipe's score file beside OUT/data-bin/xlpe and repeats its advice
    line, for studies with XL PE rows only."""
    from types import SimpleNamespace

    from xlpe_fairseq.evaluation.study.report import xlpe_advice

    xlpe_bin = tmp_path / "data-bin" / "xlpe"
    xlpe_bin.mkdir(parents=True)
    (tmp_path / "preorderer.test.score").write_text(
        "sentences scored (>= 2 tokens): 981\n             Kendall tau     FRS   exact\n"
        "hypothesis        0.7375  0.6000  0.2000\nmonotone          0.7319  0.6100  0.2100\n")
    study = SimpleNamespace(args=SimpleNamespace(preorderer_score=None,
                                                 xlpe_data_bin=str(xlpe_bin)),
                            reads_positions=lambda model: model.startswith("xlpe"))
    line = xlpe_advice(study, ["transformer", "xlpe-inxl"])
    assert line.startswith("advice: train re-both: xlpe-train re-both OUT/data-bin "
                           "CHECKPOINT_DIR; XL PE is unlikely to help on this pair"), line
    assert xlpe_advice(study, ["transformer", "dpe"]) is None, "no XL PE row, no advice"
    study.args.xlpe_data_bin = str(tmp_path / "other" / "data-bin" / "xlpe")
    assert xlpe_advice(study, ["xlpe-inxl"]) is None, "no score file found, no advice"


def test_the_report_says_where_each_models_validation_bottomed_out(tmp_path):
    """The budget is chosen by the valid curve: per model, the lowest validation NLL with the
    update of each seed (the earliest of ties), the last one, and how far the last lies above."""
    from xlpe_fairseq.evaluation.study.report import validation_by_model

    results = {("transformer", 1): {"curve": {"250": 6.0, "500": 5.0, "750": 5.5}},
               ("transformer", 2): {"curve": {"250": 6.0, "500": 4.0, "750": 4.0}},
               ("dpe", 1): {"curve": {}}, ("dpe", 2): {"curve": {"250": 7.0}}}
    validation = validation_by_model(results, ["transformer", "dpe"], [1, 2])
    assert validation == {"transformer": {"lowest": 4.5, "lowest_updates": [500, 500],
                                          "last": 4.75, "last_updates": [750, 750]}}, \
        "a model with a seed that never validated has no row"
    scores = across_seeds([10.0])
    summary = {
        "baseline": "transformer", "bootstrap_samples": 10, "bootstrap_seed": 1,
        "bleu_signature": "BLEU", "chrf_signature": "chrF", "validation": validation,
        "settings": {"profile": "cpu-demo", "updates": 750, "data_bin": str(tmp_path / "bin"),
                     "source_lang": "en", "target_lang": "tr", "checkpoint": "best",
                     "generate_args": "--beam 5", "positions": None},
        "models": [{"model": "transformer", "baseline": True, "seeds": [1],
                    "bleu": scores, "chrf": scores}],
    }
    markdown = markdown_report(summary, [], tmp_path / "study")
    assert "| transformer | 4.500 | 500 / 500 | 4.750 | 750 / 750 | +0.250 |" in markdown, markdown

"""xlpe-fairseq: cross-lingual word order for Transformer NMT, as a fairseq plugin."""
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent


CONSOLE_SCRIPTS = [
    "xlpe-bible-corpus = xlpe_fairseq_cli.commands:bible_corpus",
    "xlpe-tokenize = xlpe_fairseq_cli.commands:tokenize",
    "xlpe-bpe = xlpe_fairseq_cli.commands:bpe",
    "xlpe-align = xlpe_fairseq_cli.commands:align",
    "xlpe-reorder = xlpe_fairseq_cli.commands:reorder",
    "xlpe-binarize = xlpe_fairseq_cli.commands:binarize",
    "xlpe-preorder-train = xlpe_fairseq_cli.commands:preorder_train",
    "xlpe-preorder = xlpe_fairseq_cli.commands:preorder",
    "xlpe-preorder-crossfit = xlpe_fairseq_cli.commands:preorder_crossfit",
    "xlpe-preorder-ensemble = xlpe_fairseq_cli.commands:preorder_ensemble",
    "xlpe-reorder-score = xlpe_fairseq_cli.commands:reorder_score",
    "xlpe-reorder-ceiling = xlpe_fairseq_cli.commands:reorder_ceiling",
    "xlpe-reorder-text = xlpe_fairseq_cli.commands:reorder_text",
    "xlpe-bleu = xlpe_fairseq_cli.commands:bleu",
    "xlpe-libreoffice-corpus = xlpe_fairseq_cli.commands:libreoffice_corpus",
    "xlpe-catalog-corpus = xlpe_fairseq_cli.commands:catalog_corpus",
    "xlpe-average-checkpoints = xlpe_fairseq_cli.commands:average_checkpoints",
    "xlpe-aer = xlpe_fairseq_cli.commands:aer",
    "xlpe-compare = xlpe_fairseq_cli.commands:compare",
    "xlpe-swap-robustness = xlpe_fairseq_cli.commands:swap_robustness",
    "xlpe-noise-curve = xlpe_fairseq_cli.commands:noise_curve",
    "xlpe-dpe-order = xlpe_fairseq_cli.commands:dpe_order",
    "xlpe-inxl-diagnostics = xlpe_fairseq_cli.commands:inxl_diagnostics",
    "xlpe-attention-heatmap = xlpe_fairseq_cli.commands:attention_heatmap",
    "xlpe-study = xlpe_fairseq_cli.commands:study",
    "xlpe-user-dir = xlpe_fairseq_cli.user_dir:main",
    "xlpe-install-eflomal = xlpe_fairseq_cli.install_eflomal:main",
    "xlpe-translate = xlpe_fairseq_cli.commands:translate",
    "xlpe-provenance = xlpe_fairseq_cli.commands:provenance",
    "xlpe-evaluate = xlpe_fairseq_cli.commands:evaluate",
    "xlpe-train = xlpe_fairseq_cli.commands:train",
    "xlpe-prepare = xlpe_fairseq_cli.commands:prepare",
]


setup(
    name="xlpe-fairseq",
    version="0.1.0",
    description="Cross-lingual position encoding, dynamic position encoding and "
    "reordering embeddings for fairseq Transformer NMT",
    long_description=(HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["xlpe_fairseq", "xlpe_fairseq.*", "xlpe_fairseq_cli"]),
    # No fairseq here: a plugin installs into the user's fairseq environment, and a second
    # fairseq distribution would overwrite its `fairseq/` folder and move its pins (importing
    # the plugin checks for a fairseq it supports: fairseq_support.py). The extra `fairseq`
    # brings the tested one into a fresh environment.
    install_requires=[
        # a range, not a pin: GPU clusters bring their own CUDA build; the
        # Makefile pins the CPU build for development machines.
        "torch>=2.1",
        "numpy",
        "sacrebleu>=2.0",
        "sacremoses",
        "fastBPE",
        "eflomal>=2.0",
        "matplotlib",
        # fairseq logs "Please install tensorboardX" at import, in every command, without it
        # (and uses it for --tensorboard-logdir)
        "tensorboardX",
        # xlpe-study --launcher slurm submits its runs as SLURM jobs through it
        "submitit",
    ],
    extras_require={
        # PyPI's `fairseq` 0.12.2 does not import on Python >= 3.11 and its generate fails with
        # torch >= 1.13; these are snapshots of fairseq main that work (ve-fairseq has wheels
        # for 3.11 and 3.12 only; fairseq-fixed for 3.12, and an sdist). Never depend on `fairseq`.
        "fairseq": [
            've-fairseq==0.12.3; python_version == "3.11"',
            'fairseq-fixed==0.12.3.1; python_version != "3.11"',
        ],
        # word segmenters of the pipeline (Chinese, Japanese) and the MeCab of sacreBLEU's
        # ja-mecab and ko-mecab BLEU tokenizers, which BLEU into Japanese and Korean uses
        "zh": ["jieba"],
        "ja": ["fugashi", "unidic-lite", "sacrebleu[ja]>=2.0"],
        "ko": ["sacrebleu[ko]>=2.0"],
        "test": ["pytest", "pytest-xdist", "hypothesis", "jieba", "fugashi", "unidic-lite", "sacrebleu[ja,ko]>=2.0"],
    },
    entry_points={"console_scripts": CONSOLE_SCRIPTS},
)

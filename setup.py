"""xlpe-fairseq: cross-lingual word order for Transformer NMT, as a fairseq plugin."""
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent


CONSOLE_SCRIPTS = [
    "xlpe-bible-corpus = xlpe_fairseq.preprocessing.bible_corpus:main",
    "xlpe-tokenize = xlpe_fairseq.preprocessing.tokenize:main",
    "xlpe-bpe = xlpe_fairseq.preprocessing.bpe:main",
    "xlpe-align = xlpe_fairseq.preprocessing.word_alignment:main",
    "xlpe-reorder = xlpe_fairseq.reordering.extract:main",
    "xlpe-binarize = xlpe_fairseq.preprocessing.binarize:main",
    "xlpe-preorder-train = xlpe_fairseq.preordering.train:main",
    "xlpe-preorder = xlpe_fairseq.preordering.predict:main",
    "xlpe-preorder-crossfit = xlpe_fairseq.preordering.cross_fit:main",
    "xlpe-preorder-ensemble = xlpe_fairseq.preordering.ensemble:main",
    "xlpe-reorder-score = xlpe_fairseq.preordering.metrics:main",
    "xlpe-reorder-ceiling = xlpe_fairseq.preordering.ceiling:main",
    "xlpe-reorder-text = xlpe_fairseq.reordering.reorder_text:main",
    "xlpe-bleu = xlpe_fairseq.evaluation.bleu:main",
    "xlpe-libreoffice-corpus = xlpe_fairseq.preprocessing.libreoffice_corpus:main",
    "xlpe-average-checkpoints = xlpe_fairseq.evaluation.average_checkpoints:main",
    "xlpe-aer = xlpe_fairseq.evaluation.attention_alignment:main",
    "xlpe-compare = xlpe_fairseq.evaluation.compare:main",
    "xlpe-swap-robustness = xlpe_fairseq.evaluation.swap_robustness:main",
    "xlpe-noise-curve = xlpe_fairseq.evaluation.noise_attack:main",
    "xlpe-dpe-order = xlpe_fairseq.evaluation.dpe_order:main",
    "xlpe-inxl-diagnostics = xlpe_fairseq.evaluation.inxl_diagnostics:main",
    "xlpe-attention-heatmap = xlpe_fairseq.evaluation.attention_heatmap:main",
    "xlpe-study = xlpe_fairseq.evaluation.study:main",
    "xlpe-user-dir = xlpe_fairseq.user_dir:main",
    "xlpe-translate = xlpe_fairseq.evaluation.translate:main",
    "xlpe-provenance = xlpe_fairseq.io.provenance:main",
    "xlpe-evaluate = xlpe_fairseq.workflow.evaluate:main",
    "xlpe-train = xlpe_fairseq.workflow.train:main",
    "xlpe-prepare = xlpe_fairseq.workflow.prepare:main",
]


setup(
    name="xlpe-fairseq",
    version="0.1.0",
    description="Cross-lingual position encoding, dynamic position encoding and "
    "reordering embeddings for fairseq Transformer NMT",
    long_description=(HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["xlpe_fairseq", "xlpe_fairseq.*"]),
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

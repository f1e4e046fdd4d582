"""One function per xlpe-* console command (setup.py's CONSOLE_SCRIPTS): the module whose
``main`` it runs, in a process set up for it (``launch.run``)."""
from .launch import run


def bible_corpus(argv=None):
    return run("xlpe_fairseq.preprocessing.bible_corpus", argv)


def tokenize(argv=None):
    return run("xlpe_fairseq.preprocessing.tokenize", argv)


def bpe(argv=None):
    return run("xlpe_fairseq.preprocessing.bpe", argv)


def align(argv=None):
    return run("xlpe_fairseq.preprocessing.word_alignment", argv)


def reorder(argv=None):
    return run("xlpe_fairseq.reordering.extract", argv)


def binarize(argv=None):
    return run("xlpe_fairseq.preprocessing.binarize", argv)


def preorder_train(argv=None):
    return run("xlpe_fairseq.preordering.train", argv)


def preorder(argv=None):
    return run("xlpe_fairseq.preordering.predict", argv)


def preorder_crossfit(argv=None):
    return run("xlpe_fairseq.preordering.cross_fit", argv)


def preorder_ensemble(argv=None):
    return run("xlpe_fairseq.preordering.ensemble", argv)


def reorder_score(argv=None):
    return run("xlpe_fairseq.preordering.metrics", argv)


def reorder_ceiling(argv=None):
    return run("xlpe_fairseq.preordering.ceiling", argv)


def reorder_text(argv=None):
    return run("xlpe_fairseq.reordering.reorder_text", argv)


def bleu(argv=None):
    return run("xlpe_fairseq.evaluation.bleu", argv)


def libreoffice_corpus(argv=None):
    return run("xlpe_fairseq.preprocessing.libreoffice_corpus", argv)


def catalog_corpus(argv=None):
    return run("xlpe_fairseq.preprocessing.message_catalogs", argv)


def average_checkpoints(argv=None):
    return run("xlpe_fairseq.evaluation.average_checkpoints", argv)


def aer(argv=None):
    return run("xlpe_fairseq.evaluation.attention_alignment", argv)


def compare(argv=None):
    return run("xlpe_fairseq.evaluation.compare", argv)


def swap_robustness(argv=None):
    return run("xlpe_fairseq.evaluation.swap_robustness", argv)


def noise_curve(argv=None):
    return run("xlpe_fairseq.evaluation.noise_attack", argv)


def dpe_order(argv=None):
    return run("xlpe_fairseq.evaluation.dpe_order", argv)


def inxl_diagnostics(argv=None):
    return run("xlpe_fairseq.evaluation.inxl_diagnostics", argv)


def attention_heatmap(argv=None):
    return run("xlpe_fairseq.evaluation.attention_heatmap", argv)


def study(argv=None):
    return run("xlpe_fairseq.evaluation.study", argv)


def translate(argv=None):
    return run("xlpe_fairseq.evaluation.translate", argv)


def provenance(argv=None):
    return run("xlpe_fairseq.io.provenance", argv)


def evaluate(argv=None):
    return run("xlpe_fairseq.workflow.evaluate", argv)


def train(argv=None):
    return run("xlpe_fairseq.workflow.train", argv)


def prepare(argv=None):
    return run("xlpe_fairseq.workflow.prepare", argv)

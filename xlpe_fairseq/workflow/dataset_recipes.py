"""The dataset scripts, examples/train-NAME.sh: xlpe-train under the script's name with its
dataset's presets (``--recipe NAME``), and the corpus their operands name.

Each recipe gives the dataset's name in the checkpoint folder, its operands (PAIR: SRC-TGT,
codes such as zh-CN-en too: workflow/language_pairs.py; else the pair is the recipe's), the sizes it offers (first the default) and the embeddings it
shares (all with the recipe's joined dictionary, else the decoder's input and output).
"""
import os
from types import SimpleNamespace

from .language_pairs import data_bin_pair, split_pair
from .script_options import Refused

RECIPES = {
    "iwslt14": SimpleNamespace(
        dataset="iwslt14-{pair}", operands="PAIR DATA", pair=None,
        sizes=("small",), share="decoder",
        usage="PAIR DATA --model M [options]",
        description="Train on IWSLT'14 prepared by data_prep/prepare-iwslt14.sh, with the DPE "
        "paper's IWSLT setup for every model (size small, schedule dpe-iwslt: 15k updates, the "
        "last 5 checkpoints averaged; DPE's order-loss weight lambda 0.3); fairseq's IWSLT'14 "
        "setup: separate dictionaries, tied decoder input/output embeddings.\n\n"
        "e.g. examples/train-iwslt14.sh en-de data/iwslt14-en-de --model dpe\n"
        "then xlpe-evaluate data/iwslt14-en-de checkpoints/iwslt14-en-de/dpe-small"),
    "wmt14-en-de": SimpleNamespace(
        dataset="wmt14-en-de", operands="DATA", pair="en-de",
        sizes=("base", "big"), share="all",
        usage="DATA --model M [--size base|big] [options]",
        description="Train on WMT'14 En-De prepared by data_prep/prepare-wmt14-en-de.sh: "
        "Transformer base (DPE, Reordering Embeddings) or big (XL PE, Reordering Embeddings) "
        "on the same data-bin (one joined dictionary), each model on its paper's schedule "
        "(--schedule).\n\n"
        "e.g. examples/train-wmt14-en-de.sh data/wmt14-en-de --model xlpe --size big --gpus 8 "
        "--fp16"),
    "wmt17-zh-en": SimpleNamespace(
        dataset="wmt17-{pair}", operands="PAIR DATA", pair=None,
        sizes=("big", "base"), share="decoder",
        usage="{zh-en|en-zh} DATA --model M [options]",
        description="Train on WMT'17 Zh-En or En-Zh prepared by data_prep/prepare-wmt17-zh-en.sh "
        "(XL PE's Transformer big by default; base also offered; separate Chinese and English "
        "dictionaries)."),
    "aspec-ja-en": SimpleNamespace(
        dataset="aspec-ja-en", operands="DATA", pair="ja-en",
        sizes=("big", "base"), share="decoder",
        usage="DATA --model M [options]",
        description="Train on WAT'17 ASPEC Ja-En prepared by data_prep/prepare-aspec-ja-en.sh "
        "(XL PE: big; Reordering Embeddings: base and big, Table 3), each on its paper's "
        "schedule; separate Japanese and English dictionaries."),
    "libreoffice": SimpleNamespace(
        dataset="libreoffice-{pair}", operands="PAIR DATA", pair=None,
        sizes=("small",), share="all",
        usage="PAIR DATA --model M [options]",
        description="Train on a LibreOffice help corpus of data_prep/prepare-libreoffice.sh "
        "(~34k pairs for en-de, ~18k for en-tr; IWSLT-sized or smaller: the DPE paper's IWSLT "
        "setup, size small; the recipe builds one joined dictionary).\n\n"
        "e.g. examples/train-libreoffice.sh en-tr data/libreoffice-en-tr --model xlpe"),
}


def corpus_of_recipe(prog, recipe, argv):
    """examples/train-NAME.sh [PAIR] DATA: the corpus of a dataset script; returns (corpus,
    the options for ``train``)."""
    count = len(recipe.operands.split())
    if len(argv) < count:
        raise Refused(f"usage: {prog} {recipe.usage}", 2)
    if "" in argv[:count]:
        raise Refused("'' is not a "
                      f"{recipe.operands.split()[argv.index('')]}: an empty operand (an unset "
                      "variable?)", 2)
    pair, data = (recipe.pair, argv[0]) if count == 1 else argv[:2]
    # a pair such as zh-cn-en reads as the data-bin's languages where it has them
    text = os.path.join(data, "data-bin", "text")
    prepared = data_bin_pair(text) if os.path.isdir(text) else None
    src, tgt = (prepared if prepared and "-".join(prepared).lower() == pair.lower()
                else split_pair(pair))
    corpus = SimpleNamespace(data=data, data_bin=os.path.join(data, "data-bin"),
                             dataset=recipe.dataset.format(pair=pair), src=src, tgt=tgt,
                             sizes=recipe.sizes, share=recipe.share, pass_unknown=False)
    return corpus, argv[count:]

"""Source-only preordering: predict target-ordered source positions without the target.

At training time ``pos_XL`` (Ding et al. 2020) comes from BTG trees consistent with the word
alignment (``xlpe_fairseq.reordering.btg_rules``); at test time there is no alignment, so a
preorderer trained on those positions predicts them from the source alone, as the BTG parser
of Neubig et al. (2012) does in the paper. The model is in ``model``, the trained predictor
with its vocabulary in ``preorderer`` (``Preorderer.load(path).predict(token_lists)``).
"""

"""Text rules of the ground floor, shared by preparation, evaluation and the plugin's fairseq
tokenizer:

- ``tokenization``: one line tokenized by language (Moses rules, jieba, MeCab), its spacing
  recorded in the tokens;
- ``detokenization``: one tokenized line as it was written;
- ``spacing``: the raw line's spacing recorded in its tokens (joiners, whitespace tokens) and
  the line rebuilt from them;
- ``placeholders``: the spans tokenization keeps whole (``%s``, ``{0}``, URLs, paths, tags);
- ``word_segmentation``: the segmenters of languages written without spaces.
"""

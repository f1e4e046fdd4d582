"""Text rules of the ground floor, shared by preparation, evaluation and the plugin's fairseq
tokenizer:

- ``tokenization``: one line tokenized by language (Moses rules, jieba, MeCab);
- ``detokenization``: one tokenized line as its language is written;
- ``placeholders``: the spans tokenization keeps whole (``%s``, ``{0}``, URLs, paths);
- ``word_segmentation``: the segmenters of languages written without spaces.
"""

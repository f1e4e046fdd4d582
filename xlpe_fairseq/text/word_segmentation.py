"""Word segmentation for languages written without spaces (``tokenization``).

Chinese with jieba (as in most WMT'17 Zh-En systems), Japanese with MeCab through fugashi and
the UniDic-lite dictionary (the WAT ASPEC baselines segment with a MeCab-style morphological
analyser). Both are optional dependencies: ``pip install jieba`` / ``pip install fugashi
unidic-lite``; a missing one is reported with the command that installs it.
"""
import functools

from ..io import InputError

SEGMENTED_LANGUAGES = ("zh", "ja")
_INSTALL = {"zh": "pip install jieba", "ja": "pip install fugashi unidic-lite"}


@functools.cache
def _segmenter(lang):
    """The segmenting function for ``lang``, loaded once per worker process."""
    try:
        if lang == "zh":
            import jieba

            jieba.setLogLevel(60)  # jieba logs its dictionary loading at INFO to stderr
            return lambda line: jieba.lcut(line)
        import fugashi

        tagger = fugashi.Tagger()
        return lambda line: [word.surface for word in tagger(line)]
    except ImportError as err:
        raise InputError(f"segmenting '{lang}' needs {err.name}: {_INSTALL[lang]}") from err


def segment_words(line, lang):
    """The words of ``line``, whitespace left out; ``lang`` is one of SEGMENTED_LANGUAGES."""
    if lang not in SEGMENTED_LANGUAGES:
        raise ValueError(f"no word segmenter for '{lang}' (have {SEGMENTED_LANGUAGES})")
    return [word for word in _segmenter(lang)(line) if word and not word.isspace()]

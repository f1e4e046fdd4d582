"""Which fairseq the plugin runs on, checked without importing it.

The plugin brings no fairseq of its own (a second distribution would overwrite the user's
``fairseq/`` folder and its pinned dependencies), so importing it first looks for one it
supports: fairseq 0.12, as a checkout of fairseq main or the snapshots of main that import on
newer Pythons (``ve-fairseq`` 0.12.3, ``fairseq-fixed`` 0.12.3.1). PyPI's 0.12.2 release is
refused: it does not import on Python 3.11+, and its fairseq-generate fails with any torch the
plugin runs on; so is a checkout of main on Python 3.11+, where it does not import either
(docs/install.md). fairseq is only located here, not imported: the data-preparation
commands would otherwise pay its start-up of several seconds.
"""
import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path

SUPPORTED_SERIES = (0, 12)
INSTALL_HINT = ("pip install 'xlpe-fairseq[fairseq]' installs the tested one (ve-fairseq 0.12.3 "
                "on Python 3.11, fairseq-fixed 0.12.3.1 otherwise; on Python 3.10 a checkout "
                "of fairseq main works too)")


class UnsupportedFairseq(ImportError):
    """No fairseq the plugin supports in this Python; the message says what to install."""


def fairseq_version(package_dir):
    """The version a fairseq package folder declares: ``version.txt`` (0.12.2 and main) or
    ``version.py`` (the snapshots); None where it declares none."""
    text_file, module_file = package_dir / "version.txt", package_dir / "version.py"
    if text_file.is_file():
        return text_file.read_text().strip()
    if module_file.is_file():
        match = re.search(r"""__version__\s*=\s*["']([^"']+)["']""", module_file.read_text())
        return match.group(1) if match else None
    return None


def _is_pypi_release_of_fairseq(version):
    """Whether the folder came from an index's ``fairseq`` distribution at ``version``. A
    checkout of fairseq main reports the same version; pip records where it installed that
    from (a folder or a repository) in ``direct_url.json``, which it writes for no index."""
    try:
        distribution = importlib.metadata.distribution("fairseq")
    except importlib.metadata.PackageNotFoundError:
        return False
    return distribution.version == version and distribution.read_text("direct_url.json") is None


def _has_instance_defaults(package_dir):
    """Whether fairseq's top config declares ``common: CommonConfig = CommonConfig()``, as
    0.12.2 and main do: Python 3.11's dataclasses refuse such a default at import."""
    configs = package_dir / "dataclass" / "configs.py"
    return configs.is_file() and re.search(r"common:\s*CommonConfig\s*=\s*CommonConfig\(\)",
                                           configs.read_text()) is not None


def check_fairseq():
    """Raise UnsupportedFairseq, in one line, unless this Python can import a fairseq 0.12
    that the plugin supports."""
    spec = importlib.util.find_spec("fairseq")
    if spec is None or not spec.submodule_search_locations:
        raise UnsupportedFairseq(
            f"xlpe-fairseq is a fairseq plugin and this Python ({sys.executable}) has no "
            f"fairseq: {INSTALL_HINT}")
    package_dir = Path(list(spec.submodule_search_locations)[0])
    version = fairseq_version(package_dir)
    series = tuple(int(part) for part in re.findall(r"\d+", version or "")[:2])
    if series != SUPPORTED_SERIES:
        raise UnsupportedFairseq(
            f"xlpe-fairseq supports fairseq 0.12 and finds fairseq {version or '(no version)'} "
            f"in {package_dir}: {INSTALL_HINT}")
    if sys.version_info >= (3, 11) and _has_instance_defaults(package_dir):
        raise UnsupportedFairseq(
            f"the fairseq in {package_dir} (0.12.2 or a checkout of main) does not import on "
            f"Python {sys.version_info.major}.{sys.version_info.minor}: its configs declare "
            f"dataclass instances as defaults, which Python 3.11 refuses; {INSTALL_HINT}")
    if _is_pypi_release_of_fairseq("0.12.2"):
        raise UnsupportedFairseq(
            f"PyPI's fairseq 0.12.2 (in {package_dir}) cannot run the plugin: it does not "
            f"import on Python 3.11+, and its fairseq-generate fails with torch 1.13 or newer "
            f"('Mask Type should be defined'), which the plugin needs (2.1+): pip uninstall "
            f"fairseq, then {INSTALL_HINT}")

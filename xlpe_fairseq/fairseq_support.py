"""Which fairseq the plugin runs on, checked without importing it.

The plugin brings no fairseq of its own (a second distribution would overwrite the user's
``fairseq/`` folder and its pinned dependencies), so importing it first looks for one it
supports: fairseq 0.12, as PyPI's 0.12.2 (Python 3.10 or older), a checkout of fairseq main,
or the snapshots of main that import on newer Pythons (``ve-fairseq`` 0.12.3,
``fairseq-fixed`` 0.12.3.1). fairseq is only located here, not imported: the data-preparation
commands would otherwise pay its start-up of several seconds.
"""
import importlib.metadata
import importlib.util
import json
import re
import sys
from pathlib import Path

SUPPORTED_SERIES = (0, 12)
INSTALL_HINT = ("pip install 'xlpe-fairseq[fairseq]' installs the tested one (ve-fairseq 0.12.3 "
                "on Python 3.11, fairseq-fixed 0.12.3.1 on 3.12+); fairseq==0.12.2 from PyPI "
                "works on Python 3.10 and older")


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
    """Whether the folder came from PyPI's ``fairseq`` distribution itself at ``version``
    (not an editable checkout, which reports the same version)."""
    try:
        distribution = importlib.metadata.distribution("fairseq")
    except importlib.metadata.PackageNotFoundError:
        return False
    if distribution.version != version:
        return False
    direct_url = distribution.read_text("direct_url.json")
    return not (direct_url and json.loads(direct_url).get("dir_info", {}).get("editable"))


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
    if sys.version_info >= (3, 11) and _is_pypi_release_of_fairseq("0.12.2"):
        raise UnsupportedFairseq(
            f"PyPI's fairseq 0.12.2 (in {package_dir}) does not import on Python "
            f"{sys.version_info.major}.{sys.version_info.minor}: pip uninstall fairseq, then "
            f"{INSTALL_HINT}")

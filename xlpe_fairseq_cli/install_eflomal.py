"""``xlpe-install-eflomal``: eflomal, the aligner of ``xlpe-align``, built for a fixed
instruction set into this Python's environment (or the one ``--pip`` installs into).

eflomal has no wheels, and its sdist compiles the sampler with ``-march=native``: pip builds it
for the CPU it runs on, and the same seeded alignment then differs between CPU models (other
vector widths and tunings round the sampler's sums differently). Built for x86-64-v3 (AVX2 and
FMA, the level of the demo's torch kernels) with generic tuning, the binary, and so the
alignment, depends on the compiler only (docs/reproducibility.md). ``--march x86-64-v2``
builds for a CPU without AVX2, which aligns differently.

It needs no checkout and no fairseq: it downloads eflomal's sdist (the version the
documented numbers were aligned with), replaces ``-march=native`` in its Makefile, and
installs it over any earlier build of the same version. numpy and Cython, which the sdist's
setup.py imports, are installed only where missing, so that the numpy of an environment's
fairseq and torch stays. pip is the one external program it runs.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile

# the version of constraints.txt (tests/scripts/test_install_eflomal.py holds them equal)
EFLOMAL_VERSION = "2.0.0"
MARCH = "x86-64-v3"
BUILD_PACKAGES = ("numpy", "Cython")


class InstallError(Exception):
    """What stops the install, said in one line."""


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-install-eflomal", description=__doc__.split("\n\n")[0].replace("``", ""),
        epilog="Run it once after `pip install xlpe-fairseq`, which builds eflomal for the "
        "CPU it runs on; `make setup` runs it in a checkout.")
    parser.add_argument("--march", type=instruction_set, default=os.environ.get("EFLOMAL_MARCH") or MARCH,
                        help="the instruction set the sampler is compiled for (default: "
                        f"{MARCH}, or EFLOMAL_MARCH where set)")
    parser.add_argument("--pip", default=None,
                        help="the pip command to install with (default: this Python's own, "
                        "python -m pip)")
    parser.add_argument("--constraints", default=None,
                        help="a pip constraints file for numpy and Cython where they are "
                        "missing (make setup passes constraints.txt; default: none)")
    return parser


def instruction_set(value):
    """argparse type of --march: a compiler's -march level, nothing the Makefile would read
    as more than one word."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", value):
        raise argparse.ArgumentTypeError(f"expected an -march level such as x86-64-v3, got "
                                         f"{value!r}")
    return value


def pip_command(pip):
    return shlex.split(pip) if pip else [sys.executable, "-m", "pip"]


def run_pip(pip, *words):
    result = subprocess.run([*pip, *words], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if result.returncode:
        raise InstallError(f"{shlex.join(pip + list(words[:2]))} failed (exit "
                           f"{result.returncode}): {result.stdout.strip()[-2000:]}")
    return result


def portable_makefile(makefile, march):
    """``makefile``'s text with ``-march=native`` replaced by ``march`` and generic tuning."""
    with open(makefile) as stream:
        text = stream.read()
    if "-march=native" not in text:
        raise InstallError("eflomal's src/Makefile no longer says -march=native; nothing to "
                           "replace")
    return text.replace("-march=native", f"-march={march} -mtune=generic")


def install(pip, march, constraints):
    """Download, patch and install eflomal's sdist with ``pip`` (a command as a list)."""
    pinned = ["-c", constraints] if constraints else []
    for package in BUILD_PACKAGES:
        missing = subprocess.run([*pip, "show", "-q", package], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL).returncode != 0
        if missing:
            run_pip(pip, "install", "-q", *pinned, package)
    with tempfile.TemporaryDirectory() as folder:
        run_pip(pip, "download", "-q", "--no-deps", "--no-binary", "eflomal",
                "--no-build-isolation", "-d", folder, f"eflomal=={EFLOMAL_VERSION}")
        sdists = [name for name in os.listdir(folder) if re.fullmatch(r"eflomal-.*\.tar\.gz", name)]
        if not sdists:
            raise InstallError(f"pip download left no eflomal sdist (found: "
                               f"{', '.join(sorted(os.listdir(folder))) or 'nothing'})")
        with tarfile.open(os.path.join(folder, sdists[0])) as sdist:
            # the "data" filter (Python >= 3.10.12) refuses links and paths out of the folder
            sdist.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter")
                                        else {}))
        source = os.path.join(folder, sdists[0].removesuffix(".tar.gz"))
        makefile = os.path.join(source, "src", "Makefile")
        text = portable_makefile(makefile, march)
        with open(makefile, "w") as stream:
            stream.write(text)
        # from a folder: pip neither reuses a wheel it cached from a native build nor caches
        # this one; --force-reinstall replaces a native build of the same version
        run_pip(pip, "install", "-q", "--no-deps", "--no-build-isolation", "--force-reinstall",
                source)


def main(argv=None):
    args = build_parser().parse_args(argv)
    pip = pip_command(args.pip)
    print(f"xlpe-install-eflomal: building eflomal {EFLOMAL_VERSION} for {args.march} with "
          f"generic tuning ({shlex.join(pip)}; a minute or two)", file=sys.stderr)
    try:
        install(pip, args.march, args.constraints)
    except InstallError as error:
        print(f"xlpe-install-eflomal: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except FileNotFoundError as error:
        print(f"xlpe-install-eflomal: error: {error.filename}: no such command", file=sys.stderr)
        return 1
    print(f"xlpe-install-eflomal: eflomal {EFLOMAL_VERSION} installed, built for {args.march}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

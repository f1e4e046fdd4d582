"""``xlpe-align``: word alignment of a BPE-level parallel corpus, in fairseq ``i-j`` format.

Runs an external aligner in both directions and symmetrizes the links with
grow-diag-final-and (Koehn et al. 2005). The default aligner is eflomal (Östling and
Tiedemann 2016; ``eflomal-align``, pip package ``eflomal``), which needs the Python
symmetrization below; fast_align (Dyer et al. 2013) is used with ``--aligner fast_align``
when its binary is on PATH, and its ``atools`` symmetrizes when present.

Large corpora are cut into chunks aligned independently in parallel processes, which bounds
memory; chunks should stay large (the default is 250k pairs) because the aligners estimate
their lexical statistics per chunk.

eflomal samples: every run seeds itself from ``/dev/urandom`` and has no seed option, so two
runs on the same corpus align 99% of the sentences differently. ``--seed`` (default 1) makes a
run repeatable: eflomal runs from a copy of its package whose binary reads its random state from
a file, and each direction's samplers run one after another, since in parallel threads they
would take their random states in whatever order the threads arrive.

eflomal's sdist compiles its sampler with ``-Ofast -march=native``: another instruction set or
tuning rounds its sums differently, so the same seed aligns differently on another CPU model.
``eflomal_build`` reads the compiler and target from the binary; ``xlpe-install-eflomal``
(``xlpe_fairseq_cli/install_eflomal.py``, run by ``make setup``) builds it for a fixed
instruction set, whose binary, and so whose alignment, depends on the compiler only.
"""
import argparse
import functools
import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

from ..help_format import HelpFormatter
from ..io import (
    SEED,
    WORKERS,
    InputError,
    ToolError,
    atomic_outputs,
    check_length,
    check_outputs,
    check_same_line_count,
    default_workers,
    parallel_imap,
    positive_int,
    read_parallel_chunks,
    require_lines,
    run_command,
    shell_words,
    temporary_directory,
)
from ..io.children import completed_child

INSTALL_HINTS = {
    "eflomal-align": "pip install eflomal",
    "fast_align": "build it from https://github.com/clab/fast_align (no PyPI or Debian package)",
}

# eflomal gives a sentence of 1,024 or more tokens (on either side) no link at all, silently
MAX_TOKENS = {"eflomal": 1023}

_NEIGHBOURS = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]


def grow_diag_final_and(forward, reverse):
    """Symmetrize two alignments (sets of ``(i, j)`` source-target links).

    Start from the intersection; grow it with union links that neighbour an accepted link
    (diagonals included) and align a so-far unaligned source or target word, until nothing
    changes; finally add union links of each direction whose source AND target word are
    both still unaligned. Returns the links sorted.
    """
    forward, reverse = set(forward), set(reverse)
    union = forward | reverse
    accepted = forward & reverse
    aligned_src = {i for i, _ in accepted}
    aligned_tgt = {j for _, j in accepted}

    def accept(i, j):
        accepted.add((i, j))
        aligned_src.add(i)
        aligned_tgt.add(j)

    grew = True
    while grew:
        grew = False
        for i, j in sorted(union - accepted):
            if i in aligned_src and j in aligned_tgt:
                continue
            if any((i + di, j + dj) in accepted for di, dj in _NEIGHBOURS):
                accept(i, j)
                grew = True
    for direction in (forward, reverse):
        for i, j in sorted(direction):
            if i not in aligned_src and j not in aligned_tgt:
                accept(i, j)
    return sorted(accepted)


def parse_links(text):
    """``"0-1 2-3"`` -> ``{(0, 1), (2, 3)}``."""
    return {tuple(map(int, link.split("-"))) for link in text.split()}


def format_links(links):
    return " ".join(f"{i}-{j}" for i, j in links)


def find_tool(name):
    """Path of an executable on PATH or next to this Python (an unactivated venv)."""
    path = shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))
    if path is None:
        raise InputError(f"{name} not found on PATH; {INSTALL_HINTS[name]}")
    return path


def _run(command, env=None, stdout=None, verbose=False, cwd=None):
    """Run a tool in its own process group, ended with this command (``io.children``); its
    stderr is shown live when verbose, else kept for the error message."""
    stderr = None if verbose else subprocess.PIPE
    result = completed_child(command, env=env, stdout=stdout, stderr=stderr, text=True, cwd=cwd)
    if result.returncode != 0:
        raise ToolError(
            f"{shlex.join(command)} failed with status {result.returncode}:\n"
            f"{result.stderr or ''}"
        )


# The path eflomal opens for its random state, and a name of the same length that replaces it
# in the seeded copy's binary (a relative path: the file in the directory eflomal runs in).
_URANDOM_PATH = b"\0/dev/urandom\0"
_SEED_FILE = "eflomal.seed"


def eflomal_package():
    """The folder of the importable eflomal package (its binary is ``bin/eflomal`` there)."""
    spec = importlib.util.find_spec("eflomal")
    if spec is None or spec.origin is None:
        raise InputError("eflomal is not importable here; pip install eflomal, or --seed none")
    return os.path.dirname(spec.origin)


# eflomal compiles with -g, and GCC records its version and target options in the debug
# information (DWARF's producer: "GNU C99 12.2.0 -march=x86-64-v3 -mtune=generic -g ...")
_PRODUCER = re.compile(rb"GNU C\w* (\d[\w.]*) ([^\0]*)")
# levels that name no CPU model: a build for one of them is the same on whatever CPU compiled it
PORTABLE_MARCH = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"}


def eflomal_build(binary=None):
    """``(description, portable)`` of an eflomal binary (default: the importable one's):
    e.g. ``("GCC 12.2.0 -march=x86-64-v3 -mtune=generic", True)``; ``portable`` when it targets
    a generic x86-64 level with generic tuning, not the CPU that built it. ``None`` when the
    binary records no compiler options."""
    with open(binary or os.path.join(eflomal_package(), "bin", "eflomal"), "rb") as f:
        match = _PRODUCER.search(f.read())
    if match is None:
        return None
    options = dict(option.split("=", 1) for option in match[2].decode(errors="replace").split()
                   if option.startswith(("-march=", "-mtune=")))
    march, mtune = options.get("-march", "x86-64"), options.get("-mtune", "generic")
    return (f"GCC {match[1].decode()} -march={march} -mtune={mtune}",
            march in PORTABLE_MARCH and mtune == "generic")


def seeded_eflomal_package(directory):
    """Copy the installed eflomal package into ``directory``, its binary reading the random
    state from ``./eflomal.seed`` instead of ``/dev/urandom``; return the folder to put first
    on PYTHONPATH. Nothing installed is changed."""
    installed = eflomal_package()
    package = os.path.join(directory, "seeded-eflomal", "eflomal")
    shutil.copytree(installed, package, ignore=shutil.ignore_patterns("__pycache__"))
    binary = os.path.join(package, "bin", "eflomal")
    with open(binary, "rb") as f:
        code = f.read()
    if code.count(_URANDOM_PATH) != 1:
        raise ToolError(f"{installed}: this eflomal build cannot be seeded (its binary does "
                        "not name /dev/urandom exactly once); align with --seed none")
    with open(binary, "wb") as f:
        f.write(code.replace(_URANDOM_PATH, b"\0" + _SEED_FILE.encode() + b"\0"))
    return os.path.dirname(package)


def _align_eflomal(chunk_dir, threads, extra_args, verbose, seeded_package=None, seed=None):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    launcher = []
    if seed is not None:
        with open(os.path.join(chunk_dir, _SEED_FILE), "wb") as f:
            # 8 bytes, eflomal's xorshift state (which must not be 0)
            f.write(hashlib.sha256(str(seed).encode()).digest()[:8])
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (seeded_package, os.environ.get("PYTHONPATH")) if p)
        # both directions in parallel, each direction's samplers one after another
        env["OMP_NUM_THREADS"] = f"{min(threads, 2)},1"
        launcher = [sys.executable]  # the Python whose eflomal package was copied
    command = [
        *launcher, find_tool("eflomal-align"), "--overwrite",
        "-s", os.path.join(chunk_dir, "src"), "-t", os.path.join(chunk_dir, "tgt"),
        "-f", os.path.join(chunk_dir, "fwd"), "-r", os.path.join(chunk_dir, "rev"),
        *extra_args, *(["-v"] if verbose else []),
    ]
    _run(command, env=env, verbose=verbose, cwd=chunk_dir)


def _align_fast_align(chunk_dir, threads, extra_args, verbose, seeded_package=None, seed=None):
    # fast_align's EM starts from uniform parameters: nothing to seed
    fast_align = find_tool("fast_align")
    joint = os.path.join(chunk_dir, "joint")
    with open(os.path.join(chunk_dir, "src"), encoding="utf-8") as src, \
            open(os.path.join(chunk_dir, "tgt"), encoding="utf-8") as tgt, \
            open(joint, "w", encoding="utf-8") as out:
        for s, t in zip(src, tgt):
            out.write(f"{s.rstrip()} ||| {t.rstrip()}\n")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    for name, reverse in (("fwd", []), ("rev", ["-r"])):
        with open(os.path.join(chunk_dir, name), "w", encoding="utf-8") as out:
            _run([fast_align, "-i", joint, "-d", "-o", "-v", *reverse, *extra_args],
                 env=env, stdout=out, verbose=verbose)


ALIGNERS = {"eflomal": _align_eflomal, "fast_align": _align_fast_align}
ALIGNER_BINARIES = {"eflomal": "eflomal-align", "fast_align": "fast_align"}


def _symmetrize(chunk_dir):
    atools = shutil.which("atools")
    fwd, rev, sym = (os.path.join(chunk_dir, n) for n in ("fwd", "rev", "sym"))
    if atools:
        with open(sym, "w", encoding="utf-8") as out:
            _run([atools, "-i", fwd, "-j", rev, "-c", "grow-diag-final-and"], stdout=out)
        return
    with open(fwd, encoding="utf-8") as f, open(rev, encoding="utf-8") as r, \
            open(sym, "w", encoding="utf-8") as out:
        for forward, reverse in zip(f, r):
            out.write(format_links(grow_diag_final_and(parse_links(forward),
                                                       parse_links(reverse))) + "\n")


def _align_chunk(chunk, aligner, threads, extra_args, verbose, seeded_package, seed):
    chunk_dir, n_pairs = chunk
    ALIGNERS[aligner](chunk_dir, threads, extra_args, verbose, seeded_package, seed)
    _symmetrize(chunk_dir)
    return n_pairs, chunk_dir


def _write_chunks(source, target, work_dir, chunk_size, max_tokens=None):
    """Copy the corpus into chunk directories, rejecting empty lines (and lines of more than
    ``max_tokens`` tokens) before any aligning."""
    chunks = []
    for first_lineno, rows in read_parallel_chunks([source, target], chunk_size):
        chunk_dir = os.path.join(work_dir, f"chunk{len(chunks):05d}")
        os.mkdir(chunk_dir)
        with open(os.path.join(chunk_dir, "src"), "w", encoding="utf-8") as src, \
                open(os.path.join(chunk_dir, "tgt"), "w", encoding="utf-8") as tgt:
            for offset, (s, t) in enumerate(rows):
                for path, text in ((source, s), (target, t)):
                    if not text.strip():
                        raise InputError(
                            f"{path} line {first_lineno + offset}: empty line "
                            "(the aligner needs at least one token on each side)"
                        )
                    check_length(path, first_lineno + offset, len(text.split()), max_tokens,
                                 "eflomal")
                src.write(s + "\n")
                tgt.write(t + "\n")
        chunks.append((chunk_dir, len(rows)))
    return chunks


def align_files(source, target, output, forward_output=None, reverse_output=None,
                aligner="eflomal", workers=1, chunk_size=250000, aligner_args=(),
                verbose=False, seed=1):
    """Align ``source`` with ``target`` line by line; write symmetrized links to ``output``.

    With an integer ``seed`` eflomal's output depends only on the input, the seed, the
    aligner options and the eflomal build, not on ``workers``; ``None`` lets eflomal seed
    itself from /dev/urandom."""
    total = check_same_line_count([source, target])
    require_lines(source, total)
    check_outputs([output, forward_output, reverse_output], [source, target])
    if aligner not in ALIGNERS:
        raise InputError(f"unknown aligner {aligner!r}; known: {', '.join(sorted(ALIGNERS))}")
    find_tool(ALIGNER_BINARIES[aligner])  # fail before copying the corpus into chunks
    work_root = os.path.dirname(os.path.abspath(output))
    with temporary_directory(work_root, ".xlpe-align.") as work_dir:
        chunks = _write_chunks(source, target, work_dir, chunk_size, MAX_TOKENS.get(aligner))
        processes = max(1, min(workers, len(chunks)))
        # The aligners are multithreaded (OpenMP); share the cores among parallel chunks.
        threads = max(1, workers // processes)
        seeded = aligner == "eflomal" and seed is not None
        work = functools.partial(_align_chunk, aligner=aligner, threads=threads,
                                 extra_args=list(aligner_args), verbose=verbose,
                                 seeded_package=seeded_eflomal_package(work_dir) if seeded
                                 else None, seed=seed if seeded else None)
        targets = [(output, "sym"), (forward_output, "fwd"), (reverse_output, "rev")]
        targets = [(path, name) for path, name in targets if path]
        # all outputs appear together at the end, or none of them on failure
        with atomic_outputs([path for path, _ in targets]) as outs:
            results = parallel_imap(work, chunks, processes, total=total,
                                    desc=f"align ({aligner})", unit="pairs",
                                    size=lambda result: result[0])
            for _, chunk_dir in results:
                for out, (_, name) in zip(outs, targets):
                    with open(os.path.join(chunk_dir, name), encoding="utf-8") as f:
                        shutil.copyfileobj(f, out)
                shutil.rmtree(chunk_dir)
    return total


def align_and_report(source, target, output, forward_output=None, reverse_output=None,
                     aligner="eflomal", workers=1, chunk_size=250000, aligner_args=(),
                     verbose=False, seed=1):
    """``xlpe-align``: ``align_files``, then its speed said, and a warning where eflomal was
    built for the CPU that built it."""
    start = time.perf_counter()
    pairs = align_files(source, target, output, forward_output, reverse_output, aligner, workers,
                        chunk_size, aligner_args, verbose, seed)
    seconds = time.perf_counter() - start
    print(f"xlpe-align: {pairs} pairs in {seconds:.1f} s "
          f"({pairs / max(seconds, 1e-9):.0f} pairs/s)", file=sys.stderr)
    build = eflomal_build() if aligner == "eflomal" else None
    if build is not None and not build[1]:
        print(f"xlpe-align: eflomal was compiled for the CPU that built it ({build[0]}): "
              "another CPU model aligns differently; xlpe-install-eflomal rebuilds it for "
              "any x86-64-v3 CPU", file=sys.stderr)


def _seed(text):
    if text == "none":
        return None
    try:
        return SEED(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected {SEED.describe()} or 'none', got {text!r}") from None


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-align",
        description="Word-align a parallel corpus (BPE level) and write fairseq i-j links, "
        "symmetrized with grow-diag-final-and.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--source", required=True, help="source text, one sentence a line")
    parser.add_argument("--target", required=True, help="target text, one sentence a line")
    parser.add_argument("--output", required=True, help="symmetrized alignment to write")
    parser.add_argument("--forward-output", help="also write the source-to-target links")
    parser.add_argument("--reverse-output", help="also write the target-to-source links")
    parser.add_argument("--aligner", choices=sorted(ALIGNERS), default="eflomal",
                        help="eflomal (default, eflomal-align) or fast_align (binary on PATH)")
    parser.add_argument("--aligner-args", type=shell_words, default="",
                        help="extra aligner options as one shell-quoted string, attached "
                        "with '=' because it starts with a dash: --aligner-args='--model 2'")
    parser.add_argument("--workers", type=WORKERS, default=default_workers(),
                        help="cores to use: parallel chunks, aligner threads (default: all)")
    parser.add_argument("--chunk-size", type=positive_int, default=250000,
                        help="sentence pairs aligned together (default: 250000); smaller "
                        "chunks use less memory but give the aligner less data")
    parser.add_argument("--seed", type=_seed, default=1,
                        help="eflomal's random seed (default: 1): the same input, seed and "
                        "eflomal build give the same alignment, whatever --workers; 'none' "
                        "lets eflomal seed itself from /dev/urandom and run each direction's "
                        "samplers in parallel threads (faster on more than 2 cores)")
    parser.add_argument("--verbose", action="store_true",
                        help="show the aligner's own progress output")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    run_command(lambda: align_and_report(
        args.source, args.target, args.output, args.forward_output, args.reverse_output,
        args.aligner, args.workers, args.chunk_size, shlex.split(args.aligner_args),
        args.verbose, args.seed), "xlpe-align")


if __name__ == "__main__":
    main()

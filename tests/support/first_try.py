"""The README's first try: its commands as written, and the small model a test trains with
in place of the README's budget."""
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# the first try's Transformer: a small model that trains in seconds, in a budget below the
# README's (still below the schedule's, so scaled as the README's is)
FIRST_TRY_MODEL = [
    "--max-update", "30", "--lr", "3e-3", "--max-tokens", "600", "--encoder-embed-dim", "64",
    "--encoder-ffn-embed-dim", "128", "--decoder-embed-dim", "64", "--decoder-ffn-embed-dim",
    "128",
]


def readme_first_try(raw, out, checkpoints, tgt):
    """The README's first-try commands, as written but for the target language ``tgt`` and
    these folders (the translation's input redirection left to the caller)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"A first try.*?```bash\n(.*?)```", readme, re.S).group(1)
    block = (block.replace("--tgt pt-BR", f"--tgt {tgt}").replace("data/en-pt-BR", str(out))
             .replace("ckpt/en-pt-BR", str(checkpoints)).replace("raw/", f"{raw}/")
             .replace(" < new.en", ""))
    commands = [shlex.split(line, comments=True) for line in block.splitlines()]
    assert [c[0] for c in commands] == ["xlpe-prepare", "xlpe-train", "xlpe-evaluate",
                                        "xlpe-translate"]
    return commands

"""Small input files for the commands, one line of them optionally not UTF-8."""

# "café" in Latin-1: byte 0xe9 at column 4
LATIN1_LINE = b"caf\xe9"


def text_file(path, lines, bad_line=None):
    """``lines`` (str) one a line, line ``bad_line`` (1-based) replaced by LATIN1_LINE."""
    path.parent.mkdir(parents=True, exist_ok=True)
    encoded = [line.encode() for line in lines]
    if bad_line is not None:
        encoded[bad_line - 1] = LATIN1_LINE
    path.write_bytes(b"".join(line + b"\n" for line in encoded))
    return str(path)


def generate_output(path, hypotheses, bad_line=None):
    """fairseq-generate stdout: S/H/D lines of each sentence; ``bad_line`` counts its lines."""
    lines = []
    for k, text in enumerate(hypotheses):
        lines += [f"S-{k}\tsource", f"H-{k}\t-0.5\t{text}", f"D-{k}\t-0.5\t{text}"]
    return text_file(path, lines, bad_line)

"""Folder locks: readers share a folder, a writer has it alone, and a refusal names the runs
that hold it now. Each holder is a process of its own (a lock is held until its process
exits)."""
import subprocess
import sys

import pytest

from xlpe_fairseq.io import InputError
from xlpe_fairseq.io.locks import LOCK_NAME, FolderInUse, claim_folder

HOLD = """
import sys, time
from xlpe_fairseq.io import InputError
from xlpe_fairseq.io.locks import claim_folder
try:
    claim_folder(sys.argv[1], sys.argv[2], "the folder", sys.argv[3])
except InputError as err:
    print(err, flush=True)
    sys.exit(1)
print("held", flush=True)
time.sleep(300)
"""


@pytest.fixture
def holders():
    started = []

    def hold(folder, mode, prog):
        process = subprocess.Popen([sys.executable, "-c", HOLD, str(folder), mode, prog],
                                   stdout=subprocess.PIPE, text=True)
        started.append(process)
        return process, process.stdout.readline().strip()

    yield hold
    for process in started:
        process.kill()
        process.wait()


def test_readers_share_a_folder_and_a_writer_is_refused_naming_them(tmp_path, holders):
    first, said = holders(tmp_path, "read", "train.sh")
    assert said == "held"
    second, said = holders(tmp_path, "read", "evaluate.sh")
    assert said == "held", "readers share the folder"
    lines = (tmp_path / LOCK_NAME).read_text().splitlines()
    assert [line.split(",")[:2] for line in lines] == [
        [f"pid {first.pid}", " train.sh read"], [f"pid {second.pid}", " evaluate.sh read"]]
    writer, said = holders(tmp_path, "write", "prepare-corpus.sh")
    assert writer.wait() == 1
    assert said.startswith(f"{tmp_path} is in use by another run (pid {first.pid}, train.sh "
                           f"read, since ") and f"; pid {second.pid}, evaluate.sh read" in said


def test_a_reader_that_has_ended_is_no_longer_named(tmp_path, holders):
    first, _ = holders(tmp_path, "read", "train.sh")
    first.kill()
    first.wait()
    second, said = holders(tmp_path, "read", "evaluate.sh")
    assert said == "held"
    assert (tmp_path / LOCK_NAME).read_text().startswith(f"pid {second.pid}, evaluate.sh read")
    with pytest.raises(FolderInUse, match=rf"\(pid {second.pid}, evaluate.sh read, since "):
        claim_folder(tmp_path, "write", "the folder", "train.sh")


def test_a_writer_creates_its_folder_and_no_run_claims_the_root(tmp_path, holders):
    process, said = holders(tmp_path / "new" / "ck", "write", "train.sh")
    assert said == "held" and (tmp_path / "new" / "ck" / LOCK_NAME).exists()
    with pytest.raises(InputError, match="is the root folder"):
        claim_folder("/", "read", "the corpus (OUT)", "evaluate.sh")


def test_a_folder_this_process_writes_is_claimed_again_by_a_step_of_the_same_run(tmp_path):
    """The Bible recipe holds OUTDIR and runs xlpe-prepare into it in the same process."""
    twice = ("import sys\nfrom xlpe_fairseq.io.locks import claim_folder\n"
             "claim_folder(sys.argv[1], 'write', 'the folder', 'recipe')\n"
             "claim_folder(sys.argv[1], 'write', 'the folder', 'xlpe-prepare')\n"
             "claim_folder(sys.argv[1], 'read', 'the folder', 'xlpe-prepare')\nprint('held')\n")
    result = subprocess.run([sys.executable, "-c", twice, str(tmp_path)], capture_output=True,
                            text=True)
    assert result.stdout == "held\n", result.stderr

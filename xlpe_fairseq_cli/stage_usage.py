"""``python -m xlpe_fairseq_cli.stage_usage --log FILE --name STEP -- COMMAND...``: a step of a
shell recipe measured (``xlpe_fairseq/io/stage_usage.py``, which needs nothing but Python's
standard library) from a process that has not loaded the plugin. Linux counts into a
command's peak memory what its process held before it executed the command, the memory of
the process that started it: with the plugin (torch, fairseq) loaded, some 350 MiB of every
step's peak would be the measuring process's."""
import os
import runpy

from .user_dir import plugin_dir


def main():
    runpy.run_path(os.path.join(plugin_dir(), "io", "stage_usage.py"), run_name="__main__")


if __name__ == "__main__":
    main()

"""The shell entry points under test find the plugin's commands and Python as a user's shell
does, on PATH: the environment the suite runs in goes first."""
import os
import sys

os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

"""The ``--help`` formatter of every xlpe-* command: each option shows its default."""
import argparse
import copy


def _says_something(default):
    # None: the help says what an absent option means; False: a flag
    return default is not None and default is not False and default is not argparse.SUPPRESS


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends "(default: X)" to every option whose default says something, unless the help
    already names it in words ("(default: all cores)"); an option without help shows it too."""

    def _format_action(self, action):
        if not action.help and _says_something(action.default):
            action = copy.copy(action)
            action.help = "(default: %(default)s)"
        return super()._format_action(action)

    def _get_help_string(self, action):
        help_text = action.help or ""
        if not _says_something(action.default) or "(default" in help_text:
            return help_text
        return super()._get_help_string(action)

"""The ``--help`` formatter of every xlpe-* command: each option that takes a value shows its
default."""
import argparse
import copy


def shows_default(action):
    """Whether ``--help`` shows ``action``'s default: not for None (the help says what an absent
    option means), nor for a flag, which takes no value (store_true, store_false, store_const):
    its default is the value it stands against, so ``--no-tokenize (default: True)`` would read
    as "on by default"."""
    return (action.nargs != 0 and action.default is not None
            and action.default is not False and action.default is not argparse.SUPPRESS)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends "(default: X)" to every option whose default ``shows_default``, unless the help
    already names it in words ("(default: all cores)"); an option without help shows it too."""

    def _format_action(self, action):
        if not action.help and shows_default(action):
            action = copy.copy(action)
            action.help = "(default: %(default)s)"
        return super()._format_action(action)

    def _get_help_string(self, action):
        help_text = action.help or ""
        if not shows_default(action) or "(default" in help_text:
            return help_text
        return super()._get_help_string(action)

"""The entry points of the xlpe-* commands, beside the plugin as fairseq's ``fairseq_cli`` is
beside ``fairseq``: each command's process is set up here before the plugin (and with it torch
and fairseq, seconds of imports) is loaded, so that the plugin's import changes nothing.

- ``commands``: one function per console command (setup.py's CONSOLE_SCRIPTS), each running
  its module's ``main`` in a process set up for it (``launch``);
- ``launch``: what every command's process needs first: fairseq's stack's warnings that a user
  cannot act on silenced, Ctrl-C during the imports ended quietly, a fairseq the plugin cannot
  run on said in one line;
- ``user_dir``: ``xlpe-user-dir``, the plugin's folder, found without importing it;
- ``install_eflomal``: ``xlpe-install-eflomal``, eflomal built for a fixed instruction set,
  with pip alone (no plugin, no fairseq);
- ``stage_usage``: a shell recipe's step measured (``XLPE_STAGE_LOG``) from a process that has
  not loaded the plugin.
"""

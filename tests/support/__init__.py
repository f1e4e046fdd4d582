"""Helpers the test modules share: a test module imports from here (or from a helper module
beside it), never from another test module, so that collecting or skipping one test file never
changes another."""

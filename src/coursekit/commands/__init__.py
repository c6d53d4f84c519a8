"""One module per command: plain functions returning an exit code; no click below cli.py."""

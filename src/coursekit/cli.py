"""The command line: parse arguments, call a command, exit with its code. Nothing else.

The commands are defined by group beside this module (cli_read: check, owed, clean, lsp,
daemon, explain, rules; cli_write: init, new, fix, schema; cli_common: what they share); this module
is the `coursekit` group that holds them and the guard around every one.
"""

from __future__ import annotations

import os
import sys

import click

from coursekit import __version__
from coursekit.cli_read import (
    FORMATS,
    check_command,
    clean_command,
    daemon_command,
    explain_command,
    lsp_command,
    owed_command,
    rules_command,
)
from coursekit.cli_write import fix_command, init_command, new_command, schema_command

__all__ = ["FORMATS", "main"]


class _Guarded(click.Group):
    """Turns an unexpected exception into one line and exit 2 (set COURSEKIT_DEBUG for the trace)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except BrokenPipeError:
            # `coursekit rules | head`: the reader left; say nothing more, like cat does.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(1)
        except Exception as exc:
            if os.environ.get("COURSEKIT_DEBUG"):
                raise
            click.echo(f"coursekit: internal error: {type(exc).__name__}: {exc}", err=True)
            click.echo("coursekit: this is a bug in coursekit; please report it", err=True)
            ctx.exit(2)


@click.group(cls=_Guarded, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="coursekit")
def main() -> None:
    """Lint, verify and scaffold a multi-book technical course."""


for _command in (
    init_command,
    check_command,
    lsp_command,
    clean_command,
    daemon_command,
    owed_command,
    explain_command,
    rules_command,
    schema_command,
    new_command,
    fix_command,
):
    main.add_command(_command)

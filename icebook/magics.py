"""``%ice`` and ``%%ice``: icebook in notebook cells, with the command line's grammar.

    %load_ext icebook
    %ice open path/to/table --as events
    %ice files --at release-2024-01 --where "content == 1"
    %%ice --at audit -o rows
    SELECT region, count(*) FROM t GROUP BY region

``%ice open LOCATION --as NAME`` also binds ``NAME`` to the table in the notebook's namespace (and
says so); commands that name no table use the last one opened (or chosen with ``%ice use``).
``%%ice`` is the ``sql`` command with the cell as its query. Errors are one-line UsageErrors and fail
the cell. IPython's ``$var`` expansion is off (SQL uses ``$`` freely); instead ``{{name}}`` in an
``%ice`` line or ``%%ice`` cell is replaced by ``str(name)`` of the notebook variable ``name``
(``%ice open {{path}}``). Results are returned as they are and IPython shows them through icebook's
renderer registry; DataFrames show at most ``IceMagics.display_limit`` rows.
"""

from __future__ import annotations

import re
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from traitlets import Int, Unicode, observe

from icebook.commands import Context, HelpShown, Session, build_parser, execute, parse, parse_cell
from icebook.display.formatters import register_formatters
from icebook.display.frames import limited
from icebook.errors import IcebookError, one_line

_TEMPLATE = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")


@magics_class
class IceMagics(Magics):
    """The ``%ice`` line magic (commands) and ``%%ice`` cell magic (SQL)."""

    default_engine = Unicode("spark", help="Engine for %%ice cells: 'spark' or 'arrow'.").tag(config=True)
    display_limit = Int(50, help="Rows shown for DataFrame results.").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.session = Session(default_engine=self.default_engine)
        self.parser = build_parser(Context.NOTEBOOK)

    @observe("default_engine")
    def _engine_changed(self, change: Any) -> None:
        self.session.default_engine = change["new"]

    @no_var_expand
    @line_cell_magic
    def ice(self, line: str, cell: str | None = None) -> Any:
        try:
            text = self._expand(line)
            args = parse(self.parser, text) if cell is None else parse_cell(self.parser, text, self._expand(cell))
            result = limited(execute(args, self.session, Context.NOTEBOOK, self.parser), self.display_limit)
            output = getattr(args, "output", None)
            if output:
                self._namespace()[output] = result
            if args.command == "open" and args.name:
                self._namespace()[args.name] = result
                print(
                    f"{args.name} = the table at {result.identifier or result.location} ({args.name}.explore() works too)"
                )
            return result
        except HelpShown as shown:
            print(shown.text.rstrip())
            return None
        except (IcebookError, ValueError) as exc:
            raise UsageError(one_line(exc)) from None

    def _namespace(self) -> dict[str, Any]:
        if self.shell is None:
            raise IcebookError("%ice needs an IPython shell")
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    def _expand(self, text: str) -> str:
        """``{{name}}`` -> ``str`` of the notebook variable ``name``."""
        return _TEMPLATE.sub(lambda m: self._variable(m.group(1)), text)

    def _variable(self, name: str) -> str:
        namespace = self._namespace()
        if name not in namespace:
            raise IcebookError(f"{{{{{name}}}}}: no variable named {name!r} in the notebook")
        return str(namespace[name])


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(IceMagics)
    register_formatters(ipython)

"""``%ice`` and ``%%ice``: icebook in notebook cells.

    %load_ext icebook
    %ice open path/to/table --as events
    %ice files --at release-2024-01 --where "content == 1"
    %%ice --at audit -o rows
    SELECT region, count(*) FROM t GROUP BY region

Errors are one-line UsageErrors and fail the cell. IPython's ``$var`` expansion is off (SQL uses
``$`` freely); instead ``{{name}}`` in an ``%ice`` line or ``%%ice`` cell is replaced by
``str(name)`` of the notebook variable ``name`` (``%ice open {{path}}``).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

import pandas as pd
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from traitlets import Int, Unicode

from icebook.analysis.resolve import AtRef
from icebook.commands import CommandError, HelpShown, Session, build_parser, execute, parse
from icebook.errors import IcebookError

_TEMPLATE = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")


def _cell_parser() -> argparse.ArgumentParser:
    from icebook.commands import _Parser

    p = _Parser(prog="%%ice", description="Run the cell as SQL over the open tables (view `t` is the current one).")
    point = p.add_mutually_exclusive_group()
    point.add_argument("--at", help="snapshot id, branch, tag or ISO-8601 time")
    point.add_argument("--branch", help="read this branch")
    point.add_argument("--tag", help="read this tag")
    p.add_argument("--engine", choices=["spark", "arrow"], help="default: IceMagics.default_engine")
    p.add_argument("-o", "--output", dest="output", help="store the result in this variable")
    return p


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@magics_class
class IceMagics(Magics):
    """The ``%ice`` line magic (subcommands) and ``%%ice`` cell magic (SQL)."""

    default_engine = Unicode("spark", help="Engine for %%ice cells: 'spark' or 'arrow'.").tag(config=True)
    display_limit = Int(50, help="Rows shown for DataFrame results (pandas display.max_rows).").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.session = Session()
        self.parser = build_parser("%ice", cli=False)

    @no_var_expand
    @line_cell_magic
    def ice(self, line: str, cell: str | None = None) -> Any:
        try:
            if cell is None:
                return self._line(line)
            return self._cell(line, cell)
        except HelpShown as shown:
            print(str(shown).rstrip())
            return None
        except (IcebookError, CommandError, ValueError) as exc:
            raise UsageError(_one_line(exc)) from None

    def _line(self, line: str) -> Any:
        if not line.strip():
            return self.parser.format_help()
        args = parse(self.parser, _TEMPLATE.sub(lambda m: self._variable(m.group(1)), line))
        result = execute(args, self.session, self.parser)
        if args.command == "help":
            print(str(result).rstrip())
            return None
        return self._shown(result)

    def _shown(self, result: Any) -> Any:
        if isinstance(result, pd.DataFrame):
            pd.set_option("display.max_rows", self.display_limit)
            pd.set_option("display.min_rows", min(self.display_limit, 20))
        return result

    def _cell(self, line: str, cell: str) -> Any:
        args = _cell_parser().parse_args(line.split())
        ref = args.branch or args.tag
        at = AtRef(ref) if ref else args.at  # --at text is read by each table (parse_at)
        query = _TEMPLATE.sub(lambda m: self._variable(m.group(1)), cell)
        engine = args.engine or self.default_engine
        result = self._run_sql(query, at, engine)
        if args.output:
            self._namespace()[args.output] = result
        return self._shown(result)

    def _namespace(self) -> dict[str, Any]:
        if self.shell is None:
            raise CommandError("%%ice needs an IPython shell")
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    def _variable(self, name: str) -> str:
        namespace = self._namespace()
        if name not in namespace:
            raise CommandError(f"{{{{{name}}}}}: no variable named {name!r} in the notebook")
        return str(namespace[name])

    def _run_sql(self, query: str, at: Any, engine: str) -> pd.DataFrame:
        if engine == "arrow":
            return self._run_sql_arrow(query, at)
        if engine != "spark":
            raise CommandError(f"unknown engine {engine!r}: use spark or arrow")
        current = self.session.get(None)
        from icebook.engines import spark as spark_engine

        for name, table in self.session.tables.items():  # every open table by its name, same point
            if name != "t":
                df = spark_engine.dataframe(table.location, table.spark_point(at), identifier=table.identifier)
                df.createOrReplaceTempView(name)
        return current.sql(query, at=at)

    def _run_sql_arrow(self, query: str, at: Any) -> pd.DataFrame:
        """Without a JVM: each open table read by the Arrow engine, SQL by polars."""
        import polars as pl

        current = self.session.get(None)
        context = pl.SQLContext()
        context.register("t", pl.from_arrow(current.read(at=at, engine="arrow")))
        for name, table in self.session.tables.items():
            if name != "t":
                context.register(name, pl.from_arrow(table.read(at=at, engine="arrow")))
        try:
            frame = context.execute(query, eager=True)
        except Exception as exc:  # polars raises its own SQL error types
            raise CommandError(f"SQL (arrow engine): {_one_line(exc)}") from None
        return frame.to_pandas()


def load_ipython_extension(ipython: Any) -> None:
    from icebook.display import register_formatters

    ipython.register_magics(IceMagics)
    register_formatters(ipython)

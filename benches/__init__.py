"""memcore's SLO benchmarks: the performance budget (docs/performance.md), measured with
peers side by side.

Run `python -m benches` (full) or `python -m benches --quick` (CI smoke run); see
`benches/__main__.py`. Each area is one module, `bench_<area>.py`, exposing

    AREA: str
    def collect(ctx: benches.context.Context) -> list[benches.report.Record]

and listed in `benches.__main__.AREAS`. A module reports one `Record` per metric and
sets `row` to the budget row it measures (`benches.targets.ROWS`); rows that
no module reports are printed as "not measured yet", so adding a capability's bench is
adding one module.
"""

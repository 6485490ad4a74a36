"""Best and median fitness (time, lower is better) per round as a text bar chart."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

BAR = 12


class ProgressChart(Static):
    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.border_title = "progress · best / median µs"
        self.border_subtitle = "lower is better"

    def show(self, points: list[tuple[int, float | None, float | None]], timing: str = "estimate") -> None:
        unit = "est." if timing == "estimate" else "meas."
        if not points:
            self.update(Text("No finished round yet.", style="dim"))
            return
        top = max((v for _, b, m in points for v in (b, m) if v), default=0.0) or 1.0
        table = Table.grid(padding=(0, 1))
        table.add_column(justify="right")
        table.add_column()
        table.add_column(justify="right")
        for r, best, median in points[-6:]:
            for label, value, glyph, style in (("best", best, "█", "bold green"), ("med.", median, "▒", "cyan")):
                if value:
                    n = max(1, round(BAR * value / top))
                    bar = Text(glyph * n, style=style)
                    table.add_row(f"r{r} {label}", bar, f"{value:.2f} µs {unit}")
                else:
                    table.add_row(f"r{r} {label}", Text("—", style="dim"), "")
        self.update(table)

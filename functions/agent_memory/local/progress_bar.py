"""A progress bar for the CLI's long commands (export, import), drawn on stderr."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from agent_memory.contract.v1_exports import ExportOut

BAR = 20


class ProgressBar:
    """The bar on stderr: one line redrawn in place on a terminal, a line per tenth elsewhere
    (a log file gets ten lines, not one per item)."""

    def __init__(self, stream: IO[str] | None) -> None:
        self._stream = stream
        self._tty = bool(stream is not None and stream.isatty())
        self._shown = -1
        self._open = False

    def count(self, done: int, total: int, unit: str) -> None:
        """``done`` of ``total`` things (``unit``), as a bar."""
        percent = 100.0 * done / total if total else 100.0
        self._draw(self._bar(percent) + f"  {done:,}/{total:,} {unit}", int(percent // 10))

    @staticmethod
    def _bar(percent: float) -> str:
        filled = int(BAR * percent / 100)
        return f"[{'#' * filled}{'-' * (BAR - filled)}] {percent:5.1f}%"

    def export(self, status: ExportOut) -> None:
        p = status.progress
        if p.estimated_total is None and status.status == "queued":
            self._draw("queued ...", -2)
            return
        total = p.estimated_total if p.estimated_total is not None else 0
        percent = p.percent if p.percent is not None else 0.0
        text = self._bar(percent) + f"  {p.memories:,}/{total:,} memories"
        self._draw(text, int(percent // 10))

    def download(self, done: int, total: int | None) -> None:
        of = f" of {total / 1e6:.1f}" if total else ""
        self._draw(f"downloading ... {done / 1e6:.1f}{of} MB", 100 + (done * 10 // total if total else 0))

    def _draw(self, text: str, step: int) -> None:
        if self._stream is None:
            return
        if self._tty:
            self._stream.write("\r" + text.ljust(60))
            self._open = True
        elif step != self._shown:
            self._stream.write(text + "\n")
        self._shown = step
        self._stream.flush()

    def end(self) -> None:
        if self._stream is not None and self._open:
            self._stream.write("\n")
            self._stream.flush()
            self._open = False

    def fail(self, reason: object, code: int = 2) -> int:
        """End the bar's line and say on stderr why the command stops; the exit code to return."""
        self.end()
        print(f"error: {reason}", file=sys.stderr)
        return code

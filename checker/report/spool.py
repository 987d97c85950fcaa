"""A list of report fragments kept on disk past a few megabytes: what lets the JUnit and SARIF reports,
whose counts come before their entries, be written over an archive of any size in flat memory."""

from __future__ import annotations

import shutil
import tempfile
from typing import IO

# Fragments stay in memory up to this size, then spill to an anonymous temporary file.
IN_MEMORY = 8 * 2**20


class Spool:
    def __init__(self, separator: str = "") -> None:
        self.file = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY, mode="w+", encoding="utf-8",
                                                    errors="surrogatepass")
        self.separator = separator
        self.count = 0

    def add(self, fragment: str) -> None:
        if self.count and self.separator:
            self.file.write(self.separator)
        self.file.write(fragment)
        self.count += 1

    def copy_to(self, stream: IO[str]) -> None:
        """Write every fragment to ``stream`` and free the spool."""
        self.file.seek(0)
        shutil.copyfileobj(self.file, stream, 2**20)
        self.file.close()

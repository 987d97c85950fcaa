"""What the machine holds of each output item and of each of its parts while the stream runs.

Texts and arguments are ``TextAccumulator``s, so memory stays bounded by the open items: a done item's text
is released (see checker/dialects/responses/item_tracking.py ``ItemTracker.release``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from checker.dialects.responses import hosted
from checker.text import TextAccumulator


@dataclass(slots=True)
class Part:
    """A content or summary part of an item as streamed so far: its index, type, text and state."""

    index: int
    type: str | None
    text: TextAccumulator
    implicit: bool = False  # created for a delta that arrived without its part
    text_done: bool = False
    closed: bool = False
    # The part's annotations (canonical JSON) as streamed; None: it has no annotations list to add to.
    cited: list[bytes | str] | None = field(default_factory=list)


@dataclass(slots=True)
class Item:
    """An output item as streamed so far: its identity, position, state and parts."""

    id: str | None
    type: str | None
    output_index: int | None
    added_at: int | None
    call_id: str | None = None
    name: str | None = None
    execution: str | None = None  # a tool call's `execution` ("client": the caller runs it)
    done: bool = False
    content: list[Part] = field(default_factory=list)
    summary: list[Part] = field(default_factory=list)
    arguments: TextAccumulator = field(default_factory=TextAccumulator)
    arguments_done: bool = False
    had_status: bool = False  # the added item carried a status
    # What the item's output_item.done said, for the final-output comparison.
    final_fingerprint: bytes | None = None
    done_status: str | None = None  # its status at output_item.done (REC007 compares the terminal's)
    announced: bool = True  # False: known only from an output_item.done without added
    tool: hosted.ToolState | None = None  # a hosted-tool call's progress and streamed input
    final_opaque: bytes | None = None  # a digest of its encrypted_content (see final_forms.opaque)

    @property
    def label(self) -> str:
        return self.id if self.id is not None else f"#{self.output_index}"

"""What every predictor returns: a value, why, and how sure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple


@dataclass(frozen=True)
class Prediction:
    """A predicted effective value, why, and how sure: unpacks as `value, reason`."""

    value: Any
    reason: str
    certain: bool = True
    alternatives: Tuple[Any, ...] = ()   # other values possible under facts the config lacks
    fields: Tuple[str, ...] = ()         # the settings that decided it
    error: Optional[str] = None          # what vLLM raises while deciding this, if it does

    def __iter__(self):
        yield self.value
        yield self.reason

    @property
    def candidates(self) -> Tuple[Any, ...]:
        """Return the value then the alternatives, without repeats."""
        out: List[Any] = []
        for item in (self.value,) + tuple(self.alternatives):
            if item not in out:
                out.append(item)
        return tuple(out)

"""Regular expressions compiled when first used, not when their module is imported.

A run imports some forty module-level expressions and uses about half: compiling
the rest cost a one-file pre-commit run about 5 ms. ``compile`` returns a stand-in
that compiles on the first method call and then keeps the compiled methods as its
own attributes, so later calls cost what calls on a compiled pattern cost. Only
method calls and ``.pattern`` are supported (not ``re.sub(stand_in, ...)``).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:
    from typing import Any, AnyStr


class _Lazy:
    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self.pattern, self.flags = pattern, flags

    def __getattr__(self, name: str) -> Any:
        value = getattr(re.compile(self.pattern, self.flags), name)
        setattr(self, name, value)  # the next call finds it here, not in __getattr__
        return value


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile``, deferred to the first use."""
    return _Lazy(pattern, flags)  # type: ignore[return-value]  # a stand-in

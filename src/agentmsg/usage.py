"""Token usage and cost: ``agentmsg.v1.Usage`` and ``agentmsg.v1.UsageCost``.

Every count and amount is ``None`` when unknown, which is not the same as 0.
See usage.proto for how counts are normalised across providers.
"""

from __future__ import annotations

from typing import Any

from agentmsg import _validation
from agentmsg._wrapper import ProtoWrapper
from agentmsg.errors import ValidationError
from agentmsg.v1 import usage_pb2

__all__ = ["Usage", "UsageCost"]

# Field names in proto order; the dict forms read and write them by these names.
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "total_tokens",
)
COST_FIELDS = ("input", "output", "cache_read", "cache_write", "total")


def _optional(pb: Any, field: str) -> Any:
    return getattr(pb, field) if pb.HasField(field) else None


class UsageCost(ProtoWrapper[usage_pb2.UsageCost]):
    """What a response's tokens cost, in US dollars (``agentmsg.v1.UsageCost``)."""

    __slots__ = ()
    _PB = usage_pb2.UsageCost

    def __init__(
        self,
        input: float | None = None,  # noqa: A002 - the seed's field name
        output: float | None = None,
        cache_read: float | None = None,
        cache_write: float | None = None,
        total: float | None = None,
    ) -> None:
        pb = usage_pb2.UsageCost()
        for field, value in zip(COST_FIELDS, (input, output, cache_read, cache_write, total), strict=True):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValidationError.single(field, "type", f"expected a number, got {type(value).__name__}")
            setattr(pb, field, float(value))
        _validation.check(pb)
        self._pb = pb

    @property
    def input(self) -> float | None:
        """Cost of the uncached input tokens."""
        return _optional(self._pb, "input")  # type: ignore[no-any-return]

    @property
    def output(self) -> float | None:
        """Cost of the output tokens."""
        return _optional(self._pb, "output")  # type: ignore[no-any-return]

    @property
    def cache_read(self) -> float | None:
        """Cost of the cache-read tokens."""
        return _optional(self._pb, "cache_read")  # type: ignore[no-any-return]

    @property
    def cache_write(self) -> float | None:
        """Cost of the cache-write tokens."""
        return _optional(self._pb, "cache_write")  # type: ignore[no-any-return]

    @property
    def total(self) -> float | None:
        """Cost of the whole response."""
        return _optional(self._pb, "total")  # type: ignore[no-any-return]


class Usage(ProtoWrapper[usage_pb2.Usage]):
    """Tokens a response used (``agentmsg.v1.Usage``); ``None`` means not reported."""

    __slots__ = ()
    _PB = usage_pb2.Usage

    def __init__(
        self,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cache_read_tokens: int | None = None,
        cache_write_tokens: int | None = None,
        reasoning_tokens: int | None = None,
        total_tokens: int | None = None,
        cost: UsageCost | None = None,
    ) -> None:
        pb = usage_pb2.Usage()
        values = (input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, total_tokens)
        for field, value in zip(TOKEN_FIELDS, values, strict=True):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValidationError.single(field, "type", f"expected an int, got {type(value).__name__}")
            if not -(2**63) <= value < 2**63:
                raise ValidationError.single(field, "int64", f"{value} does not fit in int64")
            setattr(pb, field, value)
        if cost is not None:
            if not isinstance(cost, UsageCost):
                raise ValidationError.single("cost", "type", f"expected UsageCost, got {type(cost).__name__}")
            pb.cost.CopyFrom(cost._pb)
        _validation.check(pb)
        self._pb = pb

    @property
    def input_tokens(self) -> int | None:
        """Prompt tokens not read from or written to the cache."""
        return _optional(self._pb, "input_tokens")  # type: ignore[no-any-return]

    @property
    def output_tokens(self) -> int | None:
        """Generated tokens, reasoning included."""
        return _optional(self._pb, "output_tokens")  # type: ignore[no-any-return]

    @property
    def cache_read_tokens(self) -> int | None:
        """Prompt tokens read from the cache."""
        return _optional(self._pb, "cache_read_tokens")  # type: ignore[no-any-return]

    @property
    def cache_write_tokens(self) -> int | None:
        """Prompt tokens written to the cache."""
        return _optional(self._pb, "cache_write_tokens")  # type: ignore[no-any-return]

    @property
    def reasoning_tokens(self) -> int | None:
        """The reasoning part of the output tokens."""
        return _optional(self._pb, "reasoning_tokens")  # type: ignore[no-any-return]

    @property
    def total_tokens(self) -> int | None:
        """The provider's reported total."""
        return _optional(self._pb, "total_tokens")  # type: ignore[no-any-return]

    @property
    def cost(self) -> UsageCost | None:
        """The cost, or None when not known."""
        return UsageCost._wrap(self._pb.cost) if self._pb.HasField("cost") else None

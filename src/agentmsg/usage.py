"""Token usage and cost: ``agentmsg.v1.Usage`` and ``agentmsg.v1.UsageCost``.

Read as the seed reads them: every count is an ``int`` and every amount a
``float``, 0 when the provider did not report it (``usage.input_tokens +
usage.output_tokens`` always works), and ``usage.cost`` is always a
:class:`UsageCost`. The contract keeps "not reported" apart from 0 (field
presence): :attr:`Usage.reported` and :attr:`UsageCost.reported` name the
fields that were reported, and the dict forms and converters write only those.
See usage.proto for how counts are normalised across providers.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    "cache_write_5m_tokens",
    "cache_write_1h_tokens",
)
COST_FIELDS = ("input", "output", "cache_read", "cache_write", "total")


def _reported(pb: Any, fields: tuple[str, ...]) -> frozenset[str]:
    return frozenset(field for field in fields if pb.HasField(field))


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
        _validation.ensure(pb)
        self._pb = pb

    @property
    def input(self) -> float:
        """Cost of the uncached input tokens (0.0 when not reported)."""
        return self._pb.input

    @property
    def output(self) -> float:
        """Cost of the output tokens (0.0 when not reported)."""
        return self._pb.output

    @property
    def cache_read(self) -> float:
        """Cost of the cache-read tokens (0.0 when not reported)."""
        return self._pb.cache_read

    @property
    def cache_write(self) -> float:
        """Cost of the cache-write tokens (0.0 when not reported)."""
        return self._pb.cache_write

    @property
    def total(self) -> float:
        """Cost of the whole response (0.0 when not reported)."""
        return self._pb.total

    def known(self, field: str) -> float | None:
        """An amount (``"input"``, ``"total"``...) when it was reported, else None (unknown, which is not 0.0)."""
        if field not in COST_FIELDS:
            raise ValidationError.single(field, "enum", f"not a cost field; one of: {', '.join(COST_FIELDS)}")
        return getattr(self._pb, field) if self._pb.HasField(field) else None  # type: ignore[arg-type]

    @property
    def reported(self) -> frozenset[str]:
        """The amounts that were reported (``"input"``, ``"total"``...): the others read 0.0 but are unknown."""
        return _reported(self._pb, COST_FIELDS)


class Usage(ProtoWrapper[usage_pb2.Usage]):
    """Tokens a response used (``agentmsg.v1.Usage``); a count not reported reads 0 (see :attr:`reported`)."""

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
        *,
        cache_write_5m_tokens: int | None = None,
        cache_write_1h_tokens: int | None = None,
        hosted_tool_requests: Mapping[str, int] | None = None,
    ) -> None:
        pb = usage_pb2.Usage()
        values = (
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cache_write_tokens,
            reasoning_tokens,
            total_tokens,
            cache_write_5m_tokens,
            cache_write_1h_tokens,
        )
        for field, value in zip(TOKEN_FIELDS, values, strict=True):
            if value is None:
                continue
            _check_int64(value, field)
            setattr(pb, field, value)
        if cost is not None:
            if not isinstance(cost, UsageCost):
                raise ValidationError.single("cost", "type", f"expected UsageCost, got {type(cost).__name__}")
            pb.cost.CopyFrom(cost._pb)
        if hosted_tool_requests is not None:
            if not isinstance(hosted_tool_requests, Mapping):
                raise ValidationError.single(
                    "hosted_tool_requests", "type", f"expected a dict, got {type(hosted_tool_requests).__name__}"
                )
            for key, count in hosted_tool_requests.items():
                if not isinstance(key, str):
                    raise ValidationError.single(
                        "hosted_tool_requests", "type", f"expected str keys, got {type(key).__name__}"
                    )
                _check_int64(count, f"hosted_tool_requests[{key!r}]")
                pb.hosted_tool_requests[key] = count
        _validation.ensure(pb)
        self._pb = pb

    @property
    def input_tokens(self) -> int:
        """Prompt tokens not read from or written to the cache (0 when not reported)."""
        return self._pb.input_tokens

    @property
    def output_tokens(self) -> int:
        """Generated tokens, reasoning included (0 when not reported)."""
        return self._pb.output_tokens

    @property
    def cache_read_tokens(self) -> int:
        """Prompt tokens read from the cache (0 when not reported)."""
        return self._pb.cache_read_tokens

    @property
    def cache_write_tokens(self) -> int:
        """Prompt tokens written to the cache (0 when not reported)."""
        return self._pb.cache_write_tokens

    @property
    def reasoning_tokens(self) -> int:
        """The reasoning part of the output tokens (0 when not reported)."""
        return self._pb.reasoning_tokens

    @property
    def total_tokens(self) -> int:
        """The provider's reported total (0 when not reported)."""
        return self._pb.total_tokens

    @property
    def cache_write_5m_tokens(self) -> int:
        """The part of the cache writes to 5-minute entries (0 when not reported)."""
        return self._pb.cache_write_5m_tokens

    @property
    def cache_write_1h_tokens(self) -> int:
        """The part of the cache writes to 1-hour entries (0 when not reported)."""
        return self._pb.cache_write_1h_tokens

    @property
    def hosted_tool_requests(self) -> dict[str, int]:
        """How many times each hosted tool was used (``{"web_search": 2}``); a missing key was not reported.

        Keys are :class:`~agentmsg.HostedToolKind` values, or the provider's
        own name for a tool no kind covers.
        """
        return dict(self._pb.hosted_tool_requests)

    @property
    def cost(self) -> UsageCost:
        """The cost (every amount 0.0 when none was reported: ``"cost" in usage.reported`` tells)."""
        if self._pb.HasField("cost"):
            return UsageCost._wrap(self._pb.cost)
        return UsageCost()  # a detached empty cost: reading it never marks the usage's cost as set

    def known(self, field: str) -> int | None:
        """A count (``"input_tokens"``...) when it was reported, else None (unknown, which is not 0)."""
        if field not in TOKEN_FIELDS:
            raise ValidationError.single(field, "enum", f"not a token count; one of: {', '.join(TOKEN_FIELDS)}")
        return getattr(self._pb, field) if self._pb.HasField(field) else None  # type: ignore[arg-type]

    @property
    def reported(self) -> frozenset[str]:
        """The counts that were reported (``"input_tokens"``..., ``"cost"`` when a cost was given).

        ``"hosted_tool_requests"`` is in it when any hosted tool count was
        reported. A count missing here reads 0 but is unknown, not zero.
        """
        found = _reported(self._pb, (*TOKEN_FIELDS, "cost"))
        return found | {"hosted_tool_requests"} if self._pb.hosted_tool_requests else found


def _check_int64(value: Any, field: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError.single(field, "type", f"expected an int, got {type(value).__name__}")
    if not -(2**63) <= value < 2**63:
        raise ValidationError.single(field, "int64", f"{value} does not fit in int64")

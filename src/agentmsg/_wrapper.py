"""The base of every wrapper: one generated message held by reference.

A wrapper owns exactly one generated protobuf message (``_pb``) and reads its
fields through explicit properties. Encoding is the generated message's own,
so a wrapper costs almost nothing over raw protobuf. There is no attribute
magic: the generated message is reachable as ``.pb`` / ``to_proto()``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Self, TypeVar

from google.protobuf import json_format
from google.protobuf.internal import api_implementation
from google.protobuf.message import DecodeError as _PbDecodeError
from google.protobuf.message import Message

from agentmsg import _validation
from agentmsg.errors import DecodeError, ValidationError

P = TypeVar("P", bound=Message)
_UPB = api_implementation.Type() == "upb"
_new = object.__new__


class ProtoWrapper(Generic[P]):
    """A typed view over one generated ``agentmsg.v1`` message."""

    __slots__ = ("_pb",)

    _pb: P
    _PB: ClassVar[type[Message]]
    # True where from_proto picks a subclass from the message (a oneof arm): decoding then goes through it.
    _DISPATCH: ClassVar[bool] = False

    @classmethod
    def _wrap(cls, pb: P) -> Self:
        obj = cls.__new__(cls)
        obj._pb = pb
        return obj

    @property
    def pb(self) -> P:
        """The generated message this wrapper reads (live, not a copy)."""
        return self._pb

    def to_proto(self) -> P:
        """The generated message this wrapper reads (live, not a copy)."""
        return self._pb

    @classmethod
    def from_proto(cls, pb: P, *, validate: bool = False) -> Self:
        """Wrap a generated message without copying it.

        With ``validate=True`` the message is checked against the contract's
        rules first and :class:`~agentmsg.ValidationError` lists every violation.
        """
        if not isinstance(pb, cls._PB):
            raise TypeError(
                f"{cls.__name__}.from_proto expects {cls._PB.DESCRIPTOR.full_name}, got {type(pb).__name__}"
            )
        if validate:
            _validation.check(pb)
        return cls._wrap(pb)

    def to_bytes(self) -> bytes:
        """Binary protobuf encoding (deterministic: equal values give equal bytes)."""
        if _UPB:
            # upb takes the flag positionally; parsing the keyword costs more than encoding a small message.
            return self._pb.SerializeToString(True)  # type: ignore[call-arg]
        return self._pb.SerializeToString(deterministic=True)

    @classmethod
    def from_bytes(cls, data: bytes, *, validate: bool = False) -> Self:
        """Decode binary protobuf. Malformed bytes raise :class:`~agentmsg.DecodeError`.

        Decoding checks the encoding, not the contract's rules: pass
        ``validate=True`` (or call :func:`agentmsg.validate`) for data from an
        untrusted peer.
        """
        if type(data) is not bytes:
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise DecodeError(f"{cls.__name__}.from_bytes expects bytes, got {type(data).__name__}")
            data = bytes(data)
        try:
            pb = cls._PB.FromString(data)
        except _PbDecodeError as exc:
            raise DecodeError(f"not a valid {cls._PB.DESCRIPTOR.full_name} encoding: {exc}") from None
        if cls._DISPATCH:
            return cls.from_proto(pb, validate=validate)  # type: ignore[arg-type]
        # The message is of this class's type by construction: wrap it without from_proto's checks.
        if validate:
            _validation.check(pb)
        obj = _new(cls)
        obj._pb = pb  # type: ignore[assignment]
        return obj

    def to_json(self, *, indent: int | None = None) -> str:
        """ProtoJSON, the canonical JSON form (lowerCamelCase names, defaults omitted).

        A value ProtoJSON cannot print (a timestamp outside 0001..9999, stored before the contract's range
        rule) raises :class:`~agentmsg.ValidationError`, never a bare ``ValueError``.
        """
        try:
            return json_format.MessageToJson(self._pb, indent=indent, ensure_ascii=False)
        except (ValueError, json_format.Error) as exc:
            raise ValidationError.single("", "json.unprintable", f"no ProtoJSON form: {exc}") from None

    def to_json_dict(self) -> dict[str, Any]:
        """ProtoJSON as a dict (what ``json.loads(to_json())`` gives); raises as :meth:`to_json` does."""
        try:
            return json_format.MessageToDict(self._pb)
        except (ValueError, json_format.Error) as exc:
            raise ValidationError.single("", "json.unprintable", f"no ProtoJSON form: {exc}") from None

    @classmethod
    def from_json(cls, text: str | bytes | Mapping[str, Any], *, validate: bool = False) -> Self:
        """Parse ProtoJSON (a string, bytes, or an already decoded dict).

        Unknown fields are refused: a :class:`~agentmsg.DecodeError` names the
        offending field.
        """
        name = cls._PB.DESCRIPTOR.full_name
        if isinstance(text, Mapping):
            value: Any = dict(text)
        elif isinstance(text, (str, bytes, bytearray)):
            try:
                value = json.loads(text)
            except (ValueError, RecursionError) as exc:
                raise DecodeError(f"not valid ProtoJSON for {name}: {exc}") from None
        else:
            raise DecodeError(f"{cls.__name__}.from_json expects str, bytes or dict, got {type(text).__name__}")
        if not isinstance(value, dict):
            raise DecodeError(f"not valid ProtoJSON for {name}: expected a JSON object, got {type(value).__name__}")
        pb = cls._PB()
        try:
            json_format.ParseDict(value, pb)
        except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
            raise DecodeError(f"not valid ProtoJSON for {name}: {exc}") from None
        except SystemError as exc:
            # upb looks field names up as UTF-8: a name holding an unpaired surrogate (which JSON text may
            # spell as an escape) surfaces as a SystemError caused by the UnicodeEncodeError.
            if not isinstance(exc.__cause__, UnicodeError):
                raise
            raise DecodeError(f"not valid ProtoJSON for {name}: a field name is not UTF-8: {exc.__cause__}") from None
        return cls.from_proto(pb, validate=validate)  # type: ignore[arg-type]

    def validate(self) -> Self:
        """Check the contract's rules; raise :class:`~agentmsg.ValidationError` or return self."""
        _validation.check(self._pb)
        return self

    def copy(self) -> Self:
        """A deep copy (a new generated message)."""
        pb = type(self._pb)()
        pb.CopyFrom(self._pb)
        return self._wrap(pb)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return bool(self._pb == other._pb)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = json_format.MessageToDict(self._pb)
        text = repr(fields)
        if len(text) > 200:
            text = text[:197] + "..."
        return f"{type(self).__name__}({text})"

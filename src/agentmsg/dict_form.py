"""The seed-1 dict form: the shape of the seed's dataclasses as plain dicts.

The seed (a Python agent framework's message layer) stored messages as
``dataclasses.asdict`` output. This module reads and writes that shape, so
histories kept in it load into agentmsg and go back out unchanged::

    {"role": "user", "id": "...", "timestamp": 1700000000.123456,
     "contents": [{"type": "text", "content": "hi"},
                  {"type": "image", "images": ["<base64>"], "media_type": "image/png"}]}

Differences from the seed, each so that nothing is lost:

- binary data (images, audio) is base64 text, so the dict is JSON;
- keys the seed lacks are added only when they carry information:
  ``media_type``, ``detail``, ``file_id`` on media; ``context`` on documents; ``signature`` on text;
  ``arguments`` (the verbatim argument text, always written), ``index``,
  ``signature``, ``server_name`` on tool calls; ``name``, ``index``,
  ``terminate_message`` on tool results; ``name`` on messages;
  ``stop_reason_raw``, ``provenance``, ``reasoning_tokens``, ``total_tokens``
  on assistant messages; ``id`` on session-only messages;
- a tool result whose content is more than one text block (or not text) has
  ``content`` as a list of content dicts instead of a string;
- contract v1.1 additions the seed has no form for: ``citations`` and
  ``logprobs`` on text (lists of the citations' and tokens' ProtoJSON with
  proto field names), ``stop_sequence`` on assistant messages, the usage
  counts ``cache_write_5m_tokens``, ``cache_write_1h_tokens`` and
  ``hosted_tool_requests``, and the ``hosted_tool_call`` and
  ``hosted_tool_result`` blocks (their fields by proto name, written when
  set; typed bodies and ``original`` as ProtoJSON with proto field names;
  ``content`` as content dicts), and a tool call's and an assistant
  message's ``provider_extra`` (the same form: ``{"provider", "type",
  "json"}``);
- contract v1.2: ``requires_approval`` on tool calls (written when true) and
  the ``approval`` block (``{"type": "approval", "call_id", "decision":
  "approved" | "denied", "reason", "decided_by", "decided_at"`` (RFC 3339),
  ``"original"}``, the optional keys written when set);
- unknown usage counts are left out (the seed wrote 0, which agentmsg keeps
  apart from unknown);
- ``timestamp`` is epoch seconds as a float, exact to the microsecond.

An ``image`` (``audio``) dict is one block of one or more images (clips),
as in the seed. Each item is a base64 string or a URL, or, for a provider
file id (which the seed has no form for), ``{"file_id": ...}``; a block of
several items writes their media types as ``media_types`` (one per item)
instead of ``media_type``. ``"file:"`` audio paths are refused: decoded data
never reads local files (use ``AudioContent.from_file``).
"""

from __future__ import annotations

from agentmsg.content import content_from_dict, content_to_dict, contents_from_dict
from agentmsg.messages import message_from_dict, message_to_dict, messages_from_dicts, messages_to_dicts

__all__ = [
    "content_from_dict",
    "content_to_dict",
    "contents_from_dict",
    "message_from_dict",
    "message_to_dict",
    "messages_from_dicts",
    "messages_to_dicts",
]

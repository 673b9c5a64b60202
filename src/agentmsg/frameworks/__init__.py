"""Converters between agentmsg messages and agent frameworks' and agent protocols' message models.

One module per framework or protocol, each importing that framework's own package (an optional extra
of agentmsg), each reporting what the other side cannot hold as the provider converters do
(:class:`~agentmsg.providers._common.ConversionReport`).
"""

from __future__ import annotations

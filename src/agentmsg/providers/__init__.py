"""Converters between agentmsg messages and other JSON wire formats.

One module per wire format; pure functions over plain dicts: no provider SDK
is imported, nothing is sent anywhere, and each module states what its format
cannot hold and what it keeps in the format's own extension slots.
"""

from __future__ import annotations

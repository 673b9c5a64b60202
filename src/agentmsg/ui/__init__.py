"""Converters between agentmsg messages and the agent-UI protocols: AG-UI 1.0
(:mod:`agentmsg.ui.ag_ui`) and the Vercel AI SDK v7 ``UIMessage`` and UI message stream
(:mod:`agentmsg.ui.ai_sdk`).

Pure functions over plain dicts in each protocol's wire form; no protocol package is
imported at run time. Losses are reported as by the provider converters
(:class:`ConversionReport`, :class:`Loss`).
"""

from __future__ import annotations

from agentmsg.ui._common import AGENTMSG_KEY, ConversionError, ConversionReport, ConversionWarning, Loss

__all__ = ["AGENTMSG_KEY", "ConversionError", "ConversionReport", "ConversionWarning", "Loss"]

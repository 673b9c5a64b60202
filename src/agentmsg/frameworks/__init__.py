"""Agent frameworks that speak agentmsg: one module per framework, each imported on its own.

- :mod:`agentmsg.frameworks.pydantic_ai`: pydantic-ai's ``ModelMessage`` history both ways, and
  :class:`~agentmsg.frameworks.pydantic_ai.AgentHistory`, an agent's history kept in an agentmsg session
  (``pip install 'agentmsg[pydantic-ai]'``).
- :mod:`agentmsg.frameworks.openai_agents`: the OpenAI Agents SDK's items both ways, and
  :class:`~agentmsg.frameworks.openai_agents.AgentmsgSession`, the SDK's ``Session`` over the agentmsg service
  (``pip install 'agentmsg[openai-agents]'``).
- :mod:`agentmsg.frameworks.a2a`: A2A ``Message``/``Part`` both ways, with the agentmsg A2A extension carrying
  what plain parts cannot (``pip install 'agentmsg[a2a]'``).

Nothing here is imported by ``import agentmsg``: each module imports its framework, which is an optional extra.
"""

from __future__ import annotations

"""The HTTP adapters: ``SessionService`` and ``ToolService`` over Connect (JSON and binary) and gRPC-Web
(:mod:`~agentmsg.service.http.app`, the ASGI application), run by uvicorn in the gRPC server's event loop
(:mod:`~agentmsg.service.http.server`). Needs the ``http`` extra: ``pip install 'agentmsg[http]'``."""

"""The gRPC adapters: servicers over :mod:`agentmsg.service.handlers`, and what only gRPC needs (request
decoding that keeps a large message's received encoding, Subscribe batches framed once for every subscriber)."""

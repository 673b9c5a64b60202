// The Node client: BaseClient (clientCore.ts) over gRPC (HTTP/2, transport.ts), plus PublishStream, the client
// stream only gRPC carries.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { BaseClient, type CallControl, type ClientDefaults } from "./clientCore.js";
import { ValidationError } from "./errors.js";
import type { Message } from "./gen/agentmsg/v1/message_pb.js";
import type { PublishStreamRequestSchema } from "./gen/agentmsg/v1/session_service_pb.js";
import type { StreamEvent } from "./gen/agentmsg/v1/stream_pb.js";
import { type ConnectionOptions, connect } from "./transport.js";

export interface ClientOptions extends ConnectionOptions, ClientDefaults {}

/** The agentmsg service client over gRPC, to `target` (`host:port` or a URL). `close()` when done. */
export class Client extends BaseClient {
  constructor(target: string, options: ClientOptions = {}) {
    super(connect(target, options), options);
  }

  /** Relay a message's stream events live, as they come; the finished message's offset and the message. */
  async publishStream(
    sessionId: string,
    events: Iterable<StreamEvent> | AsyncIterable<StreamEvent>,
    control: CallControl = {},
  ): Promise<{ offset: bigint; message: Message }> {
    async function* requests(): AsyncGenerator<MessageInitShape<typeof PublishStreamRequestSchema>> {
      let first = true;
      for await (const event of events) {
        yield { sessionId: first ? sessionId : "", event };
        first = false;
      }
    }
    const response = await this.unary(() => this.sessions.publishStream(requests(), this.options(control)));
    if (response.message === undefined) throw new ValidationError([], "response", "the server returned no message");
    return { offset: response.offset, message: response.message };
  }
}

// The browser client: BaseClient (clientCore.ts) over Connect or gRPC-Web (webTransport.ts). Every call of the Node
// client but PublishStream, a client stream that fetch cannot send.

import { BaseClient, type ClientDefaults } from "./clientCore.js";
import { connectWeb, type WebConnectionOptions } from "./webTransport.js";

export interface WebClientOptions extends WebConnectionOptions, ClientDefaults {}

/**
 * The agentmsg service client over the service's HTTP port (`agentmsg serve --http PORT`), at `baseUrl`
 * (`http://host:port`). A page on another origin needs that origin allowed by the server (`--cors-origin`).
 */
export class Client extends BaseClient {
  constructor(baseUrl: string, options: WebClientOptions = {}) {
    super(connectWeb(baseUrl, options), options);
  }
}

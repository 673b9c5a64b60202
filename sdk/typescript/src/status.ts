// Failed calls back into the agentmsg error classes: the same table as the Python library's
// src/agentmsg/service/status.py. The server sends a google.rpc.Status whose ErrorInfo (domain "agentmsg") names the
// error class and whose BadRequest lists a ValidationError's violations; a status gRPC itself produced (deadline,
// size limit, unreachable server) maps by its code.

import { Code, ConnectError } from "@connectrpc/connect";
import {
  AgentMsgError,
  CancelledError,
  ConflictError,
  DeadlineExceededError,
  DecodeError,
  MediaError,
  NotFoundError,
  PermissionDeniedError,
  ResourceExhaustedError,
  ServiceError,
  StoreError,
  StoreFullError,
  UnauthenticatedError,
  UnavailableError,
  ValidationError,
  type Violation,
} from "./errors.js";
import { BadRequestSchema, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

/** The ErrorInfo domain of the agentmsg service's errors. */
export const DOMAIN = "agentmsg";

type Plain = new (message: string) => AgentMsgError;

// ErrorInfo reason (the Python class name) -> the class thrown here.
const BY_NAME: Readonly<Record<string, Plain>> = {
  DecodeError,
  MediaError,
  NotFoundError,
  ConflictError,
  UnauthenticatedError,
  PermissionDeniedError,
  UnavailableError,
  DeadlineExceededError,
  CancelledError,
  ResourceExhaustedError,
  StoreError,
  StoreFullError,
};

// Status code -> the class for a status with no agentmsg ErrorInfo.
const BY_CODE: Partial<Record<Code, Plain>> = {
  [Code.NotFound]: NotFoundError,
  [Code.AlreadyExists]: ConflictError,
  [Code.Unauthenticated]: UnauthenticatedError,
  [Code.PermissionDenied]: PermissionDeniedError,
  [Code.Unavailable]: UnavailableError,
  [Code.DeadlineExceeded]: DeadlineExceededError,
  [Code.Canceled]: CancelledError,
  [Code.ResourceExhausted]: ResourceExhaustedError,
};

/** gRPC's name of a status code, lower case (`invalid_argument`), as the Python client writes it in a violation. */
function codeName(code: Code): string {
  return (Code[code] ?? "unknown")
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/^canceled$/, "cancelled");
}

/** The agentmsg error a failed call stands for (the class the server raised); other errors pass through. */
export function fromCallError(error: unknown): unknown {
  if (error instanceof AgentMsgError) return error;
  if (!(error instanceof ConnectError)) return error;
  const message = error.rawMessage || codeName(error.code);
  let reason = "";
  for (const info of error.findDetails(ErrorInfoSchema)) if (info.domain === DOMAIN) reason = info.reason;
  const violations: Violation[] = error
    .findDetails(BadRequestSchema)
    .flatMap((bad) => bad.fieldViolations.map((v) => ({ field: v.field, ruleId: v.reason, message: v.description })));
  if (reason === "ValidationError" || (reason === "" && error.code === Code.InvalidArgument)) {
    const found = violations.length > 0 ? violations : [{ field: "", ruleId: codeName(error.code), message }];
    return new ValidationError(found, "request", message);
  }
  if (reason === "ToolArgumentsError") {
    return new ValidationError([{ field: "arguments", ruleId: "json", message }], "request", message);
  }
  const cls = BY_NAME[reason] ?? BY_CODE[error.code] ?? ServiceError;
  const out = new cls(message);
  out.cause = error;
  return out;
}

/** True for an error worth retrying on a new connection: UNAVAILABLE, the service or its store was unreachable or
 * restarting (a StoreError too, as the Python client's retry policy has it; a full store, StoreFullError, is
 * RESOURCE_EXHAUSTED and is not retried). */
export function isTransient(error: unknown): boolean {
  return (error instanceof UnavailableError || error instanceof StoreError) && !(error instanceof StoreFullError);
}

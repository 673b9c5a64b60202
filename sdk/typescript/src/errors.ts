// One error vocabulary, the same as the Python library's (src/agentmsg/errors.py): every error the SDK throws is
// an AgentMsgError; a failed call becomes the class the server raised, read from the google.rpc.ErrorInfo detail
// (reason = the class name, domain "agentmsg"), with a BadRequest's field violations on a ValidationError.

/** One broken rule: where (`user.content[1].image.media_type`), which rule (`string.min_len`), what is wrong. */
export interface Violation {
  readonly field: string;
  readonly ruleId: string;
  readonly message: string;
}

function describe(v: Violation): string {
  return `${v.field || "<message>"}: ${v.message} [${v.ruleId}]`;
}

/** Base class of every error agentmsg throws. */
export class AgentMsgError extends Error {
  override name = "AgentMsgError";
}

/** A value breaks the contract's rules; carries every violation found. */
export class ValidationError extends AgentMsgError {
  override name = "ValidationError";
  readonly violations: readonly Violation[];

  constructor(violations: readonly Violation[], what = "message", message?: string) {
    super(message ?? `invalid ${what}: ${violations.map(describe).join("; ")}`);
    this.violations = violations;
  }

  /** An error with one violation. */
  static single(field: string, ruleId: string, message: string, what = "value"): ValidationError {
    return new ValidationError([{ field, ruleId, message }], what);
  }
}

/** Bytes or JSON that are not a well-formed encoding of the expected type. */
export class DecodeError extends AgentMsgError {
  override name = "DecodeError";
}

/** Media that cannot be used (bad base64, unknown format). */
export class MediaError extends AgentMsgError {
  override name = "MediaError";
}

/** A tool call's argument text is not a JSON object (raised only when the parsed arguments are asked for). */
export class ToolArgumentsError extends AgentMsgError {
  override name = "ToolArgumentsError";
  constructor(
    readonly callId: string,
    readonly toolName: string,
    readonly reason: string,
    readonly args: string,
  ) {
    const preview = args.length <= 80 ? args : `${args.slice(0, 77)}...`;
    super(`tool call '${callId}' (${toolName}): arguments are not a JSON object: ${reason}; text: '${preview}'`);
  }
}

/** An event that breaks the stream's rules (out of order, wrong kind, a gap). */
export class StreamProtocolError extends AgentMsgError {
  override name = "StreamProtocolError";
}

/** The stream was finished before it ended, or with a block still open. */
export class IncompleteStreamError extends AgentMsgError {
  override name = "IncompleteStreamError";
  constructor(
    message: string,
    readonly openBlocks: readonly number[],
  ) {
    super(message);
  }
}

/** An error from the agentmsg service: each subclass is one gRPC status. */
export class ServiceError extends AgentMsgError {
  override name = "ServiceError";
}
/** No such tool (or other named thing): NOT_FOUND. */
export class NotFoundError extends ServiceError {
  override name = "NotFoundError";
}
/** The request clashes with what is stored (a message id reused for other content, a tool name taken): ALREADY_EXISTS. */
export class ConflictError extends ServiceError {
  override name = "ConflictError";
}
/** No bearer token, or a wrong one: UNAUTHENTICATED. */
export class UnauthenticatedError extends ServiceError {
  override name = "UnauthenticatedError";
}
/** The token does not allow this session or operation: PERMISSION_DENIED. */
export class PermissionDeniedError extends ServiceError {
  override name = "PermissionDeniedError";
}
/** The service cannot be reached, or is shutting down: UNAVAILABLE. */
export class UnavailableError extends ServiceError {
  override name = "UnavailableError";
}
/** The call's deadline passed: DEADLINE_EXCEEDED. */
export class DeadlineExceededError extends ServiceError {
  override name = "DeadlineExceededError";
}
/** The call was cancelled (an AbortSignal fired, or the server cancelled it): CANCELLED. */
export class CancelledError extends ServiceError {
  override name = "CancelledError";
}
/** A limit was hit (message size, concurrent calls, disk space): RESOURCE_EXHAUSTED. */
export class ResourceExhaustedError extends ServiceError {
  override name = "ResourceExhaustedError";
}
/** The store could not write or read: UNAVAILABLE. */
export class StoreError extends ServiceError {
  override name = "StoreError";
}
/** The store's disk (or database size limit) is full: RESOURCE_EXHAUSTED. */
export class StoreFullError extends StoreError {
  override name = "StoreFullError";
}

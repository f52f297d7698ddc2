/**
 * The API's problem+json failures as errors, one class per stable `code`, named and nested as
 * the Python client names them (`server/client/errors.py`, from `store.contract.problems`).
 */

import type { components } from "./schema.js";

export type Problem = components["schemas"]["Problem"];

export const PROBLEM_MEDIA_TYPE = "application/problem+json";

export interface ErrorFields {
  status: number;
  code: string;
  field?: string | null;
}

/** A whole-request failure the server answered (per-candidate outcomes are results). */
export class SGAMError extends Error {
  readonly detail: string;
  readonly status: number;
  readonly code: string;
  /** The body path, parameter or header at fault, where the server names one. */
  readonly field: string | null;

  constructor(detail: string, { status, code, field = null }: ErrorFields) {
    const at = field ? ` (field ${field})` : "";
    super(`${status} ${code}: ${detail}${at}`);
    this.name = new.target.name;
    this.detail = detail;
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

/** `invalid`: a body, parameter or header breaks the contract; `field` names it. */
export class InvalidInput extends SGAMError {}
/** `not_found`: nothing of that name for this tenant, or nothing known at that time. */
export class NotFound extends SGAMError {}
/** `conflict`: the request contradicts stored state. */
export class Conflict extends SGAMError {}
/** `legal_hold`: the data is under legal hold. */
export class LegalHold extends Conflict {}
/** `schema_change_requires_migration`: a redeclaration that only a migration can make. */
export class SchemaChangeRequiresMigration extends Conflict {}
/** `unauthorized`: a missing, unknown or revoked API key, or a wrong admin token. */
export class Unauthorized extends SGAMError {}
/** `forbidden`: not allowed here, e.g. a disabled clock header or admin API. */
export class Forbidden extends SGAMError {}
/** `too_large`: the body is over the server's size limit. */
export class TooLarge extends SGAMError {}
/** `unsupported_media_type`: a body sent to a JSON route as something else. */
export class UnsupportedMediaType extends SGAMError {}
/**
 * `unavailable`: the server's database cannot be reached, or the server itself cannot (then
 * the client throws it with status 503, as a gateway would answer).
 */
export class Unavailable extends SGAMError {}
/**
 * The server did not answer within the client's `timeoutMs` (status 504, as a gateway would
 * answer). Whether a write sent that way was applied is unknown: send it again with the same
 * ids, which every write accepts without a second effect.
 */
export class Timeout extends Unavailable {}

export type ErrorClass = new (detail: string, fields: ErrorFields) => SGAMError;

export interface ErrorKind {
  /** The status the code answers with, then any other status it also answers. */
  status: number;
  also: readonly number[];
  error: ErrorClass;
  /** The code whose error this one's extends (a legal hold is a conflict). */
  parent: string | null;
}

/** Every code the contract lists, as `store.contract.problems.ERRORS` states it. */
export const ERRORS: Readonly<Record<string, ErrorKind>> = {
  invalid: { status: 422, also: [400, 405], error: InvalidInput, parent: null },
  not_found: { status: 404, also: [], error: NotFound, parent: null },
  conflict: { status: 409, also: [], error: Conflict, parent: null },
  legal_hold: { status: 409, also: [], error: LegalHold, parent: "conflict" },
  schema_change_requires_migration: {
    status: 409,
    also: [],
    error: SchemaChangeRequiresMigration,
    parent: "conflict",
  },
  unauthorized: { status: 401, also: [], error: Unauthorized, parent: null },
  forbidden: { status: 403, also: [], error: Forbidden, parent: null },
  too_large: { status: 413, also: [], error: TooLarge, parent: null },
  unsupported_media_type: { status: 415, also: [], error: UnsupportedMediaType, parent: null },
  unavailable: { status: 503, also: [], error: Unavailable, parent: null },
  internal: { status: 500, also: [], error: SGAMError, parent: null },
};

/** The code of a failure known by its status alone (an answer without a problem body). */
export const HTTP_STATUS_CODE: ReadonlyMap<number, string> = new Map(
  Object.entries(ERRORS)
    .filter(([, kind]) => kind.parent === null)
    .flatMap(([code, kind]) => [kind.status, ...kind.also].map((status) => [status, code])),
);

function errorClass(code: string): ErrorClass {
  return ERRORS[code]?.error ?? SGAMError;
}

/** Whether the response is an RFC 9457 problem. */
export function isProblem(response: Response): boolean {
  const contentType = response.headers.get("content-type") ?? "";
  return contentType.split(";")[0]?.trim() === PROBLEM_MEDIA_TYPE;
}

function asProblem(body: unknown): Problem | null {
  if (typeof body !== "object" || body === null) return null;
  const problem = body as Record<string, unknown>;
  const texts = ["type", "title", "detail", "code"].every(
    (key) => typeof problem[key] === "string",
  );
  const field = problem["field"];
  const fieldOk = field === undefined || field === null || typeof field === "string";
  return texts && typeof problem["status"] === "number" && fieldOk ? (body as Problem) : null;
}

/**
 * The error for a failed response and its body as read: its problem's code, else one read
 * from the status (an answer not from SGAM itself: a proxy's, a load balancer's).
 */
export function errorFrom(response: Response, body: unknown): SGAMError {
  const status = response.status;
  const problem = isProblem(response) ? asProblem(body) : null;
  if (problem === null) {
    const code = HTTP_STATUS_CODE.get(status) ?? "internal";
    const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
    const detail = text.trim().slice(0, 500) || response.statusText;
    return new (errorClass(code))(detail, { status, code });
  }
  return new (errorClass(problem.code))(problem.detail, {
    status,
    code: problem.code,
    field: problem.field ?? null,
  });
}

/**
 * The client's own error for a request that got no answer: `Timeout` when it waited past its
 * timeout, `Unavailable` when the server could not be reached or hung up; anything else
 * (the caller's own abort) as it was thrown.
 */
export function unreachable(error: unknown, url: string): unknown {
  if (!(error instanceof Error)) return error;
  if (error.name === "TimeoutError") {
    return new Timeout(`SGAM at ${url} did not answer in time: ${error.name}`, {
      status: 504,
      code: "unavailable",
    });
  }
  if (error instanceof TypeError) {
    const cause = error.cause as { code?: string; name?: string } | undefined;
    const kind = cause?.code ?? cause?.name ?? error.name;
    return new Unavailable(`SGAM at ${url} cannot be reached: ${kind}`, {
      status: 503,
      code: "unavailable",
    });
  }
  return error;
}

/**
 * A typed client of the SGAM HTTP API on openapi-fetch: every route of the OpenAPI document
 * (`src/schema.ts`, generated), each call resolving to its answer's body and throwing the
 * `SGAMError` of a refusal, as the Python client does (`server/client`).
 */

import createClient, {
  type Client,
  type FetchResponse,
  type MaybeOptionalInit,
  type Middleware,
  type PathSerializer,
} from "openapi-fetch";
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from "openapi-typescript-helpers";

import { InvalidInput, PROBLEM_MEDIA_TYPE, errorFrom, isProblem, unreachable } from "./errors.js";
import type { paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

export const DEFAULT_TIMEOUT_MS = 30_000;
export const CLOCK_HEADER = "X-SGAM-Now";

export interface SGAMClientOptions {
  /** A tenant's API key, sent on every call outside /v1/admin as `Authorization: Bearer`. */
  apiKey?: string | undefined;
  /** The server's SGAM_ADMIN_TOKEN, sent on the /v1/admin calls instead. */
  adminToken?: string | undefined;
  /** How long a call waits for its answer before it throws `Timeout` (30 s by default). */
  timeoutMs?: number | undefined;
  /** Sets `X-SGAM-Now` on every call (servers that allow the clock header only). */
  now?: string | Date | undefined;
  /** The fetch to send with (the global one by default). */
  fetch?: typeof globalThis.fetch | undefined;
}

/** The body of a call's success answer. */
export type Answer<Operation extends Record<string | number, any>, Init> =
  FetchResponse<Operation, Init, "application/json"> extends infer Response
    ? Response extends { data: infer Data; error?: never }
      ? Data
      : never
    : never;

/** A call's options after its route: optional where nothing in them is required. */
type InitParam<Init> =
  RequiredKeysOf<Init> extends never
    ? [(Init & { [key: string]: unknown })?]
    : [Init & { [key: string]: unknown }];

/** One method's calls: a route of the document, its parameters and body, its answer. */
export type Send<Method extends HttpMethod> = <
  Path extends PathsWithMethod<paths, Method>,
  Init extends MaybeOptionalInit<paths[Path], Method>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<Answer<paths[Path][Method] & Record<string | number, any>, Init>>;

export interface SGAMClient {
  GET: Send<"get">;
  PUT: Send<"put">;
  POST: Send<"post">;
  PATCH: Send<"patch">;
  DELETE: Send<"delete">;
  /** The openapi-fetch client underneath, with the same credentials and headers (no timeout). */
  readonly raw: Client<paths>;
}

type Outcome = { data?: unknown; error?: unknown; response: Response };
type RawSend = (url: string, init?: unknown) => Promise<Outcome>;

/** Sends each call with the credential its route takes: the admin token under /v1/admin. */
function credentials(options: SGAMClientOptions): Middleware {
  return {
    onRequest({ request, schemaPath }) {
      const admin = schemaPath.startsWith("/v1/admin/");
      const token = admin ? options.adminToken : options.apiKey;
      if (token !== undefined) request.headers.set("Authorization", `Bearer ${token}`);
      return request;
    },
  };
}

/**
 * Path parameters, each kept within its segment. "." and ".." (valid ids, which the Python
 * client sends escaped) cannot be: a WHATWG URL, as fetch parses it, takes them as dot
 * segments even escaped, so the call would reach another route. They are refused unsent.
 */
const pathSerializer: PathSerializer = (pathname, pathParams) =>
  pathname.replace(/\{(\w+)\}/g, (template, name: string) => {
    const value = pathParams[name];
    if (value === undefined || value === null) return template;
    const segment = encodeURIComponent(String(value));
    if (/^\.+$/.test(segment) && segment.length <= 2) {
      const detail = `${JSON.stringify(segment)} cannot be sent as a path segment through fetch`;
      throw new InvalidInput(detail, { status: 422, code: "invalid", field: name });
    }
    return segment;
  });

/**
 * An abort signal for one call: the caller's own (if any), or a `TimeoutError` after
 * `timeoutMs`, whichever comes first (Node 18 has no `AbortSignal.any`); `done` stops the clock.
 */
function deadline(timeoutMs: number, own: AbortSignal | null | undefined) {
  const controller = new AbortController();
  const abort = () => controller.abort(own?.reason);
  if (own?.aborted) abort();
  own?.addEventListener("abort", abort, { once: true });
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer in ${timeoutMs} ms`, "TimeoutError")),
    timeoutMs,
  );
  const done = () => {
    clearTimeout(timer);
    own?.removeEventListener("abort", abort);
  };
  return { signal: controller.signal, done };
}

/** The success answer's body, or the error a refusal stands for. */
function answer({ data, error, response }: Outcome): unknown {
  if (!response.ok || isProblem(response)) throw errorFrom(response, response.ok ? data : error);
  return data;
}

/** A client of the SGAM at `baseUrl` (e.g. `http://127.0.0.1:8000`). */
export function createSGAMClient(baseUrl: string, options: SGAMClientOptions = {}): SGAMClient {
  const url = baseUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = { Accept: `application/json, ${PROBLEM_MEDIA_TYPE}` };
  if (options.now !== undefined) {
    headers[CLOCK_HEADER] = options.now instanceof Date ? options.now.toISOString() : options.now;
  }
  const raw = createClient<paths>({
    baseUrl: url,
    headers,
    pathSerializer,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  raw.use(credentials(options));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // The clock runs until the answer's body is read, not only its headers.
  type Init = { signal?: AbortSignal | null } | undefined;
  const method = (send: RawSend) => async (path: string, init: Init) => {
    const { signal, done } = deadline(timeoutMs, init?.signal);
    let outcome: Outcome;
    try {
      outcome = await send(path, { ...init, signal });
    } catch (error) {
      throw unreachable(error, url);
    } finally {
      done();
    }
    return answer(outcome);
  };
  const sends = raw as unknown as Record<"GET" | "PUT" | "POST" | "PATCH" | "DELETE", RawSend>;
  return {
    GET: method(sends.GET.bind(raw)) as Send<"get">,
    PUT: method(sends.PUT.bind(raw)) as Send<"put">,
    POST: method(sends.POST.bind(raw)) as Send<"post">,
    PATCH: method(sends.PATCH.bind(raw)) as Send<"patch">,
    DELETE: method(sends.DELETE.bind(raw)) as Send<"delete">,
    raw,
  };
}

/** How answers become errors and which headers go out: no server needed. */

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Conflict,
  ERRORS,
  InvalidInput,
  LegalHold,
  NotFound,
  SGAMError,
  createSGAMClient,
  errorFrom,
} from "sgam-client";

const PYTHON_ERRORS = process.env.SGAM_ERROR_KINDS;

function problem(status: number, body: unknown, type = "application/problem+json"): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": type } });
}

test("each code's error is the Python client's: name, status, parent", {
  skip: PYTHON_ERRORS === undefined && "SGAM_ERROR_KINDS (the Python client's table) is not set",
}, () => {
  const ours = Object.fromEntries(
    Object.entries(ERRORS).map(([code, kind]) => [
      code,
      { status: kind.status, also: [...kind.also], name: kind.error.name, parent: kind.parent },
    ]),
  );
  assert.deepEqual(ours, JSON.parse(PYTHON_ERRORS ?? "{}"));
  for (const kind of Object.values(ERRORS)) {
    if (kind.parent !== null) {
      const parent = ERRORS[kind.parent];
      assert.ok(parent && kind.error.prototype instanceof parent.error, kind.error.name);
    }
  }
});

test("a problem's code picks the error, its parent's class included", async () => {
  const body = { type: "about:blank", title: "t", status: 409, detail: "held", code: "legal_hold" };
  const held = errorFrom(problem(409, body), body);
  assert.ok(held instanceof LegalHold && held instanceof Conflict && held instanceof SGAMError);
  const fields = [held.status, held.code, held.detail, held.field];
  assert.deepEqual(fields, [409, "legal_hold", "held", null]);
  const unknown = { ...body, status: 418, code: "teapot" };
  const other = errorFrom(problem(418, unknown), unknown);
  assert.equal(other.constructor, SGAMError);
  assert.equal(other.code, "teapot");
});

test("an answer that is not a problem gets the code of its status", () => {
  const text = { "content-type": "text/plain" };
  const proxy = new Response("no route", { status: 404, headers: text });
  const missing = errorFrom(proxy, "no route");
  assert.ok(missing instanceof NotFound);
  assert.deepEqual([missing.code, missing.detail], ["not_found", "no route"]);
  const gateway = new Response("", { status: 502, statusText: "Bad Gateway" });
  const failed = errorFrom(gateway, undefined);
  assert.equal(failed.constructor, SGAMError);
  assert.deepEqual([failed.status, failed.code, failed.detail], [502, "internal", "Bad Gateway"]);
  const notSgam = { detail: "x", code: "invalid" };
  const plain = errorFrom(problem(400, notSgam, "application/json"), notSgam);
  assert.ok(plain instanceof InvalidInput);
  assert.equal(plain.detail, JSON.stringify(notSgam));
});

const SENT =
  "the API key goes as a bearer token, the admin token to /v1/admin only; ids keep their segment";

test(SENT, async () => {
  const sent: Request[] = [];
  const fetch = async (input: Request | string | URL, init?: RequestInit) => {
    sent.push(new Request(input, init));
    return new Response(JSON.stringify({ status: "ok" }), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  };
  const options = { apiKey: "sgam_key", adminToken: "admin", now: "2026-06-01T00:00:00Z", fetch };
  const sgam = createSGAMClient("http://sgam.test/", options);
  await sgam.GET("/v1/subjects");
  await sgam.GET("/v1/admin/tenants/{tenant}", { params: { path: { tenant: "acme" } } });
  await createSGAMClient("http://sgam.test", { fetch }).GET("/healthz");
  await sgam.GET("/v1/facts/{subject}/{attribute}", {
    params: { path: { subject: "...", attribute: "a/b" } },
  });
  const dots = await sgam
    .GET("/v1/facts/{subject}/{attribute}", { params: { path: { subject: "..", attribute: "a" } } })
    .catch((error: unknown) => error);
  const [tenantCall, adminCall, bare, slash] = sent;
  assert.equal(tenantCall?.url, "http://sgam.test/v1/subjects");
  assert.equal(tenantCall?.headers.get("authorization"), "Bearer sgam_key");
  assert.equal(tenantCall?.headers.get("accept"), "application/json, application/problem+json");
  assert.equal(tenantCall?.headers.get("x-sgam-now"), "2026-06-01T00:00:00Z");
  assert.equal(adminCall?.url, "http://sgam.test/v1/admin/tenants/acme");
  assert.equal(adminCall?.headers.get("authorization"), "Bearer admin");
  assert.equal(bare?.headers.get("authorization"), null);
  // Each parameter stays within its segment; a dot segment, which fetch cannot send, is refused.
  assert.equal(slash?.url, "http://sgam.test/v1/facts/.../a%2Fb");
  assert.ok(dots instanceof InvalidInput, String(dots));
  assert.deepEqual([dots.status, dots.code, dots.field], [422, "invalid", "subject"]);
  assert.equal(sent.length, 4);
});

test("a success status with a problem body is still an error", async () => {
  const body = { type: "about:blank", title: "t", status: 200, detail: "odd", code: "invalid" };
  const fetch = async () => problem(200, body);
  const refused = await createSGAMClient("http://sgam.test", { fetch })
    .GET("/healthz")
    .catch((error: unknown) => error);
  assert.ok(refused instanceof InvalidInput, String(refused));
});

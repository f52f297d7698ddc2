/** The client against a real `sgam serve`: writes, reads and each kind of refusal. */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, type Socket, createServer } from "node:net";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import {
  InvalidInput,
  NotFound,
  SGAMError,
  Timeout,
  Unauthorized,
  Unavailable,
  createSGAMClient,
} from "sgam-client";

import { NO_SERVER, SERVER_URL, newTenant } from "./server.js";

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), "..", "examples", "quickstart.js");

test("a candidate written through the client is the current fact and the context cites it", {
  skip: NO_SERVER,
}, async () => {
  const { apiKey } = await newTenant();
  const sgam = createSGAMClient(SERVER_URL, { apiKey });
  const declared = await sgam.PUT("/v1/attributes/{attribute}", {
    params: { path: { attribute: "passport_deadline" } },
    body: { value_type: "date", description: "Date by which the passport must be renewed" },
  });
  assert.equal(declared.schema_version, 1);
  const recorded = await sgam.POST("/v1/episodes", {
    body: {
      id: "e1",
      occurred_at: "2026-06-01T09:00:00Z",
      subjects: ["mira"],
      text: "Mira said her passport deadline is 2026-07-15.",
    },
  });
  assert.equal(recorded.id, "e1");
  const applied = await sgam.POST("/v1/episodes/{episode_id}/updates", {
    params: { path: { episode_id: "e1" } },
    body: {
      candidates: [
        {
          evidence: "her passport deadline is 2026-07-15",
          subject: "mira",
          attribute: "passport_deadline",
          change: "new",
          value: "2026-07-15",
        },
      ],
    },
  });
  assert.deepEqual(
    applied.results.map((result) => result.status),
    ["written"],
  );
  const fact = await sgam.GET("/v1/facts/{subject}/{attribute}", {
    params: { path: { subject: "mira", attribute: "passport_deadline" } },
  });
  assert.equal(fact.value, "2026-07-15");
  assert.equal(fact.status, "current");
  assert.equal(fact.source_episode_id, "e1");
  const context = await sgam.POST("/v1/context", {
    body: { question: "When is Mira's passport deadline?", subject: "mira" },
  });
  assert.match(context.block, /passport_deadline: 2026-07-15 \(from 2026-06-01; source e1\)/);
  assert.match(context.block, /^\[e1\] .*2026-07-15/m);
});

test("a bad body throws InvalidInput with the problem's code and field", {
  skip: NO_SERVER,
}, async () => {
  const { apiKey } = await newTenant();
  const sgam = createSGAMClient(SERVER_URL, { apiKey });
  const refused = await sgam
    .PUT("/v1/attributes/{attribute}", {
      params: { path: { attribute: "passport_deadline" } },
      body: { value_type: "date", description: "x".repeat(2_001) },
    })
    .catch((error: unknown) => error);
  assert.ok(refused instanceof InvalidInput, String(refused));
  assert.ok(refused instanceof SGAMError);
  assert.equal(refused.name, "InvalidInput");
  assert.equal(refused.status, 422);
  assert.equal(refused.code, "invalid");
  assert.equal(refused.field, "description");
  assert.equal(refused.message, `422 invalid: ${refused.detail} (field description)`);
});

test("an unknown fact throws NotFound, a wrong key Unauthorized", { skip: NO_SERVER }, async () => {
  const { apiKey } = await newTenant();
  const read = (key: string) =>
    createSGAMClient(SERVER_URL, { apiKey: key })
      .GET("/v1/facts/{subject}/{attribute}", {
        params: { path: { subject: "mira", attribute: "passport_deadline" } },
      })
      .catch((error: unknown) => error);
  const missing = await read(apiKey);
  assert.ok(missing instanceof NotFound, String(missing));
  assert.deepEqual([missing.status, missing.code], [404, "not_found"]);
  const refused = await read(`${apiKey}x`);
  assert.ok(refused instanceof Unauthorized, String(refused));
  assert.deepEqual([refused.status, refused.code], [401, "unauthorized"]);
});

const UNANSWERED =
  "a server that cannot be reached throws Unavailable, one that stops answering Timeout";

test(UNANSWERED, async () => {
  const closed = createServer();
  closed.listen(0, "127.0.0.1");
  await once(closed, "listening");
  const closedPort = (closed.address() as AddressInfo).port;
  closed.close();
  await once(closed, "close");
  const nowhere = await createSGAMClient(`http://127.0.0.1:${closedPort}`, { apiKey: "k" })
    .GET("/readyz")
    .catch((error: unknown) => error);
  assert.ok(nowhere instanceof Unavailable && !(nowhere instanceof Timeout), String(nowhere));
  assert.deepEqual([nowhere.status, nowhere.code], [503, "unavailable"]);

  // One answers nothing; the other its headers and the start of a body, then nothing.
  const held = new Set<Socket>();
  const silent = createServer((socket) => held.add(socket));
  const halting = createServer((socket) => {
    held.add(socket);
    const head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 99\r\n";
    socket.write(`${head}\r\n{`);
  });
  try {
    for (const server of [silent, halting]) {
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      const { port } = server.address() as AddressInfo;
      const waited = await createSGAMClient(`http://127.0.0.1:${port}`, { timeoutMs: 200 })
        .GET("/readyz")
        .catch((error: unknown) => error);
      assert.ok(waited instanceof Timeout, String(waited));
      assert.deepEqual([waited.status, waited.code], [504, "unavailable"]);
    }
  } finally {
    for (const socket of held) socket.destroy();
    silent.close();
    halting.close();
  }
});

test("the documented example runs as written", { skip: NO_SERVER }, async () => {
  const { apiKey } = await newTenant();
  const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE], {
    env: { ...process.env, SGAM_URL: SERVER_URL, SGAM_KEY: apiKey },
  });
  assert.equal(stdout, "written 2026-06-30\n422 invalid occurred_at\n");
});

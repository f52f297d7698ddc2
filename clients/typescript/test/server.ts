/** The running `sgam serve` the tests call: its URL and admin token come from the environment. */

import { randomUUID } from "node:crypto";

import { createSGAMClient } from "sgam-client";

export const SERVER_URL = process.env.SGAM_URL ?? "";
export const ADMIN_TOKEN = process.env.SGAM_ADMIN_TOKEN ?? "";

/** Why the server tests cannot run here, or false when they can. */
export const NO_SERVER: string | false =
  SERVER_URL && ADMIN_TOKEN
    ? false
    : "SGAM_URL and SGAM_ADMIN_TOKEN name no running sgam serve" +
      " (tests/cli/test_typescript_client.py starts one and runs npm test)";

/** A tenant of its own, made through the admin API, and an API key for it. */
export async function newTenant(): Promise<{ tenant: string; apiKey: string }> {
  const admin = createSGAMClient(SERVER_URL, { adminToken: ADMIN_TOKEN });
  const tenant = `ts-${randomUUID().slice(0, 8)}`;
  const created = await admin.POST("/v1/admin/tenants", { body: { tenant_id: tenant } });
  const issued = await admin.POST("/v1/admin/tenants/{tenant}/keys", {
    params: { path: { tenant: created.tenant_id } },
  });
  return { tenant, apiKey: issued.api_key };
}

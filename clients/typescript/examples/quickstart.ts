import { InvalidInput, createSGAMClient } from "sgam-client";

const sgam = createSGAMClient(process.env.SGAM_URL!, { apiKey: process.env.SGAM_KEY });

await sgam.PUT("/v1/attributes/{attribute}", {
  params: { path: { attribute: "visa_deadline" } },
  body: { value_type: "date", description: "Date the visa must be renewed" },
});
const recorded = await sgam.POST("/v1/episodes", {
  body: {
    id: "v1",
    occurred_at: "2026-06-02T12:00:00Z",
    subjects: ["mira"],
    text: "Mira's visa must be renewed by 2026-06-30.",
    updates: [
      {
        evidence: "renewed by 2026-06-30",
        subject: "mira",
        attribute: "visa_deadline",
        change: "new",
        value: "2026-06-30",
      },
    ],
  },
});
const fact = await sgam.GET("/v1/facts/{subject}/{attribute}", {
  params: { path: { subject: "mira", attribute: "visa_deadline" } },
});
console.log(recorded.results?.[0]?.status, fact.value); // written 2026-06-30

try {
  await sgam.POST("/v1/episodes", {
    body: { id: "v2", occurred_at: "June 3", text: "Mira moved the visa appointment." },
  });
} catch (error) {
  if (!(error instanceof InvalidInput)) throw error;
  console.log(error.status, error.code, error.field); // 422 invalid occurred_at
}

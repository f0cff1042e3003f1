// The API client: openapi-fetch typed by src/schema.gen.ts, which
// openapi-typescript generates from ../../openapi.yaml (npm run generate).
// Every request goes through pacedFetch, which keeps to the rate limit
// the server announces (README "Pacing").
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.gen.js";

export type Schemas = components["schemas"];
export type Game = Schemas["Game"];
export type GameEvent = Schemas["Event"];
export type MoveRequest = Schemas["MoveRequest"];
export type Variant = Schemas["Variant"];
export type Standing = Schemas["Standing"];

// notBefore holds, per RateLimit policy, the time (ms since the epoch)
// before which its bucket is empty.
const notBefore = new Map<string, number>();

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// policiesFor names the buckets a request spends from: POST /v1/players
// has a bucket of its own besides the per-token one.
function policiesFor(request: Request): string[] {
  const players = request.method === "POST" && new URL(request.url).pathname === "/v1/players";
  return players ? ["requests", "bad_tokens", "players"] : ["requests", "bad_tokens"];
}

// notePace reads a RateLimit field, e.g. `"requests";r=0;t=1`: a bucket
// with r=0 requests left is full again in t seconds.
function notePace(field: string | null): void {
  for (const item of (field ?? "").split(",")) {
    const m = /^\s*"([^"]+)";r=(\d+);t=(\d+)/.exec(item);
    if (m !== null && m[2] === "0") {
      const name = m[1] ?? "";
      notBefore.set(name, Math.max(notBefore.get(name) ?? 0, Date.now() + Number(m[3]) * 1000));
    }
  }
}

// pacedFetch waits while a bucket the request spends from is empty, and
// after a 429, or a 503 with Retry-After (deal_not_ready, solver_busy,
// database_unavailable), waits Retry-After seconds and sends the request
// again, at most three times. Requests that change something carry an
// Idempotency-Key, so a retry never applies a change twice.
async function pacedFetch(request: Request): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const until = Math.max(0, ...policiesFor(request).map((p) => notBefore.get(p) ?? 0));
    if (until > Date.now()) {
      await sleep(until - Date.now());
    }
    const response = await fetch(request.clone());
    notePace(response.headers.get("RateLimit"));
    const retryAfter = Number(response.headers.get("Retry-After") ?? "");
    if ((response.status === 429 || response.status === 503) && retryAfter > 0 && attempt < 3) {
      for (const p of policiesFor(request)) {
        notBefore.set(p, Math.max(notBefore.get(p) ?? 0, Date.now() + retryAfter * 1000));
      }
      continue;
    }
    return response;
  }
}

// Api is the typed client of one server, with the player's token.
export class Api {
  readonly client;
  token = "";

  constructor(readonly base: string) {
    this.client = createClient<paths>({ baseUrl: base, fetch: pacedFetch });
    this.client.use({
      onRequest: ({ request }) => {
        if (this.token !== "") {
          request.headers.set("Authorization", `Bearer ${this.token}`);
        }
        return request;
      },
    });
  }
}

// newKey returns a fresh Idempotency-Key.
export function newKey(): string {
  return crypto.randomUUID();
}

// problemText says what an error answer means, for people.
export function problemText(status: number, error: unknown): string {
  if (typeof error === "object" && error !== null && "detail" in error && typeof error.detail === "string") {
    const reason = "reason" in error && typeof error.reason === "string" ? ` (${error.reason})` : "";
    return error.detail + reason;
  }
  return `HTTP ${status}`;
}

// problemCode is the stable code of an error answer, "" if there is none.
export function problemCode(error: unknown): string {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
    return error.code;
  }
  return "";
}

// gameIdFrom takes a game's id from a Location such as /v1/games/{id}.
export function gameIdFrom(location: string | null): string {
  const m = /\/v1\/games\/([^/?#]+)/.exec(location ?? "");
  return m?.[1] ?? "";
}

// versionFrom reads an ETag such as "12" (the game's version); NaN if absent.
export function versionFrom(etag: string | null): number {
  return Number(/"(\d+)"/.exec(etag ?? "")?.[1] ?? NaN);
}

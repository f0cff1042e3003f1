// Wins a game over HTTP with a client generated from openapi.yaml:
// openapi-typescript writes src/schema.gen.ts (npm run generate), and
// openapi-fetch types every request and response from it. No casts: the
// compiler (tsc --strict) checks every field read here against the spec.
//
//   node dist/win.js [BASE_URL]    (default: $SOLITAIRE_URL, else http://127.0.0.1:8080)
//
// It plays the README's nearly-won layout (relaxed, four runs from king to
// two, the aces in the stock) and prints "won <game id>" once the server
// says the game is won; anything else exits 1.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.gen.js";

type Event = components["schemas"]["Event"];
type MoveRequest = components["schemas"]["MoveRequest"];

const base = process.argv[2] ?? process.env["SOLITAIRE_URL"] ?? "http://127.0.0.1:8080";
const api = createClient<paths>({ baseUrl: base });

// describe narrows an event on its type: each branch sees its own payload.
function describe(ev: Event): string {
  switch (ev.type) {
    case "game_dealt":
      return `dealt ${ev.data.rules.variant}, commitment ${ev.data.commitment}`;
    case "stock_drawn":
      return `drew ${ev.data.cards.join(" ")}`;
    case "cards_moved":
      return `moved ${ev.data.cards.join(" ")} ${ev.data.from} -> ${ev.data.to}`;
    case "card_flipped":
      return `flipped ${ev.data.card} on ${ev.data.pile}`;
    case "move_undone":
      return `undid the turn from version ${ev.data.undone}`;
    case "game_expired":
      return `expired at ${ev.data.deadline}`;
    default:
      return ev.type;
  }
}

// pace waits when the rate limit's bucket is empty: the RateLimit field
// (draft-ietf-httpapi-ratelimit-headers) says r requests are left and the
// bucket is full again in t seconds (README "Pacing").
async function pace(response: Response): Promise<void> {
  const m = /;r=0;t=(\d+)/.exec(response.headers.get("RateLimit") ?? "");
  if (m !== null) {
    await new Promise((resolve) => setTimeout(resolve, Number(m[1]) * 1000));
  }
}

async function main(): Promise<void> {
  const player = await api.POST("/v1/players", { body: { name: "ts-client" } });
  if (player.data === undefined) {
    throw new Error(`register: ${player.response.status} ${JSON.stringify(player.error)}`);
  }
  const headers = { Authorization: `Bearer ${player.data.token}` };

  const run = (cards: string[]) => ({ face_down: [], face_up: cards });
  const created = await api.POST("/v1/games", {
    headers,
    body: {
      variant: "relaxed",
      layout: {
        tableau: [
          run(["KS", "QH", "JS", "TH", "9S", "8H", "7S", "6H", "5S", "4H", "3S", "2H"]),
          run(["KH", "QS", "JH", "TS", "9H", "8S", "7H", "6S", "5H", "4S", "3H", "2S"]),
          run(["KC", "QD", "JC", "TD", "9C", "8D", "7C", "6D", "5C", "4D", "3C", "2D"]),
          run(["KD", "QC", "JD", "TC", "9D", "8C", "7D", "6C", "5D", "4C", "3D", "2C"]),
          run([]), run([]), run([]),
        ],
        stock: ["AS", "AH", "AC", "AD"],
      },
    },
  });
  if (created.data === undefined) {
    throw new Error(`create: ${created.response.status} ${JSON.stringify(created.error)}`);
  }
  const id = created.data.id;

  // A seed is a decimal string, exact above 2^53.
  const seeded = await api.POST("/v1/games", { headers, body: { variant: "klondike", seed: "9925980916699881289" } });
  if (seeded.data === undefined) {
    throw new Error(`create seeded: ${seeded.response.status} ${JSON.stringify(seeded.error)}`);
  }

  const play = async (move: MoveRequest) => {
    const r = await api.POST("/v1/games/{id}/moves", { headers, params: { path: { id } }, body: move });
    await pace(r.response);
    if (r.data === undefined) {
      throw new Error(`${move.type}: ${r.response.status} ${JSON.stringify(r.error)}`);
    }
    for (const ev of r.data.events) {
      console.log(`  v${ev.version} ${describe(ev)}`);
    }
    return r.data.game;
  };
  let game = created.data;
  for (let i = 0; i < 4 && game.status === "in_progress"; i++) {
    await play({ type: "draw" });
    game = await play({ type: "move", from: "waste", to: "foundation" });
  }

  const read = await api.GET("/v1/games/{id}", { headers, params: { path: { id } } });
  if (read.data === undefined) {
    throw new Error(`read: ${read.response.status}`);
  }
  const log = await api.GET("/v1/games/{id}/events", { headers, params: { path: { id }, query: { limit: 1 } } });
  // The route also streams NDJSON (text, one Event per line); asked for
  // JSON, it answers a page, which the type tells apart from that text.
  const first = typeof log.data === "object" ? log.data.events[0] : undefined;
  if (first === undefined || first.type !== "game_dealt") {
    throw new Error("the log does not start with the deal");
  }
  if (read.data.status !== "won") {
    console.log(`not won: ${read.data.status}`);
    process.exit(1);
  }
  console.log(`won ${id} (${first.data.rules.variant})`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

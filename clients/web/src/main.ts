// The reference web client: plays every variant of GET /v1/variants
// through the public API, with click-to-move, undo and redo, hints,
// autocomplete, duels and the daily deal. Everything it knows comes from
// the answers: moves are animated from the events a move answer carries,
// and what may be played from the legal moves (?include=legal_moves).
//
// Page parameters: ?api=URL (the server; else the page's meta
// solitaire-api, else the page's own origin), ?anim=MS (one card's
// slide, default 160; 0 turns animation off). The game or duel in view is
// in the fragment (#game=ID, #duel=ID), so a reload resumes it and a
// duel's link invites.
import { Api, gameIdFrom, newKey, problemCode, problemText, versionFrom } from "./api.js";
import type { Game, GameEvent, MoveRequest, Standing, Variant } from "./api.js";
import { applyStep, boardOf, sameBoard, stepsOf } from "./model.js";
import type { Board } from "./model.js";
import { cardName, pileElement, render, slide, topCards, turn } from "./view.js";

function byId<T extends HTMLElement>(id: string, type: { new (): T; prototype: T }): T {
  const e = document.getElementById(id);
  if (!(e instanceof type)) {
    throw new Error(`the page has no #${id}`);
  }
  return e;
}

const ui = {
  board: byId("board", HTMLDivElement),
  variant: byId("variant", HTMLSelectElement),
  draw: byId("draw", HTMLSelectElement),
  undoOpt: byId("undo-option", HTMLInputElement),
  winnable: byId("winnable", HTMLInputElement),
  newGame: byId("new-game", HTMLButtonElement),
  daily: byId("daily", HTMLButtonElement),
  undo: byId("undo", HTMLButtonElement),
  redo: byId("redo", HTMLButtonElement),
  hint: byId("hint", HTMLButtonElement),
  autocomplete: byId("autocomplete", HTMLButtonElement),
  resign: byId("resign", HTMLButtonElement),
  info: byId("info", HTMLSpanElement),
  clock: byId("clock", HTMLSpanElement),
  message: byId("message", HTMLDivElement),
  banner: byId("banner", HTMLDivElement),
  welcome: byId("welcome", HTMLDialogElement),
  name: byId("name", HTMLInputElement),
  player: byId("player", HTMLSpanElement),
  duelCreate: byId("duel-create", HTMLButtonElement),
  duelJoinForm: byId("duel-join", HTMLFormElement),
  duelId: byId("duel-id", HTMLInputElement),
  competition: byId("competition", HTMLElement),
};

const params = new URLSearchParams(location.search);
const meta = document.querySelector<HTMLMetaElement>('meta[name="solitaire-api"]')?.content ?? "";
const api = new Api((params.get("api") ?? (meta !== "" ? meta : location.origin)).replace(/\/$/, ""));
const animMs = Math.max(0, Number(params.get("anim") ?? "160") || 0);
const tokenKey = `solitaire:${api.base}:player`;

let variants: Variant[] = [];
let playerId = "";
let game: Game | null = null;
let board: Board | null = null;
let legal: MoveRequest[] = [];
let selected: { pile: string; count: number } | null = null;
let hint: MoveRequest | null = null;
let busy = false;
let receivedAt = 0;
let expiring = false;
let mismatches = 0;
let standingsFor = "";

// ---- messages and state shown on the page

function say(text: string, error = false): void {
  ui.message.textContent = text;
  ui.message.classList.toggle("error", error);
}

function setBusy(b: boolean): void {
  busy = b;
  document.body.dataset.busy = b ? "1" : "0";
  updateControls();
}

function fmt(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// ---- moves: keys, legality, descriptions

// parts reads a move request field by field, narrowing on its type first,
// so it compiles whether MoveRequest is one object or a union per type.
function parts(m: MoveRequest): { type: string; from: string; to: string; count: number; pile: string } {
  switch (m.type) {
    case "move":
      return { type: m.type, from: m.from ?? "", to: m.to ?? "", count: m.count ?? 1, pile: "" };
    case "take-back":
      return { type: m.type, from: m.from ?? "", to: m.to ?? "", count: 1, pile: "" };
    case "flip":
      return { type: m.type, from: "", to: "", count: 0, pile: m.pile ?? "" };
    default:
      return { type: m.type, from: "", to: "", count: 0, pile: "" };
  }
}

function key(m: MoveRequest): string {
  const p = parts(m);
  return `${p.type} ${p.from} ${p.to} ${p.count} ${p.pile}`;
}

function isLegal(m: MoveRequest): boolean {
  const k = key(m);
  return legal.some((l) => key(l) === k);
}

function describe(m: MoveRequest): string {
  const p = parts(m);
  const pile = (name: string) => pileElement(ui.board, name);
  const cards = (name: string, n: number) =>
    topCards(ui.board, name, n).map((e) => cardName(e.dataset.code ?? "")).join(" ");
  switch (p.type) {
    case "move":
    case "take-back":
      return `${cards(p.from, p.count)} from ${p.from} to ${p.to}`;
    case "flip":
      return `turn up the top card of ${p.pile}`;
    case "draw":
      return (pile("stock")?.dataset.count ?? "0") === "0" ? "turn the waste over" : "draw";
    default:
      return p.type;
  }
}

// ---- drawing

function draw(): void {
  if (board === null) {
    ui.board.replaceChildren();
    return;
  }
  render(ui.board, board, legal.some((m) => m.type === "draw"));
  decorate();
}

// decorate marks the selection, the piles it may go to, and the hint.
function decorate(): void {
  for (const e of ui.board.querySelectorAll(".selected, .target, .hint-from, .hint-to")) {
    e.classList.remove("selected", "target", "hint-from", "hint-to");
  }
  ui.autocomplete.classList.remove("hint-from");
  if (selected !== null) {
    const sel = selected;
    for (const c of pileElement(ui.board, sel.pile)?.querySelectorAll<HTMLElement>(".card.up") ?? []) {
      if (Number(c.dataset.count) > 0 && Number(c.dataset.count) <= sel.count) {
        c.classList.add("selected");
      }
    }
    for (const m of legal) {
      const p = parts(m);
      if (p.from === sel.pile && (p.type === "take-back" || p.count === sel.count)) {
        pileElement(ui.board, p.to)?.classList.add("target");
      }
    }
  }
  if (hint !== null) {
    const p = parts(hint);
    const from =
      p.type === "draw"
        ? pileElement(ui.board, "stock")
        : p.type === "flip"
          ? (topCards(ui.board, p.pile, 1)[0] ?? null)
          : p.type === "autocomplete"
            ? ui.autocomplete
            : (topCards(ui.board, p.from, p.count)[0] ?? null);
    from?.classList.add("hint-from");
    // "foundation" means whichever takes the card: the legal moves name it.
    const to = p.to !== "foundation" ? p.to : legal.map(parts).find((l) => l.from === p.from && l.to.startsWith("foundation/"))?.to;
    if (to !== undefined && to !== "") {
      pileElement(ui.board, to)?.classList.add("hint-to");
    }
  }
}

function updateControls(): void {
  const playing = game !== null && game.status === "in_progress" && !busy;
  const has = (type: string) => legal.some((m) => m.type === type);
  ui.undo.hidden = ui.redo.hidden = game === null || !game.options.undo;
  ui.undo.disabled = !playing || !(game?.can_undo ?? false);
  ui.redo.disabled = !playing || !(game?.can_redo ?? false);
  ui.hint.hidden = game === null || game.competition !== null;
  ui.hint.disabled = !playing;
  ui.autocomplete.hidden = game === null || game.options.autocomplete === "automatic";
  ui.autocomplete.disabled = !playing || !has("autocomplete");
  ui.resign.disabled = !playing;
  for (const b of [ui.newGame, ui.daily, ui.duelCreate]) {
    b.disabled = busy;
  }
}

function updateInfo(): void {
  if (game === null) {
    ui.info.textContent = "";
    return;
  }
  const g = game;
  const name = variants.find((v) => v.id === g.variant)?.name ?? g.variant;
  const bits = [name, `${g.moves} moves`];
  if (g.score !== null) {
    bits.push(`score ${g.score}`);
  }
  bits.push(g.passes.limit === null ? `pass ${g.passes.used}` : `pass ${g.passes.used} of ${g.passes.limit}`);
  if (g.difficulty !== null) {
    bits.push(g.difficulty);
  }
  if (g.competition !== null) {
    bits.push(g.competition.kind === "duel" ? "duel" : `daily deal ${g.competition.date ?? ""}`);
  }
  bits.push(g.ranked ? "ranked" : "unranked");
  ui.info.textContent = bits.join(" · ");
}

function tick(): void {
  if (game === null) {
    ui.clock.textContent = "";
    return;
  }
  const running = game.status === "in_progress" && game.started_at !== null;
  const elapsed = game.elapsed_ms + (running ? Date.now() - receivedAt : 0);
  const limit = game.options.time_limit_s;
  if (limit === null) {
    ui.clock.textContent = fmt(elapsed);
    return;
  }
  const left = Math.max(0, limit * 1000 - elapsed);
  ui.clock.textContent = `${fmt(left)} left`;
  ui.clock.classList.toggle("low", running && left < 30_000);
  if (left === 0 && running && !busy && !expiring) {
    expiring = true; // the server ends the game on the first read after its deadline
    void loadGame(game.id);
  }
}

// show takes a game the server answered. After a move, board holds what
// the events led to, and it must be the game's board.
function show(g: Game, afterEvents: boolean): void {
  const fresh = boardOf(g);
  if (afterEvents && board !== null && !sameBoard(board, fresh)) {
    mismatches++;
    document.body.dataset.mismatches = String(mismatches);
    console.error("the move's events did not lead to the game's board", { events: board, game: fresh });
  }
  game = g;
  board = fresh;
  legal = g.legal_moves ?? [];
  receivedAt = Date.now();
  expiring = false;
  selected = null;
  hint = null;
  ui.board.dataset.game = g.id;
  ui.board.dataset.version = String(g.version);
  ui.board.dataset.status = g.status;
  ui.board.dataset.variant = g.variant;
  if (location.hash !== `#game=${g.id}`) {
    history.replaceState(null, "", `#game=${g.id}`);
  }
  draw();
  updateInfo();
  updateControls();
  tick();
  const ended: Record<string, string> = { won: "Won!", lost: "Resigned.", expired: "Time is up." };
  ui.banner.textContent = ended[g.status] ?? "";
  ui.banner.hidden = g.status === "in_progress";
  ui.banner.className = g.status;
  // A competition's standings are read when its game is shown and when it ends.
  const c = g.competition;
  if (c === null) {
    ui.competition.replaceChildren();
  } else if (standingsFor !== `${g.id} ${g.status}`) {
    standingsFor = `${g.id} ${g.status}`;
    void loadCompetition(c.kind, c.kind === "duel" ? c.id : g.variant, c.date);
  }
}

// animate plays a move answer's events on the board, one step at a time.
async function animate(events: GameEvent[]): Promise<void> {
  const b = board;
  if (b === null) {
    return;
  }
  for (const ev of events) {
    for (const step of stepsOf(ev, b)) {
      const ms = step.auto ? animMs / 2 : animMs;
      if (step.kind === "move") {
        const before = topCards(ui.board, step.from, step.cards.length).map((e) => e.getBoundingClientRect());
        applyStep(b, step);
        draw();
        await slide(topCards(ui.board, step.to, step.cards.length), before, ms);
      } else {
        applyStep(b, step);
        draw();
        await turn(topCards(ui.board, step.pile, 1)[0], ms);
      }
    }
  }
}

// ---- requests

async function loadGame(id: string): Promise<void> {
  const r = await api.client.GET("/v1/games/{id}", { params: { path: { id }, query: { include: "legal_moves" } } });
  if (r.data === undefined) {
    say(`game ${id}: ${problemText(r.response.status, r.error)}`, true);
    return;
  }
  show(r.data, false);
}

// started shows a game just dealt, its legal moves in the answer (every
// route that deals is asked with ?include=legal_moves).
async function started(g: Game): Promise<void> {
  g.legal_moves ??= [];
  hint = null;
  show(g, false);
  say("");
}

// busyWith runs one action at a time: the page shows it is busy, and
// takes no other click meanwhile.
async function busyWith(text: string, action: () => Promise<void>): Promise<void> {
  if (busy) {
    return;
  }
  setBusy(true);
  say(text);
  try {
    await action();
  } finally {
    setBusy(false);
  }
}

// dealt shows the game a request dealt; when the player already has one
// there (the problem code given), the Location names it and it is shown.
async function dealt(r: { data?: Game; error?: unknown; response: Response }, code: string, note: string): Promise<void> {
  if (r.data !== undefined) {
    await started(r.data);
  } else if (code !== "" && problemCode(r.error) === code) {
    await loadGame(gameIdFrom(r.response.headers.get("Location")));
    say(note);
  } else {
    say(problemText(r.response.status, r.error), true);
  }
}

function play(move: MoveRequest): Promise<void> {
  const g = game;
  if (g === null) {
    return Promise.resolve();
  }
  selected = null;
  hint = null;
  return busyWith("", async () => {
    const r = await api.client.POST("/v1/games/{id}/moves", {
      params: {
        path: { id: g.id },
        query: { include: "legal_moves" },
        header: { "If-Match": `"${g.version}"`, "Idempotency-Key": newKey() },
      },
      body: move,
    });
    if (r.data === undefined) {
      say(problemText(r.response.status, r.error), true);
      // 409 and 412: the game ended or changed elsewhere; read it again.
      if (r.response.status === 409 || r.response.status === 412) {
        await loadGame(g.id);
      } else {
        draw();
      }
      return;
    }
    try {
      await animate(r.data.events);
    } catch (err) {
      console.error("the move's events do not fit the board", err);
    }
    show(r.data.game, true);
  });
}

function askHint(): Promise<void> {
  const g = game;
  if (g === null) {
    return Promise.resolve();
  }
  return busyWith("Thinking…", async () => {
    const r = await api.client.POST("/v1/games/{id}/hints", { params: { path: { id: g.id } }, body: {} });
    if (r.data === undefined) {
      say(problemText(r.response.status, r.error), true);
      return;
    }
    // The hint is logged (not a move): the game's version moves on, and
    // the game is unranked from now on.
    const v = versionFrom(r.response.headers.get("ETag"));
    if (!Number.isNaN(v)) {
      g.version = v;
      ui.board.dataset.version = String(v);
    }
    g.ranked = false;
    updateInfo();
    hint = r.data.move ?? null;
    selected = null;
    decorate();
    say(hint !== null ? `Hint: ${describe(hint)}` : `No hint: the position is ${r.data.verdict}.`);
  });
}

function chosenOptions(v: Variant): { draw?: 1 | 3; undo?: boolean } {
  const opts: { draw?: 1 | 3; undo?: boolean } = {};
  const d = Number(ui.draw.value);
  if (v.choices.draw.length > 1 && (d === 1 || d === 3) && d !== v.defaults.draw) {
    opts.draw = d;
  }
  if (ui.undoOpt.checked && !v.defaults.undo) {
    opts.undo = true;
  }
  return opts;
}

// withVariant runs action on the chosen variant, one action at a time.
function withVariant(text: string, action: (v: Variant) => Promise<void>): Promise<void> {
  const v = variants.find((x) => x.id === ui.variant.value);
  return v === undefined ? Promise.resolve() : busyWith(text, () => action(v));
}

const newGame = () =>
  withVariant("Dealing…", async (v) => {
    const r = await api.client.POST("/v1/games", {
      params: { query: { include: "legal_moves" }, header: { "Idempotency-Key": newKey() } },
      body: { variant: v.id, options: chosenOptions(v), ...(ui.winnable.checked ? { winnable: true } : {}) },
    });
    await dealt(r, "", "");
  });

const playDaily = () =>
  withVariant("Dealing…", async (v) => {
    const r = await api.client.POST("/v1/daily/{variant}/games", {
      params: { path: { variant: v.id }, query: { include: "legal_moves" }, header: { "Idempotency-Key": newKey() } },
    });
    await dealt(r, "daily_already_played", "You have played today's deal: here is your game.");
  });

// ---- duels and the daily deal's standings

function duelLink(id: string): string {
  return `${location.origin}${location.pathname}${location.search}#duel=${id}`;
}

function standingsTable(rows: Standing[]): HTMLTableElement {
  const t = document.createElement("table");
  t.className = "standings";
  const head = t.createTHead().insertRow();
  for (const h of ["#", "player", "status", "score", "time", "moves"]) {
    head.insertCell().textContent = h;
  }
  const body = t.createTBody();
  for (const s of rows) {
    const tr = body.insertRow();
    tr.classList.toggle("me", s.player_id === playerId);
    const cells = [String(s.rank), s.player_name, s.status.replace("_", " "), s.score === null ? "—" : String(s.score), fmt(s.elapsed_ms), String(s.moves)];
    for (const c of cells) {
      tr.insertCell().textContent = c;
    }
  }
  return t;
}

// loadCompetition shows a duel (with its link, and a join button when
// asked) or a daily deal, and its standings.
async function loadCompetition(kind: "duel" | "daily", id: string, date: string | null, offerJoin = false): Promise<void> {
  const box = ui.competition;
  const title = document.createElement("h2");
  const lines: (string | HTMLElement)[] = [];
  let rows: Standing[] = [];
  if (kind === "duel") {
    const r = await api.client.GET("/v1/duels/{id}", { params: { path: { id } } });
    if (r.data === undefined) {
      say(`duel ${id}: ${problemText(r.response.status, r.error)}`, true);
      return;
    }
    const d = r.data;
    title.textContent = `Duel: ${variants.find((v) => v.id === d.variant)?.name ?? d.variant}`;
    const link = document.createElement("a");
    link.href = link.textContent = duelLink(d.id);
    link.className = "duel-link";
    lines.push(`${d.seats_taken} of ${d.max_players} seats taken, ${d.status}, until ${new Date(d.deadline).toLocaleString()}. Invite with `, link);
    if (offerJoin && d.status === "open") {
      const join = document.createElement("button");
      join.textContent = "Join this duel";
      join.className = "duel-join-button";
      join.addEventListener("click", () => void joinDuel(d.id));
      lines.push(" ", join);
    }
    rows = d.standings;
  } else {
    const r = await api.client.GET("/v1/daily/{variant}", { params: { path: { variant: id }, query: date !== null ? { date } : {} } });
    if (r.data === undefined) {
      say(`daily deal: ${problemText(r.response.status, r.error)}`, true);
      return;
    }
    title.textContent = `Daily deal ${r.data.date}: ${variants.find((v) => v.id === r.data.variant)?.name ?? r.data.variant}`;
    lines.push(`${r.data.status}${r.data.difficulty !== null ? `, ${r.data.difficulty}` : ""}.`);
    rows = r.data.standings;
  }
  const p = document.createElement("p");
  p.append(...lines);
  const refresh = document.createElement("button");
  refresh.textContent = "Refresh";
  refresh.addEventListener("click", () => void loadCompetition(kind, id, date, offerJoin));
  box.replaceChildren(title, p, standingsTable(rows), refresh);
}

const createDuel = () =>
  withVariant("Dealing the duel…", async (v) => {
    const r = await api.client.POST("/v1/duels", {
      params: { header: { "Idempotency-Key": newKey() } },
      body: { variant: v.id, options: chosenOptions(v), ...(!ui.winnable.checked ? { winnable: false } : {}) },
    });
    if (r.data === undefined) {
      say(problemText(r.response.status, r.error), true);
      return;
    }
    history.replaceState(null, "", `#duel=${r.data.id}`);
    say("Duel created: send the link, and join it yourself.");
    await loadCompetition("duel", r.data.id, null, true);
  });

function joinDuel(idOrLink: string): Promise<void> {
  const id = /duel=([^&#\s]+)/.exec(idOrLink)?.[1] ?? idOrLink.trim();
  return id === ""
    ? Promise.resolve()
    : busyWith("Joining…", async () => {
        const r = await api.client.POST("/v1/duels/{id}/games", {
          params: { path: { id }, query: { include: "legal_moves" }, header: { "Idempotency-Key": newKey() } },
        });
        await dealt(r, "duel_already_joined", "You have joined this duel: here is your game.");
      });
}

// ---- clicks

// clickPile plays or selects: with a card selected, a click on a pile it
// may go to moves it there, a second click on it sends it to a
// foundation; otherwise a click picks up a card (and those on it), turns
// up a face-down top card where the player flips, or draws from the stock.
async function clickPile(pile: string, cardEl: HTMLElement | null): Promise<void> {
  if (pile === "stock") {
    selected = null;
    if (legal.some((m) => m.type === "draw")) {
      await play({ type: "draw" });
    }
    return;
  }
  const sel = selected;
  const count = Number(cardEl?.dataset.count ?? "0");
  if (sel !== null) {
    if (sel.pile === pile && (count === sel.count || count === 0)) {
      selected = null;
      const home = legal.some((m) => {
        const p = parts(m);
        return p.type === "move" && p.from === pile && p.count === 1 && p.to.startsWith("foundation/");
      });
      if (home && sel.count === 1) {
        await play({ type: "move", from: pile, to: "foundation", count: 1 });
      } else {
        decorate();
      }
      return;
    }
    const move: MoveRequest = sel.pile.startsWith("foundation/")
      ? { type: "take-back", from: sel.pile, to: pile }
      : { type: "move", from: sel.pile, to: pile, count: sel.count };
    if (isLegal(move)) {
      await play(move);
      return;
    }
  }
  if (cardEl?.classList.contains("down") === true && pile.startsWith("tableau/")) {
    const flip: MoveRequest = { type: "flip", pile };
    selected = null;
    if (isLegal(flip)) {
      await play(flip);
    } else {
      decorate();
    }
    return;
  }
  const movable = legal.some((m) => {
    const p = parts(m);
    return p.from === pile && (p.type === "take-back" || (p.type === "move" && p.count === count));
  });
  selected = count > 0 && movable ? { pile, count } : null;
  decorate();
}

ui.board.addEventListener("click", (e) => {
  if (busy || game === null || game.status !== "in_progress" || !(e.target instanceof Element)) {
    return;
  }
  const pileEl = e.target.closest<HTMLElement>(".pile");
  if (pileEl === null) {
    selected = null;
    decorate();
    return;
  }
  void clickPile(pileEl.dataset.pile ?? "", e.target.closest<HTMLElement>(".card"));
});

ui.undo.addEventListener("click", () => void play({ type: "undo" }));
ui.redo.addEventListener("click", () => void play({ type: "redo" }));
ui.autocomplete.addEventListener("click", () => void play({ type: "autocomplete" }));
ui.hint.addEventListener("click", () => void askHint());
ui.resign.addEventListener("click", () => {
  if (confirm("Resign this game?")) {
    void play({ type: "resign" });
  }
});
ui.newGame.addEventListener("click", () => void newGame());
ui.daily.addEventListener("click", () => void playDaily());
ui.duelCreate.addEventListener("click", () => void createDuel());
ui.duelJoinForm.addEventListener("submit", (e) => {
  e.preventDefault();
  void joinDuel(ui.duelId.value);
});
ui.variant.addEventListener("change", () => variantChosen());

// variantChosen offers the options the chosen variant has.
function variantChosen(): void {
  const v = variants.find((x) => x.id === ui.variant.value);
  if (v === undefined) {
    return;
  }
  ui.draw.replaceChildren(...v.choices.draw.map((d) => new Option(`draw ${d}`, String(d), false, d === v.defaults.draw)));
  ui.draw.hidden = v.choices.draw.length < 2;
  ui.undoOpt.checked = v.defaults.undo;
  ui.undoOpt.disabled = v.defaults.undo || !v.choices.undo.includes(true);
}

// ---- start

async function register(): Promise<void> {
  for (;;) {
    ui.welcome.showModal();
    await new Promise<void>((resolve) => ui.welcome.addEventListener("close", () => resolve(), { once: true }));
    const name = ui.name.value.trim();
    if (name === "") {
      continue;
    }
    const r = await api.client.POST("/v1/players", { body: { name } });
    if (r.data !== undefined) {
      localStorage.setItem(tokenKey, JSON.stringify({ id: r.data.id, name: r.data.name, token: r.data.token }));
      return;
    }
    ui.name.setCustomValidity(problemText(r.response.status, r.error));
  }
}

async function start(): Promise<void> {
  setBusy(true);
  const r = await api.client.GET("/v1/variants");
  if (r.data === undefined) {
    say(`Cannot reach the server at ${api.base}: ${problemText(r.response.status, r.error)}`, true);
    return;
  }
  variants = r.data.variants;
  ui.variant.replaceChildren(...variants.map((v) => new Option(v.name, v.id)));
  variantChosen();
  if (localStorage.getItem(tokenKey) === null) {
    await register();
  }
  const me: unknown = JSON.parse(localStorage.getItem(tokenKey) ?? "{}");
  if (typeof me === "object" && me !== null && "token" in me && "id" in me && "name" in me) {
    api.token = String(me.token);
    playerId = String(me.id);
    ui.player.textContent = String(me.name);
  }
  setBusy(false);
  setInterval(tick, 250);
  await follow();
  addEventListener("hashchange", () => void follow());
  document.body.dataset.ready = "1";
}

// follow opens what the fragment names: a game (#game=ID) or a duel to
// join (#duel=ID).
async function follow(): Promise<void> {
  const hash = new URLSearchParams(location.hash.slice(1));
  const gameId = hash.get("game");
  const duelId = hash.get("duel");
  if (gameId !== null && gameId !== game?.id) {
    await loadGame(gameId);
  } else if (duelId !== null) {
    await loadCompetition("duel", duelId, null, true);
  }
}

// An unknown token (a server whose database was reset) asks for a name again.
api.client.use({
  onResponse: ({ response }) => {
    if (response.status === 401 && api.token !== "") {
      localStorage.removeItem(tokenKey);
      location.reload();
    }
  },
});

void start();

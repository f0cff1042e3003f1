// Plays the web client in Debian's headless Chromium (playwright-core, no
// browser download) the way a person would, by clicking:
//
//   node e2e/play.mjs WEB_URL API_URL OUT_DIR
//
// WEB_URL serves dist/, API_URL is the server (which must allow WEB_URL's
// origin: SOLITAIRE_CORS_ORIGINS). It wins a winnable relaxed game by
// asking for hints and clicking what the page highlights, plays an undo
// and a redo and checks the board drawn against GET /v1/games/{id},
// screenshots every variant after a few clicked moves into OUT_DIR, and
// plays the daily deal and a duel. It prints one JSON line and exits 0,
// or prints what failed and exits 1.
import { mkdir } from "node:fs/promises";
import { chromium } from "playwright-core";

const [web, apiBase, out] = process.argv.slice(2);
if (web === undefined || apiBase === undefined || out === undefined) {
  console.error("usage: node e2e/play.mjs WEB_URL API_URL OUT_DIR");
  process.exit(2);
}
const started = Date.now();
const variants = ["klondike", "klondike-draw3", "klassik", "relaxed", "tripleharp", "harp"];

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
/** @type {string[]} */
const errors = [];
page.on("console", (m) => {
  if (m.type() === "error") {
    errors.push(m.text());
  }
});
page.on("pageerror", (e) => errors.push(String(e)));
page.setDefaultTimeout(30_000);

/**
 * @param {string} what
 * @returns {never}
 */
function fail(what) {
  throw new Error(what);
}

// Where a card is clicked: its top-left corner, which the cards on it leave visible.
const corner = { position: { x: 8, y: 6 } };

async function attr(/** @type {string} */ name) {
  return (await page.getAttribute("#board", name)) ?? "";
}

// settled waits until the page is idle with the board at another version
// (or another game) than before, and returns the board's game, version
// and status, and where the hint button and what the page highlights as a
// hint are (the top-left corner of the element, which the cards on a card
// leave visible).
async function settled(/** @type {string} */ before) {
  const state = await page.waitForFunction((b) => {
    const board = document.getElementById("board");
    const now = `${board?.dataset.game} ${board?.dataset.version}`;
    /** @param {string} selector */
    const spot = (selector) => {
      const r = document.querySelector(selector)?.getBoundingClientRect();
      return r === undefined ? null : { x: r.left + Math.min(8, r.width / 2), y: r.top + Math.min(6, r.height / 2) };
    };
    return document.body.dataset.busy === "0" && now !== b && {
      where: now,
      status: board?.dataset.status ?? "",
      hintButton: spot("#hint"),
      hintFrom: spot(".hint-from"),
      hintTo: spot(".hint-to"),
    };
  }, before);
  const value = await state.jsonValue();
  return value !== false ? value : fail("settled on nothing");
}

async function where() {
  return page.evaluate(() => `${document.getElementById("board")?.dataset.game} ${document.getElementById("board")?.dataset.version}`);
}

// play clicks selector (a source card first, if given) and waits for the
// move's answer. A click on a card selects it at once.
async function play(/** @type {string} */ selector, /** @type {string | null} */ source = null, before = "") {
  before = before !== "" ? before : await where();
  if (source !== null) {
    await page.click(source, corner);
  }
  await page.click(selector, selector.includes(".card") ? corner : {});
  return settled(before);
}

async function token() {
  return page.evaluate(() => {
    for (let i = 0; i < localStorage.length; i++) {
      const k = localStorage.key(i) ?? "";
      if (k.startsWith("solitaire:")) {
        return String(JSON.parse(localStorage.getItem(k) ?? "{}").token);
      }
    }
    return "";
  });
}

/** @param {string} path */
async function get(path) {
  const r = await fetch(apiBase + path, { headers: { Authorization: `Bearer ${await token()}` } });
  if (!r.ok) {
    fail(`GET ${path}: ${r.status} ${await r.text()}`);
  }
  return r.json();
}

// drawnBoard reads the board the page shows, pile by pile.
async function drawnBoard() {
  return page.evaluate(() => {
    /** @type {Record<string, string>} */
    const piles = {};
    for (const p of document.querySelectorAll("#board .pile")) {
      if (!(p instanceof HTMLElement)) {
        continue;
      }
      const name = p.dataset.pile ?? "";
      const up = [...p.querySelectorAll(".card.up")].map((c) => c instanceof HTMLElement ? c.dataset.code : "");
      const down = name === "stock" ? Number(p.dataset.count) : p.querySelectorAll(".card.down").length;
      piles[name] = `${down} ${up.join(" ")}`;
    }
    return piles;
  });
}

// serverBoard is the same from GET /v1/games/{id}.
async function serverBoard(/** @type {string} */ id) {
  const g = await get(`/v1/games/${id}`);
  /** @type {(cs: {code: string}[]) => string} */
  const codes = (cs) => cs.map((c) => c.code).join(" ");
  /** @type {Record<string, string>} */
  const piles = { stock: `${g.stock.count} `, waste: `0 ${codes(g.waste.cards)}` };
  g.foundations.forEach((/** @type {{cards: {code: string}[]}} */ f, /** @type {number} */ i) => {
    piles[`foundation/${i}`] = `0 ${codes(f.cards)}`;
  });
  g.tableau.forEach((/** @type {{face_down: number, cards: {code: string}[]}} */ t, /** @type {number} */ i) => {
    piles[`tableau/${i}`] = `${t.face_down} ${codes(t.cards)}`;
  });
  return piles;
}

async function checkBoard(/** @type {string} */ when) {
  const id = await attr("data-game");
  const [drawn, served] = [await drawnBoard(), await serverBoard(id)];
  if (JSON.stringify(drawn, Object.keys(drawn).sort()) !== JSON.stringify(served, Object.keys(drawn).sort()) ||
      Object.keys(drawn).length !== Object.keys(served).length) {
    fail(`${when}: the page shows ${JSON.stringify(drawn)}\nthe server has ${JSON.stringify(served)}`);
  }
  return drawn;
}

async function newGame(/** @type {string} */ variant, /** @type {boolean} */ winnable) {
  await page.selectOption("#variant", variant);
  await page.setChecked("#winnable", winnable);
  const before = await where();
  await page.click("#new-game");
  const state = await settled(before);
  if ((await attr("data-variant")) !== variant) {
    fail(`new ${variant} game: the board shows ${await attr("data-variant")}`);
  }
  return state;
}

// hinted clicks the hint button, then what the page highlights: the card
// (or stock, or button) and, for a move, the pile it goes to; it returns
// the state after the move. The mouse clicks where the page shows them, as
// a person would, so a covered or misplaced highlight fails the test.
async function hinted(/** @type {Awaited<ReturnType<typeof settled>>} */ now) {
  const button = now.hintButton ?? fail("no hint button");
  await page.mouse.click(button.x, button.y);
  const hint = await settled(now.where); // a hint is logged: the version moves on
  const from = hint.hintFrom ?? fail(`no hint highlighted: ${await page.textContent("#message")}`);
  await page.mouse.click(from.x, from.y);
  if (hint.hintTo !== null) {
    await page.mouse.click(hint.hintTo.x, hint.hintTo.y);
  }
  return settled(hint.where);
}

// aFewMoves plays n moves by clicking, picked from the legal moves:
// foundation moves first, then tableau moves, turning cards up, drawing.
async function aFewMoves(/** @type {number} */ n) {
  for (let i = 0; i < n; i++) {
    const id = await attr("data-game");
    /** @type {{type: string, from?: string, to?: string, count?: number, pile?: string}[]} */
    const moves = (await get(`/v1/games/${id}/legal-moves`)).moves;
    const rank = (/** @type {{type: string, to?: string}} */ m) =>
      m.type === "move" && m.to?.startsWith("foundation") ? 0 : m.type === "move" ? 1 : m.type === "flip" ? 2 : m.type === "draw" ? 3 : 9;
    const m = [...moves].sort((a, b) => rank(a) - rank(b))[0];
    if (m === undefined || rank(m) === 9) {
      return;
    }
    if (m.type === "draw" || i % 3 === 0) {
      await play('.pile[data-pile="stock"]');
    } else if (m.type === "flip") {
      await play(`.pile[data-pile="${m.pile}"] .card.down >> nth=-1`);
    } else {
      await play(`.pile[data-pile="${m.to}"]`, `.pile[data-pile="${m.from}"] .card.up[data-count="${m.count ?? 1}"]`);
    }
  }
}

try {
  await mkdir(out, { recursive: true });
  await page.goto(`${web}/index.html?api=${encodeURIComponent(apiBase)}&anim=20`);
  await page.fill("#name", "Ada (web)");
  await page.click("#welcome button");
  await page.waitForSelector('body[data-ready="1"]');

  // A winnable relaxed game, won by following the hints; an undo and a
  // redo on the way.
  let now = await newGame("relaxed", true);
  const id = await attr("data-game");
  let hints = 0;
  for (; now.status === "in_progress"; hints++) {
    if (hints === 400) {
      fail("not won after 400 hints");
    }
    now = await hinted(now);
    if (hints === 6) {
      const before = await checkBoard("before the undo");
      await play("#undo");
      const undone = await checkBoard("after the undo");
      if (JSON.stringify(undone) === JSON.stringify(before)) {
        fail("the undo changed nothing on the page");
      }
      now = await play("#redo");
      const redone = await checkBoard("after the redo");
      if (JSON.stringify(redone) !== JSON.stringify(before)) {
        fail(`the redo did not restore the board: ${JSON.stringify(redone)} vs ${JSON.stringify(before)}`);
      }
    }
  }
  const won = await get(`/v1/games/${id}`);
  if (won.status !== "won" || (await page.textContent("#banner")) !== "Won!") {
    fail(`game ${id} ended ${won.status}, the page says ${await page.textContent("#banner")}`);
  }
  await page.screenshot({ path: `${out}/won.png`, fullPage: true });

  // Every variant, after a few moves.
  for (const v of variants) {
    await newGame(v, false);
    await aFewMoves(v === "klondike-draw3" || v === "klassik" ? 4 : 6);
    await checkBoard(v);
    await page.screenshot({ path: `${out}/${v}.png`, fullPage: true });
  }

  // The daily deal: a game of the day's deal, and its standings.
  await page.selectOption("#variant", "klondike");
  let before = await where();
  await page.click("#daily");
  await settled(before);
  const daily = await get(`/v1/games/${await attr("data-game")}`);
  if (daily.competition?.kind !== "daily") {
    fail(`the daily game's competition: ${JSON.stringify(daily.competition)}`);
  }
  await page.waitForSelector("#competition table.standings tr.me");

  // A duel: create it, join it by its link, see the standings.
  await page.selectOption("#variant", "klassik");
  await page.click("#duel-create");
  const link = (await (await page.waitForSelector("#competition a.duel-link")).getAttribute("href")) ?? "";
  await page.fill("#duel-id", link);
  before = await where();
  await page.click("#duel-join button");
  await settled(before);
  const duelGame = await get(`/v1/games/${await attr("data-game")}`);
  if (duelGame.competition?.kind !== "duel" || !link.endsWith(`#duel=${duelGame.competition.id}`)) {
    fail(`joined ${JSON.stringify(duelGame.competition)} from the link ${link}`);
  }
  await page.waitForSelector("#competition table.standings tr.me");
  await aFewMoves(2);
  await page.screenshot({ path: `${out}/duel.png`, fullPage: true });

  const mismatches = await page.evaluate(() => document.body.dataset.mismatches ?? "0");
  if (mismatches !== "0" || errors.length > 0) {
    fail(`${mismatches} boards the events did not lead to; console errors: ${errors.join("\n")}`);
  }
  console.log(JSON.stringify({ won: id, token: await token(), hints, seconds: (Date.now() - started) / 1000 }));
} catch (err) {
  await page.screenshot({ path: `${out}/failure.png`, fullPage: true }).catch(() => {});
  console.error(err);
  console.error(`console errors: ${errors.join("\n")}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}

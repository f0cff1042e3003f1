// Drawing the board in the DOM, and sliding cards from where they were to
// where they are (FLIP: measure, change, invert, play).
import type { Board, TableauPile } from "./model.js";

const SUITS: Record<string, string> = { C: "♣", D: "♦", H: "♥", S: "♠" };

// cardName turns an R1.1 code into what a player reads: "TD" → "10♦".
export function cardName(code: string): string {
  const rank = code[0] === "T" ? "10" : (code[0] ?? "");
  return rank + (SUITS[code[1] ?? ""] ?? "");
}

function div(className: string): HTMLDivElement {
  const d = document.createElement("div");
  d.className = className;
  return d;
}

// card draws one card; count is how many cards it carries when picked
// up (itself and those on it), so a click knows the run it means.
function card(code: string | null, count: number): HTMLDivElement {
  if (code === null) {
    return div("card down");
  }
  const red = code[1] === "D" || code[1] === "H";
  const c = div(`card up ${red ? "red" : "black"}`);
  c.dataset.code = code;
  c.dataset.count = String(count);
  const corner = document.createElement("span");
  corner.className = "corner";
  corner.textContent = cardName(code);
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.textContent = SUITS[code[1] ?? ""] ?? "";
  c.append(corner, pip);
  return c;
}

function pile(name: string, kind: string): HTMLDivElement {
  const p = div(`pile ${kind}`);
  p.dataset.pile = name;
  return p;
}

function stock(b: Board, canDraw: boolean): HTMLDivElement {
  const p = pile("stock", "stock");
  p.dataset.count = String(b.stock);
  for (let i = 0; i < Math.min(b.stock, 3); i++) {
    const c = card(null, 0);
    c.style.left = c.style.top = `${i * 2}px`;
    p.append(c);
  }
  const label = document.createElement("span");
  label.className = "label";
  label.textContent = b.stock > 0 ? String(b.stock) : canDraw ? "↻" : "";
  p.append(label);
  return p;
}

function waste(b: Board): HTMLDivElement {
  const p = pile("waste", "waste");
  const fanFrom = b.waste.length - b.fanned;
  b.waste.forEach((code, i) => {
    const c = card(code, i === b.waste.length - 1 ? 1 : 0);
    c.style.left = `calc(var(--fan) * ${Math.max(0, i - fanFrom)})`;
    p.append(c);
  });
  return p;
}

function foundation(name: string, cards: string[]): HTMLDivElement {
  const p = pile(name, "foundation");
  cards.forEach((code, i) => p.append(card(code, i === cards.length - 1 ? 1 : 0)));
  return p;
}

function tableau(name: string, t: TableauPile): HTMLDivElement {
  const p = pile(name, "tableau");
  const offset = (i: number) => `calc(var(--down) * ${Math.min(i, t.down)} + var(--up) * ${Math.max(0, i - t.down)})`;
  for (let i = 0; i < t.down; i++) {
    const c = card(null, 0);
    c.style.top = offset(i);
    p.append(c);
  }
  t.up.forEach((code, i) => {
    const c = card(code, t.up.length - i);
    c.style.top = offset(t.down + i);
    p.append(c);
  });
  p.style.height = `calc(var(--ch) + ${offset(Math.max(0, t.down + t.up.length - 1))})`;
  return p;
}

// render draws the board into root: a top row of stock, waste and
// foundations, and the tableau below. canDraw says whether the empty
// stock may be turned over again.
export function render(root: HTMLElement, b: Board, canDraw: boolean): void {
  root.style.setProperty("--cols", String(Math.max(b.tableau.length, b.foundations.length + 3)));
  const top = div("row top");
  top.append(stock(b, canDraw), waste(b), div("spacer"));
  b.foundations.forEach((cards, i) => top.append(foundation(`foundation/${i}`, cards)));
  const bottom = div("row bottom");
  b.tableau.forEach((t, i) => bottom.append(tableau(`tableau/${i}`, t)));
  root.replaceChildren(top, bottom);
}

// pileElement finds a pile's element by its API name.
export function pileElement(root: HTMLElement, name: string): HTMLElement | null {
  return root.querySelector<HTMLElement>(`.pile[data-pile="${name}"]`);
}

// topCards returns the elements of a pile's top n cards, bottom first:
// the pile itself stands in for cards it does not draw (an empty pile,
// the stock's hidden depth).
export function topCards(root: HTMLElement, name: string, n: number): HTMLElement[] {
  const p = pileElement(root, name);
  if (p === null) {
    return [];
  }
  const cards = [...p.querySelectorAll<HTMLElement>(".card")];
  const out: HTMLElement[] = [];
  for (let i = 0; i < n; i++) {
    out.push(cards[cards.length - n + i] ?? cards[cards.length - 1] ?? p);
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// slide moves each element from where it was (before, one rect per
// element) to where it is now, in ms milliseconds.
export async function slide(els: HTMLElement[], before: DOMRect[], ms: number): Promise<void> {
  if (ms <= 0 || els.length === 0) {
    return;
  }
  els.forEach((el, i) => {
    const from = before[i] ?? before[before.length - 1];
    if (from === undefined) {
      return;
    }
    const to = el.getBoundingClientRect();
    el.style.transition = "none";
    el.style.transform = `translate(${from.left - to.left}px, ${from.top - to.top}px)`;
    el.style.zIndex = "100";
  });
  void document.body.offsetHeight; // apply the start positions before the transition
  for (const el of els) {
    el.style.transition = `transform ${ms}ms ease-out`;
    el.style.transform = "";
  }
  await sleep(ms);
  for (const el of els) {
    el.style.transition = el.style.zIndex = "";
  }
}

// turn shows a card turning over in place.
export async function turn(el: HTMLElement | undefined, ms: number): Promise<void> {
  if (ms <= 0 || el === undefined) {
    return;
  }
  el.style.animation = `card-turn ${ms}ms ease-out`;
  await sleep(ms);
  el.style.animation = "";
}

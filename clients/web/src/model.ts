// The board as the client draws it, and how a move answer's events change
// it. The client animates from the events alone (each names its cards and
// piles) and then checks that they led to the answer's game.
import type { Game, GameEvent } from "./api.js";

// TableauPile is a tableau pile: face-down cards (a count) under face-up ones.
export interface TableauPile {
  down: number;
  up: string[];
}

// Board is what the client shows; cards are R1.1 codes, bottom first.
export interface Board {
  stock: number;
  waste: string[];
  fanned: number; // waste cards shown fanned out, the playable one last
  foundations: string[][];
  tableau: TableauPile[];
}

// Step is one change an event makes: cards moving from pile to pile, or a
// card turning over in place.
export type Step =
  | { kind: "move"; from: string; to: string; cards: string[]; auto: boolean }
  | { kind: "turn"; pile: string; card: string; up: boolean; auto: boolean };

export function boardOf(game: Game): Board {
  return {
    stock: game.stock.count,
    waste: game.waste.cards.map((c) => c.code),
    fanned: game.waste_fanned,
    foundations: game.foundations.map((f) => f.cards.map((c) => c.code)),
    tableau: game.tableau.map((p) => ({ down: p.face_down, up: p.cards.map((c) => c.code) })),
  };
}

// stepsOf says what an event does to the board: stock_drawn, cards_moved,
// card_flipped and stock_recycled directly; move_undone and move_redone
// through their changes. Other events (game_won, hint_given, …) change no pile.
export function stepsOf(ev: GameEvent, board: Board): Step[] {
  switch (ev.type) {
    case "stock_drawn":
      return [{ kind: "move", from: "stock", to: "waste", cards: ev.data.cards, auto: ev.data.auto ?? false }];
    case "stock_recycled":
      return [{ kind: "move", from: "waste", to: "stock", cards: [...board.waste], auto: ev.data.auto ?? false }];
    case "cards_moved":
      return [{ kind: "move", from: ev.data.from, to: ev.data.to, cards: ev.data.cards, auto: ev.data.auto ?? false }];
    case "card_flipped":
      return [{ kind: "turn", pile: ev.data.pile, card: ev.data.card, up: true, auto: ev.data.auto ?? false }];
    case "move_undone":
    case "move_redone":
      return (ev.data.changes ?? []).map((c): Step =>
        c.turn !== undefined
          ? { kind: "turn", pile: c.pile ?? "", card: c.card ?? "", up: c.turn === "up", auto: false }
          : { kind: "move", from: c.from ?? "", to: c.to ?? "", cards: c.cards ?? [], auto: false },
      );
    default:
      return [];
  }
}

// list returns the face-up list of a foundation or tableau pile.
function list(b: Board, pile: string): string[] {
  const [kind, n] = pile.split("/");
  const found = kind === "foundation" ? b.foundations[Number(n)] : kind === "tableau" ? b.tableau[Number(n)]?.up : undefined;
  if (found === undefined) {
    throw new Error(`no pile ${pile}`);
  }
  return found;
}

function tableau(b: Board, pile: string): TableauPile {
  const p = pile.startsWith("tableau/") ? b.tableau[Number(pile.slice("tableau/".length))] : undefined;
  if (p === undefined) {
    throw new Error(`no tableau pile ${pile}`);
  }
  return p;
}

// applyStep changes the board by one step.
export function applyStep(b: Board, s: Step): void {
  if (s.kind === "turn") {
    const p = tableau(b, s.pile);
    if (s.up) {
      p.down--;
      p.up.push(s.card);
    } else {
      p.up.pop();
      p.down++;
    }
    return;
  }
  const n = s.cards.length;
  if (s.from === "stock") {
    b.stock -= n;
  } else if (s.from === "waste") {
    b.waste.splice(b.waste.length - n, n);
    b.fanned = Math.max(b.fanned - n, b.waste.length > 0 ? 1 : 0);
  } else {
    const from = list(b, s.from);
    from.splice(from.length - n, n);
  }
  if (s.to === "stock") {
    b.stock += n;
  } else if (s.to === "waste") {
    b.waste.push(...s.cards);
    b.fanned = Math.min(s.from === "stock" ? n : b.fanned + n, b.waste.length);
  } else {
    list(b, s.to).push(...s.cards);
  }
}

// sameBoard compares two boards pile by pile (the fan aside).
export function sameBoard(a: Board, b: Board): boolean {
  const piles = (x: Board) => JSON.stringify([x.stock, x.waste, x.foundations, x.tableau]);
  return piles(a) === piles(b);
}

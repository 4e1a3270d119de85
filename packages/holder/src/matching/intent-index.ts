import type { Currency } from "../model/types.js";
import type { IntentFilter, OfferFacts } from "./rule.js";

/**
 * An in-memory index of active intents, built so that one new offer is checked against the few
 * intents it can fit rather than all of them, and each of those checks is a handful of reads from
 * contiguous typed arrays.
 *
 * Intents are filed by (category, country), then by region (an intent without one is filed under
 * "any region"), then by make and model (vehicles) or kind (property), each "any" when not given,
 * then by budget currency on a shelf sorted by budget; intents without a budget sit on an unsorted
 * shelf beside those. An offer visits at most 2 × 4 places (its region and "any"; its make and
 * "any" × its model and "any", or its kind and "any"), and on each sorted shelf only the intents
 * whose budget is at least its price (binary search). Each candidate is then checked for the rest
 * of the rule (`fitsOnShelf` below); the property test in matching-rule-table.test.ts holds the
 * index to `fits` in rule.ts.
 *
 * A shelf keeps its intents column-wise (budget, yearMin, mileageMaxKm, roomsMin, areaMinM2,
 * validUntil as Float64Array; make, model, fuel, kind as small integer codes, 0 meaning "any"), so
 * a million intents take about 100 bytes each and the scan reads memory in order.
 */

const ANY = "";
/** The code of "not given" on an intent: any value fits. */
const ANY_CODE = 0;
/** The code of an offer value no intent names (or no value): fits only "any". */
const NO_CODE = 0xffff_ffff;

const FLOATS = 6; // budget, yearMin, mileageMaxKm, roomsMin, areaMinM2, validUntil
const CODES = 6; // make, model, fuel, kind (an intent's, or an offer's to compare with); round; batch
const ROUND = 4; // the last round an intent was reported first in (see `Tally`)
const BATCH = 5; // the last batch an intent was reported in (see `Tally`)

/**
 * What an import's matching gathers instead of one id per match: an import of 20,000 offers at
 * 1,000,000 intents finds 14–26 M matches but tells ~1 M intents, and an id per match (an array
 * per offer) cost as much as finding them. Across the `tally` calls of one batch, each fitting
 * intent is listed once in `inBatch`; across the batches of one round, once in `first`. Rounds
 * and batches are numbered by the caller, never reused.
 */
export interface Tally {
  readonly round: number;
  readonly batch: number;
  readonly first: string[];
  readonly inBatch: string[];
}

class Shelf {
  size = 0;
  /** Appended to during the current bulk load (listed for its sort). */
  appended = false;
  ids: (string | undefined)[] = [];
  floats: Float64Array[];
  codes: Uint32Array[];

  constructor(readonly sorted: boolean) {
    this.floats = Array.from({ length: FLOATS }, () => new Float64Array(4));
    this.codes = Array.from({ length: CODES }, () => new Uint32Array(4));
  }

  #grow(): void {
    const capacity = Math.max(8, this.size * 2);
    this.floats = this.floats.map((column) => {
      const next = new Float64Array(capacity);
      next.set(column.subarray(0, this.size));
      return next;
    });
    this.codes = this.codes.map((column) => {
      const next = new Uint32Array(capacity);
      next.set(column.subarray(0, this.size));
      return next;
    });
  }

  /** First position whose budget is ≥ price (sorted shelves). */
  lowerBound(price: number): number {
    const budget = this.floats[0] as Float64Array;
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((budget[mid] as number) < price) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First position whose budget is > budget (after equal budgets, so insertion order is kept). */
  upperBound(value: number): number {
    const budget = this.floats[0] as Float64Array;
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((budget[mid] as number) <= value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Inserts at its budget's place (after equal budgets), or at the end while bulk loading. */
  insert(id: string, intent: IntentFilter, codes: OfferCodes, append: boolean): void {
    if (this.size === (this.floats[0] as Float64Array).length) this.#grow();
    const budget = intent.currency === null ? Number.POSITIVE_INFINITY : intent.budget;
    let at = this.size;
    if (this.sorted && !append) {
      at = this.upperBound(budget);
      for (const column of this.floats) column.copyWithin(at + 1, at, this.size);
      for (const column of this.codes) column.copyWithin(at + 1, at, this.size);
      this.ids.splice(at, 0, id);
    } else {
      this.ids[at] = id;
    }
    const floats = this.floats;
    (floats[0] as Float64Array)[at] = budget;
    (floats[1] as Float64Array)[at] = intent.yearMin;
    (floats[2] as Float64Array)[at] = intent.mileageMaxKm;
    (floats[3] as Float64Array)[at] = intent.roomsMin;
    (floats[4] as Float64Array)[at] = intent.areaMinM2;
    (floats[5] as Float64Array)[at] = intent.validUntil;
    const columns = this.codes;
    (columns[0] as Uint32Array)[at] = codes.make;
    (columns[1] as Uint32Array)[at] = codes.model;
    (columns[2] as Uint32Array)[at] = codes.fuel;
    (columns[3] as Uint32Array)[at] = codes.kind;
    (columns[ROUND] as Uint32Array)[at] = 0;
    (columns[BATCH] as Uint32Array)[at] = 0;
    this.size++;
  }

  remove(id: string): boolean {
    const at = this.ids.indexOf(id);
    if (at < 0 || at >= this.size) return false;
    const last = this.size - 1;
    if (this.sorted) {
      for (const column of this.floats) column.copyWithin(at, at + 1, this.size);
      for (const column of this.codes) column.copyWithin(at, at + 1, this.size);
      this.ids.splice(at, 1);
    } else {
      // Order does not matter: the last one takes the hole.
      for (const column of this.floats) column[at] = column[last] as number;
      for (const column of this.codes) column[at] = column[last] as number;
      this.ids[at] = this.ids[last];
      this.ids.length = last;
    }
    this.size = last;
    return true;
  }

  /**
   * After a bulk append: sorts by budget (stable, so equal budgets keep their order) and cuts the
   * columns to size, since doubling left up to half of them empty.
   */
  sort(): void {
    const n = this.size;
    const budget = this.floats[0] as Float64Array;
    let ordered = true;
    if (this.sorted) {
      for (let i = 1; i < n && ordered; i++) ordered = (budget[i - 1] as number) <= (budget[i] as number);
    }
    if (ordered) {
      if (budget.length > n + (n >> 3) + 4) {
        this.floats = this.floats.map((column) => column.slice(0, n));
        this.codes = this.codes.map((column) => column.slice(0, n));
      }
      return;
    }
    const order = stableOrder(budget, n);
    this.floats = this.floats.map((column) => {
      const next = new Float64Array(n);
      for (let to = 0; to < n; to++) next[to] = column[order[to] as number] as number;
      return next;
    });
    this.codes = this.codes.map((column) => {
      const next = new Uint32Array(n);
      for (let to = 0; to < n; to++) next[to] = column[order[to] as number] as number;
      return next;
    });
    const ids = this.ids;
    const nextIds: (string | undefined)[] = new Array(n);
    for (let to = 0; to < n; to++) nextIds[to] = ids[order[to] as number];
    this.ids = nextIds;
  }

  /**
   * Visits the intents from `start` on that fit: `fits` without what the shelf already guarantees
   * (category, country, region, currency and budget ≥ price). Without a tally it writes their ids
   * to `found` from `at` on; with one it marks them in the tally instead. Returns `at` plus how
   * many fit.
   */
  scan(
    start: number,
    offer: OfferFacts,
    codes: OfferCodes,
    now: number,
    at: number,
    tally: Tally | undefined,
  ): number {
    const [, yearMin, mileageMax, roomsMin, areaMin, validUntil] = this.floats as [
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
    ];
    const [make, model, fuel, kind, rounds, batches] = this.codes as [
      Uint32Array,
      Uint32Array,
      Uint32Array,
      Uint32Array,
      Uint32Array,
      Uint32Array,
    ];
    const { year, mileageKm, rooms, areaM2 } = offer;
    const ids = this.ids;
    let out = found;
    let n = at;
    for (let k = start, end = this.size; k < end; k++) {
      if (
        year < (yearMin[k] as number) ||
        mileageKm > (mileageMax[k] as number) ||
        rooms < (roomsMin[k] as number) ||
        areaM2 < (areaMin[k] as number) ||
        (validUntil[k] as number) <= now
      ) {
        continue;
      }
      const mk = make[k] as number;
      const md = model[k] as number;
      const fu = fuel[k] as number;
      const kd = kind[k] as number;
      if (
        (mk === ANY_CODE || mk === codes.make) &&
        (md === ANY_CODE || md === codes.model) &&
        (fu === ANY_CODE || fu === codes.fuel) &&
        (kd === ANY_CODE || kd === codes.kind)
      ) {
        if (tally === undefined) {
          if (n === out.length) out = grown(n);
          out[n] = ids[k] as string;
        } else if (batches[k] !== tally.batch) {
          // First in the batch; only then can it also be first in the round.
          batches[k] = tally.batch;
          tally.inBatch.push(ids[k] as string);
          if (rounds[k] !== tally.round) {
            rounds[k] = tally.round;
            tally.first.push(ids[k] as string);
          }
        }
        n++;
      }
    }
    return n;
  }
}

/**
 * The positions of `budget[0..n)` in ascending, stable order (equal budgets keep theirs). The
 * typed array's own sort needs no comparator calls; each position then finds its place by binary
 * search, after the equal budgets placed before it. A comparator sort was most of the sort time
 * of a million-intent load.
 */
function stableOrder(budget: Float64Array, n: number): Uint32Array {
  const sorted = budget.slice(0, n).sort();
  const placed = new Uint32Array(n);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const value = budget[i] as number;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sorted[mid] as number) < value) lo = mid + 1;
      else hi = mid;
    }
    order[lo + (placed[lo] as number)++] = i;
  }
  return order;
}

/**
 * Where `match` gathers ids before copying out exactly as many: arrays grown by push, a few
 * thousand ids per offer at a million intents, were an import's main garbage. Shared by every
 * index of the process; `match` fills it without yielding.
 */
let found: string[] = new Array<string>(4096).fill("");

function grown(size: number): string[] {
  const next = new Array<string>(size * 2).fill("");
  for (let i = 0; i < size; i++) next[i] = found[i] as string;
  found = next;
  return next;
}

interface OfferCodes {
  make: number;
  model: number;
  fuel: number;
  kind: number;
}

interface Leaf {
  readonly byCurrency: Map<Currency, Shelf>;
  readonly open: Shelf;
}

/**
 * Category → country → region → make or kind → model (ANY for property) → leaf. Nested maps
 * rather than joined keys: loading a million intents built two joined strings for each.
 */
type Level<T> = Map<string, T>;
type Leaves = Level<Level<Level<Leaf>>>;

function child<T>(map: Level<T>, key: string, create: () => T): T {
  let found = map.get(key);
  if (found === undefined) {
    found = create();
    map.set(key, found);
  }
  return found;
}

function newLevel<T>(): Level<T> {
  return new Map();
}
const newLeaf = (): Leaf => ({ byCurrency: new Map(), open: new Shelf(false) });

/** Vehicles: make (or "any"); property: kind (or "any"). */
function firstKeyOf(intent: IntentFilter): string {
  return (intent.category === "vehicles" ? intent.make : intent.kind) ?? ANY;
}

/** Vehicles: model (or "any"); property: always "any". */
function secondKeyOf(intent: IntentFilter): string {
  return (intent.category === "vehicles" ? intent.model : null) ?? ANY;
}

const ONLY_ANY: readonly string[] = [ANY];
/** Its own value and "any", or "any" only. */
const valueAndAny = (value: string | null): readonly string[] => (value === null ? ONLY_ANY : [value, ANY]);

export class IntentIndex {
  readonly #buckets: Level<Level<Leaves>> = new Map();
  readonly #shelfOf = new Map<string, Shelf>();
  readonly #codes = new Map<string, number>();
  /** Reused by `addNew`: `insert` copies the codes out at once. */
  readonly #intentCodes: OfferCodes = { make: ANY_CODE, model: ANY_CODE, fuel: ANY_CODE, kind: ANY_CODE };
  /** While bulk loading, the shelves appended to, each sorted once at the end. */
  #bulk: Shelf[] | undefined;

  get size(): number {
    return this.#shelfOf.size;
  }

  has(id: string): boolean {
    return this.#shelfOf.has(id);
  }

  /** The ids of the intents in the index. */
  ids(): IterableIterator<string> {
    return this.#shelfOf.keys();
  }

  #code(value: string | null): number {
    if (value === null) return ANY_CODE;
    let code = this.#codes.get(value);
    if (code === undefined) {
      code = this.#codes.size + 1;
      this.#codes.set(value, code);
    }
    return code;
  }

  #offerCode(value: string | null): number {
    return value === null ? NO_CODE : (this.#codes.get(value) ?? NO_CODE);
  }

  /** Adds or replaces an intent. */
  add(intent: IntentFilter): void {
    if (this.#shelfOf.has(intent.id)) this.remove(intent.id);
    this.addNew(intent);
  }

  /**
   * Adds an intent the caller knows is not in the index (a load reading each id once): one
   * lookup in the id table fewer, a tenth of a second at a million intents.
   */
  addNew(intent: IntentFilter): void {
    const leaf = this.#leaf(intent);
    let shelf = leaf.open;
    if (intent.currency !== null) {
      const found = leaf.byCurrency.get(intent.currency);
      if (found === undefined) {
        shelf = new Shelf(true);
        leaf.byCurrency.set(intent.currency, shelf);
      } else {
        shelf = found;
      }
    }
    const codes = this.#intentCodes;
    codes.make = this.#code(intent.make);
    codes.model = this.#code(intent.model);
    codes.fuel = this.#code(intent.fuel);
    codes.kind = this.#code(intent.kind);
    const bulk = this.#bulk;
    shelf.insert(intent.id, intent, codes, bulk !== undefined);
    if (bulk !== undefined && !shelf.appended) {
      shelf.appended = true;
      bulk.push(shelf);
    }
    this.#shelfOf.set(intent.id, shelf);
  }

  /** Adds many intents at once: appends, then sorts each touched shelf once. */
  addMany(intents: Iterable<IntentFilter>): void {
    this.beginBulk();
    try {
      for (const intent of intents) this.add(intent);
    } finally {
      this.endBulk();
    }
  }

  /**
   * From here until `endBulk`, `add` appends and `match` may miss intents: for filling an index
   * that is not in use yet (the start-up load, page by page).
   */
  beginBulk(): void {
    this.#bulk ??= [];
  }

  /** Sorts every shelf touched since `beginBulk`, once. */
  endBulk(): void {
    for (const shelf of this.#bulk ?? []) {
      shelf.appended = false;
      shelf.sort();
    }
    this.#bulk = undefined;
  }

  /** Removes an intent; false when it was not indexed. */
  remove(id: string): boolean {
    const shelf = this.#shelfOf.get(id);
    if (shelf === undefined) return false;
    this.#shelfOf.delete(id);
    shelf.remove(id);
    return true;
  }

  clear(): void {
    this.#buckets.clear();
    this.#shelfOf.clear();
    this.#codes.clear();
  }

  /** The ids of the indexed intents `offer` fits at `now`, in no particular order. */
  match(offer: OfferFacts, now: number): string[] {
    const n = this.#visit(offer, now, undefined);
    return found.slice(0, n); // after the visit: it may have replaced `found` with a larger one
  }

  /** Marks the intents `offer` fits at `now` in `tally` (see `Tally`); returns how many fit. */
  tally(offer: OfferFacts, now: number, tally: Tally): number {
    return this.#visit(offer, now, tally);
  }

  #visit(offer: OfferFacts, now: number, tally: Tally | undefined): number {
    const shelves = this.#buckets.get(offer.category)?.get(offer.country);
    if (shelves === undefined) return 0;
    const codes: OfferCodes = {
      make: this.#offerCode(offer.make),
      model: this.#offerCode(offer.model),
      fuel: this.#offerCode(offer.fuel),
      kind: this.#offerCode(offer.kind),
    };
    const firsts = valueAndAny(offer.category === "vehicles" ? offer.make : offer.kind);
    const seconds = offer.category === "vehicles" ? valueAndAny(offer.model) : ONLY_ANY;
    let n = 0;
    for (const region of valueAndAny(offer.region)) {
      const byFirst = shelves.get(region);
      if (byFirst === undefined) continue;
      for (const first of firsts) {
        const bySecond = byFirst.get(first);
        if (bySecond === undefined) continue;
        for (const second of seconds) {
          const leaf = bySecond.get(second);
          if (leaf === undefined) continue;
          const sorted = leaf.byCurrency.get(offer.currency);
          if (sorted !== undefined)
            n = sorted.scan(sorted.lowerBound(offer.price), offer, codes, now, n, tally);
          n = leaf.open.scan(0, offer, codes, now, n, tally);
        }
      }
    }
    return n;
  }

  #leaf(intent: IntentFilter): Leaf {
    const byCountry = child(this.#buckets, intent.category, newLevel<Leaves>);
    const byRegion = child(byCountry, intent.country, newLevel<Level<Level<Leaf>>>);
    const byFirst = child(byRegion, intent.region ?? ANY, newLevel<Level<Leaf>>);
    return child(child(byFirst, firstKeyOf(intent), newLevel<Leaf>), secondKeyOf(intent), newLeaf);
  }
}

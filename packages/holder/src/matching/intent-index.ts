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
const SEP = "\u0000";
/** The code of "not given" on an intent: any value fits. */
const ANY_CODE = 0;
/** The code of an offer value no intent names (or no value): fits only "any". */
const NO_CODE = 0xffff_ffff;

const FLOATS = 6; // budget, yearMin, mileageMaxKm, roomsMin, areaMinM2, validUntil
const CODES = 5; // make, model, fuel, kind (an intent's, or an offer's to compare with); round
const ROUND = 4; // the last round an intent was reported first in (see `Tally`)

/**
 * Collects, across many `match` calls of one round, each intent the first time it fits: an import
 * of 20,000 offers at 1,000,000 intents finds 26 M matches but tells ~1 M intents, and a Set of
 * ids cost as much as the import. Rounds are numbered by the caller, never reused.
 */
export interface Tally {
  readonly round: number;
  readonly first: string[];
}

class Shelf {
  size = 0;
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
    const [b, yearMin, mileageMax, roomsMin, areaMin, validUntil] = this.floats as Float64Array[];
    (b as Float64Array)[at] = budget;
    (yearMin as Float64Array)[at] = intent.yearMin;
    (mileageMax as Float64Array)[at] = intent.mileageMaxKm;
    (roomsMin as Float64Array)[at] = intent.roomsMin;
    (areaMin as Float64Array)[at] = intent.areaMinM2;
    (validUntil as Float64Array)[at] = intent.validUntil;
    const [make, model, fuel, kind] = this.codes as Uint32Array[];
    (make as Uint32Array)[at] = codes.make;
    (model as Uint32Array)[at] = codes.model;
    (fuel as Uint32Array)[at] = codes.fuel;
    (kind as Uint32Array)[at] = codes.kind;
    (this.codes[ROUND] as Uint32Array)[at] = 0;
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

  /** Sorts by budget after a bulk append. */
  sort(): void {
    const n = this.size;
    if (!this.sorted || n < 2) return;
    const budget = this.floats[0] as Float64Array;
    let ordered = true;
    for (let i = 1; i < n && ordered; i++) ordered = (budget[i - 1] as number) <= (budget[i] as number);
    if (ordered) return;
    const order: number[] = new Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => (budget[a] as number) - (budget[b] as number));
    this.floats = this.floats.map((column) => {
      const next = new Float64Array(column.length);
      for (let to = 0; to < n; to++) next[to] = column[order[to] as number] as number;
      return next;
    });
    this.codes = this.codes.map((column) => {
      const next = new Uint32Array(column.length);
      for (let to = 0; to < n; to++) next[to] = column[order[to] as number] as number;
      return next;
    });
    const ids = this.ids;
    const nextIds: (string | undefined)[] = new Array(n);
    for (let to = 0; to < n; to++) nextIds[to] = ids[order[to] as number];
    this.ids = nextIds;
  }

  /**
   * Pushes the ids of the intents from `start` on that fit: `fits` without what the shelf already
   * guarantees (category, country, region, currency and budget ≥ price).
   */
  scan(
    start: number,
    offer: OfferFacts,
    codes: OfferCodes,
    now: number,
    out: string[],
    tally: Tally | undefined,
  ): void {
    const [, yearMin, mileageMax, roomsMin, areaMin, validUntil] = this.floats as [
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
    ];
    const [make, model, fuel, kind, rounds] = this.codes as [
      Uint32Array,
      Uint32Array,
      Uint32Array,
      Uint32Array,
      Uint32Array,
    ];
    const { year, mileageKm, rooms, areaM2 } = offer;
    const ids = this.ids;
    for (let k = start, n = this.size; k < n; k++) {
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
        out.push(ids[k] as string);
        if (tally !== undefined && rounds[k] !== tally.round) {
          rounds[k] = tally.round;
          tally.first.push(ids[k] as string);
        }
      }
    }
  }
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

type Shelves = Map<string, Map<string, Leaf>>;

/** Vehicles: make and model (each or "any"); property: kind (or "any"). */
function subKeyOf(intent: IntentFilter): string {
  if (intent.category === "vehicles") return `${intent.make ?? ANY}${SEP}${intent.model ?? ANY}`;
  return intent.kind ?? ANY;
}

/** The sub-keys an offer must visit: its own values and "any", in every combination. */
function offerSubKeys(offer: OfferFacts): string[] {
  if (offer.category === "vehicles") {
    const makes = offer.make === null ? [ANY] : [offer.make, ANY];
    const models = offer.model === null ? [ANY] : [offer.model, ANY];
    const keys: string[] = [];
    for (const make of makes) for (const model of models) keys.push(`${make}${SEP}${model}`);
    return keys;
  }
  return offer.kind === null ? [ANY] : [offer.kind, ANY];
}

export class IntentIndex {
  readonly #buckets = new Map<string, Shelves>();
  readonly #shelfOf = new Map<string, Shelf>();
  readonly #codes = new Map<string, number>();
  /** While bulk loading, sorted shelves are appended to and sorted once at the end. */
  #bulk: Set<Shelf> | undefined;

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
    const leaf = this.#leaf(intent, true) as Leaf;
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
    const codes: OfferCodes = {
      make: this.#code(intent.make),
      model: this.#code(intent.model),
      fuel: this.#code(intent.fuel),
      kind: this.#code(intent.kind),
    };
    const bulk = this.#bulk;
    shelf.insert(intent.id, intent, codes, bulk !== undefined);
    if (bulk !== undefined && shelf.sorted) bulk.add(shelf);
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
    this.#bulk ??= new Set();
  }

  /** Sorts every shelf touched since `beginBulk`, once. */
  endBulk(): void {
    for (const shelf of this.#bulk ?? []) shelf.sort();
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

  /**
   * The ids of the indexed intents `offer` fits at `now`, in no particular order; with a tally,
   * also those fitting for the first time in its round.
   */
  match(offer: OfferFacts, now: number, tally?: Tally): string[] {
    const out: string[] = [];
    const shelves = this.#buckets.get(`${offer.category}${SEP}${offer.country}`);
    if (shelves === undefined) return out;
    const codes: OfferCodes = {
      make: this.#offerCode(offer.make),
      model: this.#offerCode(offer.model),
      fuel: this.#offerCode(offer.fuel),
      kind: this.#offerCode(offer.kind),
    };
    const subKeys = offerSubKeys(offer);
    for (const region of offer.region === null ? [ANY] : [offer.region, ANY]) {
      const byKey = shelves.get(region);
      if (byKey === undefined) continue;
      for (const key of subKeys) {
        const leaf = byKey.get(key);
        if (leaf === undefined) continue;
        const sorted = leaf.byCurrency.get(offer.currency);
        if (sorted !== undefined) sorted.scan(sorted.lowerBound(offer.price), offer, codes, now, out, tally);
        leaf.open.scan(0, offer, codes, now, out, tally);
      }
    }
    return out;
  }

  #leaf(intent: IntentFilter, create: boolean): Leaf | undefined {
    const bucketKey = `${intent.category}${SEP}${intent.country}`;
    let shelves = this.#buckets.get(bucketKey);
    if (shelves === undefined) {
      if (!create) return undefined;
      shelves = new Map();
      this.#buckets.set(bucketKey, shelves);
    }
    const region = intent.region ?? ANY;
    let byKey = shelves.get(region);
    if (byKey === undefined) {
      if (!create) return undefined;
      byKey = new Map();
      shelves.set(region, byKey);
    }
    const key = subKeyOf(intent);
    let leaf = byKey.get(key);
    if (leaf === undefined) {
      if (!create) return undefined;
      leaf = { byCurrency: new Map(), open: new Shelf(false) };
      byKey.set(key, leaf);
    }
    return leaf;
  }
}

/** What the file readers yield: one offer-shaped value and the line it starts on, or a problem. */

export interface CatalogueFileProblem {
  line: number;
  message: string;
}

export interface Entry {
  line: number;
  value: unknown;
  /** Turns a validation message's field path into the file's own name for it. */
  rename(message: string): string;
}

/** Problems in file order, at most `max` of them (a broken file must not fill memory with messages). */
export class Problems {
  readonly list: CatalogueFileProblem[] = [];
  constructor(readonly max: number) {}
  add(line: number, message: string): void {
    if (this.list.length < this.max) this.list.push({ line, message });
  }
  get full(): boolean {
    return this.list.length >= this.max;
  }
}

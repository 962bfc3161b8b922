import { CarSections } from './car-sections.js';
import { MultipartParts } from './multipart-parts.js';

/** The `boundary` parameter of a `multipart/form-data` content type, if it has one. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (contentType === undefined || !/^\s*multipart\/form-data\s*;/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/**
 * The blocks an upload would store, counted as it streams: one per part for `block/put` and `dag/put`
 * (each file is one block), one per CAR section for `dag/import`. Undefined for other commands (`add`
 * chunks files into blocks of at most 256 KiB, so its size bound is its block bound) and for a body that
 * is not multipart (the node refuses it).
 */
export class UploadBlocks {
  readonly #parts: MultipartParts;
  // dag/import: the CAR of the part being read, and the blocks of the parts before it.
  readonly #car: boolean;
  #sections: CarSections | undefined;
  #earlier = 0;

  private constructor(boundary: string, car: boolean) {
    this.#car = car;
    this.#parts = new MultipartParts(
      boundary,
      () => {
        if (!car) return;
        this.#earlier += this.#sections?.blocks ?? 0;
        this.#sections = new CarSections();
      },
      (bytes) => this.#sections?.push(bytes),
    );
  }

  /** A counter for `command`'s upload, or undefined when its blocks are not counted. */
  static of(command: string, contentType: string | undefined): UploadBlocks | undefined {
    if (command !== 'block/put' && command !== 'dag/put' && command !== 'dag/import') return undefined;
    const boundary = multipartBoundary(contentType);
    return boundary === undefined ? undefined : new UploadBlocks(boundary, command === 'dag/import');
  }

  /** Feeds the next bytes of the upload. */
  push(chunk: Buffer): void {
    this.#parts.push(chunk);
  }

  /** Blocks the upload holds so far. */
  get count(): number {
    return this.#car ? this.#earlier + (this.#sections?.blocks ?? 0) : this.#parts.parts;
  }
}

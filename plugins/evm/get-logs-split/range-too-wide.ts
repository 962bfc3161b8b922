/**
 * How nodes and providers say an `eth_getLogs` block range is too wide for them.
 *
 * @module
 */

/**
 * The words of each major client and provider for a block range (or the answer it would give) too large
 * to serve, as a narrower range would be:
 * - geth: `exceed maximum block range: 5000`, `query returned more than 10000 results`
 * - erigon: `block range too large`, `max block range exceeded`
 * - nethermind: `Too many blocks. Max block range is 10000`
 * - besu: `Requested range exceeds maximum RPC range limit`
 * - Alchemy: `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range...`
 * - Infura: `query returned more than 10000 results. Try with this block range [0x1, 0x2]`
 * - QuickNode: `eth_getLogs is limited to a 10,000 range`; Ankr, dRPC, Chainstack: `block range is too wide`,
 *   `ranges over 10000 blocks are not supported`, `block range limit exceeded`.
 */
const RANGE_TOO_WIDE = [
  /\b(?:block )?range (?:is )?too (?:large|wide|big|long)\b/i,
  /\bexceeds? (?:the )?(?:max(?:imum)?|allowed) (?:block |rpc )?range\b/i,
  /\bmax(?:imum)? block range (?:exceeded|is)\b/i,
  /\brange exceeds? (?:the )?max(?:imum)?\b/i,
  /\btoo many blocks\b/i,
  /\blimited to (?:a )?[\d,_]+(?:\s*k)? ?(?:block )?range\b/i,
  /\branges? over [\d,_]+ blocks\b/i,
  /\bblock range limit\b/i,
  /\blog response size exceeded\b/i,
  /\bquery returned more than \d+ results\b/i,
];

/** True when a node's error says the block range (or its answer) is too large: a narrower range would be served. */
export function isRangeTooWide(error: { readonly code?: unknown; readonly message?: unknown }): boolean {
  const message = typeof error.message === 'string' ? error.message : '';
  return RANGE_TOO_WIDE.some((pattern) => pattern.test(message));
}

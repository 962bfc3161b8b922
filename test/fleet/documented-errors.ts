/**
 * The client-visible errors a fleet may show, as the docs list them: the JSON-RPC errors of
 * docs/errors.md (code and HTTP status), its WebSocket close codes, and what a balancer answers when an
 * instance dies (docs/operations.md, "Behind a balancer"). The fleet test allows exactly these kinds, in
 * the spelling of its load tallies (`rpc <code>/<status|ws>`, `ws close <code>`, `balancer <status>`,
 * `balancer closed`).
 */
import { readFileSync } from 'node:fs';

function page(name: string): string {
  return readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');
}

/** The section of `text` under the heading `title`, up to the next heading of the same or a higher level. */
function section(text: string, title: string): string {
  const start = text.search(new RegExp(`^(#+) ${title}$`, 'm'));
  if (start < 0) throw new Error(`no section "${title}"`);
  const level = /^(#+)/.exec(text.slice(start))![1]!.length;
  const rest = text.slice(text.indexOf('\n', start) + 1);
  const end = rest.search(new RegExp(`^#{1,${level}} `, 'm'));
  return end < 0 ? rest : rest.slice(0, end);
}

/** Every error kind the docs describe. */
export function documentedErrorKinds(): Set<string> {
  const kinds = new Set<string>();
  const errors = page('errors.md');
  for (const line of errors.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | NAME | code | HTTP | ...: over HTTP with its status; over WebSocket the same code, in a message.
    if (cells.length > 4 && /^[A-Z_]+$/.test(cells[1] ?? '') && /^-\d+$/.test(cells[2] ?? '')) {
      kinds.add(`rpc ${cells[2]}/${cells[3]}`);
      kinds.add(`rpc ${cells[2]}/ws`);
    }
    // | 1001 | When ... |: the close codes of the WebSocket table.
    if (/^\d{4}$/.test(cells[1] ?? '')) kinds.add(`ws close ${cells[1]}`);
  }
  const balancer = section(page('operations.md'), 'Behind a balancer');
  for (const match of balancer.matchAll(/HTTP (\d{3}) from the balancer/g)) kinds.add(`balancer ${match[1]}`);
  for (const match of balancer.matchAll(/close code (\d{4})/g)) kinds.add(`ws close ${match[1]}`);
  if (/closes the connection without an answer/.test(balancer)) kinds.add('balancer closed');
  return kinds;
}

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the recorded Solana RPC exchanges are kept. */
export const solanaRpcFixtureDir = fileURLToPath(new URL('../fixtures/solana-rpc/', import.meta.url));

/** One recorded exchange: the request and the node's answer, as the exact texts sent and received. */
export interface SolanaRpcExchange {
  readonly comment: string;
  readonly requestText: string;
  readonly responseText: string;
}

/** The recorded exchanges of one method, in replay order. */
export interface SolanaRpcFixture {
  readonly method: string;
  readonly exchanges: readonly SolanaRpcExchange[];
}

/** Writes a fixture's text: a header, then `// comment`, `>> request`, `<< response` per exchange. */
export function formatSolanaRpcFixture(fixture: SolanaRpcFixture): string {
  const lines = [
    `// ${fixture.method}: https://solana.com/docs/rpc/http/${fixture.method.toLowerCase()}`,
    '// Recorded from the devnet\'s Solana node by scripts/record-solana-rpc.ts. Replay the file in order against a fresh',
    '// node of test/helpers/solana-rpc-scenario.ts: its answers are these, byte for byte.',
  ];
  for (const e of fixture.exchanges) lines.push(`// ${e.comment}`, `>> ${e.requestText}`, `<< ${e.responseText}`);
  return `${lines.join('\n')}\n`;
}

/** Every recorded fixture, by method name order. */
export function solanaRpcFixtures(dir = solanaRpcFixtureDir): SolanaRpcFixture[] {
  return readdirSync(dir).filter((f) => f.endsWith('.io')).sort().map((file) => {
    const exchanges: SolanaRpcExchange[] = [];
    let comment = '';
    let requestText: string | undefined;
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (line.startsWith('// ')) comment = line.slice(3);
      if (line.startsWith('>> ')) requestText = line.slice(3);
      if (line.startsWith('<< ') && requestText !== undefined) {
        exchanges.push({ comment, requestText, responseText: line.slice(3) });
        requestText = undefined;
      }
    }
    return { method: file.replace(/\.io$/, ''), exchanges };
  });
}

/**
 * A node's answer with its own RPC and pubsub addresses (from `getClusterNodes`) written as agave's
 * default ports, 127.0.0.1:8899 and 127.0.0.1:8900: the one part of an answer that depends on the
 * port the node got.
 */
export function withDefaultPorts(text: string, rpcUrl: string): string {
  const port = Number(new URL(rpcUrl).port);
  return text.replaceAll(`"127.0.0.1:${port}"`, '"127.0.0.1:8899"').replaceAll(`"127.0.0.1:${port + 1}"`, '"127.0.0.1:8900"');
}

/** Where the recorded subscriptions are kept: one transcript per subscription. */
export const solanaPubsubFixtureDir = join(solanaRpcFixtureDir, 'subscriptions');

/** The header of a subscription's transcript file. */
export function pubsubFixtureHeader(method: string, comment: string): string[] {
  return [
    `// ${method}: https://solana.com/docs/rpc/websocket/${method.toLowerCase()}`,
    '// Recorded from the devnet\'s Solana node by scripts/record-solana-rpc.ts (test/helpers/solana-pubsub-recording.ts):',
    '// `>>` sent, `<<` received in that order, `// do:` a step taken on the node meanwhile.',
    `// ${comment}`,
  ];
}

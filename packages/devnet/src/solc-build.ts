/**
 * The solc-js build the devnet's contract scripts share (`compile-seed-contract.ts`,
 * `compile-stablecoin.ts`): a Solidity file beside this one, compiled for Paris with the optimizer, and
 * the fields every generated artifact carries. Scripts only: solc is a devDependency, so this file is
 * not part of the built package.
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import solc from 'solc';
import type { Hex } from './abi-words.js';
import type { AbiItem, ContractBuild } from './seed-contract-artifact.js';

/** Paris: no PUSH0, so the bytecode also runs on an Anvil started with an older `--hardfork`. */
const EVM_VERSION = 'paris';

/** One contract of solc's standard JSON output, with the outputs the scripts ask for. */
export interface SolcContract {
  readonly abi: unknown[];
  readonly evm: { bytecode: { object: string }; deployedBytecode: { object: string }; methodIdentifiers: Record<string, string> };
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, SolcContract>>;
}

const beside = (name: string): string => fileURLToPath(new URL(name, import.meta.url));

/** Compiles `source` (a `.sol` file beside this module) and returns its contracts by name; throws on a compiler error. */
export async function compileSolidity(source: string): Promise<Readonly<Record<string, SolcContract>>> {
  const input = {
    language: 'Solidity',
    sources: { [source]: { content: await readFile(beside(source), 'utf8') } },
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.methodIdentifiers'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)) as string) as SolcOutput;
  for (const e of output.errors ?? []) console.error(e.formattedMessage);
  if ((output.errors ?? []).some((e) => e.severity === 'error')) throw new Error('compilation failed');
  return output.contracts[source] ?? {};
}

/** `contracts[name]`, or an error naming what the compiler left out. */
export function contractOf(contracts: Readonly<Record<string, SolcContract>>, name: string): SolcContract {
  const compiled = contracts[name];
  if (compiled === undefined) throw new Error(`${name} missing from the compiler output`);
  return compiled;
}

/** The fields every generated artifact carries: name, compiler, EVM version, ABI and both bytecodes. */
export function buildOf(name: string, compiled: SolcContract): ContractBuild {
  return {
    name,
    compiler: `solc ${solc.version() as string}`,
    evmVersion: EVM_VERSION,
    abi: compiled.abi as AbiItem[],
    bytecode: `0x${compiled.evm.bytecode.object}` as Hex,
    deployedBytecode: `0x${compiled.evm.deployedBytecode.object}` as Hex,
  };
}

/** Writes the generated module `file` beside this one. */
export async function writeBeside(file: string, text: string): Promise<void> {
  await writeFile(beside(file), text);
}

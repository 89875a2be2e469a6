/**
 * Compiles the test contracts with the `solc` npm package (the compiler ships as JavaScript in the package,
 * so nothing is downloaded at run time). Imports resolve against node_modules (Solady). Results are kept per
 * process: the compiler is slow and the sources do not change during a run.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Abi, Hex } from 'viem';
import { REPO } from './gateway.js';

const require = createRequire(import.meta.url);

export interface Compiled {
  abi: Abi;
  bytecode: Hex;
}

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}

const cache = new Map<string, Record<string, Compiled>>();

/** Compiles one file of test/fixtures/wallet and answers its contracts by name. */
export function compileFixture(file: string): Record<string, Compiled> {
  const hit = cache.get(file);
  if (hit) return hit;
  const solc = require('solc') as { compile(input: string, opts: { import(path: string): { contents: string } | { error: string } }): string };
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: readFileSync(join(REPO, 'test/fixtures/wallet', file), 'utf8') } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const out = JSON.parse(
    solc.compile(JSON.stringify(input), {
      import(path) {
        try {
          return { contents: readFileSync(join(REPO, 'node_modules', path), 'utf8') };
        } catch {
          return { error: `not found: ${path}` };
        }
      },
    }),
  ) as SolcOutput;
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const contracts = Object.fromEntries(
    Object.entries(out.contracts[file] ?? {}).map(([name, c]): [string, Compiled] => [name, { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` }]),
  );
  cache.set(file, contracts);
  return contracts;
}

import type { Command } from 'commander';
import { referenceChecksum } from '../bench-reference.js';
import { CliError, EXIT } from '../errors.js';
import { writeLine } from '../io.js';
import { addSettings, type CommandContext, loadSettings, table, writeJson } from '../program.js';

/**
 * `miner bench`: hashes a fixed amount of fixed work offline (xmrig --bench style) and prints
 * each kernel's rate and a checksum of its results. The checksums depend only on the amounts,
 * not on the machine or the thread count: for the published amounts (bench-reference.ts) each
 * says `ok` or `MISMATCH` (exit 1), so a wrong kernel shows at once.
 */
export function benchCommand(program: Command, ctx: CommandContext): void {
  const command = program
    .command('bench')
    .description('benchmark the CPU kernels offline: rate per kernel and a checksum of the results')
    .option('--amount <n>', 'hexchain hashes to compute (suffixes k, M, G: 1M = 1000000)', '4194304')
    .option('--tensor-iterations <n>', 'nonce iterations per v4.0 tensor case (0 skips them)', '4096')
    .option('--json', 'machine-readable output');
  addSettings(command, ['threads', 'kernel']);
  command.addHelpText(
    'after',
    '\nThe same amounts give the same checksums on every machine and thread count.\nExample: miner bench --amount 1M --threads 2',
  );
  command.action(
    async (options: { amount: string; tensorIterations: string; json?: boolean }, cmd: Command) => {
      const { io } = ctx;
      const { settings } = loadSettings(cmd, io);
      const hexchainHashes = amount(options.amount, '--amount');
      const tensorIterations = amount(options.tensorIterations, '--tensor-iterations');
      if (hexchainHashes === 0 && tensorIterations === 0) {
        throw new CliError('usage', 'nothing to benchmark: --amount and --tensor-iterations are both 0');
      }
      const { bench, formatHashrate, selectKernel } = await import('@tensormine/miner');
      if (!options.json) {
        writeLine(
          io.stdout,
          `bench: ${settings.threads} thread${settings.threads === 1 ? '' : 's'}, ${hexchainHashes} hexchain hashes, ${tensorIterations} iterations per tensor case`,
        );
      }
      // The native kernels are built (first use) and checked here; the engine reuses the result.
      const selection = await selectKernel(settings.kernel, {
        onProgress: (line) => writeLine(io.stderr, line),
      });
      if (!options.json && selection.notice !== undefined) writeLine(io.stdout, selection.notice);
      let mismatches = 0;
      const verdictOf = (name: string, checksum: string): 'ok' | 'MISMATCH' | undefined => {
        const reference = referenceChecksum(name, { hexchainHashes, tensorIterations });
        if (reference === undefined) return undefined;
        return reference === checksum ? 'ok' : 'MISMATCH';
      };
      const result = await bench({
        threads: settings.threads,
        kernel: settings.kernel,
        hexchainHashes,
        tensorIterations,
        onCase: (c) => {
          const verdict = verdictOf(c.name, c.checksum);
          if (verdict === 'MISMATCH') mismatches++;
          if (options.json) return;
          const [line] = table([
            [
              c.name.padEnd(34),
              formatHashrate(c.rate).padStart(12),
              `${c.results} results`.padStart(12),
              `checksum ${c.checksum.slice(0, 16)}${verdict === undefined ? '' : ` ${verdict}`}`,
              `(${c.seconds.toFixed(2)} s)`,
            ],
          ]);
          writeLine(io.stdout, line);
        },
      });
      if (options.json) {
        writeJson(io, {
          ...result,
          cases: result.cases.map((c) => ({ ...c, reference: verdictOf(c.name, c.checksum) ?? null })),
        });
      } else {
        const verdicts = result.cases.map((c) => verdictOf(c.name, c.checksum));
        const overall = verdicts.includes('MISMATCH')
          ? ' MISMATCH'
          : verdicts.length > 0 && verdicts.every((v) => v === 'ok')
            ? ' ok'
            : '';
        writeLine(io.stdout, `checksum ${result.checksum}${overall}`);
        writeLine(io.stdout, `kernel errors ${result.kernelErrors}`);
        writeLine(io.stdout, `kernel ${result.kernel}`);
      }
      if (mismatches > 0) {
        writeLine(
          io.stderr,
          `miner: ${mismatches} checksum${mismatches === 1 ? '' : 's'} differ from the published reference (MISMATCH): a kernel computes wrong results here`,
        );
        ctx.setExit(EXIT.failure);
      }
      if (result.kernelErrors > 0) {
        writeLine(
          io.stderr,
          `miner: ${result.kernelErrors} kernel results were rejected by the reference verifier`,
        );
        ctx.setExit(EXIT.failure);
      }
    },
  );
}

/** `4194304`, `1M`, `256k`, `2G` -> a count. */
export function amount(text: string, option: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)\s*$/.exec(text);
  const scale = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[(m?.[2] ?? '').toLowerCase()] ?? 1;
  const n = m ? Math.round(Number(m[1]) * scale) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 0 || n > 2 ** 40) {
    throw new CliError(
      'usage',
      `option ${option}: expected a count like 4194304, 256k or 1M, got ${JSON.stringify(text)}`,
    );
  }
  return n;
}

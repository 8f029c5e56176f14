import { Command, CommanderError } from 'commander';
import { benchCommand } from './commands/bench.js';
import { configCommand } from './commands/config.js';
import { devicesCommand } from './commands/devices.js';
import { keysCommand } from './commands/keys.js';
import { latticeCommand } from './commands/lattice.js';
import { mineCommand } from './commands/mine.js';
import { ordersCommand } from './commands/orders.js';
import { registerCommand } from './commands/register.js';
import { stakeCommands } from './commands/stake.js';
import { statusCommand } from './commands/status.js';
import { swapCommand } from './commands/swap.js';
import { validatorCommand } from './commands/validator.js';
import { vaultCommand } from './commands/vault.js';
import { walletCommand } from './commands/wallet.js';
import { CliError, EXIT, toCliError } from './errors.js';
import { type CliIo, writeLine } from './io.js';
import { type CommandContext, cliVersion, type RunOptions } from './program.js';

/**
 * Runs the `miner` command line: `run(process.argv.slice(2), processIo())` in the bin, the
 * same in tests with captured streams and their own environment. Resolves to the exit code
 * (docs/cli.md): 0 done, 1 failure, 2 usage, 3 no validator answered, 4 key problem.
 * Errors are printed as `miner: <message>` and hint lines on stderr; nothing is thrown.
 */
export async function run(argv: readonly string[], io: CliIo, options: RunOptions = {}): Promise<number> {
  let exitCode: number = EXIT.ok;
  const ctx: CommandContext = {
    io,
    version: cliVersion(),
    options,
    setExit: (code) => {
      exitCode = code;
    },
  };
  try {
    const validatorTable = argv[0] === 'validator' ? await import('@tensormine/validator') : undefined;
    const program = buildProgram(ctx, validatorTable);
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return commanderExit(error);
    const e = cliError(error);
    writeLine(io.stderr, `miner: ${e.message}`);
    for (const line of e.hint) writeLine(io.stderr, `  ${line}`);
    return e.exitCode;
  }
}

function buildProgram(ctx: CommandContext, validatorTable: Parameters<typeof validatorCommand>[2]): Command {
  const { io } = ctx;
  const program = new Command('miner')
    .description(
      'The tensormine miner: mine v4.1 hexchain blocks and v4.0 tensor proofs on the CPU and ESP32 boards, against validators with failover or a validator in this process (--local).',
    )
    .version(ctx.version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print the help of a command')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(`miner: ${text.replace(/^error: /, '')}`),
      ...(io.stdout.isTTY && io.stdout.columns ? { getOutHelpWidth: () => io.stdout.columns ?? 80 } : {}),
    })
    .showHelpAfterError('(miner <command> --help lists the options)')
    .addHelpText(
      'after',
      '\nSettings: flags > environment (MINER_*) > config file ($XDG_CONFIG_HOME/tensormine/miner.json) > defaults;\n"miner config" prints them with their sources. Documentation: docs/cli.md\n',
    );
  mineCommand(program, ctx);
  benchCommand(program, ctx);
  keysCommand(program, ctx);
  registerCommand(program, ctx);
  statusCommand(program, ctx);
  latticeCommand(program, ctx);
  devicesCommand(program, ctx);
  walletCommand(program, ctx);
  stakeCommands(program, ctx);
  swapCommand(program, ctx);
  vaultCommand(program, ctx);
  ordersCommand(program, ctx);
  validatorCommand(program, ctx, validatorTable);
  configCommand(program, ctx);
  return program;
}

/** Commander's own exits: help and version are 0, every parse error is a usage error. */
function commanderExit(error: CommanderError): number {
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
  return EXIT.usage;
}

function cliError(error: unknown): CliError {
  const e = error as NodeJS.ErrnoException & { port?: number; address?: string };
  // The validator's settings (validator start, mine --local).
  if (e?.name === 'ConfigError') return new CliError('config', e.message, [], { cause: error });
  if (e?.code === 'EADDRINUSE') {
    return new CliError(
      'usage',
      `port ${e.port} on ${e.address} is already in use; pick another with --port`,
      [],
      {
        cause: error,
      },
    );
  }
  return toCliError(error);
}

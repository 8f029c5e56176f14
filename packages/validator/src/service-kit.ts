import { parseArgs } from 'node:util';
import { type OperationId, type RouteDefinition, routesOf, type Service } from '@tensormine/protocol';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { installErrorHandling } from './http/errors.js';
import { RateLimiter } from './http/rate-limit.js';
import { validatorCompiler } from './http/validator-compiler.js';
import { stopWithLauncher } from './launcher.js';
import {
  ConfigError,
  type LogLevel,
  type ResolvedSettings,
  type ResolveSettingsInput,
  type SettingSpecs,
  settingFlag,
  settingsUsage,
} from './settings.js';

/**
 * What the companion services (the hub, the terminal backend) share with the validator: one
 * Fastify setup (the strict schema compiler, the one error shape, a per-address rate limit,
 * security headers), route registration from the protocol's route table, and the bin runner
 * (`start` / `config`, flags > environment > config file > defaults).
 */

/** What every companion service's `createX()` takes beside its settings (given as flags). */
export interface ServiceCreateOptions {
  /** Read the service's variables from this environment (the bin passes process.env; default none). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly configFile?: string;
  /** The clock, Unix milliseconds. */
  readonly now?: () => number;
  readonly logger?: boolean | Record<string, unknown>;
}

export interface ServiceAppOptions {
  readonly logLevel: LogLevel;
  readonly rateLimitPerSecond: number;
  readonly rateLimitBurst: number;
  readonly now: () => number;
  /** Fastify logger options; default: the level to stdout, silent under tests. */
  readonly logger?: boolean | Record<string, unknown> | undefined;
  /** Extra response headers on every answer. */
  readonly headers?: Readonly<Record<string, string>>;
}

export function createServiceApp(options: ServiceAppOptions): FastifyInstance {
  const app = Fastify({
    logger:
      options.logger ??
      (process.env.VITEST ? false : { level: options.logLevel, redact: ['req.headers.cookie'] }),
    bodyLimit: 16 * 1024,
    trustProxy: false,
    return503OnClosing: true,
    ajv: { customOptions: { coerceTypes: false } },
  });
  app.setValidatorCompiler(validatorCompiler);
  installErrorHandling(app);
  const limiter = new RateLimiter(
    { burst: options.rateLimitBurst, perSecond: options.rateLimitPerSecond },
    options.now,
  );
  app.addHook('onRequest', async (request) => {
    limiter.take(request.ip, 'address');
  });
  const headers = {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...options.headers,
  };
  app.addHook('onSend', async (_request, reply) => {
    for (const [name, value] of Object.entries(headers)) {
      if (!reply.hasHeader(name)) reply.header(name, value);
    }
  });
  return app;
}

export type ServiceHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Registers every route of `service` in the route table; a route without a handler is a bug. */
export function registerServiceRoutes(
  app: FastifyInstance,
  service: Service,
  handlers: { readonly [Id in OperationId]?: ServiceHandler },
): void {
  for (const route of routesOf(service) as RouteDefinition[]) {
    const handler = handlers[route.operationId as OperationId];
    if (!handler) throw new Error(`${service}: no handler for ${route.operationId}`);
    app.route({
      method: route.method,
      url: route.url,
      schema: {
        ...route.schema,
        operationId: route.operationId,
        summary: route.summary,
        tags: [...route.tags],
      },
      handler,
    });
  }
}

export interface ServiceBin<C> {
  /** The command name, e.g. "tensormine-hub". */
  readonly name: string;
  /** What `start` runs, e.g. "the hub". */
  readonly what: string;
  readonly specs: SettingSpecs<C>;
  /** The environment variable naming a config file, e.g. HUB_CONFIG. */
  readonly configEnv: string;
  /** Settings whose value `config` prints as (set) / (not set). */
  readonly secrets?: readonly (keyof C)[];
  /** Settings whose default is not printed in the usage (computed from the machine). */
  readonly hideDefaults?: readonly (keyof C & string)[];
  readonly resolve: (input: ResolveSettingsInput<C>) => ResolvedSettings<C>;
  /** Starts the service; resolves to the lines to print and how to stop it. */
  readonly start: (
    input: ResolveSettingsInput<C>,
  ) => Promise<{ readonly lines: readonly string[]; close(): Promise<void> }>;
}

/** Runs a service's bin: `start` or `config [--json]`; exits with 2 on a configuration error. */
export function runServiceBin<C>(bin: ServiceBin<C>, argv = process.argv.slice(2)): void {
  const names = Object.keys(bin.specs) as (keyof C & string)[];
  const usage = () =>
    [
      `usage: ${bin.name} <command> [options]`,
      '',
      'commands:',
      `  start     run ${bin.what}`,
      '  config    print the effective configuration and the source of each value (secrets hidden)',
      '',
      'options:',
      `  --config FILE                  a JSON file of settings (keys as below, camelCase); env ${bin.configEnv}`,
      '  --json                         (config) machine-readable output',
      ...settingsUsage(bin.specs, bin.hideDefaults ?? []),
    ].join('\n');

  const main = async (): Promise<number> => {
    const options: Record<string, { type: 'string' | 'boolean' }> = {
      config: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    };
    for (const name of names) options[settingFlag(name)] = { type: 'string' };
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    } catch (error) {
      console.error(`${bin.name}: ${(error as Error).message}\n\n${usage()}`);
      return 2;
    }
    const { values, positionals } = parsed;
    const command = positionals[0];
    if (values.help === true || !command) {
      console.log(usage());
      return command || values.help ? 0 : 2;
    }
    const flags: Partial<Record<keyof C, unknown>> = {};
    for (const name of names) {
      const v = values[settingFlag(name)];
      if (v !== undefined) flags[name] = v;
    }
    const configFile = (values.config as string | undefined) ?? process.env[bin.configEnv];
    const input: ResolveSettingsInput<C> = { flags, env: process.env, ...(configFile ? { configFile } : {}) };
    if (command === 'config') {
      const { config, sources } = bin.resolve(input);
      const rows = names.map((name) => {
        const v = config[name] as unknown;
        const value = bin.secrets?.includes(name)
          ? v === undefined
            ? '(not set)'
            : '(set)'
          : v === undefined
            ? '(not set)'
            : String(v);
        return { name, env: (bin.specs[name] as { env: string }).env, value, source: sources[name] };
      });
      if (values.json === true) console.log(JSON.stringify(rows, null, 2));
      else
        for (const r of rows)
          console.log(`${r.name.padEnd(28)} ${r.value.padEnd(48)} ${r.source} (${r.env})`);
      return 0;
    }
    if (command !== 'start') {
      console.error(`${bin.name}: unknown command ${JSON.stringify(command)}\n\n${usage()}`);
      return 2;
    }
    const running = await bin.start(input);
    for (const line of running.lines) console.log(line);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      console.log(`\n${signal}: closing`);
      await running.close();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
    // Under `npm start`: npm's own SIGINT and SIGTERM stop at its shell (launcher.ts).
    stopWithLauncher((reason) => void stop(reason));
    return -1;
  };

  main().then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (error: unknown) => {
      if (error instanceof ConfigError) {
        console.error(`${bin.name}: ${error.message}`);
        process.exit(2);
      }
      const e = error as NodeJS.ErrnoException & { port?: number; address?: string };
      if (e.code === 'EADDRINUSE') {
        console.error(
          `${bin.name}: port ${e.port} on ${e.address} is already in use; pick another with --port`,
        );
        process.exit(1);
      }
      console.error(error);
      process.exit(1);
    },
  );
}

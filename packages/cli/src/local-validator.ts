import { createValidator, type Validator } from '@tensormine/validator';
import { localValidatorDir } from './paths.js';

/**
 * The validator of `mine --local`: the reference validator in this process, with its data in
 * DATA_DIR/local-validator, listening on a free port of 127.0.0.1. It reads its other
 * settings the way `tensormine-validator start` does: TENSORMINE_* variables and the
 * TENSORMINE_CONFIG file (e.g. TENSORMINE_HEX_DIFFICULTY=4096 for quick blocks). It logs
 * nothing (the miner's screen is the terminal's), and, serving one miner, it raises the
 * per-address and per-key rate limits unless they are configured.
 */
export interface LocalValidator {
  readonly validator: Validator;
  readonly url: string;
  readonly dataDir: string;
}

const GENEROUS_LIMITS = {
  rateLimitPerSecond: ['TENSORMINE_RATE_LIMIT_PER_SECOND', 100_000],
  rateLimitBurst: ['TENSORMINE_RATE_LIMIT_BURST', 100_000],
  keyRateLimitPerSecond: ['TENSORMINE_KEY_RATE_LIMIT_PER_SECOND', 100_000],
  keyRateLimitBurst: ['TENSORMINE_KEY_RATE_LIMIT_BURST', 100_000],
} as const;

export async function startLocalValidator(
  minerDataDir: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<LocalValidator> {
  const dataDir = localValidatorDir(minerDataDir);
  const limits: Record<string, number> = {};
  for (const [name, [variable, value]] of Object.entries(GENEROUS_LIMITS)) {
    if (!env[variable]) limits[name] = value;
  }
  const validator = await createValidator({
    ...limits,
    env,
    ...(env.TENSORMINE_CONFIG ? { configFile: env.TENSORMINE_CONFIG } : {}),
    dataDir,
    logger: false,
  });
  try {
    const url = await validator.listen({ host: '127.0.0.1', port: 0 });
    return { validator, url, dataDir };
  } catch (error) {
    await validator.close();
    throw error;
  }
}

import { createValidator, type Validator } from '@tensormine/validator';
import { localValidatorDir } from './paths.js';

/**
 * The validator of `mine --local`: the reference validator in this process, with its data in
 * DATA_DIR/local-validator, listening on a free port of 127.0.0.1. It reads its other
 * settings the way `tensormine-validator start` does: TENSORMINE_* variables and the
 * TENSORMINE_CONFIG file (e.g. TENSORMINE_HEX_DIFFICULTY=4096 for quick blocks). It logs
 * nothing (the miner's screen is the terminal's), and, serving one miner, it raises the
 * per-address and per-key rate limits unless they are configured.
 *
 * TENSORMINE_HEX_DIFFICULTY is the initial difficulty of a new lattice: once blocks retargeted it, the data directory holds the
 * live one. Here, a miner asking for a difficulty by the environment gets it on an existing
 * data directory too: the local validator applies it as `POST /admin/config` would (the
 * retarget goes on from there), and the summary says so.
 */
export interface LocalValidator {
  readonly validator: Validator;
  readonly url: string;
  readonly dataDir: string;
  /** A line for the start-up summary when the difficulty of the data directory was changed. */
  readonly note: string | undefined;
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
    const note = await applyAskedDifficulty(validator);
    const url = await validator.listen({ host: '127.0.0.1', port: 0 });
    return { validator, url, dataDir, note };
  } catch (error) {
    await validator.close();
    throw error;
  }
}

/**
 * TENSORMINE_HEX_DIFFICULTY given (environment or flag), and the data directory's live
 * difficulty another: sets it through the admin route (in process, with the admin token).
 */
async function applyAskedDifficulty(validator: Validator): Promise<string | undefined> {
  const source = validator.sources.hexDifficulty;
  if ((source !== 'env' && source !== 'flag') || !validator.config.hexchain) return undefined;
  const auth = { authorization: `Bearer ${validator.adminToken}` };
  const current = await validator.inject({ url: '/admin/config', headers: auth });
  const live = (current.json() as { hexchain_difficulty: number }).hexchain_difficulty;
  const asked = validator.config.hexDifficulty;
  if (BigInt(live) === asked) return undefined;
  const res = await validator.inject({
    method: 'POST',
    url: '/admin/config',
    headers: auth,
    payload: { hexchain_difficulty: Number(asked) },
  });
  if (res.statusCode !== 200) {
    throw new Error(`could not set the difficulty to ${asked}: ${res.body}`);
  }
  return `${asked} (TENSORMINE_HEX_DIFFICULTY; the data directory had ${live}, retargeted by its blocks or set by POST /admin/config)`;
}

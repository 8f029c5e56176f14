import type { MinerConfig, MinerConfigChange, MinerConfigResult } from '@tensormine/protocol';
import type { MiningEngine } from '../engine.js';
import type { Miner, MinerStats } from '../miner.js';

/**
 * What the control API reads and steers. The CLI's mining session is one (it owns the
 * settings, the validators and the pool membership); `minerControlTarget` makes one of a bare
 * Miner and its CPU engine.
 */
export interface ControlTarget {
  stats(): MinerStats;
  pause(): void;
  resume(): void;
  /** The settings in force. */
  config(): MinerConfig;
  /**
   * Applies a change (validated by the route's schema): resolves to the new settings and what it
   * took, or rejects with a ControlRefusal (409 `miner_setting_refused`), the old settings kept.
   */
  configure(change: MinerConfigChange): Promise<MinerConfigResult>;
  /** Stops the mining run and starts it again; resolves once it mines. */
  restart(): Promise<void>;
}

/** A change the miner cannot apply: answered 409 `miner_setting_refused`; nothing was changed. */
export class ControlRefusal extends Error {
  override readonly name = 'ControlRefusal';
}

/**
 * A Miner as a ControlTarget: its CPU engine's threads, intensity and kernel change in place;
 * its validators and pool membership belong to its WorkSource, so changing them is refused (the
 * CLI's session does them); a restart stops the Miner and starts it again.
 */
export function minerControlTarget(miner: Miner, engine?: MiningEngine): ControlTarget {
  const config = (): MinerConfig => ({
    cpu: engine !== undefined,
    threads: engine?.threads ?? 1,
    intensity: engine?.intensity ?? 1,
    kernel: engine?.kernelChoice ?? 'auto',
    kernelInUse: engine === undefined ? null : engine.kernel,
    validators: miner.source.url === undefined ? [] : [miner.source.url],
    local: false,
    pool: miner.strategy.continueAfterFound,
    protocol: 'auto',
    devices: miner.backends.filter((b) => b !== engine).map((b) => b.id),
    paused: miner.paused,
  });
  return {
    stats: () => miner.stats(),
    pause: () => miner.pause(),
    resume: () => miner.resume(),
    config,
    async configure(change) {
      if (change.validators !== undefined || change.pool !== undefined || change.stake !== undefined) {
        throw new ControlRefusal(
          "validators and pool: this miner's work source owns them (the miner CLI changes them)",
        );
      }
      const wantsCpu =
        change.threads !== undefined || change.kernel !== undefined || change.intensity !== undefined;
      if (wantsCpu && engine === undefined)
        throw new ControlRefusal('threads, intensity, kernel: this miner has no CPU engine');
      return applyCpuChange(engine!, change, config);
    },
    async restart() {
      await miner.stop();
      await miner.start();
    },
  };
}

/**
 * Threads, intensity and kernel on a CPU engine (also the CLI session's way): intensity in
 * place, threads and kernel by restarting the workers (MiningEngine.reconfigure).
 */
export async function applyCpuChange(
  engine: MiningEngine,
  change: MinerConfigChange,
  config: () => MinerConfig,
): Promise<MinerConfigResult> {
  const applied: string[] = [];
  let restarted: MinerConfigResult['restarted'] = 'none';
  const threads =
    change.threads !== undefined && change.threads !== engine.threads ? change.threads : undefined;
  const kernel =
    change.kernel !== undefined && change.kernel !== engine.kernelChoice ? change.kernel : undefined;
  if (threads !== undefined || kernel !== undefined) {
    await engine.reconfigure({
      ...(threads === undefined ? {} : { threads }),
      ...(kernel === undefined ? {} : { kernel }),
    });
    if (threads !== undefined) applied.push('threads');
    if (kernel !== undefined) applied.push('kernel');
    restarted = 'workers';
  }
  if (change.intensity !== undefined && change.intensity !== engine.intensity) {
    engine.setIntensity(change.intensity);
    applied.push('intensity');
  }
  return { config: config(), applied, restarted };
}

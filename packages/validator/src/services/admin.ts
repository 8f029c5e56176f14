import type { RuntimeSettingName } from '../config.js';
import type { RuntimeConfig, ValidatorContext } from '../context.js';
import { routeHandlers } from '../http/handlers.js';
import type { HexchainService } from './types.js';

/** Notified when POST /admin/config persisted run-time settings: every node reloads them. */
export const CONFIG_CHANNEL = 'tensormine_config';

function effectiveConfig(ctx: ValidatorContext, hexchain: HexchainService) {
  return {
    difficulty: ctx.runtime.difficulty,
    max_tensor_dim: ctx.runtime.maxTensorDim,
    pool_strategy: ctx.runtime.poolStrategy,
    hexchain_difficulty: Number(hexchain.info().difficulty),
    challenge_ttl_s: ctx.runtime.challengeTtlS,
  };
}

/** GET /admin/metrics, GET and POST /admin/config (admin bearer token, checked by the router). */
export function adminHandlers(deps: { hexchain: HexchainService }) {
  return routeHandlers({
    async getAdminMetrics(_request, ctx) {
      const c = await ctx.metrics.snapshot();
      return {
        challenges_issued: c.challengesIssued,
        proofs_valid: c.proofsValid,
        proofs_rejected: c.proofsRejected,
        avg_response_time_ms: ctx.metrics.avgResponseTimeMs(),
        uptime_pct: await ctx.metrics.uptimePct(),
        rejections_by_reason: { ...c.rejectionsByReason },
        blocks_accepted: c.blocksAccepted,
        requests_total: ctx.metrics.requestsTotal,
        uptime_s: Math.floor((ctx.now() - ctx.startedAt) / 1000),
        node_id: ctx.nodeId,
      };
    },

    async getAdminConfig(_request, ctx) {
      return effectiveConfig(ctx, deps.hexchain);
    },

    /**
     * Validated by the schema (ranges, at least one setting); applies to challenges issued
     * afterwards (open challenges keep the thresholds they were issued with) and is persisted.
     */
    async setAdminConfig(request, ctx) {
      const body = request.body;
      const changes: Partial<RuntimeConfig> = {};
      if (body.difficulty !== undefined) changes.difficulty = body.difficulty;
      if (body.max_tensor_dim !== undefined) changes.maxTensorDim = body.max_tensor_dim;
      if (body.pool_strategy !== undefined) changes.poolStrategy = body.pool_strategy;
      if (body.challenge_ttl_s !== undefined) changes.challengeTtlS = body.challenge_ttl_s;
      await ctx.storage.transaction(async (tx) => {
        for (const [name, value] of Object.entries(changes) as [RuntimeSettingName, unknown][]) {
          await tx.meta.set(`config.${name}`, String(value));
        }
        // The other nodes sharing the database reload their run-time settings (app.ts).
        if (Object.keys(changes).length > 0) {
          await tx.notify(CONFIG_CHANNEL, JSON.stringify({ from: ctx.nodeId, names: Object.keys(changes) }));
        }
      });
      Object.assign(ctx.runtime, changes);
      if (body.hexchain_difficulty !== undefined) {
        await deps.hexchain.setDifficulty(BigInt(body.hexchain_difficulty));
      }
      request.raw.log.info({ changes: body }, 'runtime configuration changed');
      return { applied: true as const, config: effectiveConfig(ctx, deps.hexchain) };
    },
  });
}

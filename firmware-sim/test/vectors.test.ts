/**
 * The C core against the normative protocol vectors: every tensor challenge and nonce, the
 * solved proofs, activations, normalize and MML cases (tensor.vectors.json), and headers, pow
 * and block hashes, target comparisons and solved blocks (hexchain.vectors.json). The C
 * program build/tm-vectors computes; this file only feeds it the inputs and compares.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCore, buildDir, runVector, runVectors } from './driver.ts';

interface WorkVector {
  nonce: number;
  work_seed: string;
  result_shape: number[];
  accumulator_hash: string;
  tensor_result_hash: string;
  mml_score_q16: number;
  path_signature: string;
  path_distance: number;
  computation_hash: string;
}

interface ChallengeVector {
  input: { deviceType: string };
  challenge_hash: string;
  operation: 'matmul' | 'conv';
  activation: 'relu' | 'sigmoid' | 'tanh';
  dim: number;
  filters: number;
  mml_threshold_q16: number;
  path_distance_max: number;
  input_tensor_hex: string;
  path_target: string;
  nonces: WorkVector[];
  solution: {
    iterations: number;
    proof: {
      challenge_hash: string;
      tensor_result_hash: string;
      mml_score: number;
      path_signature: string;
      path_distance: number;
      computation_nonce: number;
      computation_hash: string;
      miner_pubkey: string;
    };
  };
}

interface TensorVectors {
  miner_public_key: string;
  activations: { a: number; relu: number; sigmoid: number; tanh: number }[];
  normalize: { z: number[]; out: number[] }[];
  mml: { bitmap_hex: string; count: number; score_q16: number }[];
  challenges: ChallengeVector[];
  odd_dim: {
    challenge_hash: string;
    operation: 'matmul' | 'conv';
    activation: 'relu' | 'sigmoid' | 'tanh';
    dim: number;
    filters: number;
    nonces: Omit<WorkVector, 'work_seed'>[];
  };
}

interface Coord {
  q: number;
  r: number;
  s: number;
}

interface HeaderVector {
  coord: Coord;
  challenge_hash: string;
  miner_pubkey: string;
  nonce: number;
  header: string;
  pow_hash: string;
  block_hash: string;
}

interface HexchainVectors {
  coordinates: { input: unknown; valid: boolean }[];
  headers: HeaderVector[];
  hash_meets_target: { hash: string; target: string; meets: boolean }[];
  solved: (HeaderVector & { difficulty: string; target: string; start_nonce: number })[];
  chain: { target: string; steps: HeaderVector[] };
}

const require = createRequire(import.meta.url);
const load = <T>(name: string): T =>
  JSON.parse(readFileSync(require.resolve(`@tensormine/protocol/vectors/${name}`), 'utf8')) as T;
const tensor = load<TensorVectors>('tensor.vectors.json');
const hexchain = load<HexchainVectors>('hexchain.vectors.json');

const key = tensor.miner_public_key;
const label = (v: ChallengeVector) => `${v.input.deviceType} ${v.operation} ${v.activation}`;
const task = (v: ChallengeVector, input = v.input_tensor_hex) =>
  `${v.operation} ${v.activation} ${v.dim} ${v.filters} ${v.challenge_hash} ${input} ${v.path_target}`;

/** Parses the seven fields `work` prints (and `search` after found, nonce, iterations). */
function workFields(fields: string[]) {
  const [work_seed, tensor_result_hash, mml, path_signature, distance, computation_hash, accumulator_hash] =
    fields;
  return {
    work_seed,
    accumulator_hash,
    tensor_result_hash,
    mml_score_q16: Number(mml),
    path_signature,
    path_distance: Number(distance),
    computation_hash,
  };
}

beforeAll(() => {
  buildCore();
});

describe('SHA-256 (FIPS 180-4, written for the core)', () => {
  it('reproduces the FIPS 180-4 examples', () => {
    const cases = [
      ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
      ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
      [
        'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
        '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
      ],
    ] as const;
    const out = runVectors(cases.map(([text]) => `sha256 ${Buffer.from(text).toString('hex')}`.trim()));
    cases.forEach(([text, digest], i) => {
      expect(out[i], `SHA-256("${text}")`).toBe(digest);
    });
  });

  it('agrees with node:crypto for every length from 0 to 300 bytes and a few long messages', () => {
    const messages = [
      ...Array.from({ length: 301 }, (_, n) => randomBytes(n)),
      randomBytes(4096),
      randomBytes(100_003),
    ];
    const out = runVectors(messages.map((m) => `sha256 ${m.toString('hex')}`.trim()));
    messages.forEach((m, i) => {
      const expected = createHash('sha256').update(m).digest('hex');
      expect(out[i], `SHA-256 of ${m.length} random bytes`).toBe(expected);
    });
  });
});

describe('v4.0 tensor vectors', () => {
  it('reproduces the activations for all 256 int8 inputs', () => {
    const out = runVectors(tensor.activations.map((row) => `act ${row.a}`));
    tensor.activations.forEach((row, i) => {
      const [relu, sigmoid, tanh] = out[i]!.split(' ').map(Number);
      expect({ a: row.a, relu, sigmoid, tanh }, `activations of ${row.a}`).toEqual(row);
    });
  });

  it('reproduces the normalize cases (floor division toward minus infinity)', () => {
    const out = runVectors(tensor.normalize.map((row) => `normalize ${row.z.join(',')}`));
    tensor.normalize.forEach((row, i) => {
      expect(out[i]!.split(',').map(Number), `normalize([${row.z.join(', ')}])`).toEqual(row.out);
    });
  });

  it('reproduces the MML scores', () => {
    const out = runVectors(tensor.mml.map((row) => `mml ${row.bitmap_hex} ${row.count}`));
    tensor.mml.forEach((row, i) => {
      expect(Number(out[i]), `mml(${row.bitmap_hex}, ${row.count})`).toBe(row.score_q16);
    });
  });

  it('covers every device type, operation and activation', () => {
    expect(tensor.challenges.map(label)).toHaveLength(15);
  });

  describe.each(tensor.challenges.map((v) => [label(v), v] as const))('challenge %s', (_, v) => {
    it('derives X from the challenge hash (expand of taggedHash("PTM4/input", hash)) and the path target', () => {
      const [input, pathTarget] = runVectors([
        `input ${v.challenge_hash} ${v.dim}`,
        `path_target ${v.challenge_hash}`,
      ]);
      expect(input, `${label(v)}: X derived in C`).toBe(v.input_tensor_hex);
      expect(pathTarget, `${label(v)}: path_target derived in C`).toBe(v.path_target);
    });

    it('computes every listed nonce: work seed, accumulator hash, result hash, mml, path signature and distance, computation hash', () => {
      const out = runVectors(v.nonces.map((n) => `work ${task(v)} ${key} ${n.nonce}`));
      v.nonces.forEach((n, i) => {
        const { result_shape: _shape, nonce: _nonce, ...expected } = n;
        expect(workFields(out[i]!.split(' ')), `${label(v)} nonce ${n.nonce}`).toEqual(expected);
      });
    });

    it('computes the same with X derived in C', () => {
      const n = v.nonces[0]!;
      const got = workFields(runVector(`work ${task(v, '-')} ${key} ${n.nonce}`).split(' '));
      expect(got.computation_hash, `${label(v)} nonce ${n.nonce} (X derived)`).toBe(n.computation_hash);
    });

    it('finds the solution: the search from nonce 0 stops at the proof nonce', () => {
      const p = v.solution.proof;
      const line = runVector(`search ${task(v)} ${key} 0 1000 ${v.mml_threshold_q16} ${v.path_distance_max}`);
      const [status, nonce, iterations, ...rest] = line.split(' ');
      expect(status, `${label(v)}: search result ${line}`).toBe('found');
      expect(
        { nonce: Number(nonce), iterations: Number(iterations), ...workFields(rest) },
        `${label(v)}: solution`,
      ).toMatchObject({
        nonce: p.computation_nonce,
        iterations: v.solution.iterations,
        tensor_result_hash: p.tensor_result_hash,
        mml_score_q16: p.mml_score * 65536,
        path_signature: p.path_signature,
        path_distance: p.path_distance,
        computation_hash: p.computation_hash,
      });
      expect(p.miner_pubkey).toBe(key);
    });

    it('the search shortcut (fired bitmap from the accumulators) agrees with the full work for 64 nonces', () => {
      expect(runVector(`crosscheck ${task(v)} ${key} 1000 64`), label(v)).toBe('ok 64');
    });
  });

  it('pads the fired bitmap of an odd side (N = 5, 25 outputs) as the reference does', () => {
    const v = tensor.odd_dim;
    const line = (nonce: number) =>
      `work ${v.operation} ${v.activation} ${v.dim} ${v.filters} ${v.challenge_hash} - ${runVector(`path_target ${v.challenge_hash}`)} ${key} ${nonce}`;
    const out = runVectors(v.nonces.map((n) => line(n.nonce)));
    v.nonces.forEach((n, i) => {
      const { result_shape: _shape, nonce: _nonce, ...expected } = n;
      const { work_seed: _seed, ...got } = workFields(out[i]!.split(' '));
      expect(got, `odd dim nonce ${n.nonce}`).toEqual(expected);
    });
  });

  it('rejects a nonce above 2^53 - 1', () => {
    const v = tensor.challenges[0]!;
    expect(runVector(`work ${task(v)} ${key} 9007199254740992`)).toBe('error tm_compute_work failed');
    expect(runVector(`work ${task(v)} ${key} 9007199254740991`)).toMatch(/^[0-9a-f]{64} /);
  });
});

describe('v4.1 hexchain vectors', () => {
  const header = (v: HeaderVector) =>
    `header ${v.coord.q} ${v.coord.r} ${v.coord.s} ${v.challenge_hash} ${v.miner_pubkey} ${v.nonce}`;

  it('encodes headers and computes pow and block hashes (headers and every chain step)', () => {
    const all = [...hexchain.headers, ...hexchain.chain.steps, ...hexchain.solved];
    const out = runVectors(all.map(header));
    all.forEach((v, i) => {
      const [h, pow_hash, block_hash] = out[i]!.split(' ');
      expect({ header: h, pow_hash, block_hash }, `header ${i} nonce ${v.nonce}`).toEqual({
        header: v.header,
        pow_hash: v.pow_hash,
        block_hash: v.block_hash,
      });
    });
  });

  it('rejects the invalid coordinates of the vectors', () => {
    const numeric = hexchain.coordinates.filter(
      (c): c is { input: Coord; valid: boolean } =>
        typeof c.input === 'object' &&
        c.input !== null &&
        ['q', 'r', 's'].every((k) => Number.isInteger((c.input as Record<string, unknown>)[k])) &&
        ['q', 'r', 's'].every((k) => Math.abs((c.input as Record<string, number>)[k]!) < 2 ** 31),
    );
    expect(numeric.length).toBeGreaterThan(5);
    const hash = '00'.repeat(32);
    const out = runVectors(
      numeric.map((c) => `header ${c.input.q} ${c.input.r} ${c.input.s} ${hash} ${hash} 0`),
    );
    numeric.forEach((c, i) => {
      expect(out[i]!.startsWith('error'), `coordinate ${JSON.stringify(c.input)} valid=${c.valid}`).toBe(
        !c.valid,
      );
    });
  });

  it('compares hashes with targets as big-endian numbers', () => {
    const out = runVectors(hexchain.hash_meets_target.map((v) => `meets ${v.hash} ${v.target}`));
    hexchain.hash_meets_target.forEach((v, i) => {
      expect(out[i], `${v.hash} <= ${v.target}`).toBe(v.meets ? '1' : '0');
    });
  });

  it('solves the blocks: the midstate search from start_nonce finds the vector nonce', () => {
    const cases = [
      ...hexchain.solved.map((v) => ({ ...v, name: `solved D=${v.difficulty}` })),
      ...hexchain.chain.steps.map((v, i) => ({
        ...v,
        target: hexchain.chain.target,
        start_nonce: 0,
        name: `chain step ${i}`,
      })),
    ];
    const out = runVectors(
      cases.map((v) => `search_block ${v.header.slice(0, 160)} ${v.target} ${v.start_nonce} 100000`),
    );
    cases.forEach((v, i) => {
      expect(out[i], v.name).toBe(`found ${v.nonce} ${v.nonce - v.start_nonce + 1} ${v.pow_hash}`);
    });
  });

  it('reports the nonces hashed when the range holds no solution', () => {
    const v = hexchain.solved[hexchain.solved.length - 1]!;
    expect(runVector(`search_block ${v.header.slice(0, 160)} ${v.target} 0 ${v.nonce}`)).toBe(
      `not_found ${v.nonce}`,
    );
    expect(runVector(`search_block ${v.header.slice(0, 160)} ${v.target} ${v.nonce} 1`)).toBe(
      `found ${v.nonce} 1 ${v.pow_hash}`,
    );
  });
});

describe('known-answer self-test (tm_self_test, for a board at start-up)', () => {
  it('passes: SHA-256 "abc" and the worked examples 3.8 and 4.10 of docs/protocol.md', () => {
    const out = execFileSync(join(buildDir, 'tm-selftest'), { encoding: 'utf8' });
    expect(out).toMatch(/^tm-selftest: core \d+\.\d+\.\d+ ok/);
  });
});

describe('the C protocol unit tests (tm-proto-test: frames, receiver, device, on a fake clock)', () => {
  it('pass: the periods of retransmission, PROGRESS and timeouts counted on a clock the test sets', () => {
    // The tm-sim tests over a pseudo-terminal (tm-sim.test.ts) run on the real clock and check
    // what happens; these check when, by the board's clock, whatever the machine's speed.
    const out = execFileSync(join(buildDir, 'tm-proto-test'), { encoding: 'utf8' });
    expect(out).toMatch(/^tm-proto-test: \d+ checks ok/);
  });
});

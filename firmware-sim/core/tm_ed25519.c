/*
 * tm_ed25519.c: ed25519 (RFC 8032 section 5.1) in portable C99.
 *
 * Field GF(p), p = 2^255 - 19: an element is ten unsigned limbs of 26, 25, 26, 25, ... bits
 * (limb i has weight 2^ceil(25.5 i)), products are 64-bit. Every function leaves its result
 * "carried": each limb below 2^26 (limb 1 may exceed 2^25 by a few bits), so a product of two
 * elements sums at most ten terms below 2^58 and never overflows 64 bits. Subtraction adds 4p
 * first, so no limb ever goes negative and no shift ever sees a negative value.
 *
 * Points: extended twisted Edwards coordinates (X : Y : Z : T), x = X/Z, y = Y/Z, x y = T/Z,
 * with the complete addition and doubling formulas of RFC 8032 5.1.4 (a = -1).
 *
 * Scalars mod L = 2^252 + 27742317777372353535851937790883648493 are reduced bit by bit (one
 * conditional subtraction per bit, by mask): slow next to the curve arithmetic, but short,
 * obviously right and free of secret-dependent branches.
 */
#include "tm_ed25519.h"

#include "sha512.h"
#include "tm_ed25519_base.h"

typedef struct {
  uint32_t v[10];
} fe;

typedef struct {
  fe X, Y, Z, T;
} ge_p3;

/* An affine point (Z = 1) prepared for mixed addition: y + x, y - x, 2 d x y. */
typedef struct {
  fe ypx, ymx, xy2d;
} ge_precomp;

/* A projective point prepared for addition: Y + X, Y - X, 2 Z, 2 d T. */
typedef struct {
  fe ypx, ymx, z2, t2d;
} ge_cached;

static const ge_precomp BASE_MULTIPLES[16] = TM_ED_BASE_MULTIPLES;
static const fe FE_D2 = TM_ED_D2;
static const fe FE_D = TM_ED_D;
static const fe FE_SQRTM1 = TM_ED_SQRTM1;

#define M26 UINT64_C(0x3ffffff)
#define M25 UINT64_C(0x1ffffff)

/* 4 p in limbs, added before a subtraction so that no limb goes negative. */
static const uint32_t FOUR_P[10] = {0xfffffb4u, 0x7fffffcu, 0xffffffcu, 0x7fffffcu, 0xffffffcu,
                                    0x7fffffcu, 0xffffffcu, 0x7fffffcu, 0xffffffcu, 0x7fffffcu};

static uint32_t limb_bits(uint32_t i) { return (i & 1u) ? 25u : 26u; }

/* One carry pass over 64-bit limbs into a carried element. */
static void fe_carry(fe *out, uint64_t h[10]) {
  uint64_t c;
  uint32_t i;
  for (i = 0; i < 9u; i++) {
    const uint32_t bits = limb_bits(i);
    c = h[i] >> bits;
    h[i] &= (i & 1u) ? M25 : M26;
    h[i + 1u] += c;
  }
  c = h[9] >> 25;
  h[9] &= M25;
  h[0] += c * 19u;
  c = h[0] >> 26;
  h[0] &= M26;
  h[1] += c;
  for (i = 0; i < 10u; i++) out->v[i] = (uint32_t)h[i];
}

static void fe_0(fe *h) {
  uint32_t i;
  for (i = 0; i < 10u; i++) h->v[i] = 0;
}

static void fe_1(fe *h) {
  fe_0(h);
  h->v[0] = 1;
}

static void fe_add(fe *out, const fe *a, const fe *b) {
  uint64_t h[10];
  uint32_t i;
  for (i = 0; i < 10u; i++) h[i] = (uint64_t)a->v[i] + b->v[i];
  fe_carry(out, h);
}

static void fe_sub(fe *out, const fe *a, const fe *b) {
  uint64_t h[10];
  uint32_t i;
  for (i = 0; i < 10u; i++) h[i] = (uint64_t)a->v[i] + FOUR_P[i] - b->v[i];
  fe_carry(out, h);
}

static void fe_neg(fe *out, const fe *a) {
  fe zero;
  fe_0(&zero);
  fe_sub(out, &zero, a);
}

/*
 * h = f g: limb i times limb j lands in limb i + j (mod 10, times 19 past 2^255 = 19 mod p),
 * times 2 when i and j are both odd (their weights add up to one bit more than the limb's).
 * Unrolled (the products were written out by a script from that rule; the vectors check them).
 * Every product is below 2^58 and each limb sums at most ten: no 64-bit overflow.
 */
static void fe_mul(fe *out, const fe *f, const fe *g) {
  uint64_t h[10];
  const uint32_t f0 = f->v[0], g0 = g->v[0];
  const uint32_t f1 = f->v[1], g1 = g->v[1];
  const uint32_t f2 = f->v[2], g2 = g->v[2];
  const uint32_t f3 = f->v[3], g3 = g->v[3];
  const uint32_t f4 = f->v[4], g4 = g->v[4];
  const uint32_t f5 = f->v[5], g5 = g->v[5];
  const uint32_t f6 = f->v[6], g6 = g->v[6];
  const uint32_t f7 = f->v[7], g7 = g->v[7];
  const uint32_t f8 = f->v[8], g8 = g->v[8];
  const uint32_t f9 = f->v[9], g9 = g->v[9];
  const uint32_t f1_2 = 2u * f1;
  const uint32_t f3_2 = 2u * f3;
  const uint32_t f5_2 = 2u * f5;
  const uint32_t f7_2 = 2u * f7;
  const uint32_t f9_2 = 2u * f9;
  const uint32_t g1_19 = 19u * g1;
  const uint32_t g2_19 = 19u * g2;
  const uint32_t g3_19 = 19u * g3;
  const uint32_t g4_19 = 19u * g4;
  const uint32_t g5_19 = 19u * g5;
  const uint32_t g6_19 = 19u * g6;
  const uint32_t g7_19 = 19u * g7;
  const uint32_t g8_19 = 19u * g8;
  const uint32_t g9_19 = 19u * g9;
  h[0] = (uint64_t)f0 * g0 + (uint64_t)f1_2 * g9_19 + (uint64_t)f2 * g8_19 + (uint64_t)f3_2 * g7_19
         + (uint64_t)f4 * g6_19 + (uint64_t)f5_2 * g5_19 + (uint64_t)f6 * g4_19 + (uint64_t)f7_2 * g3_19
         + (uint64_t)f8 * g2_19 + (uint64_t)f9_2 * g1_19;
  h[1] = (uint64_t)f0 * g1 + (uint64_t)f1 * g0 + (uint64_t)f2 * g9_19 + (uint64_t)f3 * g8_19 + (uint64_t)f4 * g7_19
         + (uint64_t)f5 * g6_19 + (uint64_t)f6 * g5_19 + (uint64_t)f7 * g4_19 + (uint64_t)f8 * g3_19
         + (uint64_t)f9 * g2_19;
  h[2] = (uint64_t)f0 * g2 + (uint64_t)f1_2 * g1 + (uint64_t)f2 * g0 + (uint64_t)f3_2 * g9_19 + (uint64_t)f4 * g8_19
         + (uint64_t)f5_2 * g7_19 + (uint64_t)f6 * g6_19 + (uint64_t)f7_2 * g5_19 + (uint64_t)f8 * g4_19
         + (uint64_t)f9_2 * g3_19;
  h[3] = (uint64_t)f0 * g3 + (uint64_t)f1 * g2 + (uint64_t)f2 * g1 + (uint64_t)f3 * g0 + (uint64_t)f4 * g9_19
         + (uint64_t)f5 * g8_19 + (uint64_t)f6 * g7_19 + (uint64_t)f7 * g6_19 + (uint64_t)f8 * g5_19
         + (uint64_t)f9 * g4_19;
  h[4] = (uint64_t)f0 * g4 + (uint64_t)f1_2 * g3 + (uint64_t)f2 * g2 + (uint64_t)f3_2 * g1 + (uint64_t)f4 * g0
         + (uint64_t)f5_2 * g9_19 + (uint64_t)f6 * g8_19 + (uint64_t)f7_2 * g7_19 + (uint64_t)f8 * g6_19
         + (uint64_t)f9_2 * g5_19;
  h[5] = (uint64_t)f0 * g5 + (uint64_t)f1 * g4 + (uint64_t)f2 * g3 + (uint64_t)f3 * g2 + (uint64_t)f4 * g1
         + (uint64_t)f5 * g0 + (uint64_t)f6 * g9_19 + (uint64_t)f7 * g8_19 + (uint64_t)f8 * g7_19
         + (uint64_t)f9 * g6_19;
  h[6] = (uint64_t)f0 * g6 + (uint64_t)f1_2 * g5 + (uint64_t)f2 * g4 + (uint64_t)f3_2 * g3 + (uint64_t)f4 * g2
         + (uint64_t)f5_2 * g1 + (uint64_t)f6 * g0 + (uint64_t)f7_2 * g9_19 + (uint64_t)f8 * g8_19
         + (uint64_t)f9_2 * g7_19;
  h[7] = (uint64_t)f0 * g7 + (uint64_t)f1 * g6 + (uint64_t)f2 * g5 + (uint64_t)f3 * g4 + (uint64_t)f4 * g3
         + (uint64_t)f5 * g2 + (uint64_t)f6 * g1 + (uint64_t)f7 * g0 + (uint64_t)f8 * g9_19 + (uint64_t)f9 * g8_19;
  h[8] = (uint64_t)f0 * g8 + (uint64_t)f1_2 * g7 + (uint64_t)f2 * g6 + (uint64_t)f3_2 * g5 + (uint64_t)f4 * g4
         + (uint64_t)f5_2 * g3 + (uint64_t)f6 * g2 + (uint64_t)f7_2 * g1 + (uint64_t)f8 * g0
         + (uint64_t)f9_2 * g9_19;
  h[9] = (uint64_t)f0 * g9 + (uint64_t)f1 * g8 + (uint64_t)f2 * g7 + (uint64_t)f3 * g6 + (uint64_t)f4 * g5
         + (uint64_t)f5 * g4 + (uint64_t)f6 * g3 + (uint64_t)f7 * g2 + (uint64_t)f8 * g1 + (uint64_t)f9 * g0;
  fe_carry(out, h);
}

static void fe_sq(fe *out, const fe *f) {
  uint64_t h[10];
  const uint32_t f0 = f->v[0];
  const uint32_t f1 = f->v[1];
  const uint32_t f2 = f->v[2];
  const uint32_t f3 = f->v[3];
  const uint32_t f4 = f->v[4];
  const uint32_t f5 = f->v[5];
  const uint32_t f6 = f->v[6];
  const uint32_t f7 = f->v[7];
  const uint32_t f8 = f->v[8];
  const uint32_t f9 = f->v[9];
  const uint32_t f1_2 = 2u * f1;
  const uint32_t f2_2 = 2u * f2;
  const uint32_t f3_2 = 2u * f3;
  const uint32_t f4_2 = 2u * f4;
  const uint32_t f5_2 = 2u * f5;
  const uint32_t f5_38 = 38u * f5;
  const uint32_t f6_2 = 2u * f6;
  const uint32_t f6_19 = 19u * f6;
  const uint32_t f6_38 = 38u * f6;
  const uint32_t f7_2 = 2u * f7;
  const uint32_t f7_38 = 38u * f7;
  const uint32_t f8_2 = 2u * f8;
  const uint32_t f8_19 = 19u * f8;
  const uint32_t f8_38 = 38u * f8;
  const uint32_t f9_2 = 2u * f9;
  const uint32_t f9_38 = 38u * f9;
  h[0] = (uint64_t)f0 * f0 + (uint64_t)f1_2 * f9_38 + (uint64_t)f2 * f8_38 + (uint64_t)f3_2 * f7_38
         + (uint64_t)f4 * f6_38 + (uint64_t)f5 * f5_38;
  h[1] = (uint64_t)f0 * f1_2 + (uint64_t)f2 * f9_38 + (uint64_t)f3 * f8_38 + (uint64_t)f4 * f7_38
         + (uint64_t)f5 * f6_38;
  h[2] = (uint64_t)f0 * f2_2 + (uint64_t)f1 * f1_2 + (uint64_t)f3_2 * f9_38 + (uint64_t)f4 * f8_38
         + (uint64_t)f5_2 * f7_38 + (uint64_t)f6 * f6_19;
  h[3] = (uint64_t)f0 * f3_2 + (uint64_t)f1 * f2_2 + (uint64_t)f4 * f9_38 + (uint64_t)f5 * f8_38
         + (uint64_t)f6 * f7_38;
  h[4] = (uint64_t)f0 * f4_2 + (uint64_t)f1_2 * f3_2 + (uint64_t)f2 * f2 + (uint64_t)f5_2 * f9_38
         + (uint64_t)f6 * f8_38 + (uint64_t)f7 * f7_38;
  h[5] = (uint64_t)f0 * f5_2 + (uint64_t)f1 * f4_2 + (uint64_t)f2 * f3_2 + (uint64_t)f6 * f9_38
         + (uint64_t)f7 * f8_38;
  h[6] = (uint64_t)f0 * f6_2 + (uint64_t)f1_2 * f5_2 + (uint64_t)f2 * f4_2 + (uint64_t)f3 * f3_2
         + (uint64_t)f7_2 * f9_38 + (uint64_t)f8 * f8_19;
  h[7] = (uint64_t)f0 * f7_2 + (uint64_t)f1 * f6_2 + (uint64_t)f2 * f5_2 + (uint64_t)f3 * f4_2
         + (uint64_t)f8 * f9_38;
  h[8] = (uint64_t)f0 * f8_2 + (uint64_t)f1_2 * f7_2 + (uint64_t)f2 * f6_2 + (uint64_t)f3_2 * f5_2
         + (uint64_t)f4 * f4 + (uint64_t)f9 * f9_38;
  h[9] = (uint64_t)f0 * f9_2 + (uint64_t)f1 * f8_2 + (uint64_t)f2 * f7_2 + (uint64_t)f3 * f6_2 + (uint64_t)f4 * f5_2;
  fe_carry(out, h);
}


/* out = f^(2^n) */
static void fe_sqn(fe *out, const fe *f, uint32_t n) {
  uint32_t i;
  fe_sq(out, f);
  for (i = 1; i < n; i++) fe_sq(out, out);
}

/* Raises z to 2^250 - 1; also gives z^11 (for the inverse). */
static void fe_pow250(fe *out, fe *z11, const fe *z) {
  fe t0, t1, t2;
  fe_sq(&t0, z);           /* 2 */
  fe_sqn(&t1, &t0, 2);     /* 8 */
  fe_mul(&t1, z, &t1);     /* 9 */
  fe_mul(z11, &t0, &t1);   /* 11 */
  fe_sq(&t0, z11);         /* 22 */
  fe_mul(&t1, &t1, &t0);   /* 31 = 2^5 - 1 */
  fe_sqn(&t0, &t1, 5);     /* 2^10 - 2^5 */
  fe_mul(&t1, &t0, &t1);   /* 2^10 - 1 */
  fe_sqn(&t0, &t1, 10);    /* 2^20 - 2^10 */
  fe_mul(&t0, &t0, &t1);   /* 2^20 - 1 */
  fe_sqn(&t2, &t0, 20);    /* 2^40 - 2^20 */
  fe_mul(&t0, &t2, &t0);   /* 2^40 - 1 */
  fe_sqn(&t0, &t0, 10);    /* 2^50 - 2^10 */
  fe_mul(&t1, &t0, &t1);   /* 2^50 - 1 */
  fe_sqn(&t0, &t1, 50);    /* 2^100 - 2^50 */
  fe_mul(&t0, &t0, &t1);   /* 2^100 - 1 */
  fe_sqn(&t2, &t0, 100);   /* 2^200 - 2^100 */
  fe_mul(&t0, &t2, &t0);   /* 2^200 - 1 */
  fe_sqn(&t0, &t0, 50);    /* 2^250 - 2^50 */
  fe_mul(out, &t0, &t1);   /* 2^250 - 1 */
}

/* out = z^(p - 2) = 1 / z (0 for 0). */
static void fe_invert(fe *out, const fe *z) {
  fe t, z11;
  fe_pow250(&t, &z11, z);
  fe_sqn(&t, &t, 5);   /* 2^255 - 32 */
  fe_mul(out, &t, &z11); /* 2^255 - 21 */
}

/* out = z^((p - 5) / 8) = z^(2^252 - 3). */
static void fe_pow22523(fe *out, const fe *z) {
  fe t, z11;
  fe_pow250(&t, &z11, z);
  fe_sqn(&t, &t, 2); /* 2^252 - 4 */
  fe_mul(out, &t, z);
}

/* The canonical 32-byte little-endian encoding (the value reduced below p). */
static void fe_tobytes(uint8_t s[32], const fe *f) {
  uint64_t h[10];
  uint64_t q, acc;
  uint32_t i, pos, k;
  for (i = 0; i < 10u; i++) h[i] = f->v[i];
  /* q = floor((h + 19) / 2^255): 1 exactly when h >= p (h < 2p here) */
  q = (h[0] + 19u) >> 26;
  for (i = 1; i < 10u; i++) q = (h[i] + q) >> limb_bits(i);
  h[0] += 19u * q;
  for (i = 0; i < 9u; i++) {
    h[i + 1u] += h[i] >> limb_bits(i);
    h[i] &= (i & 1u) ? M25 : M26;
  }
  h[9] &= M25; /* drops q 2^255: h - q p */
  /* pack 255 bits */
  acc = 0;
  pos = 0;
  k = 0;
  for (i = 0; i < 10u; i++) {
    acc |= h[i] << pos;
    pos += limb_bits(i);
    while (pos >= 8u) {
      s[k++] = (uint8_t)acc;
      acc >>= 8;
      pos -= 8u;
    }
  }
  s[31] = (uint8_t)acc; /* the last 7 bits */
}

/* Reads 255 bits (the top bit of byte 31 is ignored); the value may be >= p. */
static void fe_frombytes(fe *out, const uint8_t s[32]) {
  uint64_t acc = 0;
  uint32_t have = 0, k = 0, i;
  for (i = 0; i < 10u; i++) {
    const uint32_t bits = limb_bits(i);
    while (have < bits) {
      const uint8_t byte = k < 31u ? s[k] : (uint8_t)(s[31] & 0x7fu);
      acc |= (uint64_t)byte << have;
      have += 8u;
      k++;
    }
    out->v[i] = (uint32_t)(acc & ((UINT64_C(1) << bits) - 1u));
    acc >>= bits;
    have -= bits;
  }
}

static int32_t fe_isnegative(const fe *f) {
  uint8_t s[32];
  fe_tobytes(s, f);
  return (int32_t)(s[0] & 1u);
}

static int32_t fe_iszero(const fe *f) {
  uint8_t s[32];
  uint32_t i, acc = 0;
  fe_tobytes(s, f);
  for (i = 0; i < 32u; i++) acc |= s[i];
  return acc == 0u;
}

/* out = a when flag is 1, unchanged when 0, in constant time. */
static void fe_cmov(fe *out, const fe *a, uint32_t flag) {
  const uint32_t mask = 0u - flag;
  uint32_t i;
  for (i = 0; i < 10u; i++) out->v[i] ^= mask & (out->v[i] ^ a->v[i]);
}

/* ---- points ---------------------------------------------------------------------------- */

static void ge_identity(ge_p3 *p) {
  fe_0(&p->X);
  fe_1(&p->Y);
  fe_1(&p->Z);
  fe_0(&p->T);
}

static void ge_double(ge_p3 *r, const ge_p3 *p) {
  fe a, b, c, e, f, g, h;
  fe_sq(&a, &p->X);
  fe_sq(&b, &p->Y);
  fe_sq(&c, &p->Z);
  fe_add(&c, &c, &c);
  fe_add(&h, &a, &b);
  fe_add(&e, &p->X, &p->Y);
  fe_sq(&e, &e);
  fe_sub(&e, &h, &e);
  fe_sub(&g, &a, &b);
  fe_add(&f, &c, &g);
  fe_mul(&r->X, &e, &f);
  fe_mul(&r->Y, &g, &h);
  fe_mul(&r->T, &e, &h);
  fe_mul(&r->Z, &f, &g);
}

/* The tail of both additions: from A, B, C, D to the sum. */
static void ge_finish(ge_p3 *r, const fe *a, const fe *b, const fe *c, const fe *d) {
  fe e, f, g, h;
  fe_sub(&e, b, a);
  fe_sub(&f, d, c);
  fe_add(&g, d, c);
  fe_add(&h, b, a);
  fe_mul(&r->X, &e, &f);
  fe_mul(&r->Y, &g, &h);
  fe_mul(&r->T, &e, &h);
  fe_mul(&r->Z, &f, &g);
}

/* r = p + q, q affine and precomputed. */
static void ge_madd(ge_p3 *r, const ge_p3 *p, const ge_precomp *q) {
  fe a, b, c, d, t;
  fe_sub(&t, &p->Y, &p->X);
  fe_mul(&a, &t, &q->ymx);
  fe_add(&t, &p->Y, &p->X);
  fe_mul(&b, &t, &q->ypx);
  fe_mul(&c, &p->T, &q->xy2d);
  fe_add(&d, &p->Z, &p->Z);
  ge_finish(r, &a, &b, &c, &d);
}

/* r = p + q, q cached. */
static void ge_add(ge_p3 *r, const ge_p3 *p, const ge_cached *q) {
  fe a, b, c, d, t;
  fe_sub(&t, &p->Y, &p->X);
  fe_mul(&a, &t, &q->ymx);
  fe_add(&t, &p->Y, &p->X);
  fe_mul(&b, &t, &q->ypx);
  fe_mul(&c, &p->T, &q->t2d);
  fe_mul(&d, &p->Z, &q->z2);
  ge_finish(r, &a, &b, &c, &d);
}

static void ge_to_cached(ge_cached *c, const ge_p3 *p) {
  fe_add(&c->ypx, &p->Y, &p->X);
  fe_sub(&c->ymx, &p->Y, &p->X);
  fe_add(&c->z2, &p->Z, &p->Z);
  fe_mul(&c->t2d, &p->T, &FE_D2);
}

static void ge_tobytes(uint8_t s[32], const ge_p3 *p) {
  fe zi, x, y;
  fe_invert(&zi, &p->Z);
  fe_mul(&x, &p->X, &zi);
  fe_mul(&y, &p->Y, &zi);
  fe_tobytes(s, &y);
  s[31] = (uint8_t)(s[31] | (uint32_t)fe_isnegative(&x) << 7);
}

/* RFC 8032 5.1.3. Returns 0, or -1 when s is not the encoding of a point. */
static int32_t ge_frombytes(ge_p3 *p, const uint8_t s[32]) {
  fe u, v, v3, vxx, check;
  uint32_t i, all_ff = 1;
  const uint32_t sign = (uint32_t)s[31] >> 7;
  /* y must be below p: p = 2^255 - 19 is 0xed, then 30 bytes 0xff, then 0x7f */
  for (i = 1; i < 31u; i++) all_ff &= s[i] == 0xffu;
  if ((s[31] & 0x7fu) == 0x7fu && all_ff && s[0] >= 0xedu) return -1;
  fe_frombytes(&p->Y, s);
  fe_1(&p->Z);
  fe_sq(&u, &p->Y);
  fe_mul(&v, &u, &FE_D);
  fe_sub(&u, &u, &p->Z); /* u = y^2 - 1 */
  fe_add(&v, &v, &p->Z); /* v = d y^2 + 1 */
  fe_sq(&v3, &v);
  fe_mul(&v3, &v3, &v);  /* v^3 */
  fe_sq(&p->X, &v3);
  fe_mul(&p->X, &p->X, &v);
  fe_mul(&p->X, &p->X, &u); /* u v^7 */
  fe_pow22523(&p->X, &p->X);
  fe_mul(&p->X, &p->X, &v3);
  fe_mul(&p->X, &p->X, &u); /* x = u v^3 (u v^7)^((p-5)/8) */
  fe_sq(&vxx, &p->X);
  fe_mul(&vxx, &vxx, &v);
  fe_sub(&check, &vxx, &u);
  if (!fe_iszero(&check)) {
    fe_add(&check, &vxx, &u);
    if (!fe_iszero(&check)) return -1; /* no square root: not on the curve */
    fe_mul(&p->X, &p->X, &FE_SQRTM1);
  }
  if (fe_iszero(&p->X) && sign) return -1;
  if ((uint32_t)fe_isnegative(&p->X) != sign) fe_neg(&p->X, &p->X);
  fe_mul(&p->T, &p->X, &p->Y);
  return 0;
}

static uint32_t nibble(const uint8_t s[32], uint32_t i) { return (uint32_t)(s[i >> 1] >> (4u * (i & 1u))) & 15u; }

/* [s]B for a 256-bit little-endian s, in time independent of s. */
static void ge_scalarmult_base(ge_p3 *r, const uint8_t s[32]) {
  ge_precomp sel;
  uint32_t i, j;
  ge_identity(r);
  for (i = 64; i-- > 0;) {
    const uint32_t n = nibble(s, i);
    if (i != 63u) {
      ge_double(r, r);
      ge_double(r, r);
      ge_double(r, r);
      ge_double(r, r);
    }
    sel = BASE_MULTIPLES[0];
    for (j = 1; j < 16u; j++) {
      const uint32_t eq = ((j ^ n) - 1u) >> 31; /* 1 when j == n */
      fe_cmov(&sel.ypx, &BASE_MULTIPLES[j].ypx, eq);
      fe_cmov(&sel.ymx, &BASE_MULTIPLES[j].ymx, eq);
      fe_cmov(&sel.xy2d, &BASE_MULTIPLES[j].xy2d, eq);
    }
    ge_madd(r, r, &sel);
  }
}

/* [a]B + [b]P, variable time (public inputs only). */
static void ge_double_scalarmult_vartime(ge_p3 *r, const uint8_t a[32], const uint8_t b[32], const ge_p3 *p) {
  ge_cached table[16];
  ge_p3 t;
  uint32_t i;
  ge_to_cached(&table[1], p);
  t = *p;
  for (i = 2; i < 16u; i++) {
    ge_add(&t, &t, &table[1]);
    ge_to_cached(&table[i], &t);
  }
  ge_identity(r);
  for (i = 64; i-- > 0;) {
    const uint32_t na = nibble(a, i), nb = nibble(b, i);
    if (i != 63u) {
      ge_double(r, r);
      ge_double(r, r);
      ge_double(r, r);
      ge_double(r, r);
    }
    if (na != 0u) ge_madd(r, r, &BASE_MULTIPLES[na]);
    if (nb != 0u) ge_add(r, r, &table[nb]);
  }
}

/* ---- scalars mod L --------------------------------------------------------------------- */

/* L as eight 32-bit little-endian words. */
static const uint32_t L_WORDS[8] = {0x5cf5d3edu, 0x5812631au, 0xa2f79cd6u, 0x14def9deu,
                                    0x00000000u, 0x00000000u, 0x00000000u, 0x10000000u};

/* out = x mod L, x given as `words` little-endian 32-bit words; constant time. */
static void sc_reduce_words(uint8_t out[32], const uint32_t *x, uint32_t words) {
  uint32_t r[9] = {0};
  uint32_t bit, i;
  for (bit = words * 32u; bit-- > 0;) {
    uint32_t t[9], borrow = 0, carry = (x[bit >> 5] >> (bit & 31u)) & 1u, keep;
    /* r = 2 r + bit (r < L < 2^253, so 2 r + 1 < 2^254 fits) */
    for (i = 0; i < 9u; i++) {
      const uint32_t next = r[i] >> 31;
      r[i] = (r[i] << 1) | carry;
      carry = next;
    }
    /* t = r - L; keep r when that borrows */
    for (i = 0; i < 9u; i++) {
      const uint64_t d = (uint64_t)r[i] - (i < 8u ? L_WORDS[i] : 0u) - borrow;
      t[i] = (uint32_t)d;
      borrow = (uint32_t)(d >> 63);
    }
    keep = 0u - borrow; /* all ones: r < L */
    for (i = 0; i < 9u; i++) r[i] = (r[i] & keep) | (t[i] & ~keep);
  }
  for (i = 0; i < 32u; i++) out[i] = (uint8_t)(r[i >> 2] >> (8u * (i & 3u)));
}

static void words_from_bytes(uint32_t *w, const uint8_t *b, uint32_t words) {
  uint32_t i;
  for (i = 0; i < words; i++) {
    w[i] = (uint32_t)b[4u * i] | (uint32_t)b[4u * i + 1u] << 8 | (uint32_t)b[4u * i + 2u] << 16 |
           (uint32_t)b[4u * i + 3u] << 24;
  }
}

/* out = SHA-512 digest mod L */
static void sc_reduce64(uint8_t out[32], const uint8_t digest[64]) {
  uint32_t w[16];
  words_from_bytes(w, digest, 16);
  sc_reduce_words(out, w, 16);
}

/* out = (a b + c) mod L */
static void sc_muladd(uint8_t out[32], const uint8_t a[32], const uint8_t b[32], const uint8_t c[32]) {
  uint32_t aw[8], bw[8], cw[8], p[17] = {0};
  uint64_t carry;
  uint32_t i, j;
  words_from_bytes(aw, a, 8);
  words_from_bytes(bw, b, 8);
  words_from_bytes(cw, c, 8);
  for (i = 0; i < 8u; i++) {
    carry = 0;
    for (j = 0; j < 8u; j++) {
      const uint64_t t = (uint64_t)aw[i] * bw[j] + p[i + j] + carry;
      p[i + j] = (uint32_t)t;
      carry = t >> 32;
    }
    p[i + 8u] = (uint32_t)carry;
  }
  carry = 0;
  for (i = 0; i < 17u; i++) {
    const uint64_t t = (uint64_t)p[i] + (i < 8u ? cw[i] : 0u) + carry;
    p[i] = (uint32_t)t;
    carry = t >> 32;
  }
  sc_reduce_words(out, p, 17);
}

/* 1 when the 32-byte little-endian s is below L. */
static int32_t sc_is_canonical(const uint8_t s[32]) {
  uint32_t w[8];
  uint32_t i;
  words_from_bytes(w, s, 8);
  for (i = 8; i-- > 0;) {
    if (w[i] < L_WORDS[i]) return 1;
    if (w[i] > L_WORDS[i]) return 0;
  }
  return 0; /* equal */
}

static void wipe(void *p, uint32_t n) {
  volatile uint8_t *b = (volatile uint8_t *)p;
  while (n-- > 0u) *b++ = 0;
}

/* ---- the API --------------------------------------------------------------------------- */

/* h = SHA-512(seed); the clamped scalar in h[0..32), the nonce prefix in h[32..64). */
static void expand_seed(uint8_t h[64], const uint8_t seed[32]) {
  tm_sha512(seed, 32, h);
  h[0] &= 248u;
  h[31] &= 127u;
  h[31] |= 64u;
}

void tm_ed25519_public_key(const uint8_t seed[32], uint8_t public_key[32]) {
  uint8_t h[64];
  ge_p3 a;
  expand_seed(h, seed);
  ge_scalarmult_base(&a, h);
  ge_tobytes(public_key, &a);
  wipe(h, sizeof h);
  wipe(&a, sizeof a);
}

static void absorb(tm_sha512_ctx *ctx, const tm_bytes *parts, uint32_t count) {
  uint32_t i;
  for (i = 0; i < count; i++) tm_sha512_update(ctx, parts[i].p, parts[i].n);
}

void tm_ed25519_sign_parts(const uint8_t seed[32], const uint8_t public_key[32], const tm_bytes *parts,
                           uint32_t count, uint8_t signature[64]) {
  uint8_t h[64], digest[64], r[32], k[32];
  tm_sha512_ctx ctx;
  ge_p3 rp;
  expand_seed(h, seed);
  tm_sha512_init(&ctx);
  tm_sha512_update(&ctx, h + 32, 32);
  absorb(&ctx, parts, count);
  tm_sha512_final(&ctx, digest);
  sc_reduce64(r, digest);
  ge_scalarmult_base(&rp, r);
  ge_tobytes(signature, &rp);
  tm_sha512_init(&ctx);
  tm_sha512_update(&ctx, signature, 32);
  tm_sha512_update(&ctx, public_key, 32);
  absorb(&ctx, parts, count);
  tm_sha512_final(&ctx, digest);
  sc_reduce64(k, digest);
  sc_muladd(signature + 32, k, h, r);
  wipe(h, sizeof h);
  wipe(r, sizeof r);
  wipe(digest, sizeof digest);
  wipe(&rp, sizeof rp);
  wipe(&ctx, sizeof ctx);
}

int32_t tm_ed25519_verify_parts(const uint8_t signature[64], const tm_bytes *parts, uint32_t count,
                                const uint8_t public_key[32]) {
  uint8_t digest[64], k[32], check[32];
  tm_sha512_ctx ctx;
  ge_p3 a, r;
  uint32_t i, diff = 0;
  if (!sc_is_canonical(signature + 32)) return 0;
  if (ge_frombytes(&a, public_key) != 0) return 0;
  fe_neg(&a.X, &a.X);
  fe_neg(&a.T, &a.T);
  tm_sha512_init(&ctx);
  tm_sha512_update(&ctx, signature, 32);
  tm_sha512_update(&ctx, public_key, 32);
  absorb(&ctx, parts, count);
  tm_sha512_final(&ctx, digest);
  sc_reduce64(k, digest);
  ge_double_scalarmult_vartime(&r, signature + 32, k, &a);
  ge_tobytes(check, &r);
  for (i = 0; i < 32u; i++) diff |= (uint32_t)(check[i] ^ signature[i]);
  return diff == 0u;
}

void tm_ed25519_sign(const uint8_t seed[32], const uint8_t public_key[32], const uint8_t *msg, uint32_t len,
                     uint8_t signature[64]) {
  tm_bytes part;
  part.p = msg;
  part.n = len;
  tm_ed25519_sign_parts(seed, public_key, &part, 1, signature);
}

int32_t tm_ed25519_verify(const uint8_t signature[64], const uint8_t *msg, uint32_t len,
                          const uint8_t public_key[32]) {
  tm_bytes part;
  part.p = msg;
  part.n = len;
  return tm_ed25519_verify_parts(signature, &part, 1, public_key);
}

import { describe, expect, it } from 'vitest';
import {
  bf16BitsToFloat,
  float32BitsToHalfBits,
  floatToBf16Bits,
  floatToHalfBits,
  halfBitsToFloat,
} from './half.js';

describe('FP16', () => {
  it('converts exact values both ways', () => {
    const cases: Array<[number, number]> = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [65504, 0x7bff],
      [2 ** -14, 0x0400],
      [2 ** -24, 0x0001],
      [Number.POSITIVE_INFINITY, 0x7c00],
    ];
    for (const [value, bits] of cases) {
      expect(floatToHalfBits(value)).toBe(bits);
      expect(Object.is(halfBitsToFloat(bits), value)).toBe(true);
    }
  });

  it('rounds to nearest even, overflows to infinity, keeps NaN', () => {
    expect(floatToHalfBits(1 + 2 ** -11)).toBe(0x3c00); // halfway, ties to even (down)
    expect(floatToHalfBits(1 + 3 * 2 ** -11)).toBe(0x3c02); // halfway, ties to even (up)
    expect(floatToHalfBits(70000)).toBe(0x7c00);
    expect(Number.isNaN(halfBitsToFloat(floatToHalfBits(Number.NaN)))).toBe(true);
    expect(floatToHalfBits(2 ** -26)).toBe(0);
  });

  it('round-trips every finite half value', () => {
    for (let bits = 0; bits < 0x7c00; bits++) expect(floatToHalfBits(halfBitsToFloat(bits))).toBe(bits);
  });
});

describe('BF16', () => {
  it('keeps the top 16 bits with round to nearest even', () => {
    expect(floatToBf16Bits(1)).toBe(0x3f80);
    expect(floatToBf16Bits(-2)).toBe(0xc000);
    expect(bf16BitsToFloat(0x3f80)).toBe(1);
    expect(floatToBf16Bits(1 + 2 ** -8)).toBe(0x3f80); // halfway, even stays
    expect(floatToBf16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(Number.isNaN(bf16BitsToFloat(floatToBf16Bits(Number.NaN)))).toBe(true);
  });
});

describe('FP16 from doubles', () => {
  it('rounds from the double itself, not through float32 (as numpy does)', () => {
    // float32 rounds this to exactly 1 + 2^-11 (a tie), but the double is above the tie.
    expect(floatToHalfBits(1 + 2 ** -11 + 2 ** -30)).toBe(0x3c01);
    expect(floatToHalfBits(1 + 2 ** -11 - 2 ** -40)).toBe(0x3c00);
    expect(floatToHalfBits(-(1 + 2 ** -11 + 2 ** -30))).toBe(0xbc01);
    // subnormal tie broken by the double's tail
    expect(floatToHalfBits(2 ** -25 + 2 ** -60)).toBe(0x0001);
  });
});

describe('float32BitsToHalfBits', () => {
  it('rounds every float32 as floatToHalfBits does (random bit patterns plus every exponent edge)', () => {
    const bits = new Uint32Array(1);
    const value = new Float32Array(bits.buffer);
    const wrong: number[] = [];
    const check = (pattern: number) => {
      bits[0] = pattern;
      if (float32BitsToHalfBits(pattern) !== floatToHalfBits(value[0] as number)) wrong.push(pattern);
    };
    // Around every float32 exponent, the halfway points of half's mantissa: where rounding decides.
    for (let exponent = 0; exponent < 256; exponent++) {
      for (const mantissa of [0, 1, 0xfff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fffff, 0x400000, 0x7ff000]) {
        check((exponent << 23) | mantissa);
        check(((exponent << 23) | mantissa | 0x80000000) >>> 0);
      }
    }
    let seed = 12345;
    for (let i = 0; i < 200_000; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      check(seed);
    }
    expect(wrong).toEqual([]);
  });
});

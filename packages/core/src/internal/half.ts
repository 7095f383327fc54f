/** IEEE 754 half precision and bfloat16 conversions (round to nearest, ties to even). */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * Rounds a JavaScript number (a double) to half precision directly, like numpy: going through
 * float32 first could round twice. The float32 bits give the candidate; where they land exactly
 * halfway between two halves, the double's own position (above, below or on it) decides.
 */
export function floatToHalfBits(value: number): number {
  f32[0] = value;
  const single = f32[0] as number;
  const bits = u32[0] as number;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) {
    // Inf or NaN, unless the double only became Inf when narrowed to float32.
    if (mantissa !== 0 || !Number.isFinite(value))
      return sign | 0x7c00 | (mantissa !== 0 ? 0x200 | (mantissa >>> 13) : 0);
    return sign | 0x7c00;
  }
  // +1: the double lies beyond the float32 (in magnitude); -1: short of it; 0: exactly on it.
  const sticky = Math.abs(value) > Math.abs(single) ? 1 : Math.abs(value) < Math.abs(single) ? -1 : 0;
  const roundUp = (remainder: number, halfway: number, lowBit: number) =>
    remainder > halfway || (remainder === halfway && (sticky > 0 || (sticky === 0 && lowBit === 1)));
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00; // overflow to infinity
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign; // underflow to signed zero
    mantissa |= 0x800000;
    const shift = 14 - halfExponent;
    const half = mantissa >>> shift;
    const remainder = mantissa & ((1 << shift) - 1);
    return sign | (half + (roundUp(remainder, 1 << (shift - 1), half & 1) ? 1 : 0));
  }
  const half = (halfExponent << 10) | (mantissa >>> 13);
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  return sign | (half + (roundUp(mantissa & 0x1fff, 0x1000, half & 1) ? 1 : 0));
}

export function halfBitsToFloat(half: number): number {
  const sign = half & 0x8000 ? -1 : 1;
  const exponent = (half >>> 10) & 0x1f;
  const mantissa = half & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

export function floatToBf16Bits(value: number): number {
  f32[0] = value;
  const bits = u32[0] as number;
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0) return ((bits >>> 16) | 0x40) & 0xffff;
  const rounding = 0x7fff + ((bits >>> 16) & 1);
  return ((bits + rounding) >>> 16) & 0xffff;
}

export function bf16BitsToFloat(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0] as number;
}

/**
 * floatToHalfBits for a value that is already a float32, from its bits: no double can sit between
 * float32s, so there is no sticky bit, and integer work alone rounds it (ties to even).
 */
export function float32BitsToHalfBits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 | (mantissa >>> 13) : 0);
  const halfExponent = exponent - 112;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - halfExponent;
    const half = mantissa >>> shift;
    const remainder = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    return sign | (half + (remainder > halfway || (remainder === halfway && (half & 1) === 1) ? 1 : 0));
  }
  const half = (halfExponent << 10) | (mantissa >>> 13);
  const remainder = mantissa & 0x1fff;
  return sign | (half + (remainder > 0x1000 || (remainder === 0x1000 && (half & 1) === 1) ? 1 : 0));
}
